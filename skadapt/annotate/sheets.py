"""Annotation sheets: one CSV per annotator (UTF-8 with BOM, opens in a spreadsheet), opaque item ids, the
intended score never in a sheet; import with one clear message per problem (sheet, row, field).

Layout of a sheets directory::

    <dir>/sheets/annotator_1.csv ...   hand these out (with guidelines.md); fill the ``score`` column
    <dir>/sheets/guidelines.md
    <dir>/key.jsonl                    item id -> pair id and intended score; keep it away from annotators
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skadapt.errors import SkadaptError

SHEETS = "sheets"
KEY = "key.jsonl"
COLUMNS = ("item_id", "sentence1", "sentence2", "score")
MAX_PROBLEMS_SHOWN = 20

GUIDELINES = {
    "slk": """\
# Pokyny na hodnotenie podobnosti viet

Každý riadok obsahuje dve vety. Do stĺpca `score` napíšte celé číslo 0 až 5 podľa toho, nakoľko sa
zhoduje ich význam. Dôležité informácie sú hlavná udalosť, aktér, miesto, čas, množstvo a pointa.

- 5 – rovnaký význam, iné slová
- 4 – zhodujú sa všetky dôležité informácie, líši sa len nepodstatný detail
- 3 – jedna dôležitá informácia chýba alebo je iná
- 2 – rovnaká téma, niečo dôležité spoločné, ale hlavná udalosť alebo viac informácií je iných
- 1 – iba rovnaká téma alebo oblasť
- 0 – úplne nesúvisiace vety

Hodnoťte každý riadok samostatne, nemeňte stĺpce ani `item_id`.
""",
    "default": """\
# Guidelines for rating sentence similarity

Each row holds two sentences. In the `score` column write a whole number from 0 to 5 for how far their
meanings agree. Important information is the main event, actor, place, time, quantities and the point.

- 5 - the same meaning in other words
- 4 - all important information agrees; only a minor detail differs
- 3 - one important piece of information is missing or different
- 2 - same topic and something important shared, but the main event or several pieces differ
- 1 - only the same topic or domain
- 0 - unrelated sentences

Rate every row on its own; do not change the columns or the `item_id`.
""",
}


class SheetError(SkadaptError):
    """Filled sheets that cannot be read; the message lists every problem with sheet, row and field."""


def item_id(pair_id: str, seed: int) -> str:
    """An opaque id for a pair (reveals neither the source nor the level)."""
    return "i" + hashlib.sha256(f"{seed}\x1f{pair_id}".encode()).hexdigest()[:10]


def export_sheets(
    pairs: Sequence[dict[str, Any]], out_dir: Path, *, annotators: int, seed: int, language: str
) -> dict[str, Any]:
    """Write one shuffled sheet per annotator, the guidelines and the key.

    Args:
        pairs: Rows with ``pair_id, sentence1, sentence2, score`` (the intended score goes to the key only).
        out_dir: Directory to write ``sheets/`` and ``key.jsonl`` into.
        annotators: Number of sheets (each annotator sees every pair, in its own order).
        seed: Seed of the orders and the item ids.
        language: ISO 639-3 code choosing the guidelines' language.
    """
    if annotators < 1:
        raise SheetError("at least one annotator is needed")
    sheets_dir = out_dir / SHEETS
    sheets_dir.mkdir(parents=True, exist_ok=True)
    items = [{"item_id": item_id(p["pair_id"], seed), **p} for p in pairs]
    with (out_dir / KEY).open("w", encoding="utf-8") as handle:
        for item in items:
            key = {"item_id": item["item_id"], "pair_id": item["pair_id"], "score": item["score"]}
            handle.write(json.dumps(key, ensure_ascii=False) + "\n")
    for number in range(1, annotators + 1):
        order = list(items)
        random.Random(f"{seed}-{number}").shuffle(order)
        with (sheets_dir / f"annotator_{number}.csv").open("w", encoding="utf-8-sig", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(COLUMNS)
            for item in order:
                writer.writerow([item["item_id"], item["sentence1"], item["sentence2"], ""])
    (sheets_dir / "guidelines.md").write_text(
        GUIDELINES.get(language, GUIDELINES["default"]), encoding="utf-8"
    )
    return {"items": len(items), "annotators": annotators, "dir": str(out_dir)}


def read_key(out_dir: Path) -> dict[str, dict[str, Any]]:
    """item id -> key row (``pair_id``, intended ``score``)."""
    path = out_dir / KEY
    if not path.is_file():
        raise SheetError(f"{path}: the key written by the export is missing")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row["item_id"]: row for row in rows}


def read_sheets(
    out_dir: Path, *, low: int = 0, high: int = 5, allow_missing: bool = False
) -> dict[str, dict[str, float]]:
    """The ratings of every filled sheet: annotator (sheet name) -> item id -> score.

    Raises:
        SheetError: Listing each unknown or repeated item id, missing, non-integer or out-of-range score
            (sheet, row number as a spreadsheet shows it, field), and items a sheet lacks.
    """
    key = read_key(out_dir)
    sheets = sorted((out_dir / SHEETS).glob("*.csv"))
    if not sheets:
        raise SheetError(f"{out_dir / SHEETS}: no .csv sheets")
    problems: list[str] = []
    ratings: dict[str, dict[str, float]] = {}
    for sheet in sheets:
        ratings[sheet.stem] = _read_sheet(sheet, key, low, high, allow_missing, problems)
    if problems:
        shown = problems[:MAX_PROBLEMS_SHOWN]
        more = len(problems) - len(shown)
        raise SheetError(
            f"{len(problems)} problem(s) in the sheets under {out_dir / SHEETS}:\n  "
            + "\n  ".join(shown)
            + (f"\n  ... and {more} more" if more else "")
        )
    return ratings


def _read_sheet(
    sheet: Path, key: dict[str, Any], low: int, high: int, allow_missing: bool, problems: list[str]
) -> dict[str, float]:
    scores: dict[str, float] = {}
    with sheet.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        missing_columns = [c for c in ("item_id", "score") if c not in (reader.fieldnames or [])]
        if missing_columns:
            problems.append(f"{sheet.name}: missing column(s) {', '.join(missing_columns)}")
            return scores
        for row_number, row in enumerate(reader, start=2):
            where = f"{sheet.name} row {row_number}"
            item = (row.get("item_id") or "").strip()
            raw = (row.get("score") or "").strip().replace(",", ".")
            if item not in key:
                problems.append(f"{where} item_id: unknown item {item!r}")
                continue
            if item in scores:
                problems.append(f"{where} item_id: {item} appears twice")
                continue
            if not raw:
                if not allow_missing:
                    problems.append(f"{where} score: empty")
                continue
            try:
                value = float(raw)
            except ValueError:
                problems.append(f"{where} score: {raw!r} is not a number")
                continue
            if value != int(value) or not low <= value <= high:
                problems.append(f"{where} score: {raw} is not a whole number from {low} to {high}")
                continue
            scores[item] = value
    absent = len(set(key) - set(scores))
    if absent and not allow_missing and not any(p.startswith(sheet.name) for p in problems):
        problems.append(f"{sheet.name}: {absent} item(s) of the export are missing")
    return scores
