"""Annotation sheets of a human baseline: one CSV per task and annotator, guidelines in the task's language,
the gold kept apart; reading filled sheets with one message per problem (sheet, row, field).

Layout::

    <dir>/sheets/<task>/annotator_<n>.csv, guidelines.md    hand these out
    <dir>/key/<task>.json                                    items with their gold: keep them away
    <dir>/subset/suite.yaml                                  the same items as a suite for the models
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict
from pathlib import Path
from typing import Any

from skadapt.annotate.sheetio import ITEM_ID, SheetError, raise_problems, read_sheet, write_sheet
from skadapt.human.subset import Item, Subset

ANSWER = "answer"

ANSWERS = {
    "STS": "a number from 0 to 5",
    "Classification": "one of the labels listed below",
    "Clustering": "any group name or number; put texts about the same thing in the same group",
    "PairClassification": "1 if the two sentences say the same thing (paraphrases), else 0",
    "Reranking": "1 if the candidate answers or is relevant to the query, else 0",
}
GUIDELINES = {
    "slk": {
        "STS": "Ohodnoťte, nakoľko sa zhoduje význam dvoch viet: 0 = úplne nesúvisia, 5 = rovnaký význam. "
        "Do stĺpca `answer` napíšte číslo od 0 do 5.",
        "Classification": "Priraďte každému textu jednu z kategórií nižšie (napíšte jej názov presne tak, "
        "ako je uvedený) do stĺpca `answer`.",
        "Clustering": "Roztrieďte texty do skupín podľa témy: do stĺpca `answer` napíšte ľubovoľný názov "
        "alebo číslo skupiny; texty o tom istom dostanú rovnakú skupinu.",
        "PairClassification": "Napíšte 1, ak obe vety hovoria to isté (parafrázy), inak 0.",
        "Reranking": "Napíšte 1, ak kandidátsky text odpovedá na dopyt alebo je preň relevantný, inak 0.",
    },
}


class HumanSheetError(SheetError):
    """Filled sheets that cannot be scored; the message lists each problem with sheet, row and field."""


def guidelines(subset: Subset) -> str:
    """The task's guidelines: in its language where written (Slovak), else English."""
    native = GUIDELINES.get(subset.language, {}).get(subset.type)
    lines = [f"# {subset.source_task}", ""]
    if native:
        lines += [native, ""]
    lines += [
        f"Answer: {ANSWERS[subset.type]}. Fill the `{ANSWER}` column only; do not change other columns.",
        "",
    ]
    if subset.labels:
        lines += ["Labels (with examples):", ""]
        for label, examples in subset.labels.items():
            lines.append(f"- **{label}**: " + " | ".join(examples))
    return "\n".join(lines) + "\n"


def export(subsets: list[Subset], directory: Path, *, annotators: int, seed: int) -> None:
    """Write every task's sheets (one per annotator, own order), guidelines and key."""
    for subset in subsets:
        folder = directory / "sheets" / subset.task
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "guidelines.md").write_text(guidelines(subset), encoding="utf-8")
        shown = list(subset.items[0].shown)
        for number in range(1, annotators + 1):
            order = _order(subset.items, random.Random(f"{seed}|{subset.task}|{number}"))
            rows = [{ITEM_ID: item.item_id, **item.shown} for item in order]
            write_sheet(folder / f"annotator_{number}.csv", rows, shown, [ANSWER])
        key = directory / "key" / f"{subset.task}.json"
        key.parent.mkdir(parents=True, exist_ok=True)
        data = {k: v for k, v in asdict(subset).items() if k != "train"}
        key.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")


def _order(items: list[Item], rng: random.Random) -> list[Item]:
    """A shuffled order; reranking keeps each query's candidates together."""
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item.group or item.item_id, []).append(item)
    keys = list(groups)
    rng.shuffle(keys)
    ordered = []
    for key in keys:
        members = groups[key]
        rng.shuffle(members)
        ordered.extend(members)
    return ordered


def read_key(directory: Path) -> list[Subset]:
    """The exported subsets with their gold."""
    subsets = []
    for path in sorted((directory / "key").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["items"] = [Item(**item) for item in data["items"]]
        subsets.append(Subset(**data))
    if not subsets:
        raise HumanSheetError(f"{directory / 'key'}: no exported tasks (run `skadapt human export` first)")
    return subsets


def _parse(subset: Subset, raw: str) -> tuple[Any, str | None]:
    """An answer's value, or why it is invalid."""
    text = raw.strip()
    if not text:
        return None, "empty"
    if subset.type == "STS":
        try:
            value = float(text.replace(",", "."))
        except ValueError:
            return None, f"{raw!r} is not a number"
        return (value, None) if 0 <= value <= 5 else (None, f"{raw} is not between 0 and 5")
    if subset.type == "Classification":
        return (
            (text, None)
            if text in subset.labels
            else (None, f"{raw!r} is not one of {', '.join(subset.labels)}")
        )
    if subset.type == "Clustering":
        return text, None
    return (int(text), None) if text in ("0", "1") else (None, f"{raw!r} is not 0 or 1")


def read_answers(directory: Path, subsets: list[Subset]) -> dict[str, dict[str, dict[str, Any]]]:
    """task -> annotator -> item id -> answer, from every filled sheet.

    Raises:
        HumanSheetError: Unknown or repeated item ids, empty or invalid answers, missing items, naming
            sheet, row (as a spreadsheet numbers it) and field.
    """
    problems: list[str] = []
    answers: dict[str, dict[str, dict[str, Any]]] = {}
    for subset in subsets:
        folder = directory / "sheets" / subset.task
        known = {item.item_id for item in subset.items}
        sheets = sorted(folder.glob("*.csv"))
        if not sheets:
            problems.append(f"{folder}: no sheets")

        def parse(column: str, raw: str, subset: Subset = subset) -> tuple[Any, str | None]:
            return _parse(subset, raw)

        for sheet in sheets:
            got = read_sheet(sheet, known, [ANSWER], parse, problems, where=f"{subset.task}/{sheet.name}")
            answers.setdefault(subset.task, {})[sheet.stem] = {item: v[ANSWER] for item, v in got.items()}
    raise_problems(problems, "", HumanSheetError)
    return answers
