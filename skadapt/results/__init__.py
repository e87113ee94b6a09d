"""Typed stage results: each stage's report file as a pydantic model, as mteb's ``TaskResult`` is.

A stage writes its report (``FILE``); the pipeline checks it against its type after the stage and records
its name in the stage's manifest (:class:`StageManifest`); ``skadapt publish`` and the run's summary read it
back through the type. The types sit below the stages (the library layer) because stages never import one
another: the publish stage reads the others' reports through these types, never through their packages.

Each stage's ``run`` returns its result (a :class:`StageResult`: its summary), which the pipeline records
as the manifest's ``result`` and reads back through the same type.

Modules (one per stage that writes a report): ``trim``, ``finetune``, ``renorm``, ``export``, ``evaluate``,
``robustness``; ``dev`` (a dev set's power, which the finetune and renorm reports record); ``summaries``
(the results of the other stages); ``manifest`` (what the pipeline records);
``base`` (:class:`StageReport`, :class:`StageResult`, :class:`ReportError`).
"""

from skadapt.results.base import Part, ReportError, StageReport, StageResult
from skadapt.results.evaluate import HUMAN_SCORES, EvaluationReport, EvaluationSummary
from skadapt.results.export import ExportReport
from skadapt.results.finetune import FinetuneSummary, TrainingReport
from skadapt.results.manifest import StageManifest
from skadapt.results.renorm import RenormReport, RenormSummary
from skadapt.results.robustness import RobustnessReport
from skadapt.results.summaries import (
    ExportSummary,
    PlannedRepository,
    PublishSummary,
    RobustnessSummary,
    SynthSummary,
    TrimSummary,
)
from skadapt.results.trim import TrimReport

__all__ = [
    "HUMAN_SCORES",
    "EvaluationReport",
    "EvaluationSummary",
    "ExportReport",
    "ExportSummary",
    "FinetuneSummary",
    "Part",
    "PlannedRepository",
    "PublishSummary",
    "RenormReport",
    "RenormSummary",
    "ReportError",
    "RobustnessReport",
    "RobustnessSummary",
    "StageManifest",
    "StageReport",
    "StageResult",
    "SynthSummary",
    "TrainingReport",
    "TrimReport",
    "TrimSummary",
]
