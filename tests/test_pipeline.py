"""Stage runner: manifests, skip/resume, config changes, interrupted stages, --from/--only."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from skadapt.artifacts import read_manifest
from skadapt.pipeline import PipelineError, run_recipe
from skadapt.recipe import validate_recipe
from skadapt.stage import StageContext


class Recorder:
    """Dummy stages: each writes a file naming its input model and counts its calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def runner(self, stage: str):
        def run(ctx: StageContext) -> dict:
            self.calls.append(stage)
            (ctx.out_dir / "artifact.txt").write_text(f"{stage} from {ctx.input_model}")
            return {"stage": stage, "input": ctx.input_model}

        return run

    def runners(self) -> dict:
        return {s: self.runner(s) for s in ("trim", "finetune", "renorm", "evaluate")}


def make_recipe(tmp_path: Path, **overrides: object):
    data = {
        "name": "demo",
        "language": "slk",
        "base_model": "base-model-id",
        "output_dir": str(tmp_path / "run"),
        "trim": {"corpus": "corpus.txt", "vocab_size": 100},
        "finetune": {"datasets": [{"name": "qa", "kind": "pairs", "source": "qa.jsonl"}]},
        "renorm": {"corpus": "corpus.txt"},
        "evaluate": {"tasks": ["suite.yaml"]},
    }
    for key, value in overrides.items():
        section, _, field = key.partition("__")
        if field:
            data[section][field] = value
        else:
            data[section] = value
    return validate_recipe(data)


def test_stages_chain_models_and_write_manifests(tmp_path: Path) -> None:
    recorder = Recorder()
    recipe = make_recipe(tmp_path)
    outcomes = run_recipe(recipe, runners=recorder.runners())
    assert [o.status for o in outcomes] == ["ran"] * 4
    run = tmp_path / "run"
    assert (run / "finetune" / "artifact.txt").read_text() == f"finetune from {run / 'trim'}"
    assert (run / "trim" / "artifact.txt").read_text() == "trim from base-model-id"
    manifest = read_manifest(run / "renorm")
    assert manifest["status"] == "complete" and manifest["config"]["method"] == "r2"
    assert manifest["outputs"] == [{"path": "artifact.txt", "bytes": len(f"renorm from {run / 'finetune'}")}]
    assert {"torch", "sentence-transformers", "python"} <= set(manifest["versions"])
    assert manifest["result"] == {"stage": "renorm", "input": str(run / "finetune")}
    assert manifest["started_at"] <= manifest["finished_at"]
    assert "stage evaluate: done" in (run / "run.log").read_text()


def test_rerun_skips_finished_stages(tmp_path: Path) -> None:
    recorder = Recorder()
    run_recipe(make_recipe(tmp_path), runners=recorder.runners())
    outcomes = run_recipe(make_recipe(tmp_path), runners=recorder.runners())
    assert [o.status for o in outcomes] == ["skipped"] * 4
    assert recorder.calls == ["trim", "finetune", "renorm", "evaluate"]


def test_changed_config_reruns_that_stage_and_later_ones(tmp_path: Path) -> None:
    recorder = Recorder()
    run_recipe(make_recipe(tmp_path), runners=recorder.runners())
    recorder.calls.clear()
    outcomes = run_recipe(make_recipe(tmp_path, renorm__method="r1"), runners=recorder.runners())
    assert [o.status for o in outcomes] == ["skipped", "skipped", "ran", "ran"]
    recorder.calls.clear()
    run_recipe(make_recipe(tmp_path, renorm__method="r1", finetune__epochs=1), runners=recorder.runners())
    assert recorder.calls == ["finetune", "renorm", "evaluate"]


def test_changed_local_input_file_reruns_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus.txt").write_text("jeden\n")
    recorder = Recorder()
    run_recipe(make_recipe(tmp_path), runners=recorder.runners())
    recorder.calls.clear()
    (tmp_path / "corpus.txt").write_text("jeden\ndva\n")
    run_recipe(make_recipe(tmp_path), runners=recorder.runners())
    assert recorder.calls == ["trim", "finetune", "renorm", "evaluate"]


