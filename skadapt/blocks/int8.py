"""The export stage's int8 step outside a run: every onnxruntime int8 variant of a model, scored on the dev
sets and against its parent (what the stage chooses from, of which it keeps one), the speed of models
measured as the stage measures it, and the stage's choice."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from skadapt.languages import Language
    from skadapt.results.export import Int8Choice
    from skadapt.tasks.config import DevSets


class Int8Variant(BaseModel):
    """One int8 variant as made: its quantization settings, file, dev score and agreement with the parent.

    Attributes:
        name: The variant's name (``dynamic``, ``static``, ...).
        settings: Its onnxruntime quantization settings, in words.
        path: Its ONNX file.
        dev: Mean main score of the dev sets, x100 (None without dev sets).
        agreement: Mean cosine of its embeddings to the parent's (None without texts).
    """

    name: str
    settings: str
    path: Path
    dev: float | None
    agreement: float | None


class Int8Variants(BaseModel):
    """Every int8 variant of one model (:func:`quantize_int8`).

    Attributes:
        model_dir: The parent's model directory (a portable copy, with ``onnx/model.onnx``).
        fp32: The fp32 ONNX file the variants were quantized from.
        machine: ``{cpu, cores, family}`` of this machine; ``family`` chose the variants.
        parent_dev: The PyTorch parent's mean dev score, x100 (None without dev sets).
        agreement_texts: What the agreement was measured on.
        variants: The variants, in the stage's order of preference on a tie.
    """

    model_dir: Path
    fp32: Path
    machine: dict[str, Any]
    parent_dev: float | None
    agreement_texts: str
    variants: list[Int8Variant]


def quantize_int8(
    model: str | Path,
    out: str | Path,
    *,
    language: Language | str,
    dev: DevSets | None = None,
    finetune_dir: str | Path | None = None,
    eval_tasks: Sequence[str] = (),
    seed: int = 42,
    batch_size: int = 32,
) -> Int8Variants:
    """Quantize every int8 variant of ``model`` for this machine's CPU family into ``out`` and score each
    as the export stage does: on the dev sets ``dev`` beside the PyTorch model, and its agreement with it.
    The static variant is calibrated on the export corpus (the fine-tuning texts of ``finetune_dir``, less
    the evaluation texts of ``eval_tasks``); without one there is none. ``out`` is replaced.

    Raises:
        UnreachableTestDataError: An evaluation task's test texts cannot be read.
    """
    import shutil

    from skadapt.export.config import ExportConfig
    from skadapt.export.int8 import machine, make_variants
    from skadapt.export.onnx import copy_model_dir, export_fp32
    from skadapt.export.stage import training_corpus
    from skadapt.languages import Language, get_language
    from skadapt.modeldir import finalize_model_dir
    from skadapt.tasks.backends import load_sentence_model
    from skadapt.tasks.contamination import gather_test_texts

    language = language if isinstance(language, Language) else get_language(language)
    out = Path(out)
    shutil.rmtree(out, ignore_errors=True)
    model_dir = out / "model"
    copy_model_dir(Path(model), model_dir)
    finalize_model_dir(model_dir)
    loaded = load_sentence_model(str(model_dir))
    fp32 = model_dir / "onnx" / "model.onnx"
    inputs = export_fp32(loaded, fp32)
    tasks = list(eval_tasks)
    test_texts, _ = gather_test_texts(tasks, False, language=language.code)
    corpus = training_corpus(
        ExportConfig(),
        str(model),
        finetune_dir=str(finetune_dir) if finetune_dir is not None else None,
        eval_tasks=tasks,
        test_texts=test_texts,
        language=language.iso639_1 or "en",
        seed=seed,
    )
    info = machine()
    made = make_variants(
        loaded,
        fp32,
        inputs,
        info["family"],
        corpus_texts=corpus.texts if corpus is not None else None,
        dev=dev,
        test_texts=test_texts,
        batch_size=batch_size,
    )
    variants = [
        Int8Variant(
            name=item.variant.name,
            settings=item.variant.settings(),
            path=item.path,
            dev=item.dev,
            agreement=item.agreement,
        )
        for item in made.made
    ]
    return Int8Variants(
        model_dir=model_dir,
        fp32=fp32,
        machine=info,
        parent_dev=made.parent_dev,
        agreement_texts=made.agreement_texts,
        variants=variants,
    )


def measure_speed(
    models: Mapping[str, str | Path],
    texts: Sequence[str],
    *,
    batch_size: int = 32,
    repeats: int = 3,
    threads: int = 2,
) -> dict[str, dict[str, Any]]:
    """Texts/s of each labelled model (a directory, or an ONNX file of one) on ``texts``, as the export
    stage measures its tiers: one process per model (forked from a server that imported the libraries
    once) that loads once, the models taking turns for ``repeats`` rounds, the fastest pass kept.

    Returns:
        Label -> ``{texts_per_s, seconds, passes, rounds, load_s, peak_rss_mb, texts, threads, pid}``.

    Raises:
        ExportError: A measuring process failed.
    """
    from skadapt.export.speed import measure_models

    with tempfile.TemporaryDirectory(prefix="skadapt-speed-") as scratch:
        texts_file = Path(scratch) / "texts.json"
        texts_file.write_text(json.dumps(list(texts), ensure_ascii=False), encoding="utf-8")
        refs = {label: str(ref) for label, ref in models.items()}
        return measure_models(refs, texts_file, batch_size, repeats, threads)


def choose_int8(variants: Int8Variants, speedups: Mapping[str, float]) -> Int8Choice:
    """The variant the export stage keeps, and why: among those faster than the PyTorch parent
    (``speedups``: variant name -> its texts/s over the parent's) and within the allowed dev loss, the
    best agreement with the parent; else the best faster one, said not worth deploying."""
    from skadapt.export.int8 import choose
    from skadapt.results.export import Int8Candidate

    candidates = [
        Int8Candidate(
            name=v.name, settings=v.settings, speedup=speedups[v.name], dev=v.dev, agreement=v.agreement
        )
        for v in variants.variants
    ]
    return choose(candidates, variants.parent_dev, variants.machine["family"], variants.agreement_texts)
