"""Annotation sheets of any kind: one CSV per annotator (UTF-8 with BOM, so a spreadsheet opens it right),
the items in each annotator's own seeded order, the guidelines beside them, the key kept apart; reading
filled sheets back names every problem by sheet, row and field.

The caller chooses the columns shown, the answer columns with a validator each, the guidelines and where
the key lives (never in the folder handed out): see ``skadapt.annotate.sheets`` (synthetic STS) and
``skadapt.human.sheets`` (human baselines).

A sheet folder::

    <folder>/annotator_1.csv ...   item_id, the shown columns, the empty answer columns
    <folder>/guidelines.md

The export records the sheet names it wrote (``export.json`` beside the key); reading takes exactly those
sheets, each as the exported ``.csv`` or saved as ``.xlsx`` -- CSV in UTF-8 (with or without BOM) or, as
Excel writes it in a Central-European locale, in cp1250 with ``;`` between the columns -- and names any other
file as an error. An export refuses a folder holding sheets unless asked to replace them, naming the filled
ones.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import random
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skadapt.artifacts import OutputExistsError, not_a_directory, refuse_nonempty, write_json
from skadapt.errors import SkadaptError

ITEM_ID = "item_id"
GUIDELINES = "guidelines.md"
EXPORT = "export.json"
"""Beside the key: the sheet names the export wrote (``{"sheets": {folder: [name, ...]}}``)."""
MAX_PROBLEMS_SHOWN = 20
SUFFIXES = (".csv", ".xlsx")
DELIMITERS = (",", ";", "\t")
LEGACY_ENCODING = "cp1250"
"""What Excel writes for "CSV (comma/semicolon delimited)" in a Central-European (e.g. Slovak) locale."""
SAVE_AS = "save it as 'CSV UTF-8 (Comma delimited) (*.csv)' or as an Excel workbook (.xlsx)"
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

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
) -> list[str]:
    """Write ``annotator_<n>.csv`` (each in its own order, answer columns empty) and the guidelines.

    Returns:
        The sheet names (``annotator_<n>``), for :func:`record_sheets`.
    """
    if annotators < 1:
        raise SheetError("at least one annotator is needed")
    shown = list(items[0].shown) if items else []
    names = [f"annotator_{annotator}" for annotator in range(1, annotators + 1)]
    for annotator, name in enumerate(names, start=1):
        order = shuffled(items, random.Random(f"{seed}|{annotator}"))
        rows = [{ITEM_ID: item.item_id, **item.shown} for item in order]
        write_sheet(folder / f"{name}.csv", rows, shown, answers)
    (folder / GUIDELINES).write_text(guidelines, encoding="utf-8")
    return names


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
    """item id -> key row.

    Raises:
        SheetError: The directory does not exist, or holds no key.
    """
    if not path.parent.is_dir():
        raise SheetError(
            f"{path.parent}: {not_a_directory(path.parent)}; give the directory `skadapt annotate export "
            f"--out` wrote (it holds {path.name} and sheets/)"
        )
    if not path.is_file():
        raise SheetError(f"{path}: the key written by the export is missing")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {row[ITEM_ID]: row for row in rows}


def record_sheets(directory: Path, sheets: Mapping[Path, Sequence[str]]) -> None:
    """Record in ``directory/export.json`` the sheet names written into each folder (under ``directory``)."""
    folders = {folder.relative_to(directory).as_posix(): list(names) for folder, names in sheets.items()}
    write_json(directory / EXPORT, {"sheets": folders})


def recorded_sheets(directory: Path, folder: Path) -> list[str] | None:
    """The sheet names the export recorded for ``folder``, or None for an export that recorded none."""
    path = directory / EXPORT
    if not path.is_file():
        return None
    try:
        folders = json.loads(path.read_text(encoding="utf-8"))["sheets"]
    except (ValueError, KeyError, TypeError):
        raise SheetError(f"{path}: not the record of an export; export the sheets again") from None
    names = folders.get(Path(folder).relative_to(directory).as_posix())
    return list(names) if names is not None else None


def read_sheets(
    folder: Path,
    known: Collection[str],
    answers: Mapping[str, Validator],
    problems: list[str],
    names: Collection[str] | None = None,
) -> dict[str, dict[str, dict[str, Any]]]:
    """annotator (sheet name) -> item id -> answer column -> value, of the export's sheets in ``folder``.

    Args:
        folder: The sheet folder.
        known: The exported item ids.
        answers: Answer column -> validator.
        problems: Each problem -- a file that is not one of the export's sheets, a sheet that cannot be
            decoded, a missing column, an unknown or repeated item id, an empty or invalid answer, items a
            sheet lacks -- is appended as ``<folder>/<sheet> row <n> <field>: ...`` (rows numbered as a
            spreadsheet shows them); the rows with problems are left out.
        names: The sheet names the export wrote (:func:`recorded_sheets`); None: ``annotator_<n>``.
    """
    sheets = _export_sheets(folder, names, problems)
    return {name: _read_sheet(path, known, answers, problems) for name, path in sheets.items()}


def _export_sheets(folder: Path, names: Collection[str] | None, problems: list[str]) -> dict[str, Path]:
    """Sheet name -> its file in ``folder`` (``.csv`` or ``.xlsx``); any other file is a problem."""
    if not folder.is_dir():
        problems.append(f"{folder}: no such folder (the sheets of the export belong there)")
        return {}
    expected = sorted(names) if names is not None else None

    def exported(stem: str) -> bool:
        return stem in expected if expected is not None else bool(re.fullmatch(r"annotator_\d+", stem))

    listed = ", ".join(expected) if expected is not None else "annotator_<n>"
    found: dict[str, Path] = {}
    before = len(problems)
    for path in sorted(folder.iterdir()):
        where = f"{folder.name}/{path.name}"
        if path.name.startswith(".") or path.name == GUIDELINES or path.is_dir():
            continue
        if not exported(path.stem):
            problems.append(
                f"{where}: not a sheet of this export (its sheets: {listed}, as .csv or .xlsx); move it out "
                f"of {folder}"
            )
        elif path.suffix.lower() not in SUFFIXES:
            problems.append(f"{where}: not a .csv or .xlsx sheet; {SAVE_AS}")
        elif path.stem in found:
            problems.append(
                f"{where}: {found[path.stem].name} is there too; keep only the filled one of the two"
            )
        else:
            found[path.stem] = path
    if not found and len(problems) == before:
        problems.append(f"{folder}: none of the export's sheets ({listed}, as .csv or .xlsx)")
    return found


def _read_sheet(
    sheet: Path, known: Collection[str], answers: Mapping[str, Validator], problems: list[str]
) -> dict[str, dict[str, Any]]:
    where = f"{sheet.parent.name}/{sheet.name}"
    before = len(problems)
    got: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    try:
        header, rows = read_table(sheet)
    except ValueError as error:
        problems.append(f"{where}: {error}")
        return got
    missing = [c for c in (ITEM_ID, *answers) if c not in header]
    if missing:
        problems.append(f"{where}: missing column(s) {', '.join(missing)} (the header is {header!r})")
        return got
    column = {name: header.index(name) for name in (ITEM_ID, *answers)}
    for row_number, cells in rows:

        def cell(name: str, cells: list[str] = cells) -> str:
            index = column[name]
            return cells[index].strip() if index < len(cells) else ""

        item = cell(ITEM_ID)
        if item not in known:
            problems.append(f"{where} row {row_number} {ITEM_ID}: unknown item {item!r}")
            continue
        if item in seen:
            problems.append(f"{where} row {row_number} {ITEM_ID}: {item} appears twice")
            continue
        seen.add(item)
        values = {}
        for name, parse in answers.items():
            text = cell(name)
            try:
                if not text:
                    raise ValueError("empty")
                values[name] = parse(text)
            except ValueError as error:
                problems.append(f"{where} row {row_number} {name}: {error}")
        if len(values) == len(answers):
            got[item] = values
    absent = sorted(set(known) - seen)
    if absent and len(problems) == before:
        problems.append(f"{where}: {len(absent)} item(s) of the export are missing, e.g. {absent[0]}")
    return got


def read_table(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the non-empty rows (row number as a spreadsheet shows it, cells) of a sheet.

    A ``.xlsx`` sheet is read from its first worksheet. A ``.csv`` sheet may be UTF-8 (with or without
    BOM), UTF-16 with BOM, or -- when it is not UTF-8 -- cp1250 (Excel in a Central-European locale), if that
    decodes every byte to printable text; its columns may be separated by ``,``, ``;`` or a tab (the one that
    makes ``item_id`` a column of the header). A wrong guess of a legacy encoding cannot pass unnoticed: the
    columns read are ASCII ids and numbers, labels checked against the export's, and cluster names (where
    only equality matters).

    Raises:
        ValueError: The sheet cannot be read (why, and how to save it).
    """
    table = _xlsx_rows(path) if path.suffix.lower() == ".xlsx" else _csv_rows(path)
    if not table:
        raise ValueError("empty sheet (no header row)")
    header = [cell.strip() for cell in table[0]]
    rows = [
        (number, cells) for number, cells in enumerate(table[1:], start=2) if any(c.strip() for c in cells)
    ]
    return header, rows


