"""One way to run a stage: each stage run as a one-stage recipe and as its command, on the same inputs, gives
the same report (less timings and paths) and, where it makes a model, the same embeddings.

Both paths run the stage's own ``run`` through the recipe runner's stage execution (the command through
:func:`skadapt.api.run_stage`), so a check one path makes and the other skips cannot come back: the
renorm command stops on an evaluation task it cannot reach, as the renorm stage does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from skadapt.cli import app
from skadapt.pipeline import run_recipe
from skadapt.recipe import validate_recipe
from skadapt.textsample import split_sentences
from tests.support.llm_server import scripted_server
from tests.support.suite_fixtures import write_tiny_suite
from tests.support.synth_llm import CORPUS, script_for
from tests.support.tiny_models import FIXTURE_TEXTS

runner = CliRunner()

VOLATILE = {
    "seconds",
    "counts_cached",
    "cached",
    "elapsed_s",
    "speed",
    "machine",
    "load_s",
    "source",
    "model_dir",
    "parent",
    "dir",
    "time_s",
}
"""Report fields that say when, where or how fast, not what: left out of the comparison (with those ending
in ``_runtime`` or ``_per_second``, the trainer's)."""


def comparable(value: Any, roots: tuple[Path, ...]) -> Any:
    """``value`` without the :data:`VOLATILE` fields, each path under one of ``roots`` as ``<path>``."""
    if isinstance(value, dict):
        return {
            k: comparable(v, roots)
            for k, v in value.items()
            if k not in VOLATILE and not k.endswith(("_runtime", "_per_second"))
        }
    if isinstance(value, list):
        return [comparable(v, roots) for v in value]
    if isinstance(value, str) and any(str(root) in value for root in roots):
        return "<path>"
    return value


def run_one_stage(root: Path, base: Path, stage: str, section: dict[str, Any], **other: Any) -> Path:
    """Run a recipe of ``stage`` alone (``other``: further sections, not run) on ``base``; its directory."""
    data = {
        "name": stage,
        "language": "slk",
        "base_model": str(base),
        "output_dir": str(root / "run"),
        stage: section,
        **other,
    }
    outcomes = run_recipe(validate_recipe(data), only=stage)
    assert [(o.stage, o.status) for o in outcomes] == [(stage, "ran")]
    return root / "run" / stage


def command(args: list[str]) -> str:
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def same_report(name: str, recipe_dir: Path, command_dir: Path, root: Path) -> dict[str, Any]:
    """The report ``name`` of both directories, compared; the recipe's."""
    ran = json.loads((recipe_dir / name).read_text(encoding="utf-8"))
    commanded = json.loads((command_dir / name).read_text(encoding="utf-8"))
    assert comparable(commanded, (root,)) == comparable(ran, (root,))
    return ran


def same_embeddings(recipe_dir: Path, command_dir: Path) -> None:
    from sentence_transformers import SentenceTransformer

    ran = SentenceTransformer(str(recipe_dir), device="cpu").encode(FIXTURE_TEXTS)
    commanded = SentenceTransformer(str(command_dir), device="cpu").encode(FIXTURE_TEXTS)
    np.testing.assert_array_equal(commanded, ran)


def same_files(ran: Path, out: Path, skip: frozenset[str] | set[str] = frozenset()) -> None:
    """The same files, byte for byte, under both directories (but those named in ``skip``)."""
    names = sorted(
        p.relative_to(ran).as_posix() for p in ran.rglob("*") if p.is_file() and p.name not in skip
    )
    assert names and names == sorted(
        p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file() and p.name not in skip
    )
    for name in names:
        assert (out / name).read_bytes() == (ran / name).read_bytes(), name


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    lines = "".join(json.dumps({"text": text}, ensure_ascii=False) + "\n" for text in FIXTURE_TEXTS)
    path.write_text(lines, encoding="utf-8")
    return path


def test_trim(tiny_models: dict[str, Path], tmp_path: Path, corpus: Path) -> None:
    suite = write_tiny_suite(tmp_path / "suite")
    section = {"corpus": str(corpus), "vocab_size": 150, "workers": 1, "parity_documents": 5}
    ran = run_one_stage(tmp_path, tiny_models["unigram"], "trim", section, evaluate={"tasks": [str(suite)]})
    out = tmp_path / "trimmed"
    args = ["trim", str(tiny_models["unigram"]), "--out", str(out), "--corpus", str(corpus)]
    args += ["--vocab-size", "150", "--workers", "1", "--parity-documents", "5", "--language", "slk"]
    command([*args, "--eval-tasks", str(suite)])
    report = same_report("trim_report.json", ran, out, tmp_path)
    assert report["evaluation_tokenization"]["texts"] > 0  # the check the command used to skip
    assert (out / "README.md").read_text() == (ran / "README.md").read_text()
    same_embeddings(ran, out)


def dev_sts(path: Path) -> Path:
    """A small STS dev set of corpus sentence pairs with fixed scores."""
    sentences = split_sentences(CORPUS.read_text(encoding="utf-8"), "sk")[:24]
    rows = [
        {"sentence1": a, "sentence2": b, "score": float(i % 6)}
        for i, (a, b) in enumerate(zip(sentences[::2], sentences[1::2], strict=True))
    ]
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def test_renorm_chooses_on_dev_sets_the_same_way(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    suite = write_tiny_suite(tmp_path / "suite")
    dev = dev_sts(tmp_path / "dev.jsonl")
    section = {
        "corpus": str(CORPUS),
        "samples": 40,
        "min_chars": 20,
        "method": "r2",
        "dev": {"kind": "sts", "source": str(dev)},
    }
    ran = run_one_stage(tmp_path, tiny_models["unigram"], "renorm", section, evaluate={"tasks": [str(suite)]})
    out = tmp_path / "renormed"
    args = ["renorm", str(tiny_models["unigram"]), "--out", str(out), "--corpus", str(CORPUS)]
    args += ["--samples", "40", "--min-chars", "20", "--method", "r2", "--language", "slk"]
    args += ["--set", "dev.kind=sts", "--set", f"dev.source={dev}", "--exclude-tasks", str(suite)]
    command(args)
    report = same_report("renorm_report.json", ran, out, tmp_path)
    assert report["selection"] is not None  # chosen on the dev sets, both ways
    if report["kept"]:
        same_embeddings(ran, out)
    np.testing.assert_array_equal(np.load(out / "renorm_mu.npy"), np.load(ran / "renorm_mu.npy"))


def test_renorm_command_stops_on_an_unreachable_evaluation_task(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The renorm stage fails closed on an evaluation task whose test texts it cannot read (they would go
    unchecked into the dev sets); the command used to skip the task silently."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    dev = dev_sts(tmp_path / "dev.jsonl")
    out = tmp_path / "renormed"
    args = ["renorm", str(tiny_models["unigram"]), "--out", str(out), "--corpus", str(CORPUS)]
    args += ["--samples", "40", "--min-chars", "20", "--language", "slk"]
    args += ["--set", "dev.kind=sts", "--set", f"dev.source={dev}", "--exclude-tasks", "SlovakSumRetrieval"]
    result = runner.invoke(app, args, env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert "SlovakSumRetrieval" in text and "cannot be reached" in text and not out.exists()
    # what the command's user can change: its own option, never a recipe field it has no way to set
    assert "or leave SlovakSumRetrieval out of --exclude-tasks" in text, text
    assert "contamination.allow" not in text and "evaluate." not in text


def test_finetune_command_names_its_own_options_for_an_unreachable_task(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The contamination check stops on an unreachable evaluation task; the command's user is told the
    command's options (--eval-tasks, --set contamination.allow), not the recipe's evaluate.* fields."""
    from tests.support.finetune_recipe import NLI_STS

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    out = tmp_path / "tuned"
    source = NLI_STS[1]["source"]
    args = ["finetune", str(tiny_models["unigram"]), "--out", str(out), "--language", "slk"]
    args += ["--set", f"datasets=[{{name: sts, kind: sts, source: {source}}}]"]
    args += ["--eval-tasks", "SlovakSumRetrieval"]
    result = runner.invoke(app, args, env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert "SlovakSumRetrieval" in text and "cannot be reached" in text and not out.exists()
    assert "leave SlovakSumRetrieval out of --eval-tasks" in text, text
    assert "or --set contamination.allow=true to go on without checking it" in text
    assert "evaluate." not in text and "finetune.contamination" not in text


def test_evaluate(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    suite = write_tiny_suite(tmp_path / "suite")
    section = {"tasks": [str(suite)], "models": ["base"], "bootstrap": 20}
    ran = run_one_stage(tmp_path, tiny_models["unigram"], "evaluate", section)
    out = tmp_path / "evaluated"
    args = ["evaluate", f"base={tiny_models['unigram']}", "--tasks", str(suite), "--bootstrap", "20"]
    printed = command([*args, "--language", "slk", "--out", str(out), "--cache", str(tmp_path / "mteb")])
    same_report("report.json", ran, out, tmp_path)
    assert (out / "report.md").read_text() == (ran / "report.md").read_text()
    assert "main scores" in printed


def test_synth_sts(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    section = {"corpus": str(CORPUS), "n_sources": 8, "annotation_sample_per_level": 2}
    with scripted_server(script_for({})) as server:
        # a cache each: both paths send the same requests (the generation counts are compared)
        llm = {"backend": "openai", "model": "m", "base_url": server.url, "cache": str(tmp_path / "c1")}
        ran = run_one_stage(
            tmp_path, tiny_models["unigram"], "synth_sts", {**section, "contamination_tasks": []}, llm=llm
        )
        out = tmp_path / "synth"
        args = ["synth-sts", "--out", str(out), "--language", "slk", "--corpus", str(CORPUS)]
        args += ["--n-sources", "8", "--annotation-sample-per-level", "2", "--set", "contamination_tasks=[]"]
        args += ["--llm-backend", "openai", "--llm-model", "m", "--llm-base-url", server.url]
        command([*args, "--llm-cache", str(tmp_path / "c2")])
    same_report("generation_report.json", ran, out, tmp_path)
    same_files(ran / "dataset", out / "dataset")
    same_files(ran / "annotation", out / "annotation")


def test_publish_dry_run(tiny_models: dict[str, Path], tmp_path: Path, corpus: Path) -> None:
    """A run with a model stage published by the recipe's publish stage and by `skadapt publish RUN`."""
    trim = {"corpus": str(corpus), "vocab_size": 150, "workers": 1, "parity_documents": 5}
    data = {
        "name": "p",
        "language": "slk",
        "base_model": str(tiny_models["unigram"]),
        "output_dir": str(tmp_path / "run"),
        "trim": trim,
        "publish": {"repo_id": "me/tiny", "dry_run": True},
    }
    outcomes = run_recipe(validate_recipe(data))
    assert [(o.stage, o.status) for o in outcomes] == [("trim", "ran"), ("publish", "ran")]
    ran = tmp_path / "run" / "publish"
    out = tmp_path / "published"
    command(["publish", str(tmp_path / "run"), "--repo-id", "me/tiny", "--dry-run", "--out", str(out)])
    same_report("publish.json", ran, out, tmp_path)
    same_files(ran, out, skip={"publish.json", "manifest.json"})  # the manifest is the run's


@pytest.mark.slow
def test_export(tiny_models: dict[str, Path], tmp_path: Path, corpus: Path) -> None:
    pytest.importorskip("onnxruntime")
    section = {"tiers": ["onnx"], "speed_corpus": str(corpus), "speed_texts": 8, "speed_repeats": 1}
    ran = run_one_stage(tmp_path, tiny_models["unigram"], "export", section)
    out = tmp_path / "exported"
    args = ["export", str(tiny_models["unigram"]), "--out", str(out), "--tiers", "onnx"]
    command([*args, "--speed-corpus", str(corpus), "--speed-texts", "8", "--speed-repeats", "1"])
    report = same_report("export_report.json", ran, out, tmp_path)
    assert report["tiers"] == {"onnx": "model/onnx/model.onnx"}
    same_embeddings(ran / "model", out / "model")
    assert (out / "model/onnx/model.onnx").read_bytes() == (ran / "model/onnx/model.onnx").read_bytes()


def test_finetune(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    import yaml

    from tests.support.finetune_recipe import tiny_recipe

    data = tiny_recipe(tiny_models["unigram"], tmp_path / "run", epochs=1)
    outcomes = run_recipe(validate_recipe(data))
    assert [(o.stage, o.status) for o in outcomes] == [("finetune", "ran")]
    ran = tmp_path / "run" / "finetune"
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(data), encoding="utf-8")
    out = tmp_path / "tuned"
    command(["finetune", str(tiny_models["unigram"]), "--out", str(out), "--config", str(recipe)])
    same_report("training_report.json", ran, out, tmp_path)
    same_embeddings(ran, out)


@pytest.mark.slow
def test_robustness(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    from tests.test_robustness import script

    suite = write_tiny_suite(tmp_path / "suite")
    section = {"tasks": [str(suite)], "transforms": ["paraphrase"], "seeds": [7], "models": ["base"]}
    with scripted_server(script) as server:
        llm = {"backend": "openai", "model": "scripted", "base_url": server.url, "attempts": 2}
        ran = run_one_stage(
            tmp_path,
            tiny_models["unigram"],
            "robustness",
            section,
            llm={**llm, "cache": str(tmp_path / "c1")},
        )
        out = tmp_path / "robust"
        args = ["robustness", f"base={tiny_models['unigram']}", "--tasks", str(suite), "--language", "slk"]
        args += ["--transforms", "paraphrase", "--seeds", "7", "--out", str(out), "--llm-model", "scripted"]
        args += ["--llm-base-url", server.url, "--llm-cache", str(tmp_path / "c2"), "--llm-attempts", "2"]
        command(args)
    same_report("robustness.json", ran, out, tmp_path)


def test_the_language_is_resolved_at_the_edge() -> None:
    """The public API and the commands take a Language, its ISO 639-3 code or its ISO 639-1 code."""
    from skadapt.languages import LANGUAGES, UnknownLanguageError, get_language, resolve_language

    slovak = get_language("slk")
    assert resolve_language("slk") is resolve_language("sk") is resolve_language(slovak) is slovak
    for code, entry in LANGUAGES.items():
        assert resolve_language(code) is entry
        assert entry.iso639_1 is None or resolve_language(entry.iso639_1) is entry
    with pytest.raises(UnknownLanguageError, match=r"unknown language 'xx'.*slk \(sk\)"):
        resolve_language("xx")


def test_a_command_refuses_an_unknown_language_before_reading(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["trim", "org/m", "--out", str(tmp_path / "o"), "--corpus", "c.txt", "--language", "xx"]
    )
    assert result.exit_code == 2 and "unknown language 'xx'" in " ".join(result.output.split())
    assert not (tmp_path / "o").exists()