def test_changed_file_behind_a_glob_reruns_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "a.txt").write_text("jeden\n")
    recorder = Recorder()
    recipe = make_recipe(tmp_path, trim__corpus="texts/*.txt", renorm=None, finetune=None, evaluate=None)
    run_recipe(recipe, runners=recorder.runners())
    run_recipe(recipe, runners=recorder.runners())
    assert recorder.calls == ["trim"]  # unchanged: skipped
    (tmp_path / "texts" / "a.txt").write_text("jeden\ndva\n")
    run_recipe(recipe, runners=recorder.runners())
    (tmp_path / "texts" / "b.txt").write_text("tri\n")  # a new file matching the glob
    run_recipe(recipe, runners=recorder.runners())
    assert recorder.calls == ["trim", "trim", "trim"]


def test_changed_evaluation_suite_reruns_finetune_and_renorm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """finetune (contamination check, anchor) and renorm (sample exclusion) read the evaluation suites."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suite.yaml").write_text("tasks:\n  - {name: S, type: STS, data: sts.jsonl}\n")
    (tmp_path / "sts.jsonl").write_text('{"sentence1": "a", "sentence2": "b", "score": 1}\n')
    recorder = Recorder()
    run_recipe(make_recipe(tmp_path, trim=None), runners=recorder.runners())
    recorder.calls.clear()
    (tmp_path / "sts.jsonl").write_text('{"sentence1": "a", "sentence2": "c", "score": 1}\n')
    run_recipe(make_recipe(tmp_path, trim=None), runners=recorder.runners())
    assert recorder.calls == ["finetune", "renorm", "evaluate"]


def test_clean_up_removes_only_its_own_temporary_directories(tmp_path: Path) -> None:
    from skadapt.artifacts import clean_stale

    for name in (".trim.tmp-1234", ".other.tmp-5678", ".failed-trim-abc", ".failed-x-abc"):
        (tmp_path / name).mkdir()
    removed = clean_stale(tmp_path, ["trim"])
    assert sorted(p.name for p in removed) == [".failed-trim-abc", ".trim.tmp-1234"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".failed-x-abc", ".other.tmp-5678"]


def test_failing_stage_leaves_no_artifact_and_resumes(tmp_path: Path) -> None:
    recorder = Recorder()
    runners = recorder.runners()

    def broken(ctx: StageContext) -> dict:
        (ctx.out_dir / "half-written.bin").write_bytes(b"x" * 10)
        (ctx.work_dir / "checkpoint").write_text("step 5")
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError, match="killed"):
        run_recipe(make_recipe(tmp_path), runners={**runners, "finetune": broken})
    run = tmp_path / "run"
    assert not (run / "finetune").exists()
    assert not [p for p in run.iterdir() if ".tmp-" in p.name]
    checkpoints = list((run / ".work").glob("finetune-*/checkpoint"))
    assert len(checkpoints) == 1  # resumable scratch survives the failure

    seen: list[str] = []

    def resuming(ctx: StageContext) -> dict:
        seen.append((ctx.work_dir / "checkpoint").read_text())
        (ctx.out_dir / "model.bin").write_text("ok")
        return {}

    recorder.calls.clear()
    outcomes = run_recipe(make_recipe(tmp_path), runners={**runners, "finetune": resuming})
    assert [o.status for o in outcomes] == ["skipped", "ran", "ran", "ran"]
    assert seen == ["step 5"]
    assert not list((run / ".work").glob("finetune-*"))


def test_stage_killed_by_signal_is_not_taken_for_finished(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A process killed mid-stage (SIGKILL) leaves only a hidden temp dir; the re-run removes it (with a
    line that names it) and redoes the stage."""
    run = tmp_path / "run"
    script = textwrap.dedent(
        f"""
        import os, signal, time
        from pathlib import Path
        from skadapt.pipeline import run_recipe
        from skadapt.recipe import validate_recipe

        def trim(ctx):
            (ctx.out_dir / "config.json").write_text("{{}}")
            (ctx.out_dir / "model.safetensors").write_bytes(b"partial")
            os.kill(os.getpid(), signal.SIGKILL)

        recipe = validate_recipe({{"name": "k", "language": "slk", "base_model": "m",
                                  "output_dir": {str(run)!r}, "trim": {{"corpus": "c.txt"}}}})
        run_recipe(recipe, runners={{"trim": trim}})
        """
    )
    process = subprocess.run([sys.executable, "-c", script], env={**os.environ}, capture_output=True)
    assert process.returncode == -signal.SIGKILL, process.stderr.decode()
    assert not (run / "trim").exists()
    leftovers = [p.name for p in run.iterdir() if p.name.startswith(".trim.tmp-")]
    assert len(leftovers) == 1

    recorder = Recorder()
    recipe = validate_recipe(
        {
            "name": "k",
            "language": "slk",
            "base_model": "m",
            "output_dir": str(run),
            "trim": {"corpus": "c.txt"},
        }
    )
    with caplog.at_level(logging.WARNING, logger="skadapt"):
        outcomes = run_recipe(recipe, runners={"trim": recorder.runner("trim")})
    assert [o.status for o in outcomes] == ["ran"]
    assert not [p for p in run.iterdir() if ".tmp-" in p.name]
    removed = f"removed {run / leftovers[0]}: left over by an earlier run that stopped before it finished"
    assert [r.getMessage() for r in caplog.records] == [removed]
    assert removed in (run / "run.log").read_text(encoding="utf-8")
    assert json.loads((run / "trim" / "manifest.json").read_text())["status"] == "complete"


