"""CLI exit codes and messages."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from skadapt.cli import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def test_help_lists_every_command() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in (
        "train",
        "recipe",
        "trim",
        "finetune",
        "renorm",
        "evaluate",
        "robustness",
        "synth-sts",
        "annotate",
        "publish",
        "publish-dataset",
    ):
        assert command in result.output


def test_validate_shipped_recipe() -> None:
    result = runner.invoke(app, ["recipe", "validate", str(ROOT / "recipes" / "e5_sk_small.yaml")])
    assert result.exit_code == 0, result.output
    assert "valid" in result.output


def test_validate_misspelled_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nlanguage: slk\nbase_model: m\ntrim:\n  vocab_sizee: 5\n")
    result = runner.invoke(app, ["recipe", "validate", str(path)])
    assert result.exit_code == 1
    assert "trim.vocab_sizee: unknown field" in result.output
    assert str(path) in result.output
    assert "Traceback" not in result.output


def test_show_resolves_defaults_and_overrides() -> None:
    result = runner.invoke(
        app, ["recipe", "show", str(ROOT / "recipes" / "e5_sk_small.yaml"), "--set", "finetune.epochs=1"]
    )
    assert result.exit_code == 0, result.output
    shown = yaml.safe_load(result.stdout)
    assert shown["finetune"]["epochs"] == 1
    assert shown["trim"]["parity_documents"] == 1000  # a default not written in the file


@pytest.mark.parametrize("code", ["pol", "ces", "ukr"])
def test_recipe_new_prints_a_loadable_recipe(code: str) -> None:
    result = runner.invoke(app, ["recipe", "new", "--language", code])
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(result.stdout)
    assert data["language"] == code


def test_recipe_new_unknown_language() -> None:
    result = runner.invoke(app, ["recipe", "new", "--language", "xxx"])
    assert result.exit_code == 1
    assert "unknown language 'xxx'" in result.output


def test_train_with_unavailable_stage_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skadapt import pipeline

    monkeypatch.setitem(pipeline.STAGE_RUNNERS, "publish", "skadapt.no_such_stage:run_stage")
    path = tmp_path / "r.yaml"
    path.write_text(
        f"name: x\nlanguage: slk\nbase_model: m\noutput_dir: {tmp_path / 'run'}\npublish: {{repo_id: a/b}}\n"
    )
    result = runner.invoke(app, ["train", str(path)])
    assert result.exit_code == 2
    assert "stage 'publish' is not available yet" in result.output
    assert not (tmp_path / "run").exists()


def test_train_rejects_unknown_stage_option(tmp_path: Path) -> None:
    result = runner.invoke(app, ["train", str(ROOT / "recipes" / "e5_sk_small.yaml"), "--from", "trimm"])
    assert result.exit_code == 1
    assert "unknown stage" in result.output


def test_train_missing_recipe(tmp_path: Path) -> None:
    result = runner.invoke(app, ["train", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 1
    assert "recipe file not found" in result.output


def test_languages_table() -> None:
    result = runner.invoke(app, ["languages"])
    assert result.exit_code == 0
    assert "slk" in result.output and "Slovak" in result.output
