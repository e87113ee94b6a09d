"""Gold-rated pairs of STS tasks (local suites and mteb tasks alike), rescaled to 0-5: what an LLM judge is
measured against."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from skadapt.errors import SkadaptError

if TYPE_CHECKING:
    from mteb.abstasks.abstask import AbsTask


class GoldPairsError(SkadaptError, ValueError):
    """A task without gold-rated pairs (not STS, or its data lack the columns)."""


@dataclass(frozen=True)
class GoldPair:
    """One pair of an STS task with its gold score on 0-5.

    Attributes:
        task: The task's name.
        subset: The mteb subset (``default`` for a task without subsets).
        split: The evaluated split.
        text_a: The first text.
        text_b: The second text.
        gold: The gold score rescaled from the task's [min_score, max_score] to [0, 5].
    """

    task: str
    subset: str
    split: str
    text_a: str
    text_b: str
    gold: float


def sts_gold_pairs(task: AbsTask) -> list[GoldPair]:
    """Every pair of a loaded STS task's evaluated splits, with its gold score on 0-5.

    Raises:
        GoldPairsError: Not an STS task, or a split without the task's text columns and ``score``.
    """
    meta = task.metadata
    if meta.type != "STS":
        raise GoldPairsError(
            f"{meta.name} is a {meta.type} task; gold similarity ratings come from STS tasks"
        )
    low, high = float(getattr(task, "min_score", 0)), float(getattr(task, "max_score", 5))
    first, second = tuple(getattr(task, "column_names", ("sentence1", "sentence2")))
    dataset = task.dataset
    subsets = list(task.hf_subsets or []) or ["default"]
    pairs: list[GoldPair] = []
    seen: set[int] = set()
    for subset in subsets:
        holder = dataset.get(subset, dataset) if hasattr(dataset, "get") else dataset
        if holder is None or id(holder) in seen:
            continue
        seen.add(id(holder))
        for split in task.eval_splits:
            if split not in holder:
                continue
            data = holder[split]
            missing = [c for c in (first, second, "score") if c not in data.column_names]
            if missing:
                raise GoldPairsError(f"{meta.name} ({subset}/{split}): no column {', '.join(missing)}")
            for a, b, score in zip(data[first], data[second], data["score"], strict=True):
                gold = 5.0 * (float(score) - low) / (high - low)
                pairs.append(GoldPair(meta.name, subset, split, str(a), str(b), gold))
    return pairs
