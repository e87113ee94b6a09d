"""The ``synth_sts`` recipe stage: generate the synthetic STS dataset into ``<run_dir>/synth_sts``."""

from __future__ import annotations

from typing import Any

from skadapt.languages import get_language
from skadapt.synth.run import synthesize_sts


def run_stage(context: Any) -> dict[str, Any]:
    """Generate with the recipe's ``llm``; the answers are cached, so an interrupted stage resumes."""
    recipe = context.recipe
    report = synthesize_sts(
        recipe.synth_sts, recipe.llm, get_language(recipe.language), context.out_dir, seed=recipe.seed
    )
    generation = report["generation"]
    return {
        "pairs": report["pairs"],
        "splits": report.get("splits"),
        "failed_sources": report["failed_sources"],
        "requests_sent": generation["requests_sent"],
        "cache_hits": generation["cache_hits"],
        "dataset": str(context.out_dir.name + "/dataset"),
    }
