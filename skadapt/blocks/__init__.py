"""Public building blocks: one step of a stage run alone (the int8 variants the export stage chooses from,
the synthetic-STS requests, the training datasets, models scored on a suite), for scripts and benchmarks
that measure one component. Each is a thin wrapper over the stage's own code, so what is measured is what
a run does. Imported on first use (``from skadapt.blocks import quantize_int8``).

- models: ``resolve_model`` (a model reference as a loadable path or Hub id);
- data: ``read_rows``, ``iter_texts`` (a source spec's rows, one column's texts), ``CorpusSource`` and
  ``corpus_texts`` (a corpus as every recipe section spells it, and its texts), ``sample_sentences``,
  ``input_fingerprint`` (the content fingerprint stage keys hold of a file, directory or glob);
- tokens: ``count_texts``, ``count_source``, ``count_wordfreq`` (token counts under a tokenizer, as trim
  counts them);
- evaluation: ``select_tasks``, ``evaluation_texts``, ``load_suite``/``SuiteError`` (local suites),
  ``DevSets``/``build_dev_sets`` (the dev sets);
- export: ``export_dims`` (a model's reduced-dimension tiers), ``dims_bases``/``DimsBases`` (their bases,
  chosen on dev as the export stage chooses them), ``quantize_int8`` (every int8 variant, scored as the
  export stage scores them), ``choose_int8`` (the one it keeps), ``measure_speed`` (texts/s as it measures
  them), ``speed_texts``;
- training data: ``training_datasets``, ``training_texts`` (as fine-tuning builds them), ``wise_ft``,
  ``mix_weights`` (WiSE-FT's choice on dev and its weight mixture), ``overlapping_rows``/``folded_words``
  (the contamination check), ``task_test_texts``, ``split_parallelism`` (the sentence splitter's workers);
- scoring: ``score_models`` (models on tasks, with item-bootstrap draws, no report), ``rewrite_tasks`` (the
  robustness stage's rewritten tasks), ``renorm_modules`` (R1/R2 as modules);
- LLM: ``sts_requests`` (the synthetic-STS stage's requests), ``llm_backend`` (a backend, uncached);
- devices: ``encode_batch_size`` (the encoding batch on this device), ``training_levers`` (the extra
  training arguments of a CUDA run).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what type checkers (and tests/test_architecture.py) see; loaded lazily below
    from skadapt.artifacts import input_fingerprint
    from skadapt.blocks.dims import DimsBases, dims_bases
    from skadapt.blocks.int8 import choose_int8, measure_speed, quantize_int8
    from skadapt.blocks.llm import llm_backend, sts_requests
    from skadapt.blocks.renorm import renorm_modules
    from skadapt.blocks.sampling import split_parallelism
    from skadapt.blocks.scoring import rewrite_tasks, score_models, task_test_texts
    from skadapt.blocks.training import mix_weights, training_datasets, training_texts, wise_ft
    from skadapt.devices import encode_batch_size, training_levers
    from skadapt.export.dims import export_dims
    from skadapt.export.stage import speed_texts
    from skadapt.model_sources import resolve_model
    from skadapt.sources import CorpusSource, corpus_texts, iter_texts, read_rows
    from skadapt.tasks.config import DevSets
    from skadapt.tasks.contamination import folded_words, overlapping_rows
    from skadapt.tasks.dev import build_dev_sets
    from skadapt.tasks.selection import evaluation_texts, select_tasks
    from skadapt.tasks.suite import SuiteError, load_suite
    from skadapt.textsample import sample_sentences
    from skadapt.trim.counting import count_source
    from skadapt.trim.parallel import count_texts
    from skadapt.trim.wordlist import count_wordfreq

_EXPORTS: dict[str, str] = {
    "resolve_model": "skadapt.model_sources",
    "read_rows": "skadapt.sources",
    "iter_texts": "skadapt.sources",
    "CorpusSource": "skadapt.sources",
    "corpus_texts": "skadapt.sources",
    "sample_sentences": "skadapt.textsample",
    "input_fingerprint": "skadapt.artifacts",
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
    "SuiteError",
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
    "folded_words",
    "input_fingerprint",
    "iter_texts",
    "llm_backend",
    "load_suite",
    "measure_speed",
    "mix_weights",
    "overlapping_rows",
    "quantize_int8",
    "read_rows",
    "renorm_modules",
    "resolve_model",
    "rewrite_tasks",
    "sample_sentences",
    "score_models",
    "select_tasks",
    "speed_texts",
    "split_parallelism",
    "sts_requests",
    "task_test_texts",
    "training_datasets",
    "training_levers",
    "training_texts",
    "wise_ft",
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
