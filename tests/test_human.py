"""Human baselines with simulated annotators: the gold is in no sheet; gold-filled sheets score 100;
a known swap or known errors give hand-computed scores and agreement; mteb loads the Human result; the
evaluation report shows Human beside the models."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skadapt.annotate.sheetio import SheetError
from skadapt.cli import app
from skadapt.human.sheets import read_answers, read_key
from tests.support.suite_fixtures import SENTENCES, write_tiny_suite

runner = CliRunner()


@pytest.fixture()
def exported(tmp_path: Path) -> Path:
    suite = write_tiny_suite(tmp_path / "suite")
    out = tmp_path / "human"
    args = [
        "human",
        "export",
        "--tasks",
        str(suite),
        "--language",
        "slk",
        "--out",
        str(out),
        "--annotators",
        "2",
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return out


def test_export_takes_tasks_and_sizes_as_options_only(tmp_path: Path) -> None:
    """``--tasks``/``--sizes``; tasks as arguments and ``--size`` (never released) are refused."""
    suite = write_tiny_suite(tmp_path / "suite")
    out = tmp_path / "human"
    args = ["human", "export", "--language", "slk", "--out", str(out)]
    positional = runner.invoke(app, [*args, str(suite)])
    assert positional.exit_code == 2 and "Got unexpected extra argument" in positional.output
    size = runner.invoke(app, [*args, "--tasks", str(suite), "--size", "STS=3"])
    assert size.exit_code == 2 and "No such option: --size" in size.output
    assert not out.exists()


def fill(directory: Path, answer) -> None:
    """Fill every sheet: ``answer(task, annotator, item, gold)`` -> the text written."""
    subsets = {s.task: s for s in read_key(directory)}
    for task, subset in subsets.items():
        gold = {item.item_id: item.gold for item in subset.items}
        for sheet in sorted((directory / "sheets" / task).glob("*.csv")):
            rows = list(csv.DictReader(sheet.open(encoding="utf-8-sig")))
            for row in rows:
                row["answer"] = str(answer(subset, sheet.stem, row["item_id"], gold[row["item_id"]]))
            with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)


def test_export_keeps_the_gold_out_of_every_sheet(exported: Path) -> None:
    subsets = read_key(exported)
    assert {s.type for s in subsets} == {
        "STS",
        "Classification",
        "Clustering",
        "PairClassification",
        "Reranking",
    }
    assert not [s for s in subsets if "Bitext" in s.task]  # not annotated by people
    for subset in subsets:
        folder = exported / "sheets" / subset.task
        assert (folder / "guidelines.md").is_file()
        for sheet in folder.glob("*.csv"):
            rows = list(csv.DictReader(sheet.open(encoding="utf-8-sig")))
            assert list(rows[0]) == ["item_id", *subset.items[0].shown, "answer"]
            assert all(row["answer"] == "" for row in rows)
            assert sorted(r["item_id"] for r in rows) == sorted(i.item_id for i in subset.items)
    for path in (exported / "sheets").rglob("*.csv"):  # no gold score or label in any sheet
        text = path.read_text(encoding="utf-8-sig")
        assert "score" not in text and "label" not in text and "positive" not in text
    orders = [
        [r["item_id"] for r in csv.DictReader(p.open(encoding="utf-8-sig"))]
        for p in sorted((exported / "sheets" / "TinySTS.human").glob("*.csv"))
    ]
    assert orders[0] != orders[1]  # each annotator has their own order


def test_gold_filled_sheets_score_100_and_mteb_loads_the_human_result(exported: Path) -> None:
    fill(exported, lambda subset, annotator, item, gold: gold)
    result = runner.invoke(app, ["human", "score", str(exported)])
    assert result.exit_code == 0, result.output
    scores = json.loads((exported / "human_scores.json").read_text())
    for task, entry in scores.items():
        assert entry["mean"] == pytest.approx(100.0), task
    import mteb

    from skadapt.tasks.selection import select_tasks

    tasks = select_tasks([str(exported / "subset" / "suite.yaml")], language="slk")
    loaded = mteb.ResultCache(cache_path=str(exported / "results")).load_results(
        models=["baseline/Human"], tasks=tasks, include_remote=False
    )
    found = {r.task_name: r.get_score() for model in loaded.model_results for r in model.task_results}
    assert found == {t.metadata.name: pytest.approx(1.0) for t in tasks}


def test_known_errors_give_hand_computed_scores_and_agreement(exported: Path) -> None:
    sts_gold = sorted(s for _, _, s in SENTENCES)
    low, high = sts_gold[0], sts_gold[-1]
    wrong = {}

    def answer(subset, annotator, item, gold):
        if annotator == "annotator_1":
            return gold
        if subset.type == "STS" and gold in (low, high):  # swap the lowest and the highest rating
            return high if gold == low else low
        if subset.type == "Classification" and gold == "počasie":
            wrong.setdefault(item, len(wrong))
            return "šport" if wrong[item] < 3 else gold  # three of the four weather texts called sport
        return gold

    fill(exported, answer)
    assert runner.invoke(app, ["human", "score", str(exported)]).exit_code == 0
    scores = json.loads((exported / "human_scores.json").read_text())
    sts = scores["TinySTS.human"]
    # ranks 1 and 10 exchanged: sum d^2 = 2 * 9^2 = 162, rho = 1 - 6 * 162 / (10 * 99)
    rho = 1 - 6 * 162 / (10 * 99)
    assert sts["annotators"]["annotator_2"] == pytest.approx(100 * rho)
    assert sts["agreement"]["pairwise_spearman"] == pytest.approx(rho)
    cls = scores["TinyTopics.human"]
    assert cls["annotators"] == {"annotator_1": pytest.approx(100.0), "annotator_2": pytest.approx(75.0)}
    # Fleiss: P-bar = 9/12; category shares over 24 ratings 5, 11, 8 -> P_e = 210/576
    p_e = 210 / 576
    assert cls["agreement"]["fleiss_kappa"] == pytest.approx((0.75 - p_e) / (1 - p_e))
    assert cls["sd"] == pytest.approx(17.6776695, rel=1e-6)  # SD of 100 and 75


def test_sheet_problems_name_sheet_row_and_field(exported: Path) -> None:
    fill(exported, lambda subset, annotator, item, gold: gold)
    sheet = exported / "sheets" / "TinySTS.human" / "annotator_2.csv"
    rows = list(csv.reader(sheet.open(encoding="utf-8-sig")))
    rows[1][-1], rows[2][-1], rows[3][0] = "7", "", "x9"
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle).writerows(rows)
    with pytest.raises(SheetError) as error:
        read_answers(exported, read_key(exported))
    message = str(error.value)
    assert "TinySTS.human/annotator_2.csv row 2 answer: 7 is not between 0 and 5" in message
    assert "TinySTS.human/annotator_2.csv row 3 answer: empty" in message
    assert "TinySTS.human/annotator_2.csv row 4 item_id: unknown item 'x9'" in message


@pytest.mark.slow
def test_evaluate_shows_human_beside_the_models(
    exported: Path, tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    fill(exported, lambda subset, annotator, item, gold: gold)
    assert runner.invoke(app, ["human", "score", str(exported)]).exit_code == 0
    suite = tmp_path / "suite" / "suite.yaml"
    out = tmp_path / "eval"
    result = runner.invoke(
        app,
        [
            "evaluate",
            f"a={tiny_models['unigram']}",
            f"b={tiny_models['wordpiece']}",
            "--tasks",
            str(suite),
            "--out",
            str(out),
            "--human",
            str(exported),
            "--bootstrap",
            "0",
            "--no-cache",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    rows = {r["task"]: r for r in report["human"]}
    assert set(rows) == {s.task for s in read_key(exported)}
    assert all(r["rank"] == 1 and r["of"] == 3 and not r["models_above_human"] for r in rows.values())
    text = (out / "report.md").read_text()
    assert "## Human baseline" in text and (out / "human.png").is_file()
    assert "| **Human** | 100.00 |" in text and "| a | " in text and "| b | " in text  # rows side by side


def test_leave_one_out_scores_each_annotator_against_the_others_mean() -> None:
    from scipy.stats import spearmanr

    from skadapt.human.score import score_subsets
    from skadapt.human.subset import Item, Subset

    items = [Item(f"p{i}", {"sentence1": "a", "sentence2": "b"}, 0.0) for i in range(4)]
    subset = Subset("T.human", "T", "STS", items, "slk", "cosine_spearman")
    ratings = {"a1": [0, 1, 2, 3], "a2": [0, 2, 1, 3], "a3": [1, 0, 2, 3]}
    answers = {
        "T.human": {n: dict(zip([i.item_id for i in items], r, strict=True)) for n, r in ratings.items()}
    }
    scores = score_subsets([subset], answers, {"T"})["T.human"]
    # a1 against the mean of a2 and a3: [0.5, 1, 1.5, 3]
    assert scores["annotators"]["a1"] == pytest.approx(
        100 * spearmanr([0, 1, 2, 3], [0.5, 1, 1.5, 3]).statistic
    )
    # a3 against the mean of a1 and a2: [0, 1.5, 1.5, 3] (not its own gold, which is constant here)
    assert scores["annotators"]["a3"] == pytest.approx(
        100 * spearmanr([1, 0, 2, 3], [0, 1.5, 1.5, 3]).statistic
    )
    assert scores["annotators"]["a3"] < 100
    assert scores["leave_one_out"] is True


def test_only_the_exported_sheets_are_read_and_xlsx_counts_like_csv(exported: Path) -> None:
    """A copy of a sheet is an error naming it (not a third annotator); a sheet saved as .xlsx is read."""
    import shutil

    from tests.test_sheet_handover import xlsx_from_csv

    fill(exported, lambda subset, annotator, item, gold: gold)
    assert runner.invoke(app, ["human", "score", str(exported)]).exit_code == 0
    expected = json.loads((exported / "human_scores.json").read_text())
    folder = exported / "sheets" / "TinyTopics.human"
    shutil.copy(folder / "annotator_2.csv", folder / "annotator_2 - kópia.csv")
    result = runner.invoke(app, ["human", "score", str(exported)])
    assert result.exit_code == 1
    assert "TinyTopics.human/annotator_2 - kópia.csv: not a sheet of this export" in result.output
    (folder / "annotator_2 - kópia.csv").unlink()
    xlsx_from_csv(folder / "annotator_2.csv")
    xlsx_from_csv(exported / "sheets" / "TinySTS.human" / "annotator_1.csv")
    result = runner.invoke(app, ["human", "score", str(exported)])
    assert result.exit_code == 0, result.output
    assert json.loads((exported / "human_scores.json").read_text()) == expected


def test_scores_and_agreement_of_one_answer_value_are_not_defined(exported: Path, tmp_path: Path) -> None:
    """annotator_2 writes 3 to every STS pair, everyone calls every text sport and no one marks a reranking
    candidate: Spearman, Fleiss' kappa and the per-query correlations are 0/0 (NaN in scipy/statsmodels),
    so they are "not defined" with the reason, on the console and as null in human_scores.json."""
    from types import SimpleNamespace

    import numpy as np
    from scipy.stats import spearmanr

    from skadapt.evaluate.human import comparison, figure, markdown

    def answer(subset, annotator, item, gold):
        if subset.type == "STS":
            return 3 if annotator == "annotator_2" else gold
        if subset.type == "Classification":
            return "šport"
        return 0 if subset.type == "Reranking" else gold

    fill(exported, answer)
    result = runner.invoke(app, ["human", "score", str(exported)])
    assert result.exit_code == 0, result.output
    text = (exported / "human_scores.json").read_text()
    scores = json.loads(text, parse_constant=lambda token: pytest.fail(f"{token} in human_scores.json"))
    with pytest.warns(RuntimeWarning):  # the oracle: scipy's Spearman of a constant vector is NaN
        assert np.isnan(spearmanr([3] * 10, sorted(s for _, _, s in SENTENCES)).statistic)
    sts = scores["TinySTS.human"]
    assert sts["annotators"] == {"annotator_1": pytest.approx(100.0), "annotator_2": None}
    assert sts["annotators_note"] == {"annotator_2": "not defined: one rating value only (answers: 3)"}
    assert sts["mean"] is None and sts["sd"] is None
    assert sts["mean_note"] == "not defined: the score of annotator_2 is not defined"
    assert sts["agreement"] == {
        "pairwise_spearman": None,
        "pairwise_spearman_note": "not defined: one rating value only (annotator_2: 3)",
    }
    topics = scores["TinyTopics.human"]
    assert topics["agreement"]["fleiss_kappa"] is None
    assert (
        topics["agreement"]["fleiss_kappa_note"]
        == "not defined: one answer value only (all annotators: šport)"
    )
    assert topics["mean"] is not None  # accuracy is defined
    rerank = scores["TinyRerank.human"]["agreement"]
    assert rerank["mean_spearman"] is None and rerank["mean_kendall_tau"] is None
    assert rerank["mean_spearman_note"].startswith("not defined: no query on which both annotators")
    output = " ".join(result.output.split())
    assert "- TinySTS.human: annotator_2 not defined: one rating value only (answers: 3)" in output
    assert "- TinyRerank.human: mean_spearman, mean_kendall_tau not defined: no query on which" in output
    assert "nan" not in output.lower()
    assert not list((exported / "results").rglob("TinySTS.human.json"))  # no mteb result without a mean
    assert list((exported / "results").rglob("TinyTopics.human.json"))
    # the evaluation report shows the STS human mean as not defined (no rank, no star)
    models = [SimpleNamespace(model="m", task=task, score=50.0) for task in scores]
    rows = {row["task"]: row for row in comparison(scores, models)}
    assert rows["TinySTS.human"]["rank"] is None and rows["TinySTS.human"]["models_above_human"] == []
    report = markdown(list(rows.values()))
    assert "| TinySTS.human | STS | not defined: the score of annotator_2 is not defined (2) |" in report
    assert figure(list(rows.values()), tmp_path / "human.png").is_file()