def test_directory_without_manifest_is_not_finished(tmp_path: Path) -> None:
    recorder = Recorder()
    (tmp_path / "run" / "trim").mkdir(parents=True)
    (tmp_path / "run" / "trim" / "model.safetensors").write_text("copied by hand")
    run_recipe(make_recipe(tmp_path, finetune=None, renorm=None, evaluate=None), runners=recorder.runners())
    assert recorder.calls == ["trim"]


def test_from_reruns_stage_and_later(tmp_path: Path) -> None:
    recorder = Recorder()
    run_recipe(make_recipe(tmp_path), runners=recorder.runners())
    recorder.calls.clear()
    run_recipe(make_recipe(tmp_path), from_stage="renorm", runners=recorder.runners())
    assert recorder.calls == ["renorm", "evaluate"]


def test_only_runs_one_stage_and_needs_earlier_ones(tmp_path: Path) -> None:
    recorder = Recorder()
    with pytest.raises(PipelineError, match="earlier stage 'trim' is not finished"):
        run_recipe(make_recipe(tmp_path), only="finetune", runners=recorder.runners())
    run_recipe(make_recipe(tmp_path), runners=recorder.runners())
    recorder.calls.clear()
    run_recipe(make_recipe(tmp_path), only="finetune", runners=recorder.runners())
    assert recorder.calls == ["finetune"]
    with pytest.raises(PipelineError, match="not a stage of this recipe"):
        run_recipe(make_recipe(tmp_path, renorm=None), only="renorm", runners=recorder.runners())


def test_distributed_launch_rank0_writes_other_ranks_join_finetune(tmp_path: Path) -> None:
    """Under torchrun rank 0 runs every stage; rank 1 joins fine-tuning only and waits for rank 0's output."""
    import threading

    from skadapt.pipeline import Launch

    main, other = Recorder(), Recorder()
    outputs: dict[int, list] = {}
    rendezvous = threading.Event()  # like DDP: rank 0 cannot finish training without rank 1
    main_runners, other_runners = main.runners(), other.runners()
    main_finetune, other_finetune = main_runners["finetune"], other_runners["finetune"]

    def main_train(ctx: StageContext) -> dict:
        assert rendezvous.wait(timeout=20)
        return main_finetune(ctx)

    def other_train(ctx: StageContext) -> dict:
        assert ctx.out_dir != tmp_path / "run" / "finetune" and ctx.work_dir.name.startswith("finetune-")
        rendezvous.set()
        return other_finetune(ctx)

    def rank1() -> None:
        launch = Launch(rank=1, world_size=2, run_id="launch-1", poll_seconds=0.05)
        runners = {**other_runners, "finetune": other_train}
        outputs[1] = run_recipe(make_recipe(tmp_path), runners=runners, launch=launch)

    thread = threading.Thread(target=rank1)
    thread.start()
    runners = {**main_runners, "finetune": main_train}
    outputs[0] = run_recipe(make_recipe(tmp_path), runners=runners, launch=Launch(0, 2, "launch-1"))
    thread.join(timeout=30)
    assert not thread.is_alive()
    assert main.calls == ["trim", "finetune", "renorm", "evaluate"]
    assert other.calls == ["finetune"]
    assert [o.path for o in outputs[1]] == [o.path for o in outputs[0]]
    run = tmp_path / "run"
    assert read_manifest(run / "finetune")["run_id"] == "launch-1"
    assert (run / "finetune" / "artifact.txt").read_text() == f"finetune from {run / 'trim'}"


