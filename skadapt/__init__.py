"""skadapt: adapt a multilingual text-embedding model to one language (trim, fine-tune, renormalize,
export, evaluate, publish), offline and reproducibly.

The public API, imported on first use so that ``import skadapt`` loads nothing heavy::

    from skadapt import load_recipe, run_recipe

    outcomes = run_recipe("recipes/e5_sk_small.yaml", overrides=["finetune.epochs=1"])

``load_recipe``/``run_recipe`` run whole recipes as ``skadapt train`` does; the stage entry points
(``synthesize_sts``, ``trim_model``, ``finetune``, ``renormalize``, ``export_tiers``, ``run_evaluation``,
``run_robustness``, ``publish_model``) are the functions the stage commands call, each with its section's
config model; ``get_language`` gives the :class:`Language` they take.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers (and tests/test_architecture.py) see; loaded lazily below
    from skadapt.api import PreflightError, run_recipe
    from skadapt.evaluate.config import EvaluateConfig
    from skadapt.evaluate.stage import run_evaluation
    from skadapt.export.config import ExportConfig
    from skadapt.export.stage import export_tiers
    from skadapt.languages import Language, get_language
    from skadapt.llm.config import LLMConfig
    from skadapt.publish.config import PublishConfig
    from skadapt.publish.model import publish_model
    from skadapt.recipe import Recipe, load_recipe
    from skadapt.renorm.config import RenormConfig
    from skadapt.renorm.stage import renormalize
    from skadapt.robustness.config import RobustnessConfig
    from skadapt.robustness.run import run_robustness
    from skadapt.synth.config import SynthSTSConfig
    from skadapt.synth.run import synthesize_sts
    from skadapt.train.config import FinetuneConfig
    from skadapt.train.stage import finetune
    from skadapt.trim.config import TrimConfig
    from skadapt.trim.trimmer import trim_model

_EXPORTS: dict[str, str] = {
    "load_recipe": "skadapt.recipe",
    "Recipe": "skadapt.recipe",
    "run_recipe": "skadapt.api",
    "PreflightError": "skadapt.api",
    "get_language": "skadapt.languages",
    "Language": "skadapt.languages",
    "LLMConfig": "skadapt.llm.config",
    "synthesize_sts": "skadapt.synth.run",
    "SynthSTSConfig": "skadapt.synth.config",
    "trim_model": "skadapt.trim.trimmer",
    "TrimConfig": "skadapt.trim.config",
    "finetune": "skadapt.train.stage",
    "FinetuneConfig": "skadapt.train.config",
    "renormalize": "skadapt.renorm.stage",
    "RenormConfig": "skadapt.renorm.config",
    "export_tiers": "skadapt.export.stage",
    "ExportConfig": "skadapt.export.config",
    "run_evaluation": "skadapt.evaluate.stage",
    "EvaluateConfig": "skadapt.evaluate.config",
    "run_robustness": "skadapt.robustness.run",
    "RobustnessConfig": "skadapt.robustness.config",
    "publish_model": "skadapt.publish.model",
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
