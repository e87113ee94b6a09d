"""The synth_sts stage's cost plan: its LLM requests and tokens (:mod:`skadapt.plan.llm`)."""

from __future__ import annotations

from skadapt.plan.llm import LLM_TIME, tokens
from skadapt.plan.model import StagePlan
from skadapt.plan.parts import cpu_part
from skadapt.plan.sizes import SourceSize, read_count, source_line, source_size
from skadapt.stage import PlanContext
from skadapt.synth.config import SynthSTSConfig
from skadapt.synth.prompts import LEVELS, load_template, render

VARIANT_CHARS = 100 + 120
"""One of six synthetic-STS variants in the answer: a sentence and its explanation, JSON included."""


def plan_synth(config: SynthSTSConfig, ctx: PlanContext) -> StagePlan:
    """One request per source sentence (six variants each), an optional judge request per pair; the pairs
    it writes join ``ctx.written`` (a later stage training on them counts them)."""
    llm, language = ctx.run.llm, ctx.run.language
    assert llm is not None and language is not None
    chars = 2 * (config.min_chars + config.max_chars) / 2
    ctx.written[ctx.run.run_dir / "synth_sts"] = SourceSize(
        6 * config.n_sources, chars, "at most: 6 pairs per synth_sts.n_sources sentence", at_least=False
    )
    plan = StagePlan(stage="synth_sts")
    corpus = config.corpus
    size = source_size(corpus.source, corpus.columns, enough=corpus.max_documents)
    read = read_count(size, corpus.max_documents, None, "synth_sts.corpus", plan, len(corpus.columns))
    plan.lines.append(source_line("synth_sts.corpus", corpus.source, size, read))
    if read is not None:
        plan.parts.append(cpu_part(ctx, "sentence splitting", "renorm_sample", read, size.chars))
    sentence = "x" * int((config.min_chars + config.max_chars) / 2)
    prompt = tokens(len(render(load_template(language, config.prompt_template), sentence, language)))
    answer = tokens(len(LEVELS) * VARIANT_CHARS)
    requests = config.n_sources
    judged = len(LEVELS) * config.n_sources if config.judge is not None else 0
    plan.work |= {
        "requests": requests,
        "judge_requests": judged,
        "prompt_tokens": requests * prompt,
        "answer_tokens": requests * answer,
        "max_attempts": llm.attempts,
    }
    plan.lines.append(
        f"LLM: {requests:,} requests (one per source sentence, six variants each), "
        f"~{requests * prompt:,} prompt "
        f"+ ~{requests * answer:,} answer tokens; up to x{llm.attempts} with retries"
    )
    if judged:
        plan.lines.append(f"judge: {judged:,} requests (one per pair)")
    plan.notes.append(LLM_TIME)
    return plan.total()
