"""Contamination check: overlap of training texts with the evaluation suite's test texts.

Texts are compared exactly and after normalisation (NFKC, casefold, punctuation -> space, whitespace
collapsed). Normalised texts shorter than ``MIN_CHARS`` characters (ids, labels, one-word answers) are
ignored. For each evaluation task the report gives the number of its test texts found among the training
texts and the rate (normalised overlap / test texts); the check fails when a reachable task's rate exceeds
the threshold.

Test texts come from the recipe's ``evaluate.tasks``:

- a local suite YAML (the evaluation's suite format): every non-id string field of every line of the data
  files a task names;
- an mteb task or benchmark name: the task's evaluation splits via mteb (offline when the Hub is
  unreachable); a task whose data cannot be loaded is reported ``unreachable``, not an error.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from skadapt.errors import SkadaptError

log = logging.getLogger(__name__)

MIN_CHARS = 10
EXAMPLES = 5


class ContaminationError(SkadaptError):
    """Training data overlaps the evaluation test data more than the recipe allows."""


def normalize(text: str) -> str:
    """Casefolded, punctuation-free, whitespace-collapsed NFKC text."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in text)
    return re.sub(r"\s+", " ", text).strip()


def suite_texts(suite: Path) -> dict[str, list[str]]:
    """Task name -> test texts of a local suite YAML file (read by the evaluation's suite loader).

    Raises:
        SkadaptError: The suite or one of its files cannot be read.
    """
    from skadapt.evaluate.suite import load_suite, task_texts

    return task_texts(load_suite(suite))


def _dataset_strings(value: Any) -> Iterator[str]:
    """Strings inside mteb task data: HF datasets (string columns), dicts, lists."""
    try:
        from datasets import Dataset, DatasetDict
    except ImportError:  # pragma: no cover - datasets is a core dependency
        Dataset = DatasetDict = ()  # type: ignore[assignment,misc]
    if isinstance(value, str):
        yield value
    elif isinstance(value, Dataset):
        for column, feature in value.features.items():
            if getattr(feature, "dtype", None) in ("string", "large_string"):
                yield from (v for v in value[column] if isinstance(v, str))
    elif isinstance(value, dict | DatasetDict):
        for item in value.values():
            yield from _dataset_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _dataset_strings(item)


def mteb_texts(name: str) -> dict[str, list[str]]:
    """Task name -> test texts of an mteb task or benchmark (loads the data; may need the Hub).

    Raises:
        Exception: Whatever mteb/datasets raise when the task or its data cannot be loaded.
    """
    import mteb

    try:
        tasks = list(mteb.get_benchmark(name).tasks)
    except Exception:  # not a benchmark name: try a task name
        tasks = list(mteb.get_tasks(tasks=[name]))
    texts: dict[str, list[str]] = {}
    for task in tasks:
        task.load_data()
        splits = set(task.metadata.eval_splits)
        data = getattr(task, "dataset", None)
        if isinstance(data, dict) and splits & set(data):
            data = {split: data[split] for split in splits if split in data}
        texts[task.metadata.name] = list(_dataset_strings(data))
    return texts


def collect_test_texts(tasks: Iterable[str]) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Test texts per evaluation task, and the tasks whose data could not be reached (with the reason)."""
    texts: dict[str, list[str]] = {}
    unreachable: dict[str, str] = {}
    for task in tasks:
        try:
            if task.endswith((".yaml", ".yml")) and Path(task).is_file():
                found = suite_texts(Path(task))
            else:
                found = mteb_texts(task)
        except Exception as error:  # unreachable data must not stop training
            unreachable[task] = f"{type(error).__name__}: {str(error)[:300]}"
            log.warning("contamination check: %s unreachable (%s)", task, unreachable[task])
            continue
        texts.update(found)
    return texts, unreachable


def check_overlap(train_texts: Iterable[str], test_texts: dict[str, list[str]]) -> dict[str, Any]:
    """Exact and normalised overlap per test task.

    Returns:
        ``{"train_texts", "tasks": {task: {test_texts, exact, normalized, rate, examples}}, "max_rate"}``.
    """
    train = {t for t in train_texts if len(normalize(t)) >= MIN_CHARS}
    train_norm = {normalize(t) for t in train}
    tasks: dict[str, Any] = {}
    for name, texts in test_texts.items():
        unique = {t for t in texts if len(normalize(t)) >= MIN_CHARS}
        exact = sorted(t for t in unique if t in train)
        by_norm = {normalize(t) for t in unique}
        normalized = sorted(n for n in by_norm if n in train_norm)
        rate = len(normalized) / len(by_norm) if by_norm else 0.0
        tasks[name] = {
            "test_texts": len(by_norm),
            "exact": len(exact),
            "normalized": len(normalized),
            "rate": round(rate, 6),
            "examples": [text[:120] for text in normalized[:EXAMPLES]],
        }
    max_rate = max((task["rate"] for task in tasks.values()), default=0.0)
    return {"train_texts": len(train), "tasks": tasks, "max_rate": max_rate}


def contamination_report(
    train_texts: Iterable[str], eval_tasks: list[str], threshold: float, allow: bool
) -> dict[str, Any]:
    """Run the check for the recipe's evaluation tasks.

    Raises:
        ContaminationError: A task's overlap rate exceeds ``threshold`` and ``allow`` is False.
    """
    test_texts, unreachable = collect_test_texts(eval_tasks)
    report = check_overlap(train_texts, test_texts)
    report.update(
        threshold=threshold,
        allow=allow,
        unreachable=unreachable,
        status="checked" if test_texts else ("unreachable" if unreachable else "no evaluation tasks"),
    )
    over = {name: task for name, task in report["tasks"].items() if task["rate"] > threshold}
    report["over_threshold"] = sorted(over)
    if over and not allow:
        details = "; ".join(
            f"{name}: {task['normalized']}/{task['test_texts']} test texts in the training data "
            f"({task['rate']:.2%}), e.g. {task['examples'][0]!r}"
            for name, task in sorted(over.items())
        )
        raise ContaminationError(
            f"training data overlaps the evaluation test data above contamination.threshold "
            f"{threshold:.2%}: {details}. Remove those texts from the training data, or set "
            "finetune.contamination.allow: true to train anyway"
        )
    return report
