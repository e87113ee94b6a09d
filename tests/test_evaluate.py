"""Evaluate: local suites through mteb, prompt policy, cache, aggregation, statistics, CLI, stage."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from skadapt.cli import app
from skadapt.evaluate.aggregate import aggregate
from skadapt.evaluate.stats import compare
from skadapt.results.evaluate import TaskScore
from skadapt.tasks.runner import EvaluationError, evaluate_model, validate_prompt_policy
from skadapt.tasks.selection import TaskSelectionError, select_tasks
from skadapt.tasks.suite import TASK_TYPES, load_suite
from tests.support.suite_fixtures import SENTENCES, write_tiny_suite

TYPES = set(TASK_TYPES)


@pytest.fixture(scope="module")
def tiny_suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_suite(tmp_path_factory.mktemp("suite"))


def _direct_sts(model_path: Path, prompt: str | None) -> float:
    """Spearman of cosine similarities, computed without mteb, in points."""
    from scipy.stats import spearmanr
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_path), device="cpu")
    a = model.encode([s[0] for s in SENTENCES], prompt=prompt or "")
    b = model.encode([s[1] for s in SENTENCES], prompt=prompt or "")
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    return 100 * spearmanr(cos, [s[2] for s in SENTENCES]).statistic


def test_local_suite_every_type_through_mteb(tiny_models: dict[str, Path], tiny_suite: Path, tmp_path: Path):
    tasks = select_tasks([str(tiny_suite)], language="slk")
    assert {t.metadata.type for t in tasks} == TYPES
    scores = evaluate_model(
        str(tiny_models["unigram"]), "tiny", tasks, cache_dir=tmp_path / "cache", results_dir=tmp_path / "res"
    )
    assert {s.type for s in scores} == TYPES
    for score in scores:
        assert 0 <= score.score <= 100 or score.type == "STS", score
        result = json.loads((tmp_path / "res" / "tiny" / f"{score.task}.json").read_text())
        assert result["task_name"] == score.task  # mteb's own result file
    sts = next(s for s in scores if s.type == "STS")
    assert sts.metric == "cosine_spearman"
    assert sts.score == pytest.approx(_direct_sts(tiny_models["unigram"], None), abs=1e-3)


def test_prompt_policy_reaches_the_model_through_mteb(tiny_models: dict[str, Path], tiny_suite: Path):
    tasks = [t for t in select_tasks([str(tiny_suite)], language="slk") if t.metadata.type == "STS"]
    model = tiny_models["wordpiece"]
    # A random tiny model's ranking may not move with one prompt (Spearman on 10 pairs is discrete): take
    # the first prompt that changes the score computed without mteb, so the check cannot pass vacuously.
    unprompted = _direct_sts(model, None)
    candidates = ("query: ", "passage: ", "Represent this sentence: ", "x " * 16)
    prompt = next(p for p in candidates if abs(_direct_sts(model, p) - unprompted) > 1e-3)
    plain = evaluate_model(str(model), "m", tasks, cache_dir=None)[0].score
    policed = evaluate_model(str(model), "m", tasks, cache_dir=None, prompt_policy={"STS": prompt})[0].score
    assert plain == pytest.approx(unprompted, abs=1e-3)
    assert policed == pytest.approx(_direct_sts(model, prompt), abs=1e-3)
    assert abs(plain - policed) > 1e-3


def test_prompt_policy_keys_are_task_types():
    assert validate_prompt_policy({"STS": "query: ", "Retrieval-document": "passage: "})
    with pytest.raises(EvaluationError, match="not an mteb task type"):
        validate_prompt_policy({"MySTS": "query: "})


def test_finished_tasks_come_from_the_cache(
    tiny_models: dict[str, Path], tiny_suite: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from mteb.abstasks.sts import AbsTaskSTS

    def tasks() -> list:
        return [t for t in select_tasks([str(tiny_suite)], language="slk") if t.metadata.type == "STS"]

    first = evaluate_model(str(tiny_models["bpe"]), "m", tasks(), cache_dir=tmp_path)

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("recomputed a cached task")

    monkeypatch.setattr(AbsTaskSTS, "_evaluate_subset", boom)
    second = evaluate_model(str(tiny_models["bpe"]), "m", tasks(), cache_dir=tmp_path)
    assert second[0].score == first[0].score


def test_a_cut_short_cached_result_is_set_aside_and_computed_again(
    tiny_models: dict[str, Path], tiny_suite: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
):
    tasks = [t for t in select_tasks([str(tiny_suite)], language="slk") if t.metadata.type == "STS"]
    first = evaluate_model(str(tiny_models["bpe"]), "m", tasks, cache_dir=tmp_path)
    [cached] = tmp_path.glob("results/*/*/TinySTS.json")
    with cached.open("r+b") as handle:  # what a kill while mteb writes it leaves: the first part
        handle.truncate(cached.stat().st_size // 2)
    kept = cached.read_bytes()

    second = evaluate_model(str(tiny_models["bpe"]), "m", tasks, cache_dir=tmp_path)
    assert second[0].score == first[0].score
    aside = cached.with_name("TinySTS.json.damaged")
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == [
        f"task TinySTS: its cached result {cached} is not readable JSON (cut short?); set aside as {aside}, "
        "the task is computed again"
    ]
    assert aside.read_bytes() == kept and json.loads(cached.read_text())  # kept; the new result cached


def test_table1_averages_match_hand_computed_values():
    scores = [
        TaskScore(model="a", task="t1", type="STS", metric="m", score=80.0),
        TaskScore(model="a", task="t2", type="STS", metric="m", score=60.0),
        TaskScore(model="a", task="t3", type="Retrieval", metric="m", score=40.0),
        TaskScore(model="b", task="t1", type="STS", metric="m", score=70.0),
        TaskScore(model="b", task="t2", type="STS", metric="m", score=70.0),
        TaskScore(model="b", task="t3", type="Retrieval", metric="m", score=50.0),
    ]
    table = aggregate(scores)
    a, b = table.row("a"), table.row("b")
    assert a.types == {"STS": 70.0, "Retrieval": 40.0}
    assert a.All == pytest.approx(60.0)  # (80 + 60 + 40) / 3
    assert a.Type == pytest.approx(55.0)  # (70 + 40) / 2
    assert b.All == pytest.approx(190 / 3)
    assert b.Type == pytest.approx(60.0)
    with pytest.raises(ValueError, match="no score"):
        aggregate([*scores, TaskScore(model="a", task="t4", type="STS", metric="m", score=1.0)])


def test_wilcoxon_and_tost_match_hand_computed_values():
    a = [50.0, 60.0, 70.0, 80.0, 90.0]
    # all five differences positive with distinct ranks: W = 0, exact two-sided p = 2 / 2**5
    w = compare("a", a, "b", [51.0, 62.0, 73.0, 84.0, 95.0])
    assert w.wilcoxon_statistic == 0.0
    assert w.wilcoxon_p == pytest.approx(0.0625)

    diffs = [0.5, -0.5, 1.0, 0.0, 0.5]  # mean 0.3, sd sqrt(1.3 / 4)
    c = compare("a", a, "b", [x + d for x, d in zip(a, diffs, strict=True)], margin=2.0, alpha=0.05)
    se = math.sqrt(1.3 / 4) / math.sqrt(5)
    from scipy.stats import t

    assert c.mean_diff == pytest.approx(0.3)
    assert c.ci_low == pytest.approx(0.3 - t.ppf(0.95, 4) * se)
    assert c.ci_high == pytest.approx(0.3 + t.ppf(0.95, 4) * se)
    # TOST p = max of the one-sided p-values: P(T > (0.3 + 2)/se), P(T < (0.3 - 2)/se)
    assert c.tost_p == pytest.approx(max(t.sf((0.3 + 2) / se, 4), t.cdf((0.3 - 2) / se, 4)))
    assert c.equivalent
    far = compare("a", a, "b", [x + 5 + d for x, d in zip(a, diffs, strict=True)], margin=2.0)
    assert not far.equivalent and far.ci_low > 2


@pytest.mark.parametrize(
    ("suite_text", "files", "message"),
    [
        (
            "tasks:\n  - {name: A, type: Nope, data: a.jsonl}\n",
            {},
            "suite.yaml:2: .*unknown task type 'Nope'",
        ),
        (
            "tasks:\n  - {name: A, type: STS, data: a.jsonl}\n  - {name: B, type: STS, dat: a.jsonl}\n",
            {"a.jsonl": ""},
            r"suite.yaml:3: tasks\[1\] \(B\).*(dat: unknown field|data: Field required)",
        ),
        ("tasks:\n  - {name: A, type: STS, data: missing.jsonl}\n", {}, "suite.yaml:2: task A: data file"),
        ("tasks: [\n", {}, "not valid YAML"),
        ("tasks: []\n", {}, "at least 1 item"),
        (
            "tasks:\n  - {name: A, type: STS, data: a.jsonl}\n  - {name: A, type: STS, data: a.jsonl}\n",
            {"a.jsonl": ""},
            "unique, repeated: A",
        ),
        (
            "tasks:\n  - {name: A, type: STS, data: a.jsonl, score_range: [5, 0]}\n",
            {"a.jsonl": ""},
            "low < high",
        ),
    ],
)
def test_bad_suite_files_fail_with_file_and_line(tmp_path: Path, suite_text: str, files: dict, message: str):
    from skadapt.tasks.suite import SuiteError

    for name, text in files.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "suite.yaml").write_text(suite_text)
    with pytest.raises(SuiteError, match=message):
        load_suite(tmp_path / "suite.yaml")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"sts.jsonl:2: malformed JSON line"),
        ('{"sentence1": "a", "sentence2": "b"}', r"sts.jsonl:2: score: Field required"),
        (
            '{"sentence1": "a", "sentence2": 3, "score": 1}',
            r"sts.jsonl:2: sentence2: Input should be a valid string",
        ),
    ],
)
def test_malformed_data_lines_name_file_and_line(tmp_path: Path, line: str, message: str):
    from skadapt.tasks.suite import SuiteError

    (tmp_path / "sts.jsonl").write_text('{"sentence1": "a", "sentence2": "b", "score": 1}\n' + line + "\n")
    (tmp_path / "suite.yaml").write_text("tasks:\n  - {name: A, type: STS, data: sts.jsonl}\n")
    task = select_tasks([str(tmp_path / "suite.yaml")], language="slk")[0]
    with pytest.raises(SuiteError, match=message):
        task.load_data()


def test_qrels_must_reference_known_ids(tmp_path: Path, tiny_suite: Path):
    from skadapt.tasks.suite import SuiteError

    for name in ("corpus.jsonl", "queries.jsonl"):
        (tmp_path / name).write_text((tiny_suite.parent / name).read_text())
    (tmp_path / "qrels.jsonl").write_text('{"query-id": "q0", "corpus-id": "nope", "score": 1}\n')
    (tmp_path / "s.yaml").write_text(
        "tasks:\n  - {name: R, type: Retrieval, corpus: corpus.jsonl, queries: queries.jsonl,"
        " qrels: qrels.jsonl}\n"
    )
    with pytest.raises(SuiteError, match=r"qrels\.jsonl: row 1: unknown corpus-id 'nope'"):
        select_tasks([str(tmp_path / "s.yaml")], language="slk")[0].load_data()


def test_builtin_benchmark_tasks_and_mirrors(tmp_path: Path):
    tasks = select_tasks(["MTEB(slk, v1)"], language="slk")
    assert len(tasks) == 31
    assert len({t.metadata.type for t in tasks}) == 7
    mirrored = select_tasks(
        ["SlovakSumRetrieval"], language="slk", mirrors={"SlovakSumRetrieval": str(tmp_path)}
    )
    assert mirrored[0].metadata.dataset["path"] == str(tmp_path.resolve())
    with pytest.raises(TaskSelectionError, match="not among the selected tasks"):
        select_tasks(["SlovakSumRetrieval"], language="slk", mirrors={"SlovakSTS": str(tmp_path)})
    with pytest.raises(TaskSelectionError, match="not an mteb benchmark, an mteb task or a suite"):
        select_tasks(["NoSuchTaskAnywhere"], language="slk")


@pytest.mark.slow
def test_cli_prints_models_side_by_side(tiny_models: dict[str, Path], tiny_suite: Path, tmp_path: Path):
    out = tmp_path / "report"
    args = [
        "evaluate",
        f"A={tiny_models['unigram']}",
        f"B={tiny_models['wordpiece']}",
        "--tasks",
        str(tiny_suite),
    ]
    result = CliRunner().invoke(app, [*args, "--cache", str(tmp_path / "cache"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "All" in result.stdout and "Type" in result.stdout
    assert "│ A " in result.stdout and "│ B " in result.stdout
    assert "TOST" in result.stdout
    report = json.loads((out / "report.json").read_text())
    assert [m["model"] for m in report["models"]] == ["A", "B"]
    assert len(report["comparisons"]) == 1
    [verdict] = report["verdicts"]
    for task, d in verdict["tasks"].items():  # every per-task interval holds the point shown beside it
        assert d["low"] <= d["delta"] <= d["high"], (task, d)
    assert {d["basis"] for d in verdict["tasks"].values()} == {"items", "half-samples"}
    assert (out / "report.png").stat().st_size > 0
    assert len(list((out / "results" / "A").glob("*.json"))) == 7
    assert "| Model |" in (out / "report.md").read_text()


def test_a_report_plots_an_interval_that_misses_its_point(
    tiny_models: dict[str, Path], tiny_suite: Path, tmp_path: Path
) -> None:
    """One bootstrap resample gives intervals that need not hold their point: the figure draws them from
    their ends (was: matplotlib's "'yerr' must not contain negative values", the report lost)."""
    out = tmp_path / "report"
    args = ["evaluate", f"A={tiny_models['unigram']}", "--tasks", str(tiny_suite), "--bootstrap", "1"]
    result = CliRunner().invoke(app, [*args, "--cache", str(tmp_path / "cache"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "report.png").stat().st_size > 0


def test_cli_bad_suite_is_one_clear_error(tiny_models: dict[str, Path], tmp_path: Path):
    (tmp_path / "s.yaml").write_text("tasks:\n  - {name: A, type: STS}\n")
    result = CliRunner().invoke(
        app, ["evaluate", str(tiny_models["unigram"]), "--tasks", str(tmp_path / "s.yaml")]
    )
    assert result.exit_code == 1
    assert "s.yaml:2" in result.output and "data" in result.output
    assert "Traceback" not in result.output


def test_cli_unreachable_builtin_task_names_it(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Offline, a built-in mteb task cannot download its data: one message naming the task and the fix."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    result = CliRunner().invoke(
        app,
        ["evaluate", str(tiny_models["unigram"]), "--tasks", "SlovakSumRetrieval", "--no-cache"],
    )
    assert result.exit_code == 1, result.output
    assert "task SlovakSumRetrieval: cannot load its data" in result.output
    assert "--dataset-mirrors TASK=DIR" in result.output
    assert "Traceback" not in result.output


@pytest.mark.slow
def test_identical_models_get_identical_scores(tiny_models: dict[str, Path]):
    """mteb tasks carry random state (clustering/classification sampling): all models must see the same."""
    from skadapt.tasks.runner import evaluate_models

    suite = Path(__file__).parent / "data" / "suite_sk" / "suite.yaml"
    path = str(tiny_models["unigram"])
    tasks = select_tasks([str(suite)], language="slk")
    scores = evaluate_models({"a": path, "b": path, "c": path}, tasks, cache_dir=None)
    by_model: dict[str, dict[str, float]] = {}
    for score in scores:
        by_model.setdefault(score.model, {})[score.task] = score.score
    assert "SkTestClusters" in by_model["a"]
    assert by_model["a"] == by_model["b"] == by_model["c"]


@pytest.mark.slow
def test_excluded_tasks_are_named_in_every_average(
    tiny_models: dict[str, Path], tiny_suite: Path, tmp_path: Path
):
    """evaluate.exclude_tasks (--exclude-tasks) drops a task of the selection on purpose; the console
    summary, report.md's averages, comparisons and verdicts, and report.json say "6 of 7 tasks" and name
    it, and All is the mean over the 6 tasks scored. An unknown name is an error naming the field."""
    out = tmp_path / "report"
    args = ["evaluate", f"A={tiny_models['unigram']}", f"B={tiny_models['wordpiece']}", "-t", str(tiny_suite)]
    cache = ["--cache", str(tmp_path / "cache")]
    result = CliRunner().invoke(
        app, [*args, *cache, "--exclude-tasks", "TinyBitext", "--out", str(out)], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 0, result.output
    assert "over 6 of 7 tasks, TinyBitext left out" in result.stdout
    assert "All (6 of 7 tasks)" in result.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["averaged_over"] == "6 of 7 tasks" and report["excluded_tasks"] == ["TinyBitext"]
    assert report["settings"]["exclude_tasks"] == ["TinyBitext"]
    for row in report["models"]:
        assert "TinyBitext" not in row["tasks"] and len(row["tasks"]) == 6
        assert math.isclose(row["All"], sum(row["tasks"].values()) / 6)
    markdown = (out / "report.md").read_text()
    assert "Averages over 6 of 7 tasks: TinyBitext left out by evaluate.exclude_tasks" in markdown
    assert "## Averages (main scores ×100) (6 of 7 tasks)" in markdown
    assert "| All (6 of 7 tasks) | Type (6 of 7 tasks) |" in markdown
    assert "paired over 6 of 7 tasks" in markdown and "Mean Δ over 6 of 7 tasks" in markdown
    assert "| TinyBitext |" not in markdown
    unknown = CliRunner().invoke(app, [*args, *cache, "--exclude-tasks", "TinyNope"])
    assert unknown.exit_code == 1
    assert "--exclude-tasks: 'TinyNope' is not a task of" in unknown.output  # the option, as typed


def test_report_figure_draws_the_reports_intervals_and_its_legend_hides_no_bar():
    """Error bars where the report has an interval (a type of one local task: its statistic and 95%
    interval), none for a type of two tasks or for All/Type; the legend's box overlaps no bar (renderer)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import LineCollection
    from matplotlib.container import BarContainer
    from matplotlib.transforms import Bbox

    from skadapt.evaluate.bootstrap import SuiteIntervals
    from skadapt.evaluate.report import figure

    types = {"S": "STS", "C": "Clustering", "R1": "Retrieval", "R2": "Retrieval"}
    models = {"base": 0.0, "finetune": 6.0, "static": -30.0}
    scores = [
        TaskScore(model=model, task=task, type=kind, metric="main", score=60.0 + shift + i)
        for model, shift in models.items()
        for i, (task, kind) in enumerate(types.items())
    ]
    table = aggregate(scores)
    local = {  # the item statistic differs from mteb's score (clustering by 5 points)
        task: {
            model: {"value": 60 + shift + offset, "low": 55 + shift + offset, "high": 68 + shift + offset}
            for model, shift in models.items()
        }
        for task, offset in (("S", 0.0), ("C", 6.0))
    }
    fig = figure(table, SuiteIntervals(local, {}, 1000, {"C": 200}))
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    [axis] = fig.axes
    bars = [patch for c in axis.containers if isinstance(c, BarContainer) for patch in c.patches]
    assert len(bars) == len(models) * (len(table.types) + 2)  # every type, All and Type
    intervals = [c for c in axis.collections if isinstance(c, LineCollection)]
    points = [line for line in axis.lines if line.get_marker() == "o"]  # drawn in pairs, in order
    assert len(intervals) == len(points) == 2 * len(models)  # STS and Clustering; Retrieval: two tasks
    drawn = set()
    for segments, line in zip(intervals, points, strict=True):
        [[(_, low), (_, high)]] = segments.get_segments()
        [point] = line.get_ydata()
        drawn.add((round(low, 6), round(float(point), 6), round(high, 6)))
    expected = {(v["low"], v["value"], v["high"]) for by_model in local.values() for v in by_model.values()}
    assert drawn == expected
    legend = axis.get_legend().get_window_extent(renderer)
    assert not any(legend.overlaps(bar.get_window_extent(renderer)) for bar in bars)
    for segments in intervals:  # the intervals, in display coordinates
        [segment] = segments.get_segments()
        assert not legend.overlaps(Bbox(axis.transData.transform(segment)))
    assert not legend.overlaps(axis.get_window_extent(renderer))
    labels = [text.get_text() for text in axis.get_legend().get_texts()]
    assert labels[: len(models)] == list(models) and "95% CI" in labels[-1]
