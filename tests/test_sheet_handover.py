"""Human work is never overwritten or miscounted: an export refuses a folder with filled sheets (naming them)
unless --overwrite; the agreement reads exactly the export's sheets -- a stray copy is an error, a sheet
saved as .xlsx or by Excel in a Central-European locale (cp1250, ``;``) gives the same agreement as the
UTF-8 CSV -- and Krippendorff's alpha is "not defined" where the `krippendorff` package gives NaN."""

from __future__ import annotations

import csv
import json
import shutil
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from skadapt.annotate.agreement import agreement_markdown, agreement_report, krippendorff_alpha
from skadapt.cli import app

runner = CliRunner()

SLOVAK = [
    ("Čitateľ ťahá žltú loďku po jazere.", "Na jazere ťahá čitateľ žltú loďku."),
    ("Ľudia pôjdu v pondelok do mesta.", "V pondelok pôjdu ľudia do mesta."),
    ("Mäso sa predáva na trhu.", "Na trhu predávajú mäso."),
    ("Dážď ustal až večer.", "Večer prestalo pršať."),
    ("Kôň behá po lúke.", "Po lúke behá kôň."),
    ("Žiaci čítajú knihu o ťavách.", "Ťavy sú v knihe, ktorú čítajú žiaci."),
    ("Päť detí hrá futbal.", "Deti hrajú hokej."),
    ("Ôsmy vlak mešká.", "Vlak číslo osem príde neskôr."),
]


def sts_source(tmp_path: Path) -> Path:
    """A synth-sts output directory with a ``dataset/`` holding the held-out pairs (Slovak diacritics)."""
    from datasets import Dataset, DatasetDict

    rows = [
        {"pair_id": f"p{k}", "sentence1": a, "sentence2": b, "score": k % 6}
        for k, (a, b) in enumerate(SLOVAK)
    ]
    source = tmp_path / "synth"
    DatasetDict({"train": Dataset.from_list(rows[:2]), "heldout": Dataset.from_list(rows)}).save_to_disk(
        str(source / "dataset")
    )
    return source


def rewrites_source(tmp_path: Path) -> Path:
    """A robustness output directory with one transformation's rewrites."""
    source = tmp_path / "robustness"
    (source / "rewrites").mkdir(parents=True)
    lines = [json.dumps({"original": a, "rewritten": b}, ensure_ascii=False) for a, b in SLOVAK]
    (source / "rewrites" / "paraphrase_s7.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return source


SOURCES = {"sts": (sts_source, ("score",)), "rewrites": (rewrites_source, ("quality", "fluency"))}


def export(source: Path, out: Path, *extra: str) -> tuple[int, str]:
    args = ["annotate", "export", str(source), "--language", "slk", "--out", str(out), "--annotators", "3"]
    result = runner.invoke(app, [*args, "--dummies", "2", *extra])
    return result.exit_code, result.output


def read_rows(sheet: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(sheet.open(encoding="utf-8-sig", newline="")))


def fill(folder: Path, answer: Callable[[str, str], str], columns: tuple[str, ...]) -> None:
    """Write ``answer(annotator, item id)`` into every answer column of every sheet (UTF-8 with BOM)."""
    for sheet in sorted(folder.glob("annotator_*.csv")):
        rows = read_rows(sheet)
        for row in rows:
            for column in columns:
                row[column] = answer(sheet.stem, row["item_id"])
        write_csv(sheet, rows)


def write_csv(
    sheet: Path, rows: list[dict[str, str]], encoding: str = "utf-8-sig", delimiter: str = ","
) -> None:
    with sheet.open("w", encoding=encoding, newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), delimiter=delimiter)
        writer.writeheader()
        writer.writerows(rows)


def sts_rating(annotator: str, item: str) -> str:
    """Ratings that differ between annotators (so every agreement statistic is defined and not 1)."""
    return str((sum(map(ord, item)) + int(annotator[-1]) * (ord(item[-1]) % 2)) % 6)


def agreement(directory: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["annotate", "agreement", str(directory)])
    return result.exit_code, result.output


@pytest.fixture()
def filled(tmp_path: Path) -> Path:
    """An STS export of three sheets, filled (UTF-8 CSV as exported)."""
    out = tmp_path / "annotation"
    code, output = export(sts_source(tmp_path), out)
    assert code == 0, output
    fill(out / "sheets", sts_rating, ("score",))
    return out


