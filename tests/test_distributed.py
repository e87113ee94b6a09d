"""`skadapt train` under torchrun: two CPU processes (gloo) train one model; rank 0 writes every artifact; a
launch killed mid-training resumes from its last checkpoint.

The ranks run ``tests/support/torchrun_probe.py``: ``skadapt`` itself, with every model save and manifest
write recorded with the rank that made it, and (first launch of the resume test) a stop at the first
checkpoint so the kill lands mid-training at a known step rather than by timing.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from sentence_transformers import SentenceTransformer

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
MODEL_STAGES = ("trim", "finetune", "renorm")
STEPS, SAVE_STEPS = 6, 3
LAUNCH_TIMEOUT_S = 600


def _recipe(tiny_model: Path, tmp_path: Path) -> tuple[Path, Path]:
    run = tmp_path / "run"
    recipe = {
        "name": "ddp",
        "language": "slk",
        "base_model": str(tiny_model),
        "output_dir": str(run),
        "trim": {"corpus": str(DATA / "sk_corpus.txt"), "vocab_size": 150, "parity_documents": 10},
        "finetune": {
            "datasets": [
                {"name": "nli", "kind": "nli", "source": str(DATA / "finetune" / "sk_train_nli.jsonl")},
                {"name": "sts", "kind": "sts", "source": str(DATA / "finetune" / "sk_train_sts.jsonl")},
            ],
            "batch_size": 8,
            "max_steps": STEPS,
            "save_steps": SAVE_STEPS,
            "max_seq_length": 32,
        },
        "renorm": {"corpus": str(DATA / "sk_corpus.txt"), "samples": 100},
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    return path, run


def _launch(recipe: Path, tmp_path: Path, name: str, **env: str) -> subprocess.Popen[bytes]:
    """Start ``torchrun --nproc_per_node 2`` on the probe in a process group of its own (NAME.out/.err)."""
    (tmp_path / "tmp").mkdir(exist_ok=True)  # rank 1's scratch output lands here
    environment = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "SKADAPT_CACHE": str(tmp_path / "cache"),
        "TMPDIR": str(tmp_path / "tmp"),
        "SKADAPT_PROBE_LOG": str(tmp_path / "probe.log"),
        **env,
    }
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    # files, not pipes: nothing blocks on output while the test waits
    with (tmp_path / f"{name}.out").open("wb") as out, (tmp_path / f"{name}.err").open("wb") as err:
        return subprocess.Popen(
            [*command, "-m", "tests.support.torchrun_probe", "train", str(recipe)],
            cwd=ROOT,
            env=environment,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )


def _read(tmp_path: Path, name: str) -> tuple[str, str]:
    """A launch's (stdout, stderr)."""
    out, err = (
        (tmp_path / f"{name}.{kind}").read_text(encoding="utf-8", errors="replace") for kind in ("out", "err")
    )
    return out, err


def _finish(process: subprocess.Popen[bytes], tmp_path: Path, name: str) -> str:
    """The launch's stdout, once it exited successfully."""
    process.wait(timeout=LAUNCH_TIMEOUT_S)
    out, err = _read(tmp_path, name)
    assert process.returncode == 0, out[-3000:] + err[-3000:]
    return out


def _writes(tmp_path: Path) -> list[tuple[str, str, str]]:
    """(rank, kind, path) of every model save and manifest write recorded so far."""
    lines = (tmp_path / "probe.log").read_text(encoding="utf-8").splitlines()
    return [tuple(line.split("\t")) for line in lines]  # type: ignore[misc]


def _stage_of(path: str, run: Path) -> str:
    """The stage whose output a write went to (``<run>/.trim.tmp-*/...`` -> trim), or the checkpoint."""
    found = re.search(r"(checkpoint-\d+)", path)
    if found:
        return found.group(1)
    relative = Path(path).relative_to(run)
    return re.sub(r"^\.(\w+)\.tmp-.*$", r"\1", relative.parts[0])


def _assert_rank0_wrote_each_once(tmp_path: Path, run: Path) -> Counter[str]:
    """Every write came from rank 0; each stage's model and manifest was written exactly once.

    Returns:
        How many times each checkpoint was saved.
    """
    writes = _writes(tmp_path)
    others = [write for write in writes if write[0] != "0"]
    assert writes and not others, f"ranks other than 0 wrote: {others}"
    models = Counter(_stage_of(path, run) for _, kind, path in writes if kind == "model")
    checkpoints = Counter({k: v for k, v in models.items() if k.startswith("checkpoint-")})
    assert models - checkpoints == Counter(MODEL_STAGES), models
    manifests = Counter(_stage_of(path, run) for _, kind, path in writes if kind == "manifest")
    assert manifests == Counter(MODEL_STAGES), manifests
    on_disk = {p.relative_to(run).parts[0] for p in run.rglob("*.safetensors")}
    assert on_disk == set(MODEL_STAGES)  # weights only in the stage directories: no checkpoint or copy left
    return checkpoints


