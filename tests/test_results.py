"""Typed stage results (``skadapt.results``): a renamed or missing report field fails loudly, naming the file
and the field, instead of silently dropping a section from the model card; the pipeline checks each stage's
report against its type and records it in the manifest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from skadapt.cli import app
from skadapt.publish.target import find_target
from skadapt.results import (
    EvaluationReport,
    ExportReport,
    RenormReport,
    ReportError,
    RobustnessReport,
    StageReport,
    TrainingReport,
    TrimReport,
)
from skadapt.stages import STAGES
from tests.test_publish import (
    RENORM_REPORT,
    ROBUSTNESS_REPORT,
    _add_export,
    build_run,
    evaluation_report,
    training_report,
    trim_report,
)

EXPORT_REPORT = {"parent": "renorm", "tiers": {"static": "static"}, "speed": {"static": {"speedup": 9.0}}}
FIXTURES: dict[type[StageReport], Any] = {
    TrimReport: trim_report(),
    TrainingReport: training_report(),
    RenormReport: RENORM_REPORT,
    ExportReport: EXPORT_REPORT,
    EvaluationReport: evaluation_report(Path("runs/demo")),
    RobustnessReport: ROBUSTNESS_REPORT,
}


def _required(report_type: type[StageReport]) -> list[str]:
    return [name for name, info in report_type.model_fields.items() if info.is_required()]


@pytest.mark.parametrize(
    ("report_type", "field"),
    [(t, f) for t in FIXTURES for f in _required(t)],
    ids=lambda v: v.__name__ if isinstance(v, type) else str(v),
)
def test_every_required_field_renamed_is_a_clear_error(report_type: type[StageReport], field: str) -> None:
    data = dict(FIXTURES[report_type])
    assert report_type.parse(data).as_json() == data  # read back unchanged, undeclared fields kept
    data[f"{field}_renamed"] = data.pop(field)
    with pytest.raises(ReportError, match=rf"{report_type.FILE}: not a {report_type.__name__} \({field}: "):
        report_type.parse(data)


def test_a_nested_field_renamed_is_a_clear_error() -> None:
    data = json.loads(json.dumps(FIXTURES[TrainingReport]))
    data["steps"]["completed"] = data["steps"].pop("done")
    with pytest.raises(ReportError, match=r"steps\.done: Field required"):
        TrainingReport.parse(data)


def test_a_renamed_report_key_stops_the_card_with_the_file_and_field(
    tmp_path: Path, tiny_models: dict[str, Path]
) -> None:
    """Before: a renamed ``steps`` key dropped the steps line from the card without a word."""
    run = build_run(tmp_path, tiny_models["unigram"])
    path = run / "finetune" / TrainingReport.FILE
    report = json.loads(path.read_text())
    report["optimizer_steps"] = report.pop("steps")
    path.write_text(json.dumps(report))
    result = CliRunner().invoke(app, ["publish", str(run), "--repo-id", "me/m", "--dry-run"])
    assert result.exit_code == 1
    assert f"{path}: not a TrainingReport (steps: Field required)" in " ".join(result.output.split())
    assert not (tmp_path / "runs" / "demo-publish").exists()  # nothing assembled


def test_a_renamed_result_model_field_stops_the_card(tmp_path: Path, tiny_models: dict[str, Path]) -> None:
    """The other side: the type renames a field the stage's file still calls by its old name."""
    from dataclasses import replace

    from pydantic import create_model

    renamed = create_model("RenormReport", __base__=RenormReport, norm_of_mu=(float, ...))  # was mu_norm
    stages = [replace(stage, report=renamed) if stage.report is RenormReport else stage for stage in STAGES]
    run = build_run(tmp_path, tiny_models["unigram"])
    with pytest.raises(
        ReportError, match=r"renorm_report\.json: not a RenormReport \(norm_of_mu: Field required\)"
    ):
        find_target(run, stages=stages)


def test_publish_reads_each_report_through_the_type_its_stage_declares(
    tmp_path: Path, tiny_models: dict[str, Path]
) -> None:
    """Publish keeps no stage -> report map of its own: it reads the one the stages declare."""
    run = build_run(tmp_path, tiny_models["unigram"])
    _add_export(run, run / "renorm")
    read = find_target(run, stages=STAGES).reports.by_stage
    declared = {stage.name: stage.report for stage in STAGES if stage.report is not None}
    assert {stage: type(report) for stage, report in read.items()} == declared
    assert set(declared.values()) == set(FIXTURES)  # every report type, each declared by one stage


def test_each_stage_returns_its_declared_result_type() -> None:
    """``Stage.run`` returns the stage's result type, the one the pipeline reads a skipped stage's manifest
    through: a stage whose run returns one type and declares another reads back what it never wrote."""
    import typing

    from skadapt.results import StageResult

    for stage in STAGES:
        returned = typing.get_type_hints(stage.run)["return"]
        assert returned is stage.result, f"{stage.name}: run returns {returned}, declares {stage.result}"
        assert stage.result is not StageResult and issubclass(stage.result, StageResult), stage.name


def test_the_pipeline_checks_and_records_each_report(tmp_path: Path) -> None:
    from skadapt.artifacts import read_manifest
    from skadapt.pipeline import run_recipe
    from skadapt.recipe import validate_recipe
    from skadapt.stage import StageContext

    good = trim_report()

    def trim(ctx: StageContext) -> dict[str, Any]:
        (ctx.out_dir / TrimReport.FILE).write_text(json.dumps(good))
        return {}

    data = {
        "name": "r",
        "language": "slk",
        "base_model": "base-model-id",
        "output_dir": str(tmp_path / "run"),
        "trim": {"corpus": "corpus.txt", "vocab_size": 100},
    }
    run_recipe(validate_recipe(data), runners={"trim": trim})
    manifest = read_manifest(tmp_path / "run" / "trim")
    assert manifest is not None and manifest["report"] == TrimReport.FILE
    assert manifest["non_default_config"] == {"corpus": {"source": "corpus.txt"}, "vocab_size": 100}

    del good["parity"]  # a stage that writes a report its type does not accept fails, naming the field
    with pytest.raises(ReportError, match=r"trim_report\.json: not a TrimReport \(parity: Field required\)"):
        run_recipe(validate_recipe({**data, "seed": 7}), runners={"trim": trim})
    assert read_manifest(tmp_path / "run" / "trim")["seed"] == 42  # the failed attempt left the old one
