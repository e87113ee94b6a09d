"""The evaluate stage's cost plan: the texts of every task encoded by every model scored, and mteb's
overheads."""

from __future__ import annotations

from skadapt.evaluate.config import EvaluateConfig
from skadapt.plan.model import Part, StagePlan
from skadapt.plan.models import ModelShape
from skadapt.plan.parts import encode_part, fixed_part, load_part, memory_part, merged_part, on_host
from skadapt.plan.tasks import TaskWork
from skadapt.stage import PlanContext


def plan_evaluate(config: EvaluateConfig, ctx: PlanContext) -> StagePlan:
    """Texts to encode per task, times the models evaluated."""
    tasks = ctx.tasks
    plan = StagePlan(stage="evaluate")
    plan.unknown += ctx.tasks_unknown
    models = evaluated_models(config, ctx)
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
        merged = merged_part(f"model {label}", parts)
        plan.parts.append(on_host(ctx, merged) if label.startswith("onnx") else merged)
    memo = per_model * ctx.model.hidden_size * 4
    plan.parts.append(memory_part("the model and one model's embedding memo", plan.parts, memo))
    plan.parts += evaluation_overheads(config, ctx, tasks, models)
    plan.notes.append(
        "the task data's download is not included; ONNX tiers are encoded on the CPU (on the GPU machine at "
        "its host's rate); GPU figure: a projection - today's evaluate has not been measured on a GPU (the "
        "first H200 run of older code took 136 s)"
    )
    plan.disk_gb = 0.01
    return plan.total()


def evaluated_models(config: EvaluateConfig, ctx: PlanContext) -> list[tuple[str, ModelShape]]:
    """(label, shape) of every model the evaluation scores: ``evaluate.models`` and the tiers made before
    it (the export's)."""
    models = [
        (ref, ctx.base if ref == "base" else ctx.model)
        for ref in config.models
        if ref not in ("onnx", "onnx-int8", "static")
    ]
    return models + [(tier, ctx.model) for tier in ctx.tiers]


def evaluation_overheads(
    config: EvaluateConfig, ctx: PlanContext, tasks: list[TaskWork], models: list[tuple[str, ModelShape]]
) -> list[Part]:
    """What the evaluation spends besides encoding: mteb's import, each model's load, each task's set-up
    per model, and with ``evaluate.bootstrap`` the statistics per model (per-item statistics and
    resampling; the clustering tasks' k-means refits)."""
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
