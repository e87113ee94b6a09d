"""A real (tiny) run -- trim -> export -> evaluate -- moved, copied, published in parts or unevaluated.

Every path a run records is relative to the run directory (or absolute outside it), so a copied run, or one
published from another working directory, publishes exactly the files of the original: the model, its
ONNX files and the static repository. Stage keys are made of contents, not times or places: a copy of the
project with every mtime changed (a fresh clone) skips every finished stage.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from skadapt.artifacts import read_manifest
from skadapt.cli import app
from skadapt.pipeline import run_recipe
from skadapt.recipe import validate_recipe
from tests.support.suite_fixtures import write_tiny_suite
from tests.support.tiny_models import FIXTURE_TEXTS

pytest.importorskip("onnxruntime")
pytest.importorskip("model2vec")

runner = CliRunner()
RUN = Path("runs") / "tiny"
"""The run directory, relative to the project directory the recipe runs in (as the default runs/NAME)."""

pytestmark = pytest.mark.slow  # every test reads the module's one recipe run


def recipe_data() -> dict[str, Any]:
    """The smallest real recipe with a model stage, an export stage and an evaluation; every path in it
    relative to the project directory (the base model among them)."""
    return {
        "name": "tiny",
        "language": "slk",
        "base_model": "base",
        "output_dir": str(RUN),
        "trim": {"corpus": "corpus.jsonl", "vocab_size": 150, "workers": 1, "parity_documents": 5},
        "export": {"tiers": ["onnx-int8", "static"], "pca_dims": 16, "speed_texts": 8, "speed_repeats": 1},
        "evaluate": {"tasks": ["suite/suite.yaml"], "models": ["base", "final"], "bootstrap": 20},
    }


@pytest.fixture(scope="module")
def project(tiny_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A project directory (corpus, suite, recipe paths relative to it) with the finished run in runs/tiny."""
    root = tmp_path_factory.mktemp("project")
    shutil.copytree(tiny_models["unigram"], root / "base")
    lines = "".join(json.dumps({"text": text}, ensure_ascii=False) + "\n" for text in FIXTURE_TEXTS)
    (root / "corpus.jsonl").write_text(lines, encoding="utf-8")
    write_tiny_suite(root / "suite")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        patch.setenv("SKADAPT_CACHE", str(root / ".cache"))
        outcomes = run_recipe(validate_recipe(recipe_data()))
    assert [(o.stage, o.status) for o in outcomes] == [
        ("trim", "ran"),
        ("export", "ran"),
        ("evaluate", "ran"),
    ]
    yield root


@pytest.fixture(autouse=True)
def no_stored_token(monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)


def publish(path: Path, out: Path, repo_id: str = "me/tiny") -> tuple[int, str]:
    result = runner.invoke(app, ["publish", str(path), "--repo-id", repo_id, "--dry-run", "--out", str(out)])
    return result.exit_code, result.output


def published_files(out: Path) -> tuple[list[str], list[str]]:
    """(model repository files, static repository files) that a dry run assembled."""
    report = json.loads((out / "publish.json").read_text(encoding="utf-8"))
    static = report["static"]["files"] if report["static"] else []
    return [f["path"] for f in report["files"]], [f["path"] for f in static]


def test_the_run_records_paths_relative_to_itself(project: Path) -> None:
    run = project / RUN
    assert read_manifest(run / "evaluate")["models"]["final"] == "trim"
    assert read_manifest(run / "evaluate")["models"]["static"] == "export/static"
    assert json.loads((run / "export" / "export_report.json").read_text())["parent"] == "trim"
    report = json.loads((run / "evaluate" / "report.json").read_text())
    assert report["settings"]["models"]["final"] == "trim"