def test_distributed_failure_on_rank0_stops_other_ranks(tmp_path: Path) -> None:
    import threading

    from skadapt.pipeline import Launch

    errors: list[BaseException] = []

    def rank1() -> None:
        try:
            run_recipe(make_recipe(tmp_path), runners=Recorder().runners(), launch=Launch(1, 2, "l2", 0.05))
        except PipelineError as error:
            errors.append(error)

    def broken(ctx: StageContext) -> dict:
        raise RuntimeError("trim exploded")

    thread = threading.Thread(target=rank1)
    thread.start()
    with pytest.raises(RuntimeError, match="exploded"):
        run_recipe(
            make_recipe(tmp_path), runners={**Recorder().runners(), "trim": broken}, launch=Launch(0, 2, "l2")
        )
    thread.join(timeout=30)
    assert len(errors) == 1 and "failed on rank 0" in str(errors[0])


def test_edited_suite_data_file_reruns_the_stages_that_read_it(tmp_path: Path) -> None:
    """The suite YAML is named in the recipe, its data files are not: they are fingerprinted too."""
    from tests.support.suite_fixtures import write_tiny_suite

    suite = write_tiny_suite(tmp_path / "suite")
    recorder = Recorder()
    recipe = make_recipe(tmp_path, evaluate={"tasks": [str(suite)]})
    run_recipe(recipe, runners=recorder.runners())
    recorder.calls.clear()
    run_recipe(recipe, runners=recorder.runners())
    assert recorder.calls == []
    sts = tmp_path / "suite" / "sts.jsonl"
    sts.write_text(sts.read_text() + '{"sentence1": "Nová veta.", "sentence2": "Iná veta.", "score": 1.0}\n')
    run_recipe(recipe, runners=recorder.runners())
    assert recorder.calls == ["finetune", "renorm", "evaluate"]  # all three read the suite; trim does not


def test_a_stage_key_covers_the_other_sections_it_reads(tmp_path: Path) -> None:
    """Fine-tuning keeps the evaluation's tasks apart and renorm chooses on finetune.dev: changing what they
    read re-keys them (and only them); the standalone finetune command's work directory follows too."""
    from skadapt.pipeline.alone import alone_work_dir
    from skadapt.pipeline.keys import stage_key

    def keys(**overrides: object) -> dict[str, str]:
        recipe = make_recipe(tmp_path, **overrides)
        return {stage: stage_key(recipe, stage, [])[0] for stage in recipe.enabled_stages()}

    def work_dir(**overrides: object) -> Path:
        recipe = make_recipe(tmp_path, **overrides)
        models = {"base": "m", "final": "m"}
        return alone_work_dir("finetune", recipe.finetune, recipe.run_facts(), models, tmp_path / "out")

    base = keys()
    excluded = keys(evaluate__exclude_tasks=["TinyBitext"])
    assert {s for s in base if base[s] != excluded[s]} == {"finetune", "renorm", "evaluate"}
    other = keys(evaluate__tasks=["other.yaml"])
    assert {s for s in base if base[s] != other[s]} == {"trim", "finetune", "renorm", "evaluate"}
    dev = {"sets": [{"kind": "sts", "source": "sts_dev.jsonl"}]}
    with_dev = keys(finetune__dev=dev)
    assert {s for s in base if base[s] != with_dev[s]} == {"finetune", "renorm"}
    assert (
        work_dir() != work_dir(evaluate__exclude_tasks=["TinyBitext"]) != work_dir(evaluate__tasks=["x.yaml"])
    )
