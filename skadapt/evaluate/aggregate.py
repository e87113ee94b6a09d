"""SkMTEB Table-1 aggregation: main score per task, mean per task type, "All" and "Type" averages."""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from skadapt.results.evaluate import ModelRow, TaskScore


def comparison_pairs(labels: list[str], parents: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(input, output) pairs the verdicts compare: each model against the one listed before it, except
    a deployment tier (``parents``: tier -> the model it came from), compared with its parent and
    skipped as the "one before" of the next model."""
    parents = parents or {}
    pairs: list[tuple[str, str]] = []
    previous: str | None = None
    for label in labels:
        if label in parents:
            pairs.append((parents[label], label))
            continue
        if previous is not None:
            pairs.append((previous, label))
        previous = label
    return pairs


@dataclass
class Table:
    """Models side by side: task -> type, one row per model, and the selected tasks left out
    (``evaluate.exclude_tasks``), which every average names (:attr:`coverage`)."""

    task_types: dict[str, str]
    rows: list[ModelRow]
    excluded: list[str] = field(default_factory=list)

    @property
    def coverage(self) -> str:
        """What the averages are over, e.g. ``30 of 31 tasks``."""
        scored = len(self.task_types)
        return f"{scored} of {scored + len(self.excluded)} tasks"

    @property
    def types(self) -> list[str]:
        """Task types in first-seen order."""
        return list(dict.fromkeys(self.task_types.values()))

    def row(self, model: str) -> ModelRow:
        """The row of one model."""
        return next(r for r in self.rows if r.model == model)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "task_types": self.task_types,
            "types": self.types,
            "averaged_over": self.coverage,
            "excluded_tasks": self.excluded,
            "models": [r.model_dump() for r in self.rows],
        }


def aggregate(scores: list[TaskScore], excluded: list[str] | None = None) -> Table:
    """Build the table: "All" is the mean over tasks, "Type" the mean of the per-type means; ``excluded``
    names the selected tasks left out (``evaluate.exclude_tasks``).

    Raises:
        ValueError: Models were evaluated on different task sets.
    """
    task_types: dict[str, str] = {}
    by_model: dict[str, dict[str, float]] = {}
    for score in scores:
        task_types.setdefault(score.task, score.type)
        by_model.setdefault(score.model, {})[score.task] = score.score
    rows = []
    for model, tasks in by_model.items():
        if set(tasks) != set(task_types):
            missing = sorted(set(task_types) - set(tasks))
            raise ValueError(f"model {model} has no score for task(s): {', '.join(missing)}")
        types: dict[str, list[float]] = {}
        for task, task_type in task_types.items():
            types.setdefault(task_type, []).append(tasks[task])
        type_means = {t: fmean(values) for t, values in types.items()}
        rows.append(
            ModelRow(
                model=model,
                tasks={t: tasks[t] for t in task_types},
                types=type_means,
                All=fmean(tasks.values()),
                Type=fmean(type_means.values()),
            )
        )
    return Table(task_types, rows, list(excluded or []))
