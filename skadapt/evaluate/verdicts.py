"""Do-no-harm verdicts: each evaluated model against the one before it (each stage against its input).

Per pair of models ``a`` (input) -> ``b`` (output):

- per task: the difference b - a with its paired interval where one exists, both of one statistic (the
  item statistic of local suite tasks, the mean of mteb's repeated experiments), else the difference of
  the main scores;
- over tasks: the paired Wilcoxon signed-rank test and the (1 - 2 alpha) t-interval of the mean
  difference (the TOST interval);
- the verdict: **harms** when the interval's lower end is not above ``-margin`` (harm beyond the margin
  cannot be excluded: the verdict fails closed) or when any task's paired 95% interval lies entirely below
  ``-margin`` (a single task's loss that the mean over tasks would hide; the verdict names the tasks);
  otherwise **improves** when the mean difference is positive and either the Wilcoxon test is significant
  or the whole interval is above zero, else **non-inferior**.

Per-task intervals come from the item-level bootstrap of local suite tasks (clustering: k-means refit on
half-samples), else from mteb's own repeated experiments (classification, clustering); tasks with neither
are listed as having no interval. The over-tasks test and interval use the main scores.
"""

from __future__ import annotations

from skadapt.evaluate.aggregate import Table, comparison_pairs
from skadapt.evaluate.stats import compare
from skadapt.results.evaluate import Verdict

IMPROVES, NON_INFERIOR, HARMS = "improves", "non-inferior", "harms"
TIER = "tier"
"""The verdict of a deployment tier: expected to lose quality, it states its loss with its interval."""
INT8_BUDGET = 0.5
"""Points an int8 tier may lose against its parent on the suite and still be worth deploying: its
quantization is chosen on dev (``skadapt.export.int8``), and the suite has the last word."""


def int8_notes(verdicts: list[Verdict]) -> list[str]:
    """One line per int8 tier: worth deploying when its mean loss on the suite is within
    :data:`INT8_BUDGET` points of its parent, else plainly not."""
    notes = []
    for v in verdicts:
        if v.verdict != TIER or v.b != "onnx-int8":
            continue
        loss = f"{v.mean_diff:+.2f} [{v.ci_low:+.2f}, {v.ci_high:+.2f}] against {v.a}"
        if v.mean_diff >= -INT8_BUDGET:
            notes.append(f"- {v.b}: {loss}: within {INT8_BUDGET:g} points, worth deploying")
        else:
            notes.append(
                f"- **{v.b}: {loss}: loses more than {INT8_BUDGET:g} points on this suite — not worth "
                "deploying** (its variant was chosen on dev; the suite says otherwise)"
            )
    return notes


def verdict_of(
    mean_diff: float,
    ci_low: float,
    wilcoxon_p: float,
    *,
    margin: float,
    alpha: float,
    harmed_tasks: list[str] | None = None,
) -> str:
    """improves / non-inferior / harms from the interval of the mean difference and the tasks whose own
    interval lies below ``-margin`` (see the module doc)."""
    if not ci_low > -margin or harmed_tasks:  # NaN (a single task): not shown non-inferior
        return HARMS
    significant = wilcoxon_p < alpha or ci_low > 0
    return IMPROVES if mean_diff > 0 and significant else NON_INFERIOR