@pytest.mark.parametrize("kind", sorted(SOURCES))
def test_export_refuses_a_folder_with_filled_sheets_and_overwrite_replaces_it(
    tmp_path: Path, kind: str
) -> None:
    make, columns = SOURCES[kind]
    source, out = make(tmp_path), tmp_path / "annotation"
    code, output = export(source, out)
    assert code == 0, output
    fill(out / "sheets", lambda annotator, item: "4", columns)
    rows = read_rows(out / "sheets" / "annotator_2.csv")
    rows[0][columns[0]] = ""  # a partly filled sheet counts as filled
    write_csv(out / "sheets" / "annotator_2.csv", rows)
    before = {sheet.name: sheet.read_bytes() for sheet in (out / "sheets").iterdir()}

    code, output = export(source, out)
    assert code == 1
    assert (
        f"{out} holds 3 filled sheet(s): sheets/annotator_1.csv, sheets/annotator_2.csv, "
        "sheets/annotator_3.csv; exporting would empty their answers" in output
    )
    assert "--overwrite" in output
    assert {sheet.name: sheet.read_bytes() for sheet in (out / "sheets").iterdir()} == before

    code, output = export(source, out, "--overwrite")
    assert code == 0, output
    for sheet in sorted((out / "sheets").glob("*.csv")):
        assert all(row[c] == "" for row in read_rows(sheet) for c in columns), sheet
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # written atomically: no leftovers


def test_export_refuses_unfilled_sheets_without_overwrite_and_a_source_inside_out(tmp_path: Path) -> None:
    source, out = sts_source(tmp_path), tmp_path / "annotation"
    assert export(source, out)[0] == 0
    code, output = export(source, out)
    assert code == 1 and f"{out} already exists and is not empty" in output
    code, output = export(source, tmp_path, "--overwrite")
    assert code != 0 and "holds the source" in output  # a usage error (its exit code: issue 28's CLI part)
    assert (source / "dataset").is_dir()


def test_human_export_refuses_filled_sheets_and_overwrite_replaces_them(tmp_path: Path) -> None:
    from tests.support.suite_fixtures import write_tiny_suite

    suite = write_tiny_suite(tmp_path / "suite")
    out = tmp_path / "human"
    args = ["human", "export", "--tasks", str(suite), "--language", "slk", "--out", str(out)]
    assert runner.invoke(app, args).exit_code == 0
    sheet = out / "sheets" / "TinySTS.human" / "annotator_1.csv"
    rows = read_rows(sheet)
    rows[0]["answer"] = "3"
    write_csv(sheet, rows)
    before = sheet.read_bytes()
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert f"{out} holds 1 filled sheet(s): sheets/TinySTS.human/annotator_1.csv" in result.output
    assert sheet.read_bytes() == before
    result = runner.invoke(app, [*args, "--overwrite"])
    assert result.exit_code == 0, result.output
    assert read_rows(sheet)[0]["answer"] == "" and (out / "subset" / "suite.yaml").is_file()


def test_a_stray_copy_is_an_error_not_a_fourth_annotator(filled: Path) -> None:
    sheets = filled / "sheets"
    shutil.copy(sheets / "annotator_2.csv", sheets / "annotator_2 (copy).csv")
    code, output = agreement(filled)
    assert code == 1
    assert (
        "sheets/annotator_2 (copy).csv: not a sheet of this export (its sheets: annotator_1, annotator_2, "
        in output
    )
    assert "move it out of" in output and not (filled / "agreement.json").exists()
    (sheets / "annotator_2 (copy).csv").unlink()
    shutil.copy(sheets / "annotator_3.csv", sheets / "annotator_4.csv")  # not written by the export either
    code, output = agreement(filled)
    assert code == 1 and "sheets/annotator_4.csv: not a sheet of this export" in output


def xlsx_from_csv(sheet: Path) -> Path:
    """The sheet as Excel saves it: numbers as numbers, in a workbook next to nothing else."""
    from openpyxl import Workbook

    rows = list(csv.reader(sheet.open(encoding="utf-8-sig", newline="")))
    book = Workbook()
    for number, row in enumerate(rows):
        book.active.append([int(cell) if number and cell.isdigit() else cell for cell in row])
    target = sheet.with_suffix(".xlsx")
    book.save(target)
    sheet.unlink()
    return target


