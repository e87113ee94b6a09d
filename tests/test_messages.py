"""Messages a new user meets on a mistake or an interruption: each names what they typed or what was kept."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from skadapt.cli import app


def test_a_section_rule_names_the_rule_not_the_section_repr(tmp_path: Path) -> None:
    """A rule over a whole dataset entry (hard negatives on an nli dataset) says what is wrong in one line,
    without the entry's 600-character repr."""
    from skadapt.config import RecipeError
    from skadapt.recipe import load_recipe

    recipe = {
        "name": "hn",
        "language": "slk",
        "base_model": "m",
        "finetune": {
            "datasets": [
                {"name": "nli", "kind": "nli", "source": "x.jsonl", "hard_negatives": {"corpus": "c.txt"}}
            ]
        },
    }
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(recipe))
    with pytest.raises(RecipeError) as caught:
        load_recipe(path)
    message = str(caught.value)
    assert "finetune.datasets.0: hard_negatives mines negatives for (anchor, positive) pairs" in message
    assert "FinetuneDataset(" not in message and "{'name'" not in message and len(message) < 300


def test_ctrl_c_says_what_was_kept(
    tmp_path: Path, tiny_models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C during a stage (Python raises KeyboardInterrupt where the stage is) exits 130 with one line,
    in run.log too, naming the stage it stopped in and the finished stages kept; the finished stage is on
    disk."""
    from skadapt import stages
    from skadapt.results import TrimSummary

    def trimmed(ctx: Any) -> TrimSummary:
        (ctx.out_dir / "marker").write_text("trim ran")
        return TrimSummary.of({})

    def interrupted(ctx: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setitem(stages.BY_NAME, "trim", replace(stages.BY_NAME["trim"], run=trimmed))
    monkeypatch.setitem(stages.BY_NAME, "renorm", replace(stages.BY_NAME["renorm"], run=interrupted))
    recipe = {
        "name": "cc",
        "language": "slk",
        "base_model": str(tiny_models["unigram"]),
        "output_dir": str(tmp_path / "run"),
        "trim": {"corpus": "wordfreq:sk"},
        "renorm": {"corpus": "wordfreq:sk", "select": "method"},
    }
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump(recipe))
    result = CliRunner().invoke(app, ["train", str(path), "--no-check"])
    assert result.exit_code == 130, result.output
    line = f"interrupted by SIGINT during stage renorm; finished stages kept in {tmp_path / 'run'}: trim;"
    assert line in result.output and line in (tmp_path / "run" / "run.log").read_text()
    assert (tmp_path / "run" / "trim" / "marker").is_file() and not (tmp_path / "run" / "renorm").exists()


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (["annotate", "agreement"], "no such directory; give the directory `skadapt annotate export --out`"),
        (["human", "score"], "no such directory; give the directory `skadapt human export --out`"),
    ],
)
def test_a_sheet_directory_that_does_not_exist_is_named(
    tmp_path: Path, command: list[str], expected: str
) -> None:
    """Was: "nosuch/key.jsonl: the key written by the export is missing" for a typo in the directory."""
    result = CliRunner().invoke(app, [*command, str(tmp_path / "nosuch")])
    assert result.exit_code == 1, result.output
    assert f"{tmp_path / 'nosuch'}: {expected}" in " ".join(result.output.split())


def test_a_missing_required_option_names_the_option(tmp_path: Path) -> None:
    """``publish --dry-run`` without ``--repo-id`` names the option and its recipe key (was: "Field required
    (got {'dry_run': True})")."""
    result = CliRunner().invoke(app, ["publish", str(tmp_path), "--dry-run"])
    assert result.exit_code == 2, result.output
    assert "--repo-id: required (give it, or --set publish.repo_id=...)" in result.output
    assert "dry_run" not in result.output