def _csv_rows(path: Path) -> list[list[str]]:
    text = _decode(path.read_bytes())
    first = text.splitlines()[0] if text else ""
    delimiter = next(
        (d for d in DELIMITERS if ITEM_ID in [c.strip() for c in next(csv.reader([first], delimiter=d))]), ","
    )
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))


def _decode(data: bytes) -> str:
    """The text of a CSV sheet (see :func:`read_table` for the encodings read)."""
    for bom, codec, name in (
        (codecs.BOM_UTF8, "utf-8-sig", "UTF-8"),
        (codecs.BOM_UTF16_LE, "utf-16", "UTF-16"),
        (codecs.BOM_UTF16_BE, "utf-16", "UTF-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(codec)
            except UnicodeDecodeError as error:
                raise ValueError(
                    f"marked as {name} but byte {error.start} is not {name}; {SAVE_AS}"
                ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        utf8_error = error
    try:
        text = data.decode(LEGACY_ENCODING)
    except UnicodeDecodeError:
        text = ""
    if not text or CONTROL.search(text):
        raise ValueError(
            f"not UTF-8 (byte {utf8_error.start}) and not {LEGACY_ENCODING} text either; {SAVE_AS}"
        )
    return text


def _xlsx_rows(path: Path) -> list[list[str]]:
    import zipfile

    from openpyxl import load_workbook
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        book = load_workbook(path, read_only=True, data_only=True)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, OSError) as error:
        raise ValueError(f"not a readable Excel workbook ({error}); {SAVE_AS}") from None
    try:
        return [
            [_cell_text(value) for value in row] for row in book.worksheets[0].iter_rows(values_only=True)
        ]
    finally:
        book.close()


def _cell_text(value: Any) -> str:
    """A cell as the text a CSV would hold: whole numbers without ``.0``, an empty cell as ``""``."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def filled_sheets(directory: Path, answers: Collection[str]) -> list[Path]:
    """The sheets (``.csv``/``.xlsx``, at any depth) under ``directory`` with an answer in one of the
    ``answers`` columns, and those that cannot be read (they may hold answers)."""
    found = []
    for path in sorted(directory.rglob("*")):
        relative = path.relative_to(directory)
        if path.suffix.lower() not in SUFFIXES or any(p.startswith(".") for p in relative.parts):
            continue
        if not path.is_file():
            continue
        try:
            header, rows = read_table(path)
        except ValueError:
            found.append(path)
            continue
        columns = [index for index, name in enumerate(header) if name in answers]
        if any(index < len(cells) and cells[index].strip() for _, cells in rows for index in columns):
            found.append(path)
    return found


def refuse_to_replace(target: Path, answers: Collection[str]) -> None:
    """Refuse to write into an existing, non-empty ``target``, naming the filled sheets it holds.

    Raises:
        OutputExistsError: ``target`` is a file, or a directory that is not empty.
    """
    if target.is_file():
        raise OutputExistsError(f"{target} is a file; choose a directory for --out")
    if not target.is_dir() or not any(target.iterdir()):
        return
    filled = [path.relative_to(target).as_posix() for path in filled_sheets(target, answers)]
    if filled:
        shown = ", ".join(filled[:MAX_PROBLEMS_SHOWN]) + (" ..." if len(filled) > MAX_PROBLEMS_SHOWN else "")
        raise OutputExistsError(
            f"{target} holds {len(filled)} filled sheet(s): {shown}; exporting would empty their answers. "
            "Choose another --out, or pass --overwrite to replace them"
        )
    refuse_nonempty(target)


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
