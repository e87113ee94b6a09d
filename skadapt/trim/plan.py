"""The trim stage's cost plan: counting the corpus, the parity check, the trimmed model's shape."""

from __future__ import annotations

from skadapt.plan.model import StagePlan
from skadapt.plan.models import KEPT_ON_TOP, ModelShape
from skadapt.plan.parts import cpu_part, data_value, encode_part, gb, load_part, stream_part, wordfreq_part
from skadapt.plan.sizes import read_count, size_text, source_line, source_size
from skadapt.stage import PlanContext
from skadapt.trim.config import TrimConfig

PARITY_CHARS = 2000
"""The parity check encodes whole corpus documents: cut at 512 tokens, about this many characters."""


def plan_trim(config: TrimConfig, ctx: PlanContext) -> StagePlan:
    """Counting the corpus tokens, the parity check, the trimmed model (which becomes ``ctx.model``, the
    shape the later stages' work is priced with)."""
    assert config.corpus is not None
    ctx.model = ctx.base.trimmed(trimmed_rows(config, ctx.base))
    plan = StagePlan(stage="trim")
    corpora = [("trim.corpus", config.corpus)]
    if config.extra_corpus is not None and config.extra_vocab_size > 0:
        corpora.append(("trim.extra_corpus", config.extra_corpus))
    documents, parity_pool, parity_chars = 0, 0, float(PARITY_CHARS)
    for field, corpus in corpora:
        spec = corpus.source
        size = source_size(spec, corpus.columns, enough=corpus.max_documents)
        read = read_count(size, corpus.max_documents, config.max_bytes, field, plan)
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


def trimmed_rows(config: TrimConfig, base: ModelShape) -> int:
    """Embedding rows after trimming (an upper bound: the corpus may use fewer tokens)."""
    extra = config.extra_vocab_size if config.extra_corpus is not None else 0
    return min(base.vocab_size, config.vocab_size + extra + KEPT_ON_TOP)
