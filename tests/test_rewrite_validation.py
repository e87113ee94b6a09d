"""Human validation of transformations (HTEB/PTEB), end to end with SIMULATED raters: a real robustness run
(scripted LLM) -> `annotate export` of its rewrites -> filled sheets -> `annotate agreement` (Gwet's AC2,
dummy check, threshold) -> a robustness run that scores only the accepted transformation.

The raters below are simulated (clearly marked): two careful raters and one who writes 3 everywhere.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from skadapt.annotate.agreement import gwet_ac2
from skadapt.cli import app
from tests.support.llm_server import scripted_server
from tests.test_robustness import script

irrcac = pytest.importorskip("irrCAC.raw", reason="irrCAC is the AC2 oracle (installed by make install)")


def _robustness(
    tmp_path: Path, suite: Path, model: Path, url: str, out: Path, *extra: str
) -> tuple[int, str]:
    args = [
        "robustness",
        f"tiny={model}",
        "--tasks",
        str(suite),
        "--language",
        "slk",
        "--transforms",
        "paraphrase",
        "--transforms",
        "style",
        "--seeds",
        "7",
        "--out",
        str(out),
        "--llm-model",
        "scripted",
        "--llm-base-url",
        url,
        "--llm-cache",
        str(tmp_path / "c"),
        *extra,
    ]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


def _simulated_rating(key: dict, rater: str) -> tuple[int, int]:
    """SIMULATED: careful raters like `paraphrase` (4-5), dislike `style` (1-2) and see the dummies; the
    careless rater writes 3 everywhere."""
    if rater == "annotator_3":
        return 3, 3
    if key.get("dummy") == "positive":
        return 5, 5
    if key.get("dummy") == "negative":
        return 1, 4
    wobble = sum(map(ord, key["original"] + rater)) % 2
    return (4 + wobble, 5 - wobble) if key["transformation"] == "paraphrase" else (1 + wobble, 2)


@pytest.mark.slow
def test_export_rate_validate_and_score_only_accepted(tmp_path: Path, tiny_models: dict[str, Path]) -> None:
    from tests.support.suite_fixtures import write_tiny_suite

    suite = write_tiny_suite(tmp_path / "suite")
    first = tmp_path / "first"
    with scripted_server(script) as server:
        code, output = _robustness(tmp_path, suite, tiny_models["unigram"], server.url, first)
        assert code == 0, output

        sheets = tmp_path / "sheets"
        args = ["annotate", "export", str(first), "--language", "slk", "--out", str(sheets)]
        result = CliRunner().invoke(
            app, [*args, "--per-transform", "6", "--dummies", "6", "--annotators", "3"]
        )
        assert result.exit_code == 0, result.output
        key = {json.loads(line)["item_id"]: json.loads(line) for line in (sheets / "key.jsonl").open()}
        assert sum(1 for k in key.values() if k.get("dummy")) == 6
        assert {k["transformation"] for k in key.values() if "transformation" in k} == {"paraphrase", "style"}
        header = (sheets / "sheets" / "annotator_1.csv").read_text(encoding="utf-8-sig").splitlines()[0]
        assert header == "item_id,original,rewrite,quality,fluency"  # no transformation, no dummy flag

        for sheet in sorted((sheets / "sheets").glob("*.csv")):  # SIMULATED raters fill the sheets
            rows = list(csv.DictReader(sheet.open(encoding="utf-8-sig")))
            for row in rows:
                row["quality"], row["fluency"] = map(str, _simulated_rating(key[row["item_id"]], sheet.stem))
            with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)

        agreement = ["annotate", "agreement", str(sheets), "--model", str(tiny_models["unigram"])]
        result = CliRunner().invoke(app, agreement)
        assert result.exit_code == 0, result.output
        verdict = json.loads((sheets / "validation.json").read_text())
        drift = verdict["drift_vs_quality"]  # recomputed independently: 1 - cos under the same model
        rated = sorted(i for i, k in key.items() if "transformation" in k)
        assert drift["items"] == len(rated) and drift["ci95"][0] <= drift["spearman"] <= drift["ci95"][1]
        from scipy.stats import spearmanr
        from sentence_transformers import SentenceTransformer

        encoder = SentenceTransformer(str(tiny_models["unigram"]), device="cpu")
        a = encoder.encode([key[i]["original"] for i in rated], normalize_embeddings=True)
        b = encoder.encode([key[i]["rewrite"] for i in rated], normalize_embeddings=True)
        means = [
            np.mean([_simulated_rating(key[i], r)[0] for r in ("annotator_1", "annotator_2")]) for i in rated
        ]
        expected_rho = spearmanr(1 - (a * b).sum(axis=1), means).statistic
        assert drift["spearman"] == pytest.approx(expected_rho, abs=1e-6)
        assert verdict["kept_raters"] == ["annotator_1", "annotator_2"]  # annotator_3 failed the dummies
        assert not verdict["raters"]["annotator_3"]["kept"]
        assert verdict["accepted"] == ["paraphrase"] and verdict["rejected"] == ["style"]

        # AC2 equals irrCAC's on the same ratings (kept raters, ordinal weights)
        items = sorted(i for i, k in key.items() if k.get("transformation") == "paraphrase")
        ratings = {
            sheet.stem: {
                r["item_id"]: int(r["quality"]) for r in csv.DictReader(sheet.open(encoding="utf-8-sig"))
            }
            for sheet in (sheets / "sheets").glob("annotator_[12].csv")
        }
        matrix = np.array(
            [[ratings[r][i] for r in ("annotator_1", "annotator_2")] for i in items], dtype=float
        )
        oracle = irrcac.CAC(
            __import__("pandas").DataFrame(matrix), weights="ordinal", categories=[1, 2, 3, 4, 5]
        )
        expected = oracle.gwet()["est"]["coefficient_value"]
        assert verdict["transformations"]["paraphrase"]["quality_ac2"] == pytest.approx(expected, abs=1e-5)
        assert gwet_ac2(matrix, [1, 2, 3, 4, 5]) == pytest.approx(expected, abs=1e-5)

        second = tmp_path / "second"
        code, output = _robustness(
            tmp_path,
            suite,
            tiny_models["unigram"],
            server.url,
            second,
            "--validated",
            str(sheets / "validation.json"),
        )
        assert code == 0, output
    report = json.loads((second / "robustness.json").read_text())
    assert report["transforms"] == ["paraphrase"]  # the rejected transformation is not scored
    assert set(report["rejected_transforms"]) == {"style"}
    assert {row["transform"] for row in report["rows"]} == {"paraphrase"}
    assert "rejected by the human validation" in (second / "robustness.md").read_text()


def test_ac2_matches_irrcac_with_missing_ratings() -> None:
    rng = np.random.default_rng(3)
    matrix = rng.integers(1, 6, size=(30, 4)).astype(float)
    matrix[rng.random(matrix.shape) < 0.15] = np.nan
    import pandas as pd

    for weights, ours in (("ordinal", None), ("identity", np.eye(5))):
        expected = irrcac.CAC(pd.DataFrame(matrix), weights=weights, categories=[1, 2, 3, 4, 5]).gwet()
        assert gwet_ac2(matrix, [1, 2, 3, 4, 5], ours) == pytest.approx(
            expected["est"]["coefficient_value"], abs=1e-5
        )


def test_validated_needs_a_verdict_file(tmp_path: Path) -> None:
    from skadapt.annotate.rewrites import validated_transforms
    from skadapt.annotate.sheetio import SheetError

    with pytest.raises(SheetError, match=r"nothing\.json: no such file; give the validation\.json"):
        validated_transforms(tmp_path / "nothing.json", ["paraphrase"])


def test_ac2_is_not_defined_where_irrcac_finds_no_pairs_or_chance_agreement_one() -> None:
    import pandas as pd

    from skadapt.annotate.agreement import ac2_undefined, defined

    nan = np.nan
    no_pairs = np.array([[1, nan], [nan, 2], [3, nan]])  # every item rated once: no agreement to measure
    with pytest.warns(RuntimeWarning):  # irrCAC divides by the zero items rated twice
        oracle = irrcac.CAC(pd.DataFrame(no_pairs), weights="ordinal", categories=[1, 2, 3, 4, 5]).gwet()[
            "est"
        ]
    assert np.isnan(oracle["coefficient_value"])
    ours = defined(lambda: gwet_ac2(no_pairs, [1, 2, 3, 4, 5]), ac2_undefined(no_pairs))
    assert ours == (None, "not defined: no item is rated by two or more raters")
    one_category = np.array([[4, 4], [4, nan], [4, 4]])  # chance agreement 1: (1 - 1) / (1 - 1)
    with pytest.warns(RuntimeWarning):  # q (q - 1) = 0
        oracle = irrcac.CAC(pd.DataFrame(one_category), weights="identity", categories=[4]).gwet()["est"]
    assert oracle["pe"] == pytest.approx(1)  # irrCAC's guard makes it 1 - 1e-15 and reports 1 for 0/0
    ours = defined(lambda: gwet_ac2(one_category, [4]), ac2_undefined(one_category))
    assert ours == (None, "not defined: chance agreement is 1 (0/0)")
    constant = np.full((6, 3), 5.0)  # one rating value is defined for AC2: p_a = 1, p_e = 0
    oracle = irrcac.CAC(pd.DataFrame(constant), weights="ordinal", categories=[1, 2, 3, 4, 5]).gwet()["est"]
    assert gwet_ac2(constant, [1, 2, 3, 4, 5]) == oracle["coefficient_value"] == 1.0


def test_one_rating_value_validates_with_not_defined_instead_of_nan(
    tmp_path: Path, tiny_models: dict[str, Path]
) -> None:
    """Every rewrite rated 5 by every rater: AC2 is 1 (as irrCAC's), alpha and the drift's Spearman are 0/0,
    so they are "not defined" with the reason, in validation.md and as null in validation.json."""
    from tests.test_sheet_handover import export, fill, rewrites_source

    sheets = tmp_path / "val"
    code, output = export(rewrites_source(tmp_path), sheets)
    assert code == 0, output
    key = {json.loads(line)["item_id"]: json.loads(line) for line in (sheets / "key.jsonl").open()}
    lost = {item for item, row in key.items() if row.get("dummy") == "negative"}
    fill(sheets / "sheets", lambda rater, item: "1" if item in lost else "5", ("quality", "fluency"))
    args = ["annotate", "agreement", str(sheets), "--model", str(tiny_models["unigram"])]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    text = (sheets / "validation.json").read_text(encoding="utf-8")
    verdict = json.loads(text, parse_constant=lambda token: pytest.fail(f"{token} in validation.json"))
    assert verdict["kept_raters"] == ["annotator_1", "annotator_2", "annotator_3"]
    paraphrase = verdict["transformations"]["paraphrase"]
    assert paraphrase["quality_ac2"] == 1.0 and "quality_ac2_note" not in paraphrase
    assert paraphrase["quality_alpha"] is None
    assert paraphrase["quality_alpha_note"].startswith("not defined: every rating of the items rated by two")
    drift = verdict["drift_vs_quality"]
    assert drift["spearman"] is None and drift["ci95"] is None
    assert drift["spearman_note"] == "not defined: one value only (mean quality: 5)"
    output = " ".join(result.output.split())
    assert "Spearman not defined: one value only (mean quality: 5) (negative:" in output
    assert "nan" not in output.lower()
    assert "nan" not in (sheets / "validation.md").read_text(encoding="utf-8").lower()
