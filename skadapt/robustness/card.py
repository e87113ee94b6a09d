"""The ``robustness`` stage's section of the published model card: the mean score change per
transformation axis and model."""

from __future__ import annotations

from skadapt.cards import number, table
from skadapt.results import RobustnessReport
from skadapt.stage import CardContext


def card_section(ctx: CardContext) -> list[str]:
    """Its card section (:attr:`skadapt.stage.Stage.card`)."""
    return robustness_section(ctx.report_as(RobustnessReport))


def robustness_section(report: RobustnessReport | None) -> list[str]:
    """The robustness profile: mean score change per transformation axis and model."""
    if report is None:
        return []
    models = report.statistics.models
    axes = sorted({axis for data in models.values() for axis in data.axes})
    lines = [
        "## Robustness",
        "",
        "Score change (points) when the evaluation texts are rewritten by an LLM "
        f"(`{report.llm.get('model')}`), transformed minus original on the same items, mean over tasks and "
        "seeds "
        f"({', '.join(map(str, report.seeds))}); transformations: {', '.join(report.transforms)}.",
        "",
    ]
    rows = [
        [label, *(number(data.axes.get(axis), sign=True) for axis in axes), number(data.total, sign=True)]
        for label, data in models.items()
    ]
    lines += table(["model", *axes, "Total"], rows)
    return [*lines, ""]
