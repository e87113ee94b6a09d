"""The robustness stage's cost plan: its rewrites, LLM requests and tokens (:mod:`skadapt.plan.llm`), and
the models scored on them."""

from __future__ import annotations

from skadapt.plan.llm import LLM_TIME, tokens
from skadapt.plan.model import StagePlan
from skadapt.plan.parts import encode_part
from skadapt.plan.tasks import TaskWork, task_work
from skadapt.robustness.config import RobustnessConfig
from skadapt.robustness.tasks import QUERY_TYPES, SUPPORTED_TYPES
from skadapt.robustness.transforms import LANGUAGE_TRANSFORMS, resolve_settings, steps
from skadapt.stage import PlanContext

OUTPUT_FACTOR = {"expansion": 2.0, "summarisation": 0.5, "summarised_expansion": 1.0}
"""Answer length against the text rewritten (per transformation; 1 for the others)."""
JUDGE_ANSWER_TOKENS = 30


def plan_robustness(config: RobustnessConfig, ctx: PlanContext) -> StagePlan:
    """Rewrites per transformation and seed of every task's texts, and the models scored on them."""
    language = ctx.run.language
    assert ctx.run.llm is not None and language is not None
    plan = StagePlan(stage="robustness")
    tasks, unknown = task_work(list(config.tasks), language.code)
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
    for label in config.models:
        shape = ctx.base if label == "base" else ctx.model  # every other model scored has its shape
        chars = _mean_chars(tasks)
        plan.parts.append(encode_part(ctx, f"encoding for {label}", shape, originals + rewrites, chars))
    plan.notes.append(LLM_TIME)
    return plan.total()


def _mean_chars(tasks: list[TaskWork]) -> float:
    texts = sum(t.texts for t in tasks)
    return sum(t.texts * t.chars for t in tasks) / texts if texts else 100.0
