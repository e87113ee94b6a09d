"""Evaluation reports: markdown tables, JSON, and a per-type bar plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skadapt.evaluate.aggregate import Table, aggregate, comparison_pairs
from skadapt.evaluate.bootstrap import SuiteIntervals, experiment_deltas
from skadapt.evaluate.stats import Comparison, compare
from skadapt.evaluate.verdicts import stage_verdicts, verdicts_markdown
from skadapt.results import EvaluationReport
from skadapt.results.evaluate import TaskScore, Verdict


def comparisons(table: Table, *, margin: float, alpha: float) -> list[Comparison]:
    """Each model against the first one (the reference), paired over tasks."""
    if len(table.rows) < 2:
        return []
    tasks = list(table.task_types)
    ref = table.rows[0]
    return [
        compare(
            ref.model,
            [ref.tasks[t] for t in tasks],
            row.model,
            [row.tasks[t] for t in tasks],
            margin=margin,
            alpha=alpha,
        )
        for row in table.rows[1:]
    ]


def average_labels(table: Table) -> tuple[str, str]:
    """The All and Type column names: with tasks left out, what they average over (``All (30 of 31
    tasks)``)."""
    if not table.excluded:
        return "All", "Type"
    return f"All ({table.coverage})", f"Type ({table.coverage})"


def excluded_note(table: Table) -> str:
    """One line naming the tasks left out and what the averages are over ("" when none is)."""
    if not table.excluded:
        return ""
    return (
        f"Averages over {table.coverage}: {', '.join(table.excluded)} left out by evaluate.exclude_tasks "
        "(not scored; not comparable with averages over every task)."
    )


def summary_markdown(table: Table) -> str:
    """Table 1: one row per model, a column per task type, then All (mean over tasks) and Type."""
    header = ["Model", *table.types, *average_labels(table)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in table.rows:
        cells = [
            row.model,
            *(f"{row.types[t]:.2f}" for t in table.types),
            f"{row.All:.2f}",
            f"{row.Type:.2f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def tasks_markdown(table: Table) -> str:
    """Per-task main scores, models side by side."""
    header = ["Task", "Type", *(r.model for r in table.rows)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for task, task_type in table.task_types.items():
        lines.append(
            "| " + " | ".join([task, task_type, *(f"{r.tasks[task]:.2f}" for r in table.rows)]) + " |"
        )
    return "\n".join(lines)


def comparisons_markdown(items: list[Comparison]) -> str:
    """Wilcoxon and TOST results, one line per compared pair."""
    if not items:
        return ""
    lines = [
        "| A | B | n | mean B-A | Wilcoxon W | p | CI (1-2α) | TOST p | equivalent (±margin) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in items:
        lines.append(
            f"| {c.a} | {c.b} | {c.n} | {c.mean_diff:+.2f} | {c.wilcoxon_statistic:.1f} | "
            f"{c.wilcoxon_p:.3f} | "
            f"[{c.ci_low:+.2f}, {c.ci_high:+.2f}] | {c.tost_p:.3f} | {'yes' if c.equivalent else 'no'} "
            f"(±{c.margin:g}) |"
        )
    return "\n".join(lines)


def intervals_markdown(intervals: SuiteIntervals) -> str:
    """Per local task and model: the bootstrap statistic and its 95% interval."""
    if not intervals.scores:
        return ""
    models = list(next(iter(intervals.scores.values())))
    lines = ["| Task | " + " | ".join(models) + " |", "|" + "---|" * (len(models) + 1)]
    for task, by_model in intervals.scores.items():
        cells = [f"{v['value']:.2f} [{v['low']:.2f}, {v['high']:.2f}]" for v in by_model.values()]
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def intervals_note(intervals: SuiteIntervals) -> str:
    """What the local tasks' statistics and intervals are, and how they relate to mteb's scores."""
    note = (
        "Item-level statistics recomputed from the embeddings (see skadapt/evaluate/bootstrap.py), each "
        "shown with its own interval; they follow mteb's main scores and can differ from them."
    )
    if not intervals.half_samples:
        return note
    counts = sorted(set(intervals.half_samples.values()))
    return note + (
        " Clustering: mteb's score (the Tasks table) is the mean V-measure of 10 MiniBatchKMeans fits "
        "(one k-means++ init each, seeded), each on as many texts as the set has, drawn from it with "
        "replacement (a local suite sets mteb's sample size to the whole set). The statistic here is the "
        "V-measure of one k-means (10 inits) on the set's texts, each once; its interval refits k-means "
        f"on {'/'.join(str(c) for c in counts)} label-stratified half-samples drawn without replacement "
        "(the same for every model) and places their spread, scaled by sqrt(m/(n-m)) (about 1 for halves), "
        "around the statistic (an m-out-of-n interval)."
    )


def report_markdown(
    table: Table,
    items: list[Comparison],
    verdicts: list[Verdict] | None = None,
    intervals: SuiteIntervals | None = None,
    alpha: float = 0.05,
) -> str:
    """The whole report as markdown."""
    note = excluded_note(table)
    over = f" ({table.coverage})" if note else ""
    parts = ["# Evaluation", "", *([note, ""] if note else [])]
    parts += [f"## Averages (main scores ×100){over}", "", summary_markdown(table), ""]
    parts += [f"## Tasks{over}", "", tasks_markdown(table), ""]
    if items:
        parts += [
            f"## Comparisons with the first model (paired over {table.coverage if note else 'tasks'})",
            "",
            comparisons_markdown(items),
            "",
        ]
    if verdicts:
        text = verdicts_markdown(verdicts, alpha)
        if note:  # under the section's heading: what the mean differences are over
            heading, _, rest = text.partition("\n\n")
            text = (
                f"{heading}\n\nMean Δ over {table.coverage} ({', '.join(table.excluded)} left out).\n\n{rest}"
            )
        parts += [text, ""]
    if intervals is not None and intervals.scores:
        parts += [
            f"## Bootstrap intervals of the local tasks ({intervals.resamples} resamples, 95%)",
            "",
            intervals_note(intervals),
            "",
            intervals_markdown(intervals),
            "",
        ]
    return "\n".join(parts)


def task_deltas(
    scores: list[TaskScore],
    intervals: SuiteIntervals | None,
    bootstrap: int,
    seed: int,
    pairs: list[tuple[str, str]] | None = None,
) -> dict[tuple[str, str], dict[str, dict[str, Any]]]:
    """Per-task intervals of the compared models' differences: item bootstrap, else mteb's experiments."""
    merged: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    if bootstrap:
        for pair, tasks in experiment_deltas(scores, count=bootstrap, seed=seed, pairs=pairs).items():
            merged[pair] = {task: {**d, "basis": "experiments"} for task, d in tasks.items()}
    half = intervals.half_samples if intervals is not None else {}
    for pair, tasks in (intervals.deltas if intervals is not None else {}).items():
        merged.setdefault(pair, {}).update(
            {task: {**d, "basis": "half-samples" if task in half else "items"} for task, d in tasks.items()}
        )
    return merged


INTERVAL_LABEL = "statistic from the\nembeddings, 95% CI"
"""The legend entry of the error bars (the item statistic of a local task with its interval)."""


def _type_interval(
    table: Table, intervals: SuiteIntervals | None, task_type: str, model: str
) -> dict[str, float] | None:
    """The interval the report has for a type's bar: its one task's statistic and interval (a local task),
    else None (no interval of a mean over several tasks is computed)."""
    tasks = [task for task, kind in table.task_types.items() if kind == task_type]
    if intervals is None or len(tasks) != 1:
        return None
    return intervals.scores.get(tasks[0], {}).get(model)


def figure(table: Table, intervals: SuiteIntervals | None = None) -> Any:
    """Grouped bars: per task type (plus All/Type), one bar per model (mteb's scores, as Table 1).

    Where the report has an interval for a bar (a type made of one local task), the interval is drawn with
    its own point, the statistic recomputed from the embeddings (a dot; it can differ from the bar, as in
    the report). The legend sits outside the axes, right of them, so it hides no bar.
    """
    from matplotlib.figure import Figure

    groups = [*table.types, *average_labels(table)]
    width = 0.8 / max(1, len(table.rows))
    fig = Figure(figsize=(max(6, 1.3 * len(groups)) + 1.5, 4), layout="constrained")
    axis = fig.add_subplot()
    interval_label = INTERVAL_LABEL
    for index, row in enumerate(table.rows):
        values = [*(row.types[t] for t in table.types), row.All, row.Type]
        positions = [g + index * width for g in range(len(groups))]
        axis.bar(positions, values, width, label=row.model)
        for position, task_type in zip(positions, table.types, strict=False):
            found = _type_interval(table, intervals, task_type, row.model)
            if found is None:
                continue
            # the interval as drawn from its ends: a percentile interval of few resamples need not hold
            # its point (errorbar's yerr would be negative there)
            axis.vlines(
                position, found["low"], found["high"], color="black", linewidth=1, label=interval_label
            )
            axis.plot(position, found["value"], "o", color="black", markersize=2.5)
            interval_label = "_nolegend_"
    axis.set_xticks([g + width * (len(table.rows) - 1) / 2 for g in range(len(groups))], groups, rotation=30)
    axis.set_ylabel("main score")
    handles, labels = axis.get_legend_handles_labels()
    order = sorted(range(len(labels)), key=lambda i: labels[i] == INTERVAL_LABEL)  # models, then the dot
    axis.legend(
        [handles[i] for i in order],
        [labels[i] for i in order],
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        borderaxespad=0,
        fontsize="small",
    )
    return fig


def plot(table: Table, path: Path, intervals: SuiteIntervals | None = None) -> None:
    """Write :func:`figure` as a PNG."""
    figure(table, intervals).savefig(path, dpi=120)


def write_report(
    scores: list[TaskScore],
    out_dir: Path,
    *,
    margin: float = 2.0,
    alpha: float = 0.05,
    intervals: SuiteIntervals | None = None,
    extra: Any = None,
    bootstrap: int = 1000,
    seed: int = 42,
    parents: dict[str, str] | None = None,
    excluded: list[str] | None = None,
) -> tuple[Table, list[Comparison], list[Verdict]]:
    """Write ``report.md``, ``report.json`` and ``report.png`` into ``out_dir``.

    ``excluded``: the selected tasks left out (``evaluate.exclude_tasks``); every average says what it is
    over ("30 of 31 tasks").

    ``parents`` (deployment tier -> the model it came from): a tier's verdict compares it with its parent
    and states its loss (see :func:`skadapt.evaluate.verdicts.stage_verdicts`).

    Per-task intervals of the verdicts: the local suites' item bootstrap (``intervals``), else a bootstrap
    (``bootstrap`` resamples, ``seed``) of mteb's repeated experiments where a task has them.
    """
    table = aggregate(scores, excluded)
    items = comparisons(table, margin=margin, alpha=alpha)
    pairs = comparison_pairs([row.model for row in table.rows], parents)
    verdicts = stage_verdicts(
        table,
        task_deltas(scores, intervals, bootstrap, seed, pairs),
        margin=margin,
        alpha=alpha,
        parents=parents,
    )
    markdown = report_markdown(table, items, verdicts, intervals, alpha)
    (out_dir / EvaluationReport.MARKDOWN).write_text(markdown, encoding="utf-8")
    data = {
        **table.to_dict(),
        "scores": [s.model_dump() for s in scores],
        "comparisons": [c.to_dict() for c in items],
        "verdicts": [v.model_dump() for v in verdicts],
        "bootstrap": None
        if intervals is None
        else {"resamples": intervals.resamples, "scores": intervals.scores},
        "settings": {"tost_margin": margin, "alpha": alpha, **(extra or {})},
    }
    EvaluationReport.write_data(out_dir, data)
    plot(table, out_dir / "report.png", intervals)
    return table, items, verdicts
