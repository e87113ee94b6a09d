"""The ``robustness`` recipe stage: the run's models under LLM transformations of the evaluation texts."""

from __future__ import annotations

from typing import Any

from skadapt.evaluate.selection import select_tasks
from skadapt.languages import get_language
from skadapt.robustness.run import RobustnessPlan, axis_table, run_robustness
from skadapt.robustness.transforms import resolve_settings


def run_stage(context: Any) -> dict[str, Any]:
    """Score ``robustness.models`` on ``robustness.tasks`` and their rewrites; the LLM answers and mteb
    results are cached, so an interrupted stage resumes."""
    recipe = context.recipe
    config = recipe.robustness
    settings = resolve_settings(
        config.preset, config.transforms, config.seeds, config.temperature, config.top_p
    )
    models = {ref: context.models[ref] for ref in config.models if ref in context.models}
    missing = [ref for ref in config.models if ref not in context.models]
    if missing:
        made = ", ".join(context.models)
        raise ValueError(f"robustness.models: {', '.join(missing)} not made by this recipe (it has {made})")
    mirrors = recipe.evaluate.dataset_mirrors if recipe.evaluate else None
    tasks = select_tasks(config.tasks, language=recipe.language, mirrors=mirrors, seed=recipe.seed)
    plan = RobustnessPlan(
        models=models,
        prompt_policy=dict(config.prompt_policy or {}),
        batch_size=config.batch_size,
        **settings,  # type: ignore[arg-type]
    )
    report = run_robustness(tasks, plan, recipe.llm, get_language(recipe.language), context.work_dir)
    import shutil

    shutil.copytree(
        context.work_dir, context.out_dir, dirs_exist_ok=True, ignore=shutil.ignore_patterns("cache")
    )
    return {"profile": axis_table(report["statistics"]), "texts_encoded": report["texts_encoded"]}
