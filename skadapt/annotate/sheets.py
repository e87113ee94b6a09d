"""Synthetic-STS annotation sheets (through :mod:`skadapt.annotate.sheetio`): one CSV per annotator, opaque
item ids, the intended score never in a sheet; import with one clear message per problem (sheet, row, field).

Layout of a sheets directory::

    <dir>/sheets/annotator_1.csv ...   hand these out (with guidelines.md); fill the ``score`` column
    <dir>/sheets/guidelines.md
    <dir>/key.jsonl                    item id -> pair id and intended score; keep it away from annotators
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skadapt.annotate.sheetio import SheetError, raise_problems, read_sheet, whole_number, write_sheet

SHEETS = "sheets"
KEY = "key.jsonl"
SHOWN = ("sentence1", "sentence2")
ANSWERS = ("score",)

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
        write_sheet(sheets_dir / f"annotator_{number}.csv", order, SHOWN, ANSWERS)
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
    parse = whole_number(low, high)
    for sheet in sheets:
        got = read_sheet(sheet, set(key), ANSWERS, parse, problems, allow_missing=allow_missing)
        ratings[sheet.stem] = {item: values["score"] for item, values in got.items()}
    raise_problems(problems, f"under {out_dir / SHEETS}")
    return ratings


__all__ = ["SheetError", "export_sheets", "item_id", "read_key", "read_sheets"]
