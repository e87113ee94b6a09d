"""Synthetic-STS annotation sheets (written and read by :mod:`skadapt.annotate.sheetio`): the held-out
pairs under opaque item ids, a whole-number ``score`` 0-5 to fill, the intended score only in the key.

Layout of a sheets directory::

    <dir>/sheets/annotator_1.csv ...   hand these out (with guidelines.md); fill the ``score`` column
    <dir>/sheets/guidelines.md
    <dir>/key.jsonl                    item id -> pair id and intended score; keep it away from annotators
    <dir>/export.json                  the sheet names written (only those are read back)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skadapt.annotate import sheetio
from skadapt.artifacts import atomic_dir

SHEETS = "sheets"
KEY = "key.jsonl"
SCORE = "score"
ANSWERS = {SCORE: sheetio.number(0, 5, whole=True)}

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
    return sheetio.opaque_id(pair_id, seed)


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
    ids = [item_id(pair["pair_id"], seed) for pair in pairs]
    items = [
        sheetio.SheetItem(item, {"sentence1": pair["sentence1"], "sentence2": pair["sentence2"]})
        for item, pair in zip(ids, pairs, strict=True)
    ]
    guidelines = GUIDELINES.get(language, GUIDELINES["default"])
    names = sheetio.write_sheets(
        out_dir / SHEETS, items, ANSWERS, annotators=annotators, seed=seed, guidelines=guidelines
    )
    sheetio.record_sheets(out_dir, {out_dir / SHEETS: names})
    sheetio.write_key(
        out_dir / KEY,
        (
            {sheetio.ITEM_ID: item, "pair_id": pair["pair_id"], SCORE: pair[SCORE]}
            for item, pair in zip(ids, pairs, strict=True)
        ),
    )
    return {"items": len(items), "annotators": annotators, "dir": str(out_dir)}


def export_heldout_sheets(
    source: Path, out_dir: Path, *, annotators: int, seed: int, language: str
) -> dict[str, Any]:
    """:func:`export_sheets` of the ``heldout`` split of a ``skadapt synth-sts`` output (``source``, or its
    ``dataset/``), into ``out_dir``, which is replaced and appears only when complete."""
    pairs = heldout_pairs(source)
    with atomic_dir(out_dir) as tmp:
        result = export_sheets(pairs, tmp, annotators=annotators, seed=seed, language=language)
    return {**result, "dir": str(out_dir)}


SOURCES = (
    "annotate export reads a synth-sts output directory with dataset/ (a saved DatasetDict with a heldout "
    "split) or a robustness output directory with rewrites/"
)


def _found(path: Path) -> str:
    """What ``path`` is, in words, for a message."""
    if not path.exists():
        return "no such directory"
    if not path.is_dir():
        return "a file"
    names = sorted(child.name + ("/" if child.is_dir() else "") for child in path.iterdir())
    if not names:
        return "an empty directory"
    if (path / "state.json").is_file() and (path / "dataset_info.json").is_file():
        return "a saved Dataset, not a DatasetDict with splits"
    more = f" and {len(names) - 8} more" if len(names) > 8 else ""
    return f"a directory with {', '.join(names[:8])}{more}"


def heldout_pairs(source: Path) -> list[dict[str, Any]]:
    """The ``heldout`` split of a ``skadapt synth-sts`` output (``source``, or its ``dataset/``).

    Raises:
        sheetio.SheetError: ``source`` is not such an output; the message says what it must be and what
            was found.
    """
    from datasets import load_from_disk

    directory = source / "dataset" if (source / "dataset").is_dir() else source
    if not (directory / "dataset_dict.json").is_file():
        raise sheetio.SheetError(f"{source}: {_found(directory)}; {SOURCES}")
    splits = load_from_disk(str(directory))
    if "heldout" not in splits:
        raise sheetio.SheetError(
            f"{directory}: no heldout split (it has {', '.join(splits) or 'none'}); {SOURCES}"
        )
    return list(splits["heldout"])


def read_key(out_dir: Path) -> dict[str, dict[str, Any]]:
    """item id -> key row (``pair_id``, intended ``score``)."""
    return sheetio.read_key(out_dir / KEY)


def read_sheets(out_dir: Path) -> dict[str, dict[str, float]]:
    """The ratings of the export's filled sheets (.csv or .xlsx): annotator (sheet name) -> item id -> score.

    Raises:
        SheetError: Listing each file that is not one of the export's sheets, sheet that cannot be read,
            unknown or repeated item id, empty, non-integer or out-of-range score
            (sheet, row number as a spreadsheet shows it, field), and items a sheet lacks.
    """
    problems: list[str] = []
    folder = out_dir / SHEETS
    names = sheetio.recorded_sheets(out_dir, folder)
    sheets = sheetio.read_sheets(folder, read_key(out_dir), ANSWERS, problems, names)
    sheetio.check(problems, f"the sheets under {out_dir / SHEETS}")
    return {name: {item: row[SCORE] for item, row in rows.items()} for name, rows in sheets.items()}