def _assert_finished(run: Path) -> dict:
    report = json.loads((run / "finetune" / "training_report.json").read_text())
    assert report["steps"] == {"done": STEPS, "planned": STEPS} and report["world_size"] == 2
    assert not (run / ".work").exists() or not any((run / ".work").iterdir())
    assert not [p for p in run.iterdir() if p.name.startswith(".") and p.name != ".work"]
    model = SentenceTransformer(str(run / "renorm"), device="cpu")
    assert model.encode(["Bratislava je hlavné mesto."]).shape == (1, 32)
    return report


@pytest.mark.slow
def test_torchrun_two_ranks_train_one_model(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    recipe, run = _recipe(tiny_models["unigram"], tmp_path)
    output = _finish(_launch(recipe, tmp_path, "launch"), tmp_path, "launch")
    assert output.count("run ddp ->") == 2  # both ranks finished the recipe

    manifests = {s: json.loads((run / s / "manifest.json").read_text()) for s in MODEL_STAGES}
    assert len({m["run_id"] for m in manifests.values()}) == 1 and manifests["trim"]["run_id"]
    report = _assert_finished(run)
    assert report["resumed_from"] is None
    checkpoints = _assert_rank0_wrote_each_once(tmp_path, run)
    assert checkpoints == Counter({f"checkpoint-{SAVE_STEPS}": 1, f"checkpoint-{STEPS}": 1})


def _kill(process: subprocess.Popen[bytes], worker_pids: list[int]) -> None:
    """SIGKILL the torchrun agent's process group and each worker's (torchrun starts every worker in a
    session of its own): nothing gets to clean up, as when a machine is lost."""
    for group in (process.pid, *worker_pids):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
    process.wait(timeout=60)


def _stops(hang: Path) -> list[tuple[int, int]]:
    """(worker pid, step) of each rank that has stopped after a checkpoint."""
    found = [marker.read_text().split() for marker in sorted(hang.glob("rank*.pid"))]
    return [(int(pid), int(step)) for pid, step in (f for f in found if len(f) == 2)]


def _wait_for_checkpoint(
    process: subprocess.Popen[bytes], tmp_path: Path, hang: Path
) -> list[tuple[int, int]]:
    """(worker pid, step) of both ranks, once both stopped after their first checkpoint."""
    deadline = time.monotonic() + LAUNCH_TIMEOUT_S
    while len(stops := _stops(hang)) < 2:
        if process.poll() is not None:
            out, err = _read(tmp_path, "killed")
            raise AssertionError(f"the launch ended before its first checkpoint:\n{out[-3000:]}{err[-3000:]}")
        assert time.monotonic() < deadline, "no checkpoint within the time limit"
        time.sleep(0.2)
    return stops


@pytest.mark.slow
def test_torchrun_killed_mid_training_resumes_from_its_checkpoint(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    recipe, run = _recipe(tiny_models["unigram"], tmp_path)
    hang = tmp_path / "hang"
    hang.mkdir()
    first = _launch(recipe, tmp_path, "killed", SKADAPT_PROBE_HANG=str(hang))
    try:
        stops = _wait_for_checkpoint(first, tmp_path, hang)
    finally:
        _kill(first, [pid for pid, _ in _stops(hang)])
    assert [step for _, step in stops] == [SAVE_STEPS, SAVE_STEPS]  # both ranks, mid-training
    trim_manifest = (run / "trim" / "manifest.json").read_text()
    assert not (run / "finetune").exists()  # killed mid-training: the stage never looked finished
    (checkpoint,) = [p.name for p in run.glob(".work/finetune-*/checkpoints/checkpoint-*")]
    assert checkpoint == f"checkpoint-{SAVE_STEPS}"
    saved_before = Counter(_stage_of(path, run) for _, kind, path in _writes(tmp_path) if kind == "model")
    assert saved_before == Counter({"trim": 1, checkpoint: 1})

    output = _finish(_launch(recipe, tmp_path, "resumed"), tmp_path, "resumed")
    assert output.count("run ddp ->") == 2
    assert (run / "trim" / "manifest.json").read_text() == trim_manifest  # finished stage: skipped
    report = _assert_finished(run)
    assert report["resumed_from"] == checkpoint  # resumed, not restarted
    finetune = json.loads((run / "finetune" / "manifest.json").read_text())
    assert finetune["result"]["resumed_from"] == checkpoint
    assert json.loads(trim_manifest)["run_id"] != finetune["run_id"]
    assert [point["step"] for point in report["loss_curve"]] == list(range(1, STEPS + 1))  # one history
    checkpoints = _assert_rank0_wrote_each_once(tmp_path, run)
    # checkpoint-3 was saved once, by the killed launch: the resumed one did not redo steps 1-3
    assert checkpoints == Counter({checkpoint: 1, f"checkpoint-{STEPS}": 1})