def stage_verdicts(
    table: Table,
    task_deltas: dict[tuple[str, str], dict[str, dict[str, float]]] | None = None,
    *,
    margin: float,
    alpha: float,
    parents: dict[str, str] | None = None,
) -> list[Verdict]:
    """A verdict for every model against the one listed before it in ``table``; a deployment tier
    (``parents``) against the model it came from, with the verdict ``tier`` (its loss and interval are
    stated, never judged as harm: a cheaper tier is expected to lose some quality).

    Args:
        table: Aggregated scores, models in stage order, tiers after them.
        task_deltas: (a, b) -> task -> ``{delta, low, high[, basis]}`` of b - a, where computed: the
            point and interval of one statistic, both shown.
        margin: Non-inferiority margin in points.
        alpha: Significance level (the interval is 1 - 2 alpha).
        parents: Tier -> the model it came from.
    """
    tasks = list(table.task_types)
    rows = {row.model: row for row in table.rows}
    verdicts = []
    for first, second in comparison_pairs(list(rows), parents):
        before, after = rows[first], rows[second]
        a = [before.tasks[t] for t in tasks]
        b = [after.tasks[t] for t in tasks]
        comparison = compare(before.model, a, after.model, b, margin=margin, alpha=alpha)
        boot = (task_deltas or {}).get((before.model, after.model), {})
        per_task = {
            task: {
                "delta": boot[task]["delta"]  # unrounded: the interval's own point
                if task in boot
                else round(after.tasks[task] - before.tasks[task], 4),
                "low": boot[task]["low"] if task in boot else None,
                "high": boot[task]["high"] if task in boot else None,
                "basis": boot[task].get("basis", "items") if task in boot else None,
            }
            for task in tasks
        }
        harmed = [t for t, d in per_task.items() if d["high"] is not None and d["high"] < -margin]
        verdicts.append(
            Verdict(
                a=before.model,
                b=after.model,
                verdict=TIER
                if second in (parents or {})
                else verdict_of(
                    comparison.mean_diff,
                    comparison.ci_low,
                    comparison.wilcoxon_p,
                    margin=margin,
                    alpha=alpha,
                    harmed_tasks=harmed,
                ),
                mean_diff=comparison.mean_diff,
                ci_low=comparison.ci_low,
                ci_high=comparison.ci_high,
                wilcoxon_p=comparison.wilcoxon_p,
                margin=margin,
                tasks=per_task,
                harmed_tasks=harmed,
                no_interval=[t for t, d in per_task.items() if d["low"] is None],
            )
        )
    return verdicts


def verdicts_markdown(verdicts: list[Verdict], alpha: float) -> str:
    """One line per stage, then the per-task differences with their bootstrap intervals."""
    if not verdicts:
        return ""
    level = round(100 * (1 - 2 * alpha))
    lines = [
        "## Do-no-harm verdicts (each model against the one before it; a tier against its parent)",
        "",
        f"| input → output | mean Δ | {level}% CI | Wilcoxon p | tasks below −margin | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for v in verdicts:
        below = ", ".join(v.harmed_tasks) or "none"
        lines.append(
            f"| {v.a} → {v.b} | {v.mean_diff:+.2f} | [{v.ci_low:+.2f}, {v.ci_high:+.2f}] | "
            f"{v.wilcoxon_p:.3f} | {below} | **{v.verdict}** |"
        )
    margin = verdicts[0].margin
    lines += [
        "",
        f"A stage harms when the interval of the mean is not above −{margin:g} or when any task's 95% "
        f"interval lies entirely below −{margin:g} (margin = `tost_margin`). A deployment tier (verdict "
        "*tier*) is expected to lose quality: its row states the loss with its interval, and its tasks "
        f"below −{margin:g} are named, but it is not judged as harm.",
        "",
        *([*notes, ""] if (notes := int8_notes(verdicts)) else []),
        "Per-task Δ (points) with its 95% paired interval, point and interval of one statistic: local "
        "suite tasks: the statistic recomputed from the embeddings (next section), items resampled, "
        "clustering refit on label-stratified half-samples (m-out-of-n, marked ʰ); mteb tasks: the mean "
        "of mteb's repeated experiments, those resampled (marked ᵉ); — no interval (Δ of the main "
        "scores). A Δ with an interval can therefore differ from the difference in the Tasks table.",
        "",
    ]
    header = ["Task", *(f"{v.a} → {v.b}" for v in verdicts)]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for task in verdicts[0].tasks:
        cells = [task]
        for v in verdicts:
            d = v.tasks[task]
            mark = {"experiments": "ᵉ", "half-samples": "ʰ"}.get(d.get("basis") or "", "")
            interval = f" [{d['low']:+.2f}, {d['high']:+.2f}]{mark}" if d["low"] is not None else " —"
            cells.append(f"{d['delta']:+.2f}{interval}")
        lines.append("| " + " | ".join(cells) + " |")
    missing = sorted({t for v in verdicts for t in v.no_interval})
    if missing:
        lines += [
            "",
            f"No per-task interval (no item-level data, no repeated experiments): {', '.join(missing)}.",
        ]
    return "\n".join(lines)