def test_xlsx_and_central_european_csv_sheets_give_the_same_agreement(filled: Path) -> None:
    code, output = agreement(filled)
    assert code == 0, output
    expected = json.loads((filled / "agreement.json").read_text(encoding="utf-8"))
    sheets = filled / "sheets"

    xlsx_from_csv(sheets / "annotator_1.csv")
    rows = read_rows(sheets / "annotator_2.csv")
    assert any(ch in rows[0]["sentence1"] + rows[0]["sentence2"] for ch in "čťžľôä")
    write_csv(sheets / "annotator_2.csv", rows, encoding="cp1250", delimiter=";")  # Excel, Slovak locale
    assert b";" in (sheets / "annotator_2.csv").read_bytes().splitlines()[0]
    write_csv(sheets / "annotator_3.csv", read_rows(sheets / "annotator_3.csv"), "utf-8-sig", ";")
    (filled / "agreement.json").unlink()
    code, output = agreement(filled)
    assert code == 0, output
    assert json.loads((filled / "agreement.json").read_text(encoding="utf-8")) == expected

    shutil.copy(sheets / "annotator_1.xlsx", sheets / "annotator_1.csv")
    code, output = agreement(filled)
    assert code == 1 and "sheets/annotator_1.xlsx: annotator_1.csv is there too" in output


def test_a_sheet_in_an_unknown_encoding_is_named_with_how_to_save_it(filled: Path) -> None:
    sheet = filled / "sheets" / "annotator_2.csv"
    text = sheet.read_text(encoding="utf-8-sig")
    sheet.write_bytes(text.encode("utf-8").replace("č".encode(), b"\x81", 1))  # neither UTF-8 nor cp1250
    code, output = agreement(filled)
    assert code == 1
    assert "sheets/annotator_2.csv: not UTF-8" in output
    assert "save it as 'CSV UTF-8 (Comma delimited) (*.csv)' or as an Excel workbook (.xlsx)" in output
    assert "Traceback" not in output


def test_alpha_is_not_defined_where_krippendorff_gives_nan() -> None:
    import krippendorff

    issue = np.array([[1, 1, 2, np.nan], [1, 1, np.nan, 3]])
    with pytest.warns(RuntimeWarning):
        assert np.isnan(krippendorff.alpha(reliability_data=issue, level_of_measurement="interval"))
    assert krippendorff_alpha(issue) is None
    rng = np.random.default_rng(5)
    for _ in range(200):  # None exactly where the package's alpha is NaN or refused
        matrix = rng.integers(1, 4, (int(rng.integers(2, 4)), int(rng.integers(2, 6)))).astype(float)
        matrix[rng.random(matrix.shape) < 0.5] = np.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                oracle = float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="interval"))
            except ValueError:
                oracle = float("nan")
        ours = krippendorff_alpha(matrix)
        assert (ours is None) == np.isnan(oracle), matrix
        if ours is not None:
            assert ours == pytest.approx(oracle, rel=1e-12)


def test_agreement_says_not_defined_instead_of_nan(tmp_path: Path) -> None:
    out = tmp_path / "annotation"
    assert export(sts_source(tmp_path), out)[0] == 0
    fill(out / "sheets", lambda annotator, item: "4", ("score",))  # one value: all but accuracy are 0/0
    code, output = agreement(out)
    assert code == 0, output
    output = " ".join(output.split())  # the console wraps long lines
    assert "Krippendorff's α (interval) not defined: every rating of the items rated by two or more" in output
    assert "Fleiss' κ not defined: one rating value only (all annotators: 4)" in output
    note = "not defined: one rating value only (annotator_1: 4, annotator_2: 4)"
    assert "| annotator_1 / annotator_2 | 1.000 | not defined | not defined | not defined |" in output
    assert f"- annotator_1 / annotator_2: Pearson, Spearman, Cohen's κ {note}" in output
    assert "nan" not in output.lower()
    text = (out / "agreement.json").read_text(encoding="utf-8")
    report = json.loads(text, parse_constant=lambda token: pytest.fail(f"{token} in agreement.json"))
    assert report["pairs"][0]["pearson"] is None and report["pairs"][0]["cohen_kappa_note"] == note
    assert report["krippendorff_alpha_interval"] is None and report["fleiss_kappa"] is None
    assert report["krippendorff_alpha_interval_note"].startswith("not defined: every rating")
    assert "not defined" in (out / "agreement.md").read_text(encoding="utf-8")
    direct = agreement_report({name: dict.fromkeys("abc", 2.0) for name in "AB"})
    assert "nan" not in agreement_markdown(direct).splitlines()[-1].lower()
