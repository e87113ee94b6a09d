"""Plans of the LLM stages: requests and tokens of synth_sts and robustness, from their configs and prompts.

Prompt tokens are the real prompts' characters (the stage's own templates, filled with texts of the
average length) at :data:`~skadapt.plan.parts.CHARS_PER_TOKEN`; answer tokens the expected output's.
The LLM's own time depends on its server and model, so it is not estimated: the requests and tokens are
what to size a server by. Retries (``llm.attempts``) come on top for outputs that fail their checks.
"""

from __future__ import annotations

from skadapt.plan.model import StagePlan
from skadapt.plan.parts import CHARS_PER_TOKEN, Context, cpu_part, encode_part
from skadapt.plan.sizes import source_size
from skadapt.plan.stages import evaluated_models, read_count, source_line
from skadapt.plan.tasks import TaskWork, task_work
from skadapt.recipe import Recipe

VARIANT_CHARS = 100 + 120
"""One of six synthetic-STS variants in the answer: a sentence and its explanation, JSON included."""
OUTPUT_FACTOR = {"expansion": 2.0, "summarisation": 0.5, "summarised_expansion": 1.0}
"""Answer length against the text rewritten (per transformation; 1 for the others)."""
JUDGE_ANSWER_TOKENS = 30
LLM_TIME = "LLM time not estimated: it depends on the server and model (size it by requests and tokens)"


def tokens(chars: float) -> int:
    return int(chars / CHARS_PER_TOKEN)


def plan_synth(recipe: Recipe, ctx: Context) -> StagePlan:
    """One request per source sentence (six variants each), an optional judge request per pair."""
    from skadapt.synth.prompts import LEVELS, load_template, render

    config = recipe.synth_sts
    assert config is not None and recipe.llm is not None
    language = recipe.language_entry
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
        "max_attempts": recipe.llm.attempts,
    }
    plan.lines.append(
        f"LLM: {requests:,} requests (one per source sentence, six variants each), "
        f"~{requests * prompt:,} prompt "
        f"+ ~{requests * answer:,} answer tokens; up to x{recipe.llm.attempts} with retries"
    )
    if judged:
        plan.lines.append(f"judge: {judged:,} requests (one per pair)")
    plan.notes.append(LLM_TIME)
    return plan.total()


def plan_robustness(recipe: Recipe, ctx: Context) -> StagePlan:
    """Rewrites per transformation and seed of every task's texts, and the models scored on them."""
    from skadapt.robustness.tasks import QUERY_TYPES, SUPPORTED_TYPES
    from skadapt.robustness.transforms import LANGUAGE_TRANSFORMS, resolve_settings, steps

    config = recipe.robustness
    assert config is not None and recipe.llm is not None
    language = recipe.language_entry
    plan = StagePlan(stage="robustness")
    tasks, unknown = task_work(list(config.tasks), recipe.language)
    plan.unknown += unknown
    settings = resolve_settings(
        config.preset, config.transforms, config.seeds, config.temperature, config.top_p
    )
    transforms, seeds = list(settings["transforms"]), list(settings["seeds"])  # type: ignore[call-overload]
    supported = [t for t in tasks if t.type in SUPPORTED_TYPES]
    requests = prompt_tokens = answer_tokens = rewrites = 0
    for name in transforms:
        applicable = [t for t in supported if not (t.type == "BitextMining" and name in LANGUAGE_TRANSFORMS)]
        texts = sum(t.rewrites for t in applicable)
        chars = sum(t.rewrites * t.rewrite_chars for t in applicable) / max(1, texts)
        calls = steps(name, language, seeds[0], "x")
        per_text = sum(len(step.prompt.replace("{text}", "")) for step in calls) + len(calls) * chars
        rewrites += texts * len(seeds)
        requests += texts * len(seeds) * len(calls)
        prompt_tokens += tokens(texts * len(seeds) * per_text)
        answer_tokens += tokens(texts * len(seeds) * chars * OUTPUT_FACTOR.get(name, 1.0) * len(calls))
    judged = rewrites if config.judge is not None else 0
    models = len(config.models)
    originals = sum(t.texts for t in tasks)
    plan.work |= {
        "tasks": len(tasks),
        "transforms": transforms,
        "seeds": seeds,
        "rewrites": rewrites,
        "requests": requests,
        "judge_requests": judged,
        "prompt_tokens": prompt_tokens,
        "answer_tokens": answer_tokens + judged * JUDGE_ANSWER_TOKENS,
        "texts_to_encode": models * (originals + rewrites),
    }
    queries = sum(1 for t in supported if t.type in QUERY_TYPES)
    plan.lines.append(
        f"{len(tasks)} tasks ({queries} rewrite only their queries), {len(transforms)} transformations x "
        f"{len(seeds)} seeds: {rewrites:,} rewrites in {requests:,} LLM requests, ~{prompt_tokens:,} prompt "
        "+ "
        f"~{answer_tokens:,} answer tokens"
    )
    if judged:
        plan.lines.append(f"judge: {judged:,} requests (one per rewrite)")
    plan.lines.append(
        f"encoding: {models} models x ({originals:,} original + {rewrites:,} rewritten texts) = "
        f"{models * (originals + rewrites):,} texts"
    )
    shapes = dict(evaluated_models(recipe, ctx)) if recipe.evaluate is not None else {}
    for label in config.models:
        shape = ctx.base if label == "base" else shapes.get(label, ctx.model)
        chars = _mean_chars(tasks)
        plan.parts.append(encode_part(ctx, f"encoding for {label}", shape, originals + rewrites, chars))
    plan.notes.append(LLM_TIME)
    return plan.total()


def _mean_chars(tasks: list[TaskWork]) -> float:
    texts = sum(t.texts for t in tasks)
    return sum(t.texts * t.chars for t in tasks) / texts if texts else 100.0