def test_a_copied_or_moved_run_publishes_the_same_files(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    code, output = publish(RUN, tmp_path / "original")
    assert code == 0, output
    files, static = published_files(tmp_path / "original")
    from skadapt.export.int8 import cpu_family
    from skadapt.export.onnx import int8_file

    assert {"onnx/model.onnx", f"onnx/{int8_file(cpu_family())}", "model.safetensors"} <= set(files)
    assert {"model.safetensors", "modules.json", "README.md"} <= set(static)
    card = (tmp_path / "original" / "upload" / "README.md").read_text(encoding="utf-8")
    assert "## Deployment tiers" in card and "Not evaluated" not in card

    elsewhere = tmp_path / "elsewhere" / "renamed-run"
    shutil.copytree(project / RUN, elsewhere)
    monkeypatch.chdir(tmp_path)  # another working directory: the recorded paths must not depend on it
    for label, path in (("copy", elsewhere), ("original from elsewhere", project / RUN)):
        out = tmp_path / label.replace(" ", "-")
        code, output = publish(path, out)
        assert code == 0, output
        assert published_files(out) == (files, static), label
        assert "## Deployment tiers" in (out / "upload" / "README.md").read_text(encoding="utf-8")


def shift_times(root: Path, seconds: int) -> None:
    """Every file's and directory's mtime moved by ``seconds``, as a fresh clone or a copy leaves them."""
    for path in [root, *root.rglob("*")]:
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + seconds * 10**9))


def test_a_copy_with_new_times_resumes_without_running_a_stage_until_an_input_changes(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The project copied elsewhere without its cache (as a clone of the same commit beside the same
    base model), every mtime a day later: every finished stage is skipped; then a changed byte of the
    corpus (the same size) re-runs trim, and the stages after it."""
    clone = tmp_path / "clone"
    shutil.copytree(project, clone, ignore=shutil.ignore_patterns(".cache"))
    shift_times(clone, 86_400)
    monkeypatch.chdir(clone)
    monkeypatch.setenv("SKADAPT_CACHE", str(clone / ".cache"))
    outcomes = run_recipe(validate_recipe(recipe_data()))
    assert [(o.stage, o.status) for o in outcomes] == [
        ("trim", "skipped"),
        ("export", "skipped"),
        ("evaluate", "skipped"),
    ]
    assert "stage trim: up to date, skipped" in (clone / RUN / "run.log").read_text(encoding="utf-8")

    corpus = clone / "corpus.jsonl"
    text = corpus.read_text(encoding="utf-8")
    corpus.write_text(text.replace("Bratislava", "Bratislavu", 1), encoding="utf-8")
    assert len(corpus.read_bytes()) == len(text.encode("utf-8"))
    outcomes = run_recipe(validate_recipe(recipe_data()))
    assert [(o.stage, o.status) for o in outcomes] == [
        ("trim", "ran"),
        ("export", "ran"),
        ("evaluate", "ran"),
    ]


@pytest.mark.parametrize("part", ["export/static", "export/model", "export"])
def test_a_tier_directory_is_refused_with_the_command_that_publishes_it(
    project: Path, tmp_path: Path, part: str
) -> None:
    run = project / RUN
    code, output = publish(run / part, tmp_path / "out", repo_id="me/tiny-static")
    flat = " ".join(output.split())
    assert code == 1, output
    assert "publish the run" in flat and f"skadapt publish {run} --repo-id me/tiny" in flat
    assert "me/tiny-static-static" not in flat and not (tmp_path / "out").exists()


def test_a_tier_exported_outside_a_run_is_refused(project: Path, tmp_path: Path) -> None:
    tiers = tmp_path / "tiers"
    shutil.copytree(project / RUN / "export", tiers)
    (tiers / "manifest.json").unlink()  # as `skadapt export --out` leaves it
    code, output = publish(tiers / "static", tmp_path / "out")
    assert code == 1 and "not a model a run made" in " ".join(output.split()), output


def test_an_unevaluated_run_is_published_with_a_warning_and_says_so(project: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(project / RUN, run)
    shutil.rmtree(run / "evaluate")
    code, output = publish(run, tmp_path / "out")
    assert code == 0, output
    warnings = [line for line in output.splitlines() if "not evaluated" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning:"), output
    card = (tmp_path / "out" / "upload" / "README.md").read_text(encoding="utf-8")
    first_section = card.split("\n## ", 1)[0]
    assert "**Not evaluated.**" in first_section and "Slovak tasks is unknown" in first_section
