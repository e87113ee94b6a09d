"""The renorm stage's cost plan: reading and splitting the corpus, encoding the sample, the choice on dev."""

from __future__ import annotations

from skadapt.plan.dev import dev_size
from skadapt.plan.model import Part, StagePlan
from skadapt.plan.models import ModelShape
from skadapt.plan.parts import (
    BASIS_PROMPTS,
    MODEL_MAX_CHARS,
    cpu_part,
    data_value,
    encode_part,
    fixed_part,
    gb,
    load_part,
    memory_part,
    stream_part,
)
from skadapt.plan.sizes import read_count, source_line, source_size
from skadapt.renorm.config import RenormConfig, RenormError, projection_dims
from skadapt.sources.config import CorpusSource
from skadapt.stage import PlanContext
from skadapt.tasks.projection import BASIS_TEXTS


def plan_renorm(config: RenormConfig, ctx: PlanContext) -> StagePlan:
    """Reading and splitting corpus documents, encoding the sample, choosing on dev."""
    assert config.corpus is not None
    language = ctx.run.text_language
    plan = StagePlan(stage="renorm")
    corpus = config.corpus
    size = source_size(corpus.source, corpus.columns, enough=corpus.max_documents)
    read = read_count(size, corpus.max_documents, None, "renorm.corpus", plan, len(corpus.columns))
    plan.lines.append(source_line("renorm.corpus", corpus.source, size, read))
    doc_chars = size.chars or data_value(ctx, "trim_count", "chars") or 0.0
    sentences = config.samples
    if read is not None:
        per_char, how = sentence_yield(ctx, corpus, config.min_chars, config.max_chars, language)
        pool = int(read * doc_chars * per_char)
        sentences = min(config.samples, pool) if per_char else config.samples
        plan.lines.append(
            f"sentences of {config.min_chars}-{config.max_chars} chars: about {pool:,} eligible ({how})"
        )
        plan.parts.append(splitting_part(ctx, read, doc_chars))
        if (stream := stream_part(ctx, "reading renorm.corpus", corpus.source, read, doc_chars)) is not None:
            plan.parts.append(stream)
    measured = data_value(ctx, "renorm_sample", "sentence_chars") or (config.min_chars + config.max_chars) / 2
    chars = min(max(measured, config.min_chars), config.max_chars)
    plan.work |= {"documents": read, "texts_to_encode": sentences, "samples": config.samples}
    plan.lines.append(
        f"texts to encode: {sentences:,} sentences (renorm.samples {config.samples:,}), ~{chars:.0f} chars"
    )
    plan.parts.append(encode_part(ctx, "encoding the sample", ctx.model, sentences, chars))
    dev = ctx.run.dev
    if dev is not None and config.select != "method":
        dev_texts, dev_chars = dev_size(dev, plan, MODEL_MAX_CHARS)
        plan.work["dev_texts"] = dev_texts
        plan.lines.append(
            f"choice on dev: {dev_texts:,} dev texts encoded once; every candidate (none/R1/R2 and the "
            "projections) is a map of their embeddings"
        )
        plan.parts.append(encode_part(ctx, "dev choice", ctx.model, dev_texts, dev_chars))
        dims = projection_count(config, ctx.model)
        candidates = 3 + 3 * dims
        plan.work["candidates"] = candidates
        plan.parts.append(
            fixed_part(
                ctx,
                f"dev choice: {candidates} candidates scored, paired bootstrap",
                "renorm_choice_s_per_candidate",
                candidates,
            )
        )
        if config.projection_dims != []:
            basis = min(sentences, BASIS_TEXTS) * BASIS_PROMPTS
            plan.work["projection_basis_encodes"] = basis
            plan.lines.append(
                f"projection basis: {basis:,} sample sentences encoded (each with {BASIS_PROMPTS} prompts; "
                "fewer where renorm.prompt is one of them)"
            )
            plan.parts.append(encode_part(ctx, "projection basis", ctx.model, basis, chars))
    plan.parts.append(load_part(ctx, "loading the model", [ctx.model.parameters]))
    embeddings = sentences * ctx.model.hidden_size * 12  # float32 embeddings + their float64 mean pass
    plan.parts.append(memory_part("the model and the sample's embeddings", plan.parts, embeddings))
    plan.disk_gb = gb(ctx.model.parameters * 4)
    return plan.total()


def sentence_yield(
    ctx: PlanContext, corpus: CorpusSource, min_chars: int, max_chars: int, language: str
) -> tuple[float, str]:
    """Eligible sentences per character of a corpus: measured on a local corpus's first documents with the
    stage's own sampler, else the calibration's yield (64-512 characters; a lower bound)."""
    from skadapt.sources import corpus_texts
    from skadapt.textsample import sample_sentences

    spec = corpus.source
    if not spec.startswith("hub:") and not spec.startswith("wordfreq:"):
        texts = list(corpus_texts(corpus, max_documents=200))
        sample = sample_sentences(
            iter(texts), 10**9, min_chars=min_chars, max_chars=max_chars, seed=0, language=language
        )
        chars = sum(map(len, texts))
        return (sample.eligible / chars if chars else 0.0), f"split on the first {len(texts)} documents"
    per_doc = data_value(ctx, "renorm_sample", "sentences_per_document")
    doc_chars = data_value(ctx, "trim_count", "chars")
    if not per_doc or not doc_chars:
        return 0.0, "unknown"
    return per_doc / doc_chars, "the calibration's yield (a lower bound)"


def projection_count(config: RenormConfig, model: ModelShape) -> int:
    """The projection dimensions renorm tries (``renorm.projection_dims``, by default 256 and 128 for a
    384-d model: :func:`skadapt.renorm.config.default_projection_dims`)."""
    if not model.hidden_size:
        return 0
    try:
        return len(projection_dims(config, model.hidden_size))
    except RenormError:  # the run stops on it; the plan prices the defaults' count
        return len(config.projection_dims or [])


def splitting_part(ctx: PlanContext, documents: int, chars: float) -> Part:
    """Sentence splitting: the first :data:`~skadapt.textsample.PARALLEL_AFTER` documents in the stage's own
    process (one core, the calibration's parallel rate per worker), the rest in one worker process per core
    (the calibration's rate, its fixed part being those first documents and the workers' start)."""
    from skadapt.textsample import PARALLEL_AFTER

    if documents > PARALLEL_AFTER:
        return cpu_part(ctx, "sentence splitting", "renorm_sample", documents, chars)
    rate = (ctx.cpu.data_path("renorm_sample") if ctx.cpu is not None else None) or {}
    per_s, measured = rate.get("documents_per_s"), rate.get("chars") or data_value(ctx, "trim_count", "chars")
    if not per_s:
        return Part(
            name="sentence splitting", basis_cpu="no renorm_sample rate", basis_gpu="no renorm_sample rate"
        )
    per_core = per_s / max(1, int(rate.get("workers") or 1))
    seconds = documents * (chars / measured if chars and measured else 1.0) / per_core
    speed = ctx.gpu.host("core_speed") if ctx.gpu is not None else 1.0
    return Part(
        name="sentence splitting",
        seconds_cpu=seconds,
        seconds_gpu=seconds / speed,
        basis_cpu=f"measured renorm_sample rate per worker (<= {PARALLEL_AFTER:,} documents: in-process)",
        basis_gpu="the GPU machine's host, in the stage's process",
        peak_rss_gb=rate.get("peak_rss_gb"),
    )
