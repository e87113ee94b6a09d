"""The export stage's cost plan: ONNX parity, the speed rounds, the int8 choice on dev, the static and
dims tiers."""

from __future__ import annotations

from skadapt.config import dims_tier
from skadapt.export.config import ExportConfig, FitCorpus
from skadapt.plan.dev import dev_size
from skadapt.plan.model import Part, StagePlan
from skadapt.plan.parts import (
    BASIS_PROMPTS,
    MODEL_MAX_CHARS,
    SHORT_CHARS,
    encode_part,
    gb,
    load_part,
    on_host,
)
from skadapt.plan.sizes import source_size
from skadapt.stage import PlanContext
from skadapt.tasks.projection import BASIS_TEXTS

INT8_VARIANTS = 5
"""The int8 variants export quantizes, scores on dev and measures (:func:`skadapt.export.int8.variants`)."""
STATIC_TOKEN_CHARS = 4
"""model2vec distils a static model from one encoding per vocabulary token (a few characters each)."""


def plan_export(config: ExportConfig, ctx: PlanContext) -> StagePlan:
    """ONNX export and parity, the speed measurement, the static model's distillation; its tiers join
    ``ctx.tiers`` (what a later stage scores)."""
    tasks = ctx.tasks
    dims = export_dims(config, ctx)
    ctx.tiers += [*config.tiers, *(dims_tier(d) for d in dims)]
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
    dev = ctx.run.dev
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
    on_basis = bool(dims) and config.dims_basis != "first"
    fitted = trained or on_basis
    corpus_texts, corpus_chars = export_corpus_size(ctx, config.corpus, plan) if fitted else (0, 0.0)
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
        plan_dims_choice(config, ctx, plan)
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


def speed_processes(ctx: PlanContext, models: int) -> Part:
    """Starting the speed rounds' processes: one fork server imports torch, sentence-transformers and
    onnxruntime once, then forks one process per model, and the processes load their models one at a time
    (on the GPU machine: the measured start of a fresh process with those imports, ``host.process_start_s``,
    and the loads at its cores' speed)."""
    name = f"speed rounds: imports once, {models} models loaded"
    cpu = ctx.cpu
    if cpu is None or cpu.fixed("imports_s") is None:
        return Part(name=name, basis_cpu="no fixed costs", basis_gpu="no fixed costs")
    imports = sum(cpu.fixed(key) or 0.0 for key in ("imports_s", "onnxruntime_import_s"))
    load = (cpu.fixed("first_load_s") or 0.0) + ctx.model.parameters / 1e9 * (
        cpu.fixed("load_s_per_gparam") or 0.0
    )
    part = Part(
        name=name,
        seconds_cpu=imports + models * load,
        basis_cpu="fixed costs measured here: the imports once, each model's load in turn",
    )
    if ctx.gpu is not None:
        start = ctx.gpu.host("process_start_s", imports)
        part.seconds_gpu = start + models * load / ctx.gpu.host("core_speed")
        part.basis_gpu = (
            f"{start:g} s to start the fork server (host.process_start_s), the loads at host.core_speed"
        )
        part.gpu_rate = True
    return part


def export_dims(config: ExportConfig, ctx: PlanContext) -> list[int]:
    """The dims tiers the export makes: ``export.dims``, else the fine-tuning's ``matryoshka_dims``, below
    the model's dimension."""
    dims = config.dims if config.dims is not None else ctx.trained_dims or []
    return [d for d in dims if d < ctx.model.hidden_size]


def plan_dims_choice(config: ExportConfig, ctx: PlanContext, plan: StagePlan) -> None:
    """The dims bases' extra encodes: both sides of the parallel text with each prompt (``dims_basis``
    auto or parallel), and the dev texts encoded once for the choice on dev (auto with dev sets)."""
    parallel = config.corpus.parallel if config.dims_basis in ("auto", "parallel") else None
    if parallel:
        fit = config.corpus.model_copy(update={"sources": list(parallel)})
        texts, chars = export_corpus_size(ctx, fit, plan)
        encodes = min(texts, BASIS_TEXTS) * BASIS_PROMPTS
        plan.work["dims_parallel_encodes"] = encodes
        plan.lines.append(
            f"dims tiers' parallel basis: {encodes:,} parallel-text encodes (both sides, {BASIS_PROMPTS} "
            "prompts)"
        )
        plan.parts.append(
            encode_part(ctx, "dims parallel basis", ctx.model, encodes, min(chars, MODEL_MAX_CHARS))
        )
    dev = ctx.run.dev
    if config.dims_basis == "auto" and dev is not None:
        dev_texts, dev_chars = dev_size(dev, plan, MODEL_MAX_CHARS)
        plan.work["dims_dev_encodes"] = dev_texts
        plan.lines.append(
            f"dims tiers' basis chosen on dev: {dev_texts:,} dev texts encoded once (each basis and d a map "
            "of those embeddings)"
        )
        plan.parts.append(encode_part(ctx, "dims basis choice on dev", ctx.model, dev_texts, dev_chars))


def export_corpus_size(ctx: PlanContext, fit: FitCorpus, plan: StagePlan) -> tuple[int, float]:
    """(texts, their average characters) of the export corpus (the static tier's training, the dims
    basis): its sources, else the fine-tuning datasets' text columns (none without either); rows x text
    columns, capped at ``max_texts``; unknown sizes count as ``max_texts``."""
    sources: list[tuple[str, list[str], int | None]]
    if fit.sources is not None:
        sources = [(item.source, list(item.columns), item.max_documents) for item in fit.sources]
    elif ctx.training is not None:
        sources = [(source, columns, None) for source, columns in ctx.training]
    else:
        return 0, 0.0
    texts, chars = 0, 0.0
    for source, columns, limit in sources:
        size = source_size(source, columns, enough=limit)
        if size.rows is None:
            plan.unknown.append(f"export.corpus {source}: {size.describe()}")
            return fit.max_texts, 100.0
        rows = min(size.rows, limit) if limit else size.rows
        per_row = len(set(columns))
        texts += rows * per_row
        chars += rows * (size.chars or 100.0 * per_row)
    return min(texts, fit.max_texts), chars / texts if texts else 100.0
