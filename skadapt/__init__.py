"""skadapt: adapt a multilingual text-embedding model to one language (trim, fine-tune, renormalize,
export, evaluate, publish), offline and reproducibly.

The public API, imported on first use so that ``import skadapt`` loads nothing heavy::

    from skadapt import load_recipe, run_recipe

    outcomes = run_recipe("recipes/e5_sk_small.yaml", overrides=["finetune.epochs=1"])

``load_recipe``/``run_recipe`` run whole recipes as ``skadapt train`` does (``plan_recipe``: its cost plan);
``run_stage`` runs one stage alone, the way the recipe runner runs it (what every stage command does); the
stage reports are what a run's stages write (``TrainingReport.read(directory)``).

Everything else lives in its subpackage, each with its own ``__all__``: :mod:`skadapt.api` (each stage's
entry point, ``(model, config, *, language, out, ...)``, and the configs they take) and
:mod:`skadapt.blocks` (the building blocks the stages are made of, for scripts and benchmarks that run one
step alone: data, token counting, evaluation tasks and dev sets, the export tiers, scoring, the LLM).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers (and tests/test_architecture.py) see; loaded lazily below
    from skadapt.api import PreflightError, RunWatch, run_recipe, run_stage
    from skadapt.languages import Language, get_language
    from skadapt.pipeline import RunHalted, StageOutcome
    from skadapt.planning import plan_recipe
    from skadapt.recipe import Recipe, load_recipe, validate_recipe
    from skadapt.results import (
        EvaluationReport,
        ExportReport,
        RenormReport,
        RobustnessReport,
        TrainingReport,
        TrimReport,
    )

_EXPORTS: dict[str, str] = {
    "load_recipe": "skadapt.recipe",
    "validate_recipe": "skadapt.recipe",
    "Recipe": "skadapt.recipe",
    "run_recipe": "skadapt.api",
    "run_stage": "skadapt.api",
    "RunWatch": "skadapt.api",
    "PreflightError": "skadapt.api",
    "RunHalted": "skadapt.pipeline",
    "StageOutcome": "skadapt.pipeline",
    "plan_recipe": "skadapt.planning",
    "get_language": "skadapt.languages",
    "Language": "skadapt.languages",
    "TrimReport": "skadapt.results",
    "TrainingReport": "skadapt.results",
    "RenormReport": "skadapt.results",
    "ExportReport": "skadapt.results",
    "EvaluationReport": "skadapt.results",
    "RobustnessReport": "skadapt.results",
}
"""Public name -> the module that defines it."""

__all__ = [
    "EvaluationReport",
    "ExportReport",
    "Language",
    "PreflightError",
    "Recipe",
    "RenormReport",
    "RobustnessReport",
    "RunHalted",
    "RunWatch",
    "StageOutcome",
    "TrainingReport",
    "TrimReport",
    "get_language",
    "load_recipe",
    "plan_recipe",
    "run_recipe",
    "run_stage",
    "validate_recipe",
]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562) and cache the name here."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
