"""Annotation sheets of a human baseline (written and read by :mod:`skadapt.annotate.sheetio`): one sheet
folder per task, guidelines in the task's language, an ``answer`` column checked per task type, the gold
kept apart.

Layout::

    <dir>/sheets/<task>/annotator_<n>.csv, guidelines.md    hand these out; fill the ``answer`` column
    <dir>/key/<task>.json                                    items with their gold: keep them away
    <dir>/export.json                                        the sheet names written (only those are read)
    <dir>/subset/suite.yaml                                  the same items as a suite for the models
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from skadapt.annotate import sheetio
from skadapt.artifacts import atomic_dir, not_a_directory
from skadapt.human.subset import Item, Subset, write_subset_suite

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


def _answers(subset: Subset) -> dict[str, sheetio.Validator]:
    """The answer column with its validator for the task's type."""
    if subset.type == "STS":
        return {ANSWER: sheetio.number(0, 5)}
    if subset.type == "Classification":
        return {ANSWER: sheetio.one_of(subset.labels)}
    if subset.type == "Clustering":
        return {ANSWER: str}
    binary = sheetio.one_of(("0", "1"))
    return {ANSWER: lambda text: int(binary(text))}


def export_baseline(subsets: list[Subset], out_dir: Path, *, annotators: int, seed: int) -> Path:
    """:func:`export` the sheets and write the subsets' suite (``subset/``) into ``out_dir``, which is
    replaced and appears only when complete; the suite file the models are scored on."""
    with atomic_dir(out_dir) as tmp:
        export(subsets, tmp, annotators=annotators, seed=seed)
        suite = out_dir / write_subset_suite(subsets, tmp / "subset").relative_to(tmp)
    return suite


def export(subsets: list[Subset], directory: Path, *, annotators: int, seed: int) -> None:
    """Write every task's sheet folder (a query's candidates stay together), key and the sheet names."""
    written: dict[Path, list[str]] = {}
    for subset in subsets:
        folder = directory / "sheets" / subset.task
        written[folder] = sheetio.write_sheets(
            folder,
            [sheetio.SheetItem(item.item_id, item.shown, item.group) for item in subset.items],
            _answers(subset),
            annotators=annotators,
            seed=f"{seed}|{subset.task}",
            guidelines=guidelines(subset),
        )
        key = directory / "key" / f"{subset.task}.json"
        key.parent.mkdir(parents=True, exist_ok=True)
        data = {k: v for k, v in asdict(subset).items() if k != "train"}
        key.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    sheetio.record_sheets(directory, written)


def read_key(directory: Path) -> list[Subset]:
    """The exported subsets with their gold.

    Raises:
        SheetError: The directory does not exist, or holds no exported task.
    """
    if not directory.is_dir():
        raise sheetio.SheetError(
            f"{directory}: {not_a_directory(directory)}; give the directory `skadapt human export --out` "
            "wrote"
        )
    subsets = []
    for path in sorted((directory / "key").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["items"] = [Item(**item) for item in data["items"]]
        subsets.append(Subset(**data))
    if not subsets:
        raise sheetio.SheetError(f"{directory / 'key'}: no exported tasks (run `skadapt human export` first)")
    return subsets


def read_answers(directory: Path, subsets: list[Subset]) -> dict[str, dict[str, dict[str, Any]]]:
    """task -> annotator -> item id -> answer, from the export's filled sheets (.csv or .xlsx).

    Raises:
        SheetError: Files that are not the export's sheets, sheets that cannot be read, unknown or
            repeated item ids, empty or invalid answers, missing items, naming
            sheet (``<task>/annotator_<n>.csv``), row (as a spreadsheet numbers it) and field.
    """
    problems: list[str] = []
    answers: dict[str, dict[str, dict[str, Any]]] = {}
    for subset in subsets:
        known = {item.item_id for item in subset.items}
        folder = directory / "sheets" / subset.task
        names = sheetio.recorded_sheets(directory, folder)
        sheets = sheetio.read_sheets(folder, known, _answers(subset), problems, names)
        answers[subset.task] = {
            name: {item: row[ANSWER] for item, row in rows.items()} for name, rows in sheets.items()
        }
    sheetio.check(problems, f"the sheets under {directory / 'sheets'}")
    return answers
