"""The cost plan of a recipe: each stage's own plan (:attr:`skadapt.stage.Stage.plan`), in run order.

The stages' plans and the pricing they share are :mod:`skadapt.plan`'s; this module only walks the
recipe's stages, as the pipeline runs them, and hands each the run's facts.
"""

from __future__ import annotations

from skadapt.plan.model import Plan, StagePlan
from skadapt.recipe import Recipe
from skadapt.stage import PlanContext
from skadapt.stages import BY_NAME


def plan_recipe(recipe: Recipe, source: str | None = None) -> Plan:
    """The cost plan of a recipe, stage by stage, in run order (``skadapt train RECIPE --plan``).

    Args:
        recipe: The loaded recipe (``--set`` overrides applied).
        source: The recipe file, for the plan's title (default: the recipe's name).

    Returns:
        The plan; ``plan.stages[i]`` has ``stage``, ``work``, ``seconds_cpu``, ``seconds_gpu`` (None where
        no GPU figure was measured), ``peak_rss_gb``, ``peak_gpu_gb`` and ``disk_gb``.
    """
    from skadapt.plan.models import model_shape
    from skadapt.plan.rates import cpu_rates, gpu_rates
    from skadapt.plan.tasks import task_work

    base = model_shape(recipe.base_model)
    cpu, gpu = cpu_rates(), gpu_rates()
    run = recipe.run_facts()
    tasks, unknown = (
        task_work(list(run.eval_tasks), recipe.language, run.excluded_tasks) if run.eval_tasks else ([], [])
    )
    ctx = PlanContext(cpu, gpu, base, base, run=run, tasks=tasks, tasks_unknown=unknown)
    stages = []
    for name in recipe.enabled_stages():
        stage = BY_NAME[name]
        planned = stage.plan(getattr(recipe, name), ctx) if stage.plan is not None else None
        stages.append(
            planned or StagePlan(stage=name, lines=["no cost estimate: the stage declares no plan"])
        )
    if not base.known:
        for planned in stages:
            planned.unknown.append(f"base model {recipe.base_model}: {base.how}")
    model = ctx.model
    return Plan(
        recipe=source or recipe.name,
        base_model=recipe.base_model,
        model=f"{base.label() or 'unknown'} ({base.how}); after trimming {model.label() or 'unknown'}",
        cpu=cpu.title if cpu is not None else None,
        gpu=gpu.title if gpu is not None else None,
        stages=stages,
        cpu_memory_gb=cpu.data.get("environment", {}).get("memory_gb") if cpu is not None else None,
        gpu_memory_gb=gpu.data.get("environment", {}).get("gpu_memory_gb") if gpu is not None else None,
    )
