"""A cost plan before the first step: per stage of a recipe, the work and its estimated time, memory and disk.

``skadapt train RECIPE --plan`` prints it and exits without downloading data or running a stage.
:func:`plan_recipe` reads only metadata: source sizes (line counts, Parquet footers, the Hub's dataset
cards), mteb's descriptive statistics of the evaluation tasks, the model's ``config.json``; it prices the
work with the rates measured on machines (``skadapt/plan/rates/*.json``, written by
``benchmark/gpu_check.py``), on this CPU and on the GPU where a measured figure exists, and says for each
figure whether it is measured or extrapolated. What cannot be read (offline, an unreachable Hub, no
metadata) is ``unknown`` with its reason, and the plan is partial.

Modules: ``model`` (the typed results), ``rates`` (the rates files), ``models`` (architecture and
parameters), ``sizes`` (source row counts), ``tasks`` (evaluation texts), ``parts`` (pricing),
``stages``/``finetune``/``llm`` (one planner per stage), ``render`` (the table).
"""

from __future__ import annotations

from skadapt.plan.model import Part, Plan, StagePlan
from skadapt.plan.render import render_plan
from skadapt.recipe import Recipe

__all__ = ["Part", "Plan", "StagePlan", "plan_recipe", "render_plan"]


def plan_recipe(recipe: Recipe, source: str | None = None) -> Plan:
    """The cost plan of a recipe, stage by stage, in run order.

    Args:
        recipe: The loaded recipe (``--set`` overrides applied).
        source: The recipe file, for the plan's title (default: the recipe's name).

    Returns:
        The plan; ``plan.stages[i]`` has ``stage``, ``work``, ``seconds_cpu``, ``seconds_gpu`` (None where
        no GPU figure was measured), ``peak_rss_gb``, ``peak_gpu_gb`` and ``disk_gb``.
    """
    from skadapt.plan.finetune import plan_finetune
    from skadapt.plan.llm import plan_robustness, plan_synth
    from skadapt.plan.models import model_shape
    from skadapt.plan.parts import Context
    from skadapt.plan.rates import cpu_rates, gpu_rates
    from skadapt.plan.stages import (
        evaluation_tasks,
        plan_evaluate,
        plan_export,
        plan_renorm,
        plan_trim,
        trimmed_rows,
    )

    base = model_shape(recipe.base_model)
    model = base.trimmed(trimmed_rows(recipe, base)) if recipe.trim is not None else base
    cpu, gpu = cpu_rates(), gpu_rates()
    ctx = Context(cpu, gpu, base, model)
    tasks, unknown = evaluation_tasks(recipe)
    iso = recipe.language_entry.iso639_1 or "en"
    stages = []
    for name in recipe.enabled_stages():
        if name == "trim":
            stages.append(plan_trim(recipe, ctx))
        elif name == "finetune":
            stages.append(plan_finetune(recipe, ctx, tasks))
        elif name == "renorm":
            stages.append(plan_renorm(recipe, ctx, iso))
        elif name == "export":
            stages.append(plan_export(recipe, ctx, tasks))
        elif name == "evaluate":
            stages.append(plan_evaluate(recipe, ctx, tasks, unknown))
        elif name == "synth_sts":
            stages.append(plan_synth(recipe, ctx))
        elif name == "robustness":
            stages.append(plan_robustness(recipe, ctx))
        else:
            stages.append(StagePlan(stage=name, lines=["uploads the final model: no compute"]))
    if not base.known:
        for stage in stages:
            stage.unknown.append(f"base model {recipe.base_model}: {base.how}")
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
