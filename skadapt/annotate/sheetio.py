"""Annotation sheets of any kind: one CSV per annotator (UTF-8 with BOM, so a spreadsheet opens it right),
the items in each annotator's own seeded order, the guidelines beside them, the key kept apart; reading
filled sheets back names every problem by sheet, row and field.

The caller chooses the columns shown, the answer columns with a validator each, the guidelines and where
the key lives (never in the folder handed out): see ``skadapt.annotate.sheets`` (synthetic STS) and
``skadapt.human.sheets`` (human baselines).

A sheet folder::

    <folder>/annotator_1.csv ...   item_id, the shown columns, the empty answer columns
    <folder>/guidelines.md
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skadapt.errors import SkadaptError

ITEM_ID = "item_id"
GUIDELINES = "guidelines.md"
MAX_PROBLEMS_SHOWN = 20

Validator = Callable[[str], Any]
"""An answer column's parser: the stripped, non-empty cell -> its value; raises ``ValueError(why)``."""


class SheetError(SkadaptError):
    """Filled sheets that cannot be read; the message lists every problem with sheet, row and field."""


@dataclass(frozen=True)
class SheetItem:
    """One row of the sheets: its id, the texts shown (column -> text) and its group (kept together)."""

    item_id: str
    shown: Mapping[str, str]
    group: str = ""


def opaque_id(name: str, seed: int | str) -> str:
    """A stable id for ``name`` under ``seed`` that reveals nothing about it."""
    return "i" + hashlib.sha256(f"{seed}\x1f{name}".encode()).hexdigest()[:10]


def number(low: int, high: int, *, whole: bool = False) -> Validator:
    """A number from ``low`` to ``high`` (a decimal comma is fine); with ``whole``, an integer."""

    def parse(text: str) -> float:
        try:
            value = float(text.replace(",", "."))
        except ValueError:
            raise ValueError(f"{text!r} is not a number") from None
        if whole and not (value.is_integer() and low <= value <= high):
            raise ValueError(f"{text} is not a whole number from {low} to {high}")
        if not low <= value <= high:
            raise ValueError(f"{text} is not between {low} and {high}")
        return value

    return parse


def one_of(options: Iterable[str]) -> Validator:
    """One of ``options``, written exactly."""
    allowed = list(options)

    def parse(text: str) -> str:
        if text not in allowed:
            raise ValueError(f"{text!r} is not one of {', '.join(allowed)}")
        return text

    return parse


def write_sheets(
    folder: Path,
    items: Sequence[SheetItem],
    answers: Mapping[str, Validator],
    *,
    annotators: int,
    seed: int | str,
    guidelines: str,
) -> None:
    """Write ``annotator_<n>.csv`` (each in its own order, answer columns empty) and the guidelines."""
    if annotators < 1:
        raise SheetError("at least one annotator is needed")
    shown = list(items[0].shown) if items else []
    for annotator in range(1, annotators + 1):
        order = shuffled(items, random.Random(f"{seed}|{annotator}"))
        rows = [{ITEM_ID: item.item_id, **item.shown} for item in order]
        write_sheet(folder / f"annotator_{annotator}.csv", rows, shown, answers)
    (folder / GUIDELINES).write_text(guidelines, encoding="utf-8")


def write_sheet(
    path: Path, rows: Iterable[Mapping[str, Any]], shown: Sequence[str], answers: Collection[str]
) -> None:
    """One annotator's sheet: ``item_id``, the shown columns and empty answer columns, in ``rows``' order."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([ITEM_ID, *shown, *answers])
        for row in rows:
            writer.writerow([row[ITEM_ID], *(row[column] for column in shown), *([""] * len(answers))])


def shuffled(items: Iterable[SheetItem], rng: random.Random) -> list[SheetItem]:
    """A shuffled order in which the items of one group stay together (themselves shuffled)."""
    groups: dict[str, list[SheetItem]] = {}
    for item in items:
        groups.setdefault(item.group or item.item_id, []).append(item)
    keys = list(groups)
    rng.shuffle(keys)
    ordered = []
    for key in keys:
        rng.shuffle(groups[key])
        ordered.extend(groups[key])
    return ordered


def write_key(path: Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """The key as JSON lines, one per item (each with its ``item_id``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_key(path: Path) -> dict[str, dict[str, Any]]:
    """item id -> key row."""
    if not path.is_file():
        raise SheetError(f"{path}: the key written by the export is missing")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row[ITEM_ID]: row for row in rows}


def read_sheets(
    folder: Path, known: Collection[str], answers: Mapping[str, Validator], problems: list[str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """annotator (sheet name) -> item id -> answer column -> value, of every sheet in ``folder``.

    Each problem -- no sheets, a missing column, an unknown or repeated item id, an empty or invalid
    answer, items a sheet lacks -- is appended to ``problems`` as ``<folder>/<sheet> row <n> <field>: ...``
    (rows numbered as a spreadsheet shows them); the rows with problems are left out.
    """
    sheets = sorted(folder.glob("*.csv"))
    if not sheets:
        problems.append(f"{folder}: no .csv sheets")
    return {sheet.stem: _read_sheet(sheet, known, answers, problems) for sheet in sheets}


def _read_sheet(
    sheet: Path, known: Collection[str], answers: Mapping[str, Validator], problems: list[str]
) -> dict[str, dict[str, Any]]:
    where = f"{sheet.parent.name}/{sheet.name}"
    before = len(problems)
    got: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    with sheet.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in (ITEM_ID, *answers) if c not in (reader.fieldnames or [])]
        if missing:
            problems.append(f"{where}: missing column(s) {', '.join(missing)}")
            return got
        for row_number, row in enumerate(reader, start=2):
            item = (row[ITEM_ID] or "").strip()
            if item not in known:
                problems.append(f"{where} row {row_number} {ITEM_ID}: unknown item {item!r}")
                continue
            if item in seen:
                problems.append(f"{where} row {row_number} {ITEM_ID}: {item} appears twice")
                continue
            seen.add(item)
            values = {}
            for column, parse in answers.items():
                text = (row[column] or "").strip()
                try:
                    if not text:
                        raise ValueError("empty")
                    values[column] = parse(text)
                except ValueError as error:
                    problems.append(f"{where} row {row_number} {column}: {error}")
            if len(values) == len(answers):
                got[item] = values
    absent = sorted(set(known) - seen)
    if absent and len(problems) == before:
        problems.append(f"{where}: {len(absent)} item(s) of the export are missing, e.g. {absent[0]}")
    return got


def check(problems: Sequence[str], where: str) -> None:
    """Raise one :class:`SheetError` listing the problems (the first ``MAX_PROBLEMS_SHOWN``), if any."""
    if not problems:
        return
    shown = list(problems[:MAX_PROBLEMS_SHOWN])
    more = len(problems) - len(shown)
    raise SheetError(
        f"{len(problems)} problem(s) in {where}:\n  "
        + "\n  ".join(shown)
        + (f"\n  ... and {more} more" if more else "")
    )
