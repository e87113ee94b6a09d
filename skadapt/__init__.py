"""skadapt: adapt a multilingual text-embedding model to one language (trim, fine-tune, renormalize,
export, evaluate, publish), offline and reproducibly.

The public API, imported on first use so that ``import skadapt`` loads nothing heavy::

    from skadapt import load_recipe, run_recipe

    outcomes = run_recipe("recipes/e5_sk_small.yaml", overrides=["finetune.epochs=1"])

``load_recipe``/``run_recipe`` run whole recipes as ``skadapt train`` does; ``run_stage`` runs one stage
alone, the way the recipe runner runs it (what every stage command does). The stage entry points
(``synthesize_sts``, ``trim_model``, ``finetune``, ``renormalize``, ``export_tiers``, ``run_evaluation``,
``run_robustness``, ``publish_model``) are the functions the stage commands call, one shape for all:
``(model, config, *, language, out, ...)`` with the section's config model, the language as a
:class:`Language` or its ISO 639-3/639-1 code, and the stage's result returned (``get_language`` gives a
:class:`Language`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers (and tests/test_architecture.py) see; loaded lazily below
    from skadapt.api import (
        PreflightError,
        export_tiers,
        finetune,
        publish_model,
        renormalize,
        run_evaluation,
        run_recipe,
        run_robustness,
        run_stage,
        synthesize_sts,
        trim_model,
    )
    from skadapt.evaluate.config import EvaluateConfig
    from skadapt.export.config import ExportConfig
    from skadapt.languages import Language, get_language
    from skadapt.llm.config import LLMConfig
    from skadapt.publish.config import PublishConfig
    from skadapt.recipe import Recipe, load_recipe
    from skadapt.renorm.config import RenormConfig
    from skadapt.robustness.config import RobustnessConfig
    from skadapt.synth.config import SynthSTSConfig
    from skadapt.train.config import FinetuneConfig
    from skadapt.trim.config import TrimConfig

_EXPORTS: dict[str, str] = {
    "load_recipe": "skadapt.recipe",
    "Recipe": "skadapt.recipe",
    "run_recipe": "skadapt.api",
    "run_stage": "skadapt.api",
    "PreflightError": "skadapt.api",
    "get_language": "skadapt.languages",
    "Language": "skadapt.languages",
    "LLMConfig": "skadapt.llm.config",
    "synthesize_sts": "skadapt.api",
    "SynthSTSConfig": "skadapt.synth.config",
    "trim_model": "skadapt.api",
    "TrimConfig": "skadapt.trim.config",
    "finetune": "skadapt.api",
    "FinetuneConfig": "skadapt.train.config",
    "renormalize": "skadapt.api",
    "RenormConfig": "skadapt.renorm.config",
    "export_tiers": "skadapt.api",
    "ExportConfig": "skadapt.export.config",
    "run_evaluation": "skadapt.api",
    "EvaluateConfig": "skadapt.evaluate.config",
    "run_robustness": "skadapt.api",
    "RobustnessConfig": "skadapt.robustness.config",
    "publish_model": "skadapt.api",
    "PublishConfig": "skadapt.publish.config",
}
"""Public name -> the module that defines it."""

__all__ = [
    "EvaluateConfig",
    "ExportConfig",
    "FinetuneConfig",
    "LLMConfig",
    "Language",
    "PreflightError",
    "PublishConfig",
    "Recipe",
    "RenormConfig",
    "RobustnessConfig",
    "SynthSTSConfig",
    "TrimConfig",
    "export_tiers",
    "finetune",
    "get_language",
    "load_recipe",
    "publish_model",
    "renormalize",
    "run_evaluation",
    "run_recipe",
    "run_robustness",
    "run_stage",
    "synthesize_sts",
    "trim_model",
]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562) and cache the name here."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skadapt' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
