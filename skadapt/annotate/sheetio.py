"""Annotation sheets of any kind: one CSV per annotator (UTF-8 with BOM, so a spreadsheet opens it), opaque
item ids, the answers' key kept apart by the caller, and a reader that names every problem by sheet, row
(as a spreadsheet numbers it) and field.

The callers bring what differs: the columns shown, the answer columns, each annotator's order, and how an
answer is parsed (synthetic STS: a whole number 0-5; human baselines: per task type; rewrites: 1-5 per
criterion).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from skadapt.errors import SkadaptError

ITEM_ID = "item_id"
MAX_PROBLEMS_SHOWN = 25

Parse = Callable[[str, str], tuple[Any, str | None]]
"""``(answer column, raw text)`` -> ``(value, None)``, or ``(None, why it is invalid)``."""


class SheetError(SkadaptError):
    """Filled sheets that cannot be read; the message lists each problem with sheet, row and field."""


def write_sheet(
    path: Path, items: Sequence[Mapping[str, Any]], shown: Sequence[str], answers: Sequence[str]
) -> None:
    """One annotator's sheet: ``item_id``, the shown columns and empty answer columns, in ``items``' order."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([ITEM_ID, *shown, *answers])
        for item in items:
            writer.writerow([item[ITEM_ID], *(item[column] for column in shown), *([""] * len(answers))])


def read_sheet(
    sheet: Path,
    known: set[str],
    answers: Sequence[str],
    parse: Parse,
    problems: list[str],
    *,
    where: str | None = None,
    allow_missing: bool = False,
) -> dict[str, dict[str, Any]]:
    """The valid answers of one filled sheet: item id -> answer column -> value.

    Every problem (a missing column, an unknown or repeated item, an empty or invalid answer, items the
    sheet lacks) is appended to ``problems`` as ``<where> row <n> <field>: <what>``; ``where`` defaults to
    the sheet's file name.
    """
    where = where or sheet.name
    got: dict[str, dict[str, Any]] = {}
    with sheet.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        absent = [c for c in (ITEM_ID, *answers) if c not in (reader.fieldnames or [])]
        if absent:
            problems.append(f"{where}: missing column(s) {', '.join(absent)}")
            return got
        for row_number, row in enumerate(reader, start=2):
            item = (row.get(ITEM_ID) or "").strip()
            if item not in known:
                problems.append(f"{where} row {row_number} {ITEM_ID}: unknown item {item!r}")
                continue
            if item in got:
                problems.append(f"{where} row {row_number} {ITEM_ID}: {item} appears twice")
                continue
            values: dict[str, Any] = {}
            for column in answers:
                raw = (row.get(column) or "").strip()
                if not raw:
                    if not allow_missing:
                        problems.append(f"{where} row {row_number} {column}: empty")
                    continue
                value, error = parse(column, raw)
                if error:
                    problems.append(f"{where} row {row_number} {column}: {error}")
                else:
                    values[column] = value
            if len(values) == len(answers) or (allow_missing and values):
                got[item] = values
    missing = known - got.keys()
    if missing and not allow_missing and not any(p.startswith(where) for p in problems):
        example = sorted(missing)[0]
        problems.append(f"{where}: {len(missing)} item(s) of the export are missing, e.g. {example}")
    return got


def raise_problems(problems: list[str], where: str, error: type[SheetError] = SheetError) -> None:
    """Raise one error listing the problems (at most ``MAX_PROBLEMS_SHOWN``), if there are any."""
    if not problems:
        return
    shown = problems[:MAX_PROBLEMS_SHOWN]
    more = f"\n  ... and {len(problems) - len(shown)} more" if len(problems) > len(shown) else ""
    place = f" {where}" if where else ""
    raise error(f"{len(problems)} problem(s) in the sheets{place}:\n  " + "\n  ".join(shown) + more)


def whole_number(low: int, high: int) -> Parse:
    """A parser of whole-number ratings from ``low`` to ``high`` (a decimal comma is accepted)."""

    def parse(column: str, raw: str) -> tuple[Any, str | None]:
        try:
            value = float(raw.replace(",", "."))
        except ValueError:
            return None, f"{raw!r} is not a number"
        if value != int(value) or not low <= value <= high:
            return None, f"{raw} is not a whole number from {low} to {high}"
        return value, None

    return parse
