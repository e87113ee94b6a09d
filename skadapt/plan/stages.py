"""Plans of the data and encoding stages: trim, renorm, export, evaluate."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skadapt.config import dims_tier
from skadapt.plan.dev import dev_size
from skadapt.plan.finetune import text_columns
from skadapt.plan.model import Part, StagePlan
from skadapt.plan.models import KEPT_ON_TOP, ModelShape
from skadapt.plan.parts import (
    CHARS_PER_TOKEN,
    Context,
    cpu_part,
    data_value,
    encode_part,
    fixed_part,
    gb,
    load_part,
    on_host,
    wordfreq_part,
)
from skadapt.plan.rates import ENCODE_CHARS
from skadapt.plan.sizes import SourceSize, source_size
from skadapt.plan.tasks import TaskWork, task_work
from skadapt.recipe import Recipe
from skadapt.tasks.projection import BASIS_TEXTS

if TYPE_CHECKING:
    from skadapt.export.config import FitCorpus

PARITY_CHARS = 2000
"""The parity check encodes whole corpus documents: cut at 512 tokens, about this many characters."""
MODEL_MAX_CHARS = 512 * CHARS_PER_TOKEN
"""Characters of the longest text a model encodes whole (512 tokens)."""
INT8_VARIANTS = 5
"""The int8 variants export quantizes, scores on dev and measures (:func:`skadapt.export.int8.variants`)."""
BASIS_PROMPTS = 2
"""Prompts a corpus basis encodes each text with (a query and a document prompt, as E5's)."""
SHORT_CHARS = ENCODE_CHARS["short"]
STATIC_TOKEN_CHARS = 4
"""model2vec distils a static model from one encoding per vocabulary token (a few characters each)."""


def read_count(
    size: SourceSize, limit: int | None, max_bytes: int | None, field: str, plan: StagePlan
) -> int | None:
    """The documents a stage reads from a source with read limits; an unknown size falls back on the
    limit (and the plan records the unknown)."""
    if size.rows is None:
        plan.unknown.append(
            f"{field}: size {size.describe()}" + ("; counted as its read limit" if limit else "")
        )
        return limit
    count = min(size.rows, limit) if limit else size.rows
    if size.at_least and not limit:
        plan.unknown.append(f"{field}: {size.describe()}")
    if max_bytes and size.chars:
        count = min(count, int(max_bytes / size.chars))
    return count


def size_text(n_bytes: float) -> str:
    """``"3.2 GB"`` or ``"11 MB"``."""
    return f"{n_bytes / 1e9:.1f} GB" if n_bytes >= 1e9 else f"{max(n_bytes / 1e6, 0.01):.2g} MB"


def source_line(field: str, spec: str, size: SourceSize, read: int | None, what: str = "documents") -> str:
    shown = f"{read:,}" if read is not None else "unknown"
    return f"{field} {spec}: {shown} {what} read (source: {size.describe()})"


def stream_part(ctx: Context, name: str, spec: str, rows: float, chars: float | None) -> Part | None:
    """Reading a Hub stream's rows (``datasets`` streaming Parquet over HTTP, measured against a local Hub:
    the network's own speed is not in it); local files are read inside the step that uses them."""
    if not spec.startswith("hub:"):
        return None
    return cpu_part(ctx, name, "read_hub", rows, chars)


def plan_trim(recipe: Recipe, ctx: Context) -> StagePlan:
    """Counting the corpus tokens, the parity check, the trimmed model."""
    config = recipe.trim
    assert config is not None and config.corpus is not None
    plan = StagePlan(stage="trim")
    corpora = [("trim.corpus", config.corpus)]
    if config.extra_corpus and config.extra_vocab_size > 0:
        corpora.append(("trim.extra_corpus", config.extra_corpus))
    documents, parity_pool, parity_chars = 0, 0, float(PARITY_CHARS)
    for field, spec in corpora:
        size = source_size(spec, [config.text_column], enough=config.max_documents)
        read = read_count(size, config.max_documents, config.max_bytes, field, plan)
        plan.lines.append(source_line(field, spec, size, read))
        plan.work[field.removeprefix("trim.")] = {"spec": spec, "source_rows": size.rows, "documents": read}
        if read is None:
            continue
        documents += read
        chars = size.chars or data_value(ctx, "trim_count", "chars")
        if field == "trim.corpus":  # the parity sample is drawn from the main corpus
            parity_pool, parity_chars = read, min(chars or PARITY_CHARS, PARITY_CHARS)
        if spec.startswith("wordfreq:"):
            plan.parts.append(wordfreq_part(ctx, f"counting {field}", read))
        else:
            plan.parts.append(cpu_part(ctx, f"counting {field}", "trim_count", read, chars))
        if (stream := stream_part(ctx, f"reading {field}", spec, read, chars)) is not None:
            plan.parts.append(stream)
        if size.bytes_per_row:
            plan.work[field.removeprefix("trim.")]["download_gb"] = gb(size.bytes_per_row * read)
            plan.lines.append(f"  download: about {size_text(size.bytes_per_row * read)} of Parquet")
    parity = min(config.parity_documents, parity_pool)
    plan.work["documents"] = documents
    plan.work["parity_texts"] = 2 * parity
    if parity:
        plan.lines.append(f"parity check: {parity:,} documents encoded by the original and the trimmed model")
        plan.parts.append(encode_part(ctx, "parity: original model", ctx.base, parity, parity_chars))
        plan.parts.append(encode_part(ctx, "parity: trimmed model", ctx.model, parity, parity_chars))
    plan.parts.append(
        load_part(
            ctx, "loading the original and the trimmed model", [ctx.base.parameters, ctx.model.parameters]
        )
    )
    rows = ctx.model.vocab_size
    plan.work |= {"embedding_rows": rows, "parameters": ctx.model.parameters}
    plan.lines.append(
        f"trimmed model: at most {rows:,} embedding rows, {ctx.model.parameters / 1e6:.1f}M parameters "
        f"(from {ctx.base.vocab_size:,} / {ctx.base.parameters / 1e6:.1f}M)"
    )
    plan.disk_gb = gb(ctx.model.parameters * 4)
    return plan.total()


def trimmed_rows(recipe: Recipe, base: ModelShape) -> int:
    """Embedding rows after trimming (an upper bound: the corpus may use fewer tokens)."""
    config = recipe.trim
    if config is None:
        return base.vocab_size
    extra = config.extra_vocab_size if config.extra_corpus else 0
    return min(base.vocab_size, config.vocab_size + extra + KEPT_ON_TOP)


def sentence_yield(
    ctx: Context, spec: str, column: str, min_chars: int, max_chars: int, language: str
) -> tuple[float, str]:
    """Eligible sentences per character of a corpus: measured on a local corpus's first documents with the
    stage's own sampler, else the calibration's yield (64-512 characters; a lower bound)."""
    from skadapt.sources import iter_texts
    from skadapt.textsample import sample_sentences

    if not spec.startswith("hub:") and not spec.startswith("wordfreq:"):
        texts = list(iter_texts(spec, column, max_documents=200))
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


def plan_renorm(recipe: Recipe, ctx: Context, language: str) -> StagePlan:
    """Reading and splitting corpus documents, encoding the sample, choosing on dev."""
    config = recipe.renorm
    assert config is not None and config.corpus is not None
    plan = StagePlan(stage="renorm")
    size = source_size(config.corpus, [config.text_column], enough=config.max_documents)
    read = read_count(size, config.max_documents, None, "renorm.corpus", plan)
    plan.lines.append(source_line("renorm.corpus", config.corpus, size, read))
    doc_chars = size.chars or data_value(ctx, "trim_count", "chars") or 0.0
    sentences = config.samples
    if read is not None:
        per_char, how = sentence_yield(
            ctx, config.corpus, config.text_column, config.min_chars, config.max_chars, language
        )
        pool = int(read * doc_chars * per_char)
        sentences = min(config.samples, pool) if per_char else config.samples
        plan.lines.append(
            f"sentences of {config.min_chars}-{config.max_chars} chars: about {pool:,} eligible ({how})"
        )
        plan.parts.append(splitting_part(ctx, read, doc_chars))
        if (stream := stream_part(ctx, "reading renorm.corpus", config.corpus, read, doc_chars)) is not None:
            plan.parts.append(stream)
    measured = data_value(ctx, "renorm_sample", "sentence_chars") or (config.min_chars + config.max_chars) / 2
    chars = min(max(measured, config.min_chars), config.max_chars)
    plan.work |= {"documents": read, "texts_to_encode": sentences, "samples": config.samples}
    plan.lines.append(
        f"texts to encode: {sentences:,} sentences (renorm.samples {config.samples:,}), ~{chars:.0f} chars"
    )
    plan.parts.append(encode_part(ctx, "encoding the sample", ctx.model, sentences, chars))
    dev = recipe.renorm_dev()
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


def projection_count(config: Any, model: ModelShape) -> int:
    """The projection dimensions renorm tries (``renorm.projection_dims``, by default 256 and 128 for a
    384-d model: :func:`skadapt.renorm.stage.default_projection_dims`)."""
    from skadapt.renorm.stage import RenormError, projection_dims

    if not model.hidden_size:
        return 0
    try:
        return len(projection_dims(config, model.hidden_size))
    except RenormError:  # the run stops on it; the plan prices the defaults' count
        return len(config.projection_dims or [])


def splitting_part(ctx: Context, documents: int, chars: float) -> Part:
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


def memory_part(name: str, parts: list[Part], extra_bytes: float) -> Part:
    """The resident memory of the encoding parts' process plus ``extra_bytes`` held beside the model."""
    process = max((p.peak_rss_gb for p in parts if p.peak_rss_gb is not None), default=None)
    if process is None:
        return Part(name=name)
    return Part(name=name, peak_rss_gb=round(process + extra_bytes / 2**30, 2))


def plan_export(recipe: Recipe, ctx: Context, tasks: list[TaskWork] | None) -> StagePlan:
    """ONNX export and parity, the speed measurement, the static model's distillation."""
    config = recipe.export
    assert config is not None
    plan = StagePlan(stage="export")
    suite_texts = sum(t.texts for t in tasks or [] if t.how == "suite files counted")
    texts = (
        min(config.speed_texts, suite_texts)
        if suite_texts and not config.speed_corpus
        else config.speed_texts
    )
    variants = INT8_VARIANTS if "onnx-int8" in config.tiers else 0  # each measured; one is kept
    models = 1 + len(config.tiers) + max(0, variants - 1)
    plan.work |= {
        "speed_texts": texts,
        "parity_encodes": 3 * texts,
        "speed_encodes": config.speed_repeats * models * texts,
        "static_tokens": ctx.model.vocab_size if "static" in config.tiers else 0,
    }
    plan.lines.append(f"parity: {texts:,} texts encoded by PyTorch, ONNX fp32 and int8")
    plan.lines.append(
        f"speed: {config.speed_repeats} rounds x {models} models x {texts:,} texts "
        f"= {config.speed_repeats * models * texts:,} encodes (each model in one process that loads it once)"
    )
    chars = (
        sum(t.chars * t.texts for t in tasks or []) / max(1, sum(t.texts for t in tasks or []))
        if tasks
        else 100.0
    )
    plan.parts.append(on_host(ctx, encode_part(ctx, "parity", ctx.model, 3 * texts, chars)))
    plan.parts.append(
        on_host(
            ctx, encode_part(ctx, "speed rounds", ctx.model, config.speed_repeats * models * texts, chars)
        )
    )
    plan.parts.append(speed_processes(ctx, models))
    dev = recipe.renorm_dev()
    if variants and dev is not None:
        dev_texts, dev_chars = dev_size(dev, plan, MODEL_MAX_CHARS)
        encodes = (variants + 1) * 2 * dev_texts  # the dev score and the agreement texts of each
        plan.work["int8_dev_encodes"] = encodes
        plan.lines.append(
            f"int8 choice on dev: {variants} variants and PyTorch x {dev_texts:,} dev texts, twice"
        )
        plan.parts.append(on_host(ctx, encode_part(ctx, "int8 choice on dev", ctx.model, encodes, dev_chars)))
    if "static" in config.tiers:
        plan.lines.append(
            f"static tier: {ctx.model.vocab_size:,} vocabulary tokens encoded (model2vec distill)"
        )
        distill = encode_part(ctx, "static distillation", ctx.model, ctx.model.vocab_size, STATIC_TOKEN_CHARS)
        gpu = encode_part(ctx, "", ctx.model, ctx.model.vocab_size, SHORT_CHARS)  # one batch row per token
        distill.seconds_gpu, distill.basis_gpu = (
            gpu.seconds_gpu,
            gpu.basis_gpu + " (a token costs a short text)",
        )
        plan.parts.append(distill)
    trained = "static" in config.tiers and config.static_training is not None
    on_basis = bool(export_dims_of(recipe, ctx.model)) and config.dims_basis != "first"
    fitted = trained or on_basis
    corpus_texts, corpus_chars = export_corpus_size(recipe, config.corpus, plan) if fitted else (0, 0.0)
    if corpus_texts and on_basis:
        basis = min(corpus_texts, BASIS_TEXTS) * BASIS_PROMPTS
        plan.work["dims_basis_encodes"] = basis
        plan.lines.append(
            f"dims tiers' basis: {basis:,} corpus encodes (each text with {BASIS_PROMPTS} prompts)"
        )
        plan.parts.append(
            encode_part(ctx, "dims basis", ctx.model, basis, min(corpus_chars, MODEL_MAX_CHARS))
        )
    if on_basis:
        plan_dims_choice(recipe, ctx, plan, dev)
    if corpus_texts and trained:
        plan.work["static_corpus_texts"] = corpus_texts
        plan.lines.append(
            f"static tier trained on the parent: {corpus_texts:,} corpus texts encoded (featurization; "
            "the sentences of longer texts come on top)"
        )
        plan.parts.append(
            encode_part(
                ctx, "static featurization", ctx.model, corpus_texts, min(corpus_chars, MODEL_MAX_CHARS)
            )
        )
    plan.parts.append(load_part(ctx, "loading the model", [ctx.model.parameters]))
    plan.notes.append(
        "parity, the speed rounds and the int8 choice run on the CPU (the tiers are measured where they "
        "will run): on the GPU machine at its host's rate (host.cpu_encode_speedup); encodes priced at the "
        "PyTorch model's rate (the ONNX and static tiers are faster); the ONNX conversion and the int8 "
        "variants' quantization are not priced (not measured)"
    )
    plan.notes.append(
        "GPU figure: a projection - no run of today's export (int8 variants chosen on dev, speed rounds in "
        "one process per model) has been measured on a GPU; the first H200 run of older code took 334 s"
    )
    params = ctx.model.parameters
    static = (
        ctx.model.vocab_size * (config.pca_dims or ctx.model.hidden_size) * 2
        if "static" in config.tiers
        else 0
    )
    plan.disk_gb = gb(params * 4 * 2 + params + static)
    return plan.total()


def plan_dims_choice(recipe: Recipe, ctx: Context, plan: StagePlan, dev: Any) -> None:
    """The dims bases' extra encodes: both sides of the parallel text with each prompt (``dims_basis``
    auto or parallel), and the dev texts encoded once for the choice on dev (auto with dev sets)."""
    config = recipe.export
    assert config is not None
    parallel = config.corpus.parallel if config.dims_basis in ("auto", "parallel") else None
    if parallel:
        fit = config.corpus.model_copy(update={"sources": list(parallel)})
        texts, chars = export_corpus_size(recipe, fit, plan)
        encodes = min(texts, BASIS_TEXTS) * BASIS_PROMPTS
        plan.work["dims_parallel_encodes"] = encodes
        plan.lines.append(
            f"dims tiers' parallel basis: {encodes:,} parallel-text encodes (both sides, {BASIS_PROMPTS} "
            "prompts)"
        )
        plan.parts.append(
            encode_part(ctx, "dims parallel basis", ctx.model, encodes, min(chars, MODEL_MAX_CHARS))
        )
    if config.dims_basis == "auto" and dev is not None:
        dev_texts, dev_chars = dev_size(dev, plan, MODEL_MAX_CHARS)
        plan.work["dims_dev_encodes"] = dev_texts
        plan.lines.append(
            f"dims tiers' basis chosen on dev: {dev_texts:,} dev texts encoded once (each basis and d a map "
            "of those embeddings)"
        )
        plan.parts.append(encode_part(ctx, "dims basis choice on dev", ctx.model, dev_texts, dev_chars))


def speed_processes(ctx: Context, models: int) -> Part:
    """Starting the speed rounds' processes, one per model, all at once: each imports torch and
    onnxruntime and loads its model; they share the cores (on the GPU machine: the measured start of one
    such process, ``host.process_start_s``, per round of as many processes as it has cores)."""
    name = f"speed rounds: {models} processes started (imports, model load)"
    cpu = ctx.cpu
    if cpu is None or cpu.fixed("imports_s") is None:
        return Part(name=name, basis_cpu="no fixed costs", basis_gpu="no fixed costs")
    one = sum(cpu.fixed(key) or 0.0 for key in ("imports_s", "onnxruntime_import_s", "first_load_s"))
    one += ctx.model.parameters / 1e9 * (cpu.fixed("load_s_per_gparam") or 0.0)
    seconds = one * models / cpu.cores
    part = Part(
        name=name, seconds_cpu=seconds, basis_cpu="fixed costs measured here, the processes sharing its cores"
    )
    if ctx.gpu is not None:
        start = ctx.gpu.host("process_start_s", one)
        part.seconds_gpu = start * -(-models // ctx.gpu.cores)
        part.basis_gpu = f"{start:g} s per process (host.process_start_s), {ctx.gpu.cores} at once"
        part.gpu_rate = True
    return part


def export_dims_of(recipe: Recipe, model: ModelShape) -> list[int]:
    """The dims tiers the export makes: ``export.dims``, else the fine-tuning's ``matryoshka_dims``, below
    the model's dimension."""
    if recipe.export is None:
        return []
    trained = recipe.finetune.matryoshka_dims if recipe.finetune is not None else None
    dims = recipe.export.dims if recipe.export.dims is not None else trained or []
    return [d for d in dims if d < model.hidden_size]


def export_corpus_size(recipe: Recipe, fit: FitCorpus, plan: StagePlan) -> tuple[int, float]:
    """(texts, their average characters) of the export corpus (the static tier's training, the dims
    basis): its sources, else the fine-tuning datasets' text columns (none without either); rows x text
    columns, capped at ``max_texts``; unknown sizes count as ``max_texts``."""
    if fit.sources is not None:
        sources = [(item.source, list(item.columns)) for item in fit.sources]
    elif recipe.finetune is not None:
        sources = [(entry.source, text_columns(entry)) for entry in recipe.finetune.datasets]
    else:
        return 0, 0.0
    texts, chars = 0, 0.0
    for source, columns in sources:
        size = source_size(source, columns)
        if size.rows is None:
            plan.unknown.append(f"export.corpus {source}: {size.describe()}")
            return fit.max_texts, 100.0
        per_row = len(set(columns))
        texts += size.rows * per_row
        chars += size.rows * (size.chars or 100.0 * per_row)
    return min(texts, fit.max_texts), chars / texts if texts else 100.0


def evaluated_models(recipe: Recipe, ctx: Context) -> list[tuple[str, ModelShape]]:
    """(label, shape) of every model the evaluation scores: ``evaluate.models`` and the export's tiers."""
    config = recipe.evaluate
    assert config is not None
    models = [
        (ref, ctx.base if ref == "base" else ctx.model)
        for ref in config.models
        if ref not in ("onnx", "onnx-int8", "static")
    ]
    if recipe.export is not None:
        models += [(tier, ctx.model) for tier in recipe.export.tiers]
        models += [(dims_tier(d), ctx.model) for d in export_dims_of(recipe, ctx.model)]
    return models


def plan_evaluate(recipe: Recipe, ctx: Context, tasks: list[TaskWork], unknown: list[str]) -> StagePlan:
    """Texts to encode per task, times the models evaluated."""
    config = recipe.evaluate
    assert config is not None
    plan = StagePlan(stage="evaluate")
    plan.unknown += unknown
    models = evaluated_models(recipe, ctx)
    per_model = sum(t.texts for t in tasks)
    plan.work |= {
        "tasks": {t.name: t.texts for t in tasks},
        "texts_per_model": per_model,
        "models": [label for label, _ in models],
        "texts_to_encode": per_model * len(models),
    }
    plan.lines.append(
        f"{len(tasks)} tasks, {per_model:,} texts per model ({tasks[0].how if tasks else '-'}) x "
        f"{len(models)} models "
        f"({', '.join(label for label, _ in models)}) = {per_model * len(models):,} texts to encode"
    )
    plan.notes.append("texts per task (one model): " + ", ".join(f"{t.name} {t.texts:,}" for t in tasks))
    for task in sorted(tasks, key=lambda t: -t.texts)[:3]:
        plan.lines.append(
            f"  largest: {task.name} ({task.type}) {task.texts:,} texts, ~{task.chars:.0f} chars"
        )
    for label, shape in models:
        parts = [encode_part(ctx, f"{label}: {t.name}", shape, t.texts, t.chars) for t in tasks]
        merged = _merged(f"model {label}", parts)
        plan.parts.append(on_host(ctx, merged) if label.startswith("onnx") else merged)
    memo = per_model * ctx.model.hidden_size * 4
    plan.parts.append(memory_part("the model and one model's embedding memo", plan.parts, memo))
    plan.parts += evaluation_overheads(recipe, ctx, tasks, models)
    plan.notes.append(
        "the task data's download is not included; ONNX tiers are encoded on the CPU (on the GPU machine at "
        "its host's rate); GPU figure: a projection - today's evaluate has not been measured on a GPU (the "
        "first H200 run of older code took 136 s)"
    )
    plan.disk_gb = 0.01
    return plan.total()


def evaluation_overheads(
    recipe: Recipe, ctx: Context, tasks: list[TaskWork], models: list[tuple[str, ModelShape]]
) -> list[Part]:
    """What the evaluation spends besides encoding: mteb's import, each model's load, each task's set-up
    per model, and with ``evaluate.bootstrap`` the statistics per model (per-item statistics and
    resampling; the clustering tasks' k-means refits)."""
    config = recipe.evaluate
    assert config is not None
    n = len(models)
    loaded = [shape.parameters for label, shape in models if not label.startswith(("onnx", "static"))]
    parts = [
        fixed_part(ctx, "mteb import", "mteb_import_s"),
        load_part(ctx, f"loading {len(loaded)} models", loaded),
        fixed_part(
            ctx, f"mteb task set-up: {len(tasks)} tasks x {n} models", "mteb_task_setup_s", len(tasks) * n
        ),
    ]
    if config.bootstrap:
        share = (
            config.bootstrap / 1000
        )  # the measured figure is for 1,000 resamples; the per-item part is fixed
        parts.append(
            fixed_part(
                ctx,
                f"bootstrap ({config.bootstrap} resamples) x {n} models",
                "bootstrap_s",
                n * max(share, 0.5),
            )
        )
        if any(t.type == "Clustering" for t in tasks):
            parts.append(fixed_part(ctx, f"clustering refits x {n} models", "clustering_refits_s", n))
    return parts


def _merged(name: str, parts: list[Part]) -> Part:
    """One part summing several (times) and keeping their peaks and their bases (one each)."""

    def basis(found: set[str]) -> str:
        extrapolated = any("extrapolated" in b for b in found)
        first = sorted(found)[0].replace(", length extrapolated", "") if found else ""
        if not extrapolated:
            return first
        return first + (", some lengths extrapolated" if len(found) > 1 else ", length extrapolated")

    cpu = [p.seconds_cpu for p in parts if p.seconds_cpu is not None]
    gpu = [p.seconds_gpu for p in parts if p.seconds_gpu is not None]
    return Part(
        name=name,
        seconds_cpu=sum(cpu) if cpu else None,
        seconds_gpu=sum(gpu) if gpu else None,
        basis_cpu=basis({p.basis_cpu for p in parts}),
        basis_gpu=basis({p.basis_gpu for p in parts}),
        peak_rss_gb=max((p.peak_rss_gb for p in parts if p.peak_rss_gb is not None), default=None),
        peak_gpu_gb=max((p.peak_gpu_gb for p in parts if p.peak_gpu_gb is not None), default=None),
        gpu_rate=any(p.gpu_rate for p in parts),
    )


def evaluation_tasks(recipe: Recipe) -> tuple[list[TaskWork], list[str]]:
    """The evaluation's tasks and their texts (none without an evaluate stage)."""
    if recipe.evaluate is None:
        return [], []
    return task_work(list(recipe.evaluate.tasks), recipe.language, recipe.evaluate.exclude_tasks)
