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

The building blocks the stages are made of, for scripts and benchmarks that run one step alone:

- recipes: ``validate_recipe`` (recipe data, as read from YAML), ``plan_recipe`` (its cost plan);
- models: ``resolve_model`` (a model reference as a loadable path or Hub id);
- runs: ``input_fingerprint`` (what a stage key holds for a local file, directory or glob: its contents);
- data: ``read_rows``, ``iter_texts`` (a source spec's rows, one column's texts), ``CorpusSource`` and
  ``corpus_texts`` (a corpus as every recipe section spells it, and its texts), ``sample_sentences``;
- tokens: ``count_texts``, ``count_source``, ``count_wordfreq`` (token counts under a tokenizer, as trim
  counts them);
- evaluation: ``select_tasks``, ``evaluation_texts``, ``load_suite``/``SuiteError`` (local suites),
  ``DevSets``/``build_dev_sets`` (the dev sets);
- export: ``export_dims`` (a model's reduced-dimension tiers), ``dims_bases``/``DimsBases`` (their bases,
  chosen on dev as the export stage chooses them), ``quantize_int8`` (every int8 variant, scored
  as the export stage scores them), ``choose_int8`` (the one it keeps), ``measure_speed`` (texts/s as it
  measures them), ``speed_texts``;
- training data: ``training_datasets``, ``training_texts`` (as fine-tuning builds them), ``wise_ft``,
  ``mix_weights`` (WiSE-FT's choice on dev and its weight mixture),
  ``overlapping_rows``/``folded_words`` (the contamination check), ``task_test_texts``,
  ``split_parallelism`` (the sentence splitter's workers);
- scoring: ``score_models`` (models on tasks, with item-bootstrap draws, no report), ``rewrite_tasks`` (the
  robustness stage's rewritten tasks), ``renorm_modules`` (R1/R2 as modules);
- LLM: ``sts_requests`` (the synthetic-STS stage's requests), ``llm_backend`` (a backend, uncached);
- devices: ``encode_batch_size`` (the encoding batch on this device), ``training_levers`` (the extra
  training arguments of a CUDA run);
- reports: ``TrimReport``, ``TrainingReport``, ``RenormReport``, ``ExportReport``, ``EvaluationReport``,
  ``RobustnessReport`` (each stage's report file: ``TrainingReport.read(directory)``).
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
    from skadapt.artifacts import input_fingerprint
    from skadapt.blocks.dims import DimsBases, dims_bases
    from skadapt.blocks.int8 import choose_int8, measure_speed, quantize_int8
    from skadapt.blocks.llm import llm_backend, sts_requests
    from skadapt.blocks.renorm import renorm_modules
    from skadapt.blocks.sampling import split_parallelism
    from skadapt.blocks.scoring import rewrite_tasks, score_models, task_test_texts
    from skadapt.blocks.training import mix_weights, training_datasets, training_texts, wise_ft
    from skadapt.devices import encode_batch_size, training_levers
    from skadapt.evaluate.config import EvaluateConfig
    from skadapt.export.config import ExportConfig
    from skadapt.export.dims import export_dims
    from skadapt.export.stage import speed_texts
    from skadapt.languages import Language, get_language
    from skadapt.llm.config import LLMConfig
    from skadapt.model_sources import resolve_model
    from skadapt.planning import plan_recipe
    from skadapt.publish.config import PublishConfig
    from skadapt.recipe import Recipe, load_recipe, validate_recipe
    from skadapt.renorm.config import RenormConfig
    from skadapt.results import (
        EvaluationReport,
        ExportReport,
        RenormReport,
        RobustnessReport,
        TrainingReport,
        TrimReport,
    )
    from skadapt.robustness.config import RobustnessConfig
    from skadapt.sources import CorpusSource, corpus_texts, iter_texts, read_rows
    from skadapt.synth.config import SynthSTSConfig
    from skadapt.tasks.config import DevSets
    from skadapt.tasks.contamination import folded_words, overlapping_rows
    from skadapt.tasks.dev import build_dev_sets
    from skadapt.tasks.selection import evaluation_texts, select_tasks
    from skadapt.tasks.suite import SuiteError, load_suite
    from skadapt.textsample import sample_sentences
    from skadapt.train.config import FinetuneConfig, FinetuneDataset
    from skadapt.trim.config import TrimConfig
    from skadapt.trim.counting import count_source
    from skadapt.trim.parallel import count_texts
    from skadapt.trim.wordlist import count_wordfreq

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
    "FinetuneDataset": "skadapt.train.config",
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
    # the building blocks (see the module docstring)
    "validate_recipe": "skadapt.recipe",
    "plan_recipe": "skadapt.planning",
    "resolve_model": "skadapt.model_sources",
    "input_fingerprint": "skadapt.artifacts",
    "read_rows": "skadapt.sources",
    "iter_texts": "skadapt.sources",
    "CorpusSource": "skadapt.sources",
    "corpus_texts": "skadapt.sources",
    "sample_sentences": "skadapt.textsample",
    "count_texts": "skadapt.trim.parallel",
    "count_source": "skadapt.trim.counting",
    "count_wordfreq": "skadapt.trim.wordlist",
    "DevSets": "skadapt.tasks.config",
    "build_dev_sets": "skadapt.tasks.dev",
    "select_tasks": "skadapt.tasks.selection",
    "evaluation_texts": "skadapt.tasks.selection",
    "load_suite": "skadapt.tasks.suite",
    "SuiteError": "skadapt.tasks.suite",
    "export_dims": "skadapt.export.dims",
    "encode_batch_size": "skadapt.devices",
    "training_levers": "skadapt.devices",
    "TrimReport": "skadapt.results",
    "TrainingReport": "skadapt.results",
    "RenormReport": "skadapt.results",
    "ExportReport": "skadapt.results",
    "EvaluationReport": "skadapt.results",
    "RobustnessReport": "skadapt.results",
    "task_test_texts": "skadapt.blocks.scoring",
    "overlapping_rows": "skadapt.tasks.contamination",
    "folded_words": "skadapt.tasks.contamination",
    "training_datasets": "skadapt.blocks.training",
    "training_texts": "skadapt.blocks.training",
    "wise_ft": "skadapt.blocks.training",
    "mix_weights": "skadapt.blocks.training",
    "split_parallelism": "skadapt.blocks.sampling",
    "score_models": "skadapt.blocks.scoring",
    "rewrite_tasks": "skadapt.blocks.scoring",
    "renorm_modules": "skadapt.blocks.renorm",
    "quantize_int8": "skadapt.blocks.int8",
    "measure_speed": "skadapt.blocks.int8",
    "choose_int8": "skadapt.blocks.int8",
    "dims_bases": "skadapt.blocks.dims",
    "DimsBases": "skadapt.blocks.dims",
    "speed_texts": "skadapt.export.stage",
    "sts_requests": "skadapt.blocks.llm",
    "llm_backend": "skadapt.blocks.llm",
}
"""Public name -> the module that defines it."""

__all__ = [
    "CorpusSource",
    "DevSets",
    "DimsBases",
    "EvaluateConfig",
    "EvaluationReport",
    "ExportConfig",
    "ExportReport",
    "FinetuneConfig",
    "FinetuneDataset",
    "LLMConfig",
    "Language",
    "PreflightError",
    "PublishConfig",
    "Recipe",
    "RenormConfig",
    "RenormReport",
    "RobustnessConfig",
    "RobustnessReport",
    "SuiteError",
    "SynthSTSConfig",
    "TrainingReport",
    "TrimConfig",
    "TrimReport",
    "build_dev_sets",
    "choose_int8",
    "corpus_texts",
    "count_source",
    "count_texts",
    "count_wordfreq",
    "dims_bases",
    "encode_batch_size",
    "evaluation_texts",
    "export_dims",
    "export_tiers",
    "finetune",
    "folded_words",
    "get_language",
    "input_fingerprint",
    "iter_texts",
    "llm_backend",
    "load_recipe",
    "load_suite",
    "measure_speed",
    "mix_weights",
    "overlapping_rows",
    "plan_recipe",
    "publish_model",
    "quantize_int8",
    "read_rows",
    "renorm_modules",
    "renormalize",
    "resolve_model",
    "rewrite_tasks",
    "run_evaluation",
    "run_recipe",
    "run_robustness",
    "run_stage",
    "sample_sentences",
    "score_models",
    "select_tasks",
    "speed_texts",
    "split_parallelism",
    "sts_requests",
    "synthesize_sts",
    "task_test_texts",
    "training_datasets",
    "training_levers",
    "training_texts",
    "trim_model",
    "validate_recipe",
    "wise_ft",
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
