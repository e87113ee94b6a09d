"""The ``evaluate`` stage's section of the published model card: the published model's scores beside the
base model's (and humans'), and the do-no-harm verdicts."""

from __future__ import annotations

from skadapt.cards import number, table
from skadapt.results.evaluate import ModelEvaluation
from skadapt.stage import CardContext

VERDICT_NOTE = (
    "Each stage is compared with the model it started from, paired over tasks, with a non-inferiority "
    "margin: **harms** = the confidence interval of the mean change reaches -margin, or some task's own 95% "
    "interval lies entirely below -margin (named); **improves** = not harmful, the mean change is positive "
    "and significant; **non-inferior** = neither."
)


def card_section(ctx: CardContext) -> list[str]:
    """Its card section (:attr:`skadapt.stage.Stage.card`): the evaluation of the published model
    (:attr:`CardContext.evaluation`, read from this stage's report), then the verdicts."""
    return [*evaluation_section(ctx.evaluation), *verdicts_section(ctx.evaluation)]


def evaluation_section(evaluation: ModelEvaluation | None) -> list[str]:
    """Main score per task for the published model beside the base model (and humans when present)."""
    if evaluation is None:
        return []
    labels = [label for label in (evaluation.base_label, evaluation.label) if label]
    header = ["task", "type", "metric", *(f"{label}" for label in labels)]
    if evaluation.base_label:
        header.append("Δ")
    rows = []
    for task, task_type in evaluation.task_types.items():
        values = [evaluation.scores.get(label, {}).get(task) for label in labels]
        row = [task, task_type, evaluation.metrics.get(task, "main_score"), *(number(v) for v in values)]
        if evaluation.base_label:
            both = None not in values
            row.append(number(values[1] - values[0], sign=True) if both else "-")
        rows.append(row)
    for average in ("All", "Type"):
        values = [evaluation.averages.get(label, {}).get(average) for label in labels]
        row = [
            f"**{average}**",
            "mean" + (" of type means" if average == "Type" else ""),
            "",
            *map(number, values),
        ]
        if evaluation.base_label:
            row.append(number(values[1] - values[0], sign=True) if None not in values else "-")
        rows.append(row)
    tasks = ", ".join(f"`{t}`" for t in evaluation.settings.tasks) or "see the report"
    lines = ["## Evaluation", ""]
    lines += [
        f"Main score of each task (x100), this model (`{evaluation.label}`)"
        + (f" beside the base model (`{evaluation.base_label}`)" if evaluation.base_label else "")
        + f". Tasks: {tasks}.",
        "",
    ]
    lines += table(header, rows)
    return [*lines, "", *human_section(evaluation)]


def human_section(evaluation: ModelEvaluation) -> list[str]:
    """Human annotators beside the model (and the base model) on the same items, per task."""
    if not evaluation.human:
        return []
    labels = [label for label in (evaluation.label, evaluation.base_label) if label]
    lines = [
        "### Human baseline",
        "",
        "Human annotators (HUME-style) and the models scored on the same subset of items (x100), so these "
        "numbers differ from the full-test scores above.",
        "",
    ]
    rows = []
    for row in evaluation.human:
        sd, annotators = row.human_sd, row.annotators
        human = number(row.human) + (f" ± {number(sd)}" if sd is not None else "")
        human += f" ({annotators})" if annotators else ""
        rank = f"{row.rank} of {row.of}" if row.rank and row.of else "-"
        rows.append([row.task, row.type, human, *(number(row.models.get(m)) for m in labels), rank])
    lines += table(["task", "type", "Human (mean ± SD, n)", *labels, "Human's rank"], rows)
    return [*lines, ""]


def verdicts_section(evaluation: ModelEvaluation | None) -> list[str]:
    """The do-no-harm verdicts of every stage against its input model."""
    if evaluation is None or not evaluation.verdicts:
        return []
    alpha = evaluation.settings.alpha
    margin = evaluation.settings.tost_margin
    lines = ["## Do-no-harm verdicts", "", VERDICT_NOTE]
    lines[-1] += f" Margin {margin} points, {1 - 2 * alpha:.0%} confidence intervals."
    lines.append("")
    rows = [
        [
            f"{v.a} -> {v.b}",
            number(v.mean_diff, sign=True),
            f"[{number(v.ci_low, sign=True)}, {number(v.ci_high, sign=True)}]",
            number(v.wilcoxon_p, 3),
            ", ".join(v.harmed_tasks) or "none",
            f"**{v.verdict}**",
        ]
        for v in evaluation.verdicts
    ]
    lines += table(["input -> output", "mean Δ", "CI", "Wilcoxon p", "tasks below −margin", "verdict"], rows)
    return [*lines, ""]
