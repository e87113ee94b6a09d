"""The generic annotation sheets: caller-declared answer columns with validators, per-annotator orders that
keep groups together, stable opaque ids, and read-back naming every problem by sheet, row and field."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from skadapt.annotate import sheetio

ANSWERS = {"fluency": sheetio.number(1, 5, whole=True), "meaning": sheetio.number(1, 5, whole=True)}


def items() -> list[sheetio.SheetItem]:
    return [
        sheetio.SheetItem(
            sheetio.opaque_id(f"t{i}-{j}", 7), {"original": f"o{i}", "rewrite": f"r{i}{j}"}, f"t{i}"
        )
        for i in range(4)
        for j in range(3)
    ]


def rows(sheet: Path) -> list[list[str]]:
    return list(csv.reader(sheet.open(encoding="utf-8-sig")))


def test_sheets_have_declared_columns_own_orders_and_groups_together(tmp_path: Path) -> None:
    folder = tmp_path / "sheets"
    sheetio.write_sheets(folder, items(), ANSWERS, annotators=2, seed=7, guidelines="# Rate\n")
    assert (folder / "guidelines.md").read_text(encoding="utf-8") == "# Rate\n"
    assert (
        (folder / "annotator_1.csv").read_bytes().startswith(b"\xef\xbb\xbf")
    )  # BOM: spreadsheets see UTF-8
    first, second = rows(folder / "annotator_1.csv"), rows(folder / "annotator_2.csv")
    assert first[0] == ["item_id", "original", "rewrite", "fluency", "meaning"]
    assert all(row[3:] == ["", ""] for row in first[1:])
    assert [r[0] for r in first[1:]] != [r[0] for r in second[1:]]
    originals = [row[1] for row in first[1:]]
    assert all(len(set(originals[k : k + 3])) == 1 for k in range(0, 12, 3))  # a group's rows together
    assert sheetio.opaque_id("t0-0", 7) == items()[0].item_id != sheetio.opaque_id("t0-0", 8)


def test_read_back_names_every_problem_by_sheet_row_and_field(tmp_path: Path) -> None:
    folder = tmp_path / "sheets"
    sheetio.write_sheets(folder, items(), ANSWERS, annotators=1, seed=7, guidelines="")
    sheet = folder / "annotator_1.csv"
    table = rows(sheet)
    for row in table[1:]:
        row[3:] = ["4", "5"]
    table[1][3], table[2][4], table[3][0], table[4][0] = "6", "", "nope", table[5][0]
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle).writerows(table)
    known = {item.item_id for item in items()}
    problems: list[str] = []
    got = sheetio.read_sheets(folder, known, ANSWERS, problems)
    assert problems == [
        "sheets/annotator_1.csv row 2 fluency: 6 is not a whole number from 1 to 5",
        "sheets/annotator_1.csv row 3 meaning: empty",
        "sheets/annotator_1.csv row 4 item_id: unknown item 'nope'",
        f"sheets/annotator_1.csv row 6 item_id: {table[5][0]} appears twice",
    ]
    assert len(got["annotator_1"]) == 12 - 4 and set(got["annotator_1"][table[6][0]]) == {
        "fluency",
        "meaning",
    }
    with pytest.raises(sheetio.SheetError, match=r"4 problem\(s\) in the sheets:\n  sheets/annotator_1"):
        sheetio.check(problems, "the sheets")


def test_validators() -> None:
    assert sheetio.number(0, 5)("2,5") == 2.5
    for text, why in (("dva", "'dva' is not a number"), ("nan", "nan is not between 0 and 5")):
        with pytest.raises(ValueError, match=why):
            sheetio.number(0, 5)(text)
    with pytest.raises(ValueError, match=r"2\.5 is not a whole number from 0 to 5"):
        sheetio.number(0, 5, whole=True)("2.5")
    assert sheetio.one_of(["a", "b"])("b") == "b"
    with pytest.raises(ValueError, match="'c' is not one of a, b"):
        sheetio.one_of(["a", "b"])("c")
