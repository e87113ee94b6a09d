"""The contamination preview as ``skadapt train --check`` shows it: what a stage's contamination check and
its dev sets' checks will drop or stop on (:func:`skadapt.train.stage.contamination_preview`), as tables
and lines."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from skadapt.tasks.dev import overlap_line


def _by_task(found: dict[str, Any]) -> str:
    return ", ".join(f"{task} {n}" for task, n in found["by_task"].items()) or "-"


def render_preview(preview: dict[str, Any]) -> list[Any]:
    """The preview's tables (training rows, dev examples with an evaluation test text) and lines (a dev
    set's overlap with the training data, what will stop the run); plain lines are :class:`Text`."""
    shown: list[Any] = []
    table = Table(title=f"contamination the finetune stage will find (action: {preview['action']})")
    for column in ("training dataset", "rows", "with an evaluation test text", "by task"):
        table.add_column(column, overflow="fold")
    for name, found in preview["dropped"].items():
        table.add_row(name, str(found["rows"]), str(found["dropped"]), _by_task(found))
    if preview["dropped"]:
        shown.append(table)
    if preview["dev"]:
        dev = Table(title="dev examples with an evaluation test text (dropped: nothing is chosen on them)")
        for column in ("dev set", "examples", "with an evaluation test text", "by task"):
            dev.add_column(column, overflow="fold")
        for name, found in preview["dev"].items():
            dev.add_row(name, str(found["rows"]), str(found["dropped"]), _by_task(found))
        shown.append(dev)
        for name, found in preview["dev"].items():  # a retrieval set's distractor passages
            corpus = found.get("corpus")
            if corpus and corpus["dropped"]:
                by_task = ", ".join(f"{task} {n}" for task, n in corpus["by_task"].items())
                shown.append(
                    Text(
                        f"dev set {name}: {corpus['dropped']} of {corpus['rows']} distractor passages are "
                        f"evaluation test texts and will be dropped ({by_task})"
                    )
                )
    for name, found in preview["dev_training"].items():
        shown.append(Text(f"dev set {name}: {overlap_line(found)}"))
        if found["action"] == "drop" and found["checked"] and found["overlapping"] == found["checked"]:
            shown.append(
                Text.from_markup(
                    f"[yellow]the stage choosing on dev set {name} will stop[/]: every example shares a "
                    "text with the training data; use another split, or set training_overlap: keep in its "
                    "dev section"
                )
            )
    if preview["unreachable"]:
        shown.append(Text(f"not checked (data unreachable): {', '.join(preview['unreachable'])}"))
    if preview["over_threshold"] and preview["action"] == "stop":
        shown.append(
            Text.from_markup(
                f"[yellow]the finetune stage will stop[/]: {', '.join(preview['over_threshold'])} over "
                f"threshold {preview['threshold']:.2%}; set finetune.contamination.action: drop to train "
                "without those rows"
            )
        )
    return shown
