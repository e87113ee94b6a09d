"""Do-no-harm verdicts and per-task paired bootstrap intervals of local suites."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest
from typer.testing import CliRunner

from skadapt.cli import app
from skadapt.evaluate.aggregate import aggregate
from skadapt.evaluate.bootstrap import item_statistic, model_encoder, suite_intervals
from skadapt.evaluate.verdicts import HARMS, IMPROVES, NON_INFERIOR, stage_verdicts, verdict_of
from skadapt.results.evaluate import TaskScore, Verdict
from skadapt.tasks.runner import evaluate_model
from skadapt.tasks.selection import select_tasks
from skadapt.tasks.suite import load_suite

SUITE_SK = Path(__file__).parent / "data" / "suite_sk" / "suite.yaml"


def _table(rows: dict[str, list[float]]):  # model -> per-task scores
    return aggregate(
        [
            TaskScore(model=model, task=f"T{i}", type="STS", metric="cosine_spearman", score=score)
            for model, scores in rows.items()
            for i, score in enumerate(scores)
        ]
    )


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        ([50.3, 59.6, 70.1, 40.4, 54.7, 65.2, 44.9], NON_INFERIOR),  # small changes both ways
        ([53.0, 63.5, 72.8, 43.1, 58.0, 67.9, 48.3], IMPROVES),  # every task up ~3
        ([45.0, 57.0, 64.0, 36.5, 50.0, 61.0, 41.0], HARMS),  # every task down ~4
        ([58.0, 52.0, 78.0, 32.0, 63.0, 57.0, 53.0], HARMS),  # mean 0, but too noisy to rule out harm
    ],
)
def test_stage_verdicts(after: list[float], expected: str) -> None:
    before = [50.0, 60.0, 70.0, 40.0, 55.0, 65.0, 45.0]
    [verdict] = stage_verdicts(_table({"base": before, "tuned": after}), margin=2.0, alpha=0.05)
    assert (verdict.a, verdict.b, verdict.verdict) == ("base", "tuned", expected)
    assert verdict.tasks["T0"]["delta"] == pytest.approx(after[0] - before[0])


def test_verdict_needs_more_than_one_task() -> None:
    assert verdict_of(5.0, float("nan"), float("nan"), margin=2.0, alpha=0.05) == HARMS
    # a single task: the Wilcoxon p and the interval are NaN (a float, never None), and report.json keeps it
    [verdict] = stage_verdicts(_table({"base": [50.0], "tuned": [55.0]}), margin=2.0, alpha=0.05)
    assert verdict.verdict == HARMS and math.isnan(verdict.wilcoxon_p) and math.isnan(verdict.ci_low)
    written = json.loads(json.dumps(verdict.model_dump()))
    assert list(written) == [
        *("a", "b", "verdict", "mean_diff", "ci_low", "ci_high", "wilcoxon_p", "margin", "tasks"),
        *("harmed_tasks", "no_interval"),
    ]
    assert math.isnan(Verdict.parse(written).wilcoxon_p)


def test_one_task_below_the_margin_harms_although_the_mean_is_non_inferior() -> None:
    # the demo's renorm pattern: six tasks hold, STS drops 4 points with a tight interval
    before = [50.0, 60.0, 70.0, 40.0, 55.0, 65.0, 45.0]
    after = [50.4, 60.2, 70.3, 40.1, 55.2, 65.1, 41.0]
    table = _table({"finetune": before, "renorm": after})
    [mean_only] = stage_verdicts(table, margin=2.0, alpha=0.05)
    assert mean_only.verdict == NON_INFERIOR and mean_only.no_interval == [f"T{i}" for i in range(7)]
    deltas = {("finetune", "renorm"): {"T6": {"delta": -4.0, "low": -5.5, "high": -2.6}}}
    [verdict] = stage_verdicts(table, deltas, margin=2.0, alpha=0.05)
    assert (verdict.verdict, verdict.harmed_tasks) == (HARMS, ["T6"])
    assert verdict.tasks["T6"]["basis"] == "items" and "T6" not in verdict.no_interval
    # an interval that reaches above -margin is no proof of harm
    deltas[("finetune", "renorm")]["T6"] = {"delta": -4.0, "low": -7.0, "high": -1.5}
    [verdict] = stage_verdicts(table, deltas, margin=2.0, alpha=0.05)
    assert (verdict.verdict, verdict.harmed_tasks) == (NON_INFERIOR, [])


def test_a_task_interval_is_shown_with_its_own_point() -> None:
    """The per-task Δ beside an interval is the point of that interval's statistic (a local task's item
    statistic, e.g. clustering's V-measure of one k-means), not the difference of mteb's scores; a task
    without an interval shows the difference of the scores."""
    from skadapt.evaluate.verdicts import verdicts_markdown

    table = _table({"finetune": [50.0, 60.0, 70.0], "static": [20.0, 55.0, 69.0]})
    deltas = {
        ("finetune", "static"): {"T0": {"delta": -25.5, "low": -28.0, "high": -23.0, "basis": "half-samples"}}
    }
    [verdict] = stage_verdicts(table, deltas, margin=2.0, alpha=0.05)
    assert verdict.tasks["T0"] == {"delta": -25.5, "low": -28.0, "high": -23.0, "basis": "half-samples"}
    assert verdict.tasks["T1"]["delta"] == -5.0 and verdict.tasks["T1"]["low"] is None
    assert verdict.mean_diff == pytest.approx(-12.0)  # over tasks: mteb's scores
    markdown = verdicts_markdown([verdict], alpha=0.05)
    assert "| T0 | -25.50 [-28.00, -23.00]ʰ |" in markdown and "| T1 | -5.00 — |" in markdown


def test_mteb_experiment_scores_give_paired_task_intervals() -> None:
    from skadapt.evaluate.bootstrap import experiment_deltas
    from skadapt.tasks.runner import experiment_scores

    entries = [  # two subsets of a classification task, three experiments each (mteb's layout)
        {"scores_per_experiment": [{"accuracy": 0.5}, {"accuracy": 0.6}, {"accuracy": 0.7}]},
        {"scores_per_experiment": [{"accuracy": 0.7}, {"accuracy": 0.6}, {"accuracy": 0.5}]},
    ]
    assert experiment_scores(entries, "accuracy") == [60.0, 60.0, 60.0]
    assert experiment_scores([{"v_measures": {"Level 0": [0.1, 0.3]}}], "v_measure") == [10.0, 30.0]
    assert experiment_scores([{"main_score": 0.5}], "accuracy") is None
    a = [50.0, 52.0, 51.0, 49.0, 50.0, 53.0, 48.0, 50.0, 51.0, 52.0]
    b = [x - 5 + 0.1 * i for i, x in enumerate(a)]
    scores = [
        TaskScore(
            model="a", task="Cls", type="Classification", metric="accuracy", score=sum(a) / 10, experiments=a
        ),
        TaskScore(
            model="b", task="Cls", type="Classification", metric="accuracy", score=sum(b) / 10, experiments=b
        ),
        TaskScore(model="a", task="Plain", type="STS", metric="cosine_spearman", score=50.0),
        TaskScore(model="b", task="Plain", type="STS", metric="cosine_spearman", score=49.0),
    ]
    deltas = experiment_deltas(scores, count=500, seed=1)[("a", "b")]
    assert list(deltas) == ["Cls"]  # no experiments, no interval
    diffs = np.subtract(b, a)
    assert deltas["Cls"]["delta"] == pytest.approx(diffs.mean())
    assert diffs.min() <= deltas["Cls"]["low"] < diffs.mean() < deltas["Cls"]["high"] <= diffs.max()


def test_consecutive_models_are_compared() -> None:
    scores = [50.0, 60.0, 70.0]
    table = _table({"base": scores, "trim": scores, "finetune": [s + 3 for s in scores]})
    verdicts = stage_verdicts(table, margin=2.0, alpha=0.05)
    assert [(v.a, v.b) for v in verdicts] == [("base", "trim"), ("trim", "finetune")]


def test_a_tier_is_compared_with_its_parent_and_states_its_loss() -> None:
    from skadapt.evaluate.aggregate import comparison_pairs
    from skadapt.evaluate.verdicts import TIER

    base = [50.0, 60.0, 70.0, 40.0, 55.0, 65.0, 45.0]
    tuned = [s + 3 for s in base]
    rows = {"base": base, "finetune": tuned, "onnx-int8": [s - 0.2 for s in tuned], "static": base}
    parents = {"onnx-int8": "finetune", "static": "finetune"}
    pairs = [("base", "finetune"), ("finetune", "onnx-int8"), ("finetune", "static")]
    assert comparison_pairs(list(rows), parents) == pairs
    verdicts = stage_verdicts(_table(rows), margin=2.0, alpha=0.05, parents=parents)
    assert [(v.a, v.b, v.verdict) for v in verdicts] == [
        ("base", "finetune", IMPROVES),
        ("finetune", "onnx-int8", TIER),
        ("finetune", "static", TIER),  # loses 3 points on every task: stated, not judged as harm
    ]
    assert verdicts[2].mean_diff == pytest.approx(-3.0) and verdicts[2].ci_high < -2.0
    assert comparison_pairs(["a", "b", "c"]) == [("a", "b"), ("b", "c")]


@pytest.mark.parametrize(("loss", "worth"), [(0.2, True), (0.5, True), (1.0, False)])
def test_an_int8_tier_that_loses_more_than_half_a_point_is_not_worth_deploying(
    loss: float, worth: bool
) -> None:
    from skadapt.evaluate.verdicts import INT8_BUDGET, int8_notes, verdicts_markdown

    tuned = [53.0, 63.0, 73.0, 43.0, 58.0, 68.0, 48.0]
    rows = {"finetune": tuned, "onnx-int8": [s - loss for s in tuned], "static": [s - 9 for s in tuned]}
    parents = {"onnx-int8": "finetune", "static": "finetune"}
    verdicts = stage_verdicts(_table(rows), margin=2.0, alpha=0.05, parents=parents)
    [note] = int8_notes(verdicts)  # the static tier is judged by its own goal, not the int8 budget
    assert INT8_BUDGET == 0.5 and note.startswith("- onnx-int8:" if worth else "- **onnx-int8:")
    assert ("not worth deploying" in note) is not worth and f"{-loss:+.2f}" in note
    assert note in verdicts_markdown(verdicts, alpha=0.05)


@pytest.mark.slow
def test_item_statistics_reproduce_mteb_main_scores(e5_small: Path) -> None:
    """On the real multilingual-e5-small: a random tiny model ties its similarities (bitext accuracy of a
    few percent), and tied arg-maxes are broken differently by numpy and torch.topk, one run in three."""
    from sentence_transformers import SentenceTransformer

    model = str(e5_small)
    suite = load_suite(SUITE_SK)
    tasks = select_tasks([str(SUITE_SK)], language="slk")
    mteb_scores = {
        s.task: s.score for s in evaluate_model(model, "m", tasks, cache_dir=None, prompt_policy={})
    }
    encoder_model = SentenceTransformer(model, device="cpu")
    encoder = model_encoder(encoder_model, "BitextMining", {}, 32)
    bitext = next(spec for spec in suite.tasks if spec.type == "BitextMining")
    rows = [json.loads(line) for line in suite.data_path(bitext.data).read_text().splitlines() if line]
    sims = encoder([r["sentence1"] for r in rows], None) @ encoder([r["sentence2"] for r in rows], None).T
    top2 = np.sort(sims, axis=1)[:, -2:]
    assert (top2[:, 1] - top2[:, 0]).min() > 1e-4  # no near-tie: the arg-max cannot depend on the order
    for spec in suite.tasks:
        if spec.type not in ("STS", "Retrieval", "Reranking", "BitextMining"):
            continue  # the others follow mteb's metric but not its random subsamples / max over metrics
        statistic = item_statistic(spec, suite, model_encoder(encoder_model, spec.type, {}, 32))
        value = statistic.value(np.arange(statistic.items))
        assert value == pytest.approx(mteb_scores[spec.name], abs=0.5), spec.name


@pytest.mark.slow
def test_identical_models_have_zero_paired_intervals(tiny_models: dict[str, Path]) -> None:
    model = str(tiny_models["unigram"])
    intervals = suite_intervals({"a": model, "b": model}, [load_suite(SUITE_SK)], policy={}, count=50, seed=1)
    assert len(intervals.scores) == 7
    for task, delta in intervals.deltas[("a", "b")].items():
        assert delta == {"delta": 0.0, "low": 0.0, "high": 0.0}, task
    for by_model in intervals.scores.values():
        assert by_model["a"]["low"] <= by_model["a"]["high"]


@pytest.mark.slow
def test_cli_report_has_verdicts_and_fail_on_harm(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    model = str(tiny_models["unigram"])
    copy = shutil.copytree(model, tmp_path / "copy")  # the same weights (one model given twice is refused)
    out = tmp_path / "eval"
    args = ["evaluate", f"base={model}", f"same={copy}", "--tasks", str(SUITE_SK), "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--bootstrap", "40", "--no-cache", "--fail-on-harm"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    [verdict] = report["verdicts"]
    assert verdict["verdict"] == NON_INFERIOR and verdict["mean_diff"] == 0
    assert report["bootstrap"]["resamples"] == 40
    markdown = (out / "report.md").read_text()
    assert "Do-no-harm verdicts" in markdown and "**non-inferior**" in markdown
    assert "Bootstrap intervals" in markdown


def test_encode_memo_serves_repeats_from_memory(tiny_models: dict[str, Path]) -> None:
    from sentence_transformers import SentenceTransformer

    from skadapt.tasks.embedding_memo import memoize

    plain = SentenceTransformer(str(tiny_models["unigram"]), device="cpu")
    model = memoize(SentenceTransformer(str(tiny_models["unigram"]), device="cpu"))
    texts = ["Prší.", "Slnko svieti nad mestom.", "Prší."]
    first = model.encode(texts, prompt="query: ")
    assert model.encode_memo.misses == 2 and model.encode_memo.hits == 1  # the repeat within the call
    again = model.encode(texts[:2], prompt_name="query")  # the model's query prompt is "query: "
    assert model.encode_memo.hits == 3
    np.testing.assert_allclose(first, plain.encode(texts, prompt="query: "), atol=1e-6)
    np.testing.assert_allclose(again, first[:2], atol=0)
    passage = model.encode(texts[:1], prompt="passage: ", task="document")  # another prompt and task
    assert model.encode_memo.misses == 3
    model.encode(texts[:1], prompt="passage: ", task="document")
    assert model.encode_memo.misses == 3 and model.encode_memo.hits == 4
    np.testing.assert_allclose(passage, plain.encode(texts[:1], prompt="passage: "), atol=1e-6)
    assert model.encode(texts, prompt="query: ", convert_to_tensor=True).shape == (3, first.shape[1])


def test_train_exits_1_when_a_stage_harms_and_fail_on_harm_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The verdict logic is tested above; this checks the train command acts on a 'harms' verdict (the
    evaluate stage's ``halt``, applied by the pipeline), the run's table and summary printed first."""
    import yaml

    from skadapt import api
    from skadapt.evaluate.stage import harm_halt
    from skadapt.pipeline import RunHalted, StageOutcome
    from skadapt.results import EvaluationSummary

    result = EvaluationSummary.of({"verdicts": {"base->finetune": HARMS}, "harms": ["base->finetune"]})

    def run(recipe: Any, **_: Any) -> list[StageOutcome]:  # the pipeline's loop, for the one stage
        outcomes = [StageOutcome("evaluate", "ran", tmp_path, 1.0, result)]
        reason = harm_halt(recipe.evaluate, result)
        if reason is not None:
            raise RunHalted(reason, "evaluate", outcomes)
        return outcomes

    monkeypatch.setattr(api, "run_stages", run)
    recipe = {"name": "r", "language": "slk", "base_model": "m", "output_dir": str(tmp_path / "run")}
    for fail_on_harm, code in ((False, 0), (True, 1)):
        recipe["evaluate"] = {"tasks": ["suite.yaml"], "fail_on_harm": fail_on_harm}
        path = tmp_path / "recipe.yaml"
        path.write_text(yaml.safe_dump(recipe))
        outcome = CliRunner().invoke(app, ["train", str(path), "--no-check"])  # the run itself is stubbed
        assert outcome.exit_code == code, outcome.output
        assert "do-no-harm base->finetune: harms" in outcome.output


# ---- the clustering interval: coverage on Gaussian clusters with a known difference ---------------------

CLUSTERS, PER_CLUSTER, DIMS = 8, 10, 5
SEPARATION = {"a": 1.0, "b": 3.0}
"""Model a barely separates the clusters, b well: the item bootstrap of one fit inflated a's V-measure more
than b's, so its intervals of the difference could miss their own point and covered the truth in 56%."""
REPLICATIONS, HALF_SAMPLES, TRUTH_DRAWS, SEED = 100, 30, 200, 2024


class _TableModel:
    """A stand-in for a sentence-transformers model: text ``text i`` -> row i of ``embeddings``."""

    prompts: ClassVar[dict[str, str]] = {}

    def __init__(self, embeddings: np.ndarray) -> None:
        self.embeddings = embeddings

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        return self.embeddings[[int(t.split()[1]) for t in texts]]


def _population_draw(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One clustering set of the population, embedded by models a and b: the same items (latent noise
    shared, paired), b separating the clusters more widely."""
    centres = np.random.default_rng(123).normal(size=(CLUSTERS, DIMS))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    labels = np.repeat(np.arange(CLUSTERS), PER_CLUSTER)
    noise = rng.normal(size=(len(labels), DIMS))
    a = SEPARATION["a"] * centres[labels] + noise
    b = SEPARATION["b"] * centres[labels] + 0.8 * noise + 0.6 * rng.normal(size=noise.shape)
    return a, b


@pytest.fixture(scope="module")
def clustering_replications(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """REPLICATIONS sets drawn from the population, each evaluated like a local suite task (the suite's
    files, the item statistic, its half-sample draws, the paired interval); the true difference is the
    expected V-measure difference on sets of this size, from TRUTH_DRAWS further draws (sklearn directly)."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import v_measure_score

    from skadapt.evaluate.bootstrap import combine, model_draws

    root = tmp_path_factory.mktemp("clusters")
    labels = np.repeat(np.arange(CLUSTERS), PER_CLUSTER)
    rows = [json.dumps({"text": f"text {i}", "label": f"topic {y}"}) for i, y in enumerate(labels)]
    (root / "clusters.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (root / "suite.yaml").write_text(
        "language: slk\ntasks:\n  - {name: Blobs, type: Clustering, data: clusters.jsonl}\n", encoding="utf-8"
    )
    suite = load_suite(root / "suite.yaml")

    def v_measure(x: np.ndarray) -> float:
        return 100 * v_measure_score(labels, KMeans(CLUSTERS, n_init=10, random_state=0).fit_predict(x))

    rng = np.random.default_rng(SEED)
    truth = float(
        np.mean([v_measure(b) - v_measure(a) for a, b in (_population_draw(rng) for _ in range(TRUTH_DRAWS))])
    )
    results = []
    for replication in range(REPLICATIONS):
        a, b = _population_draw(rng)
        draws = {
            label: model_draws(_TableModel(x), [suite], policy={}, count=HALF_SAMPLES, seed=replication)
            for label, x in (("a", a), ("b", b))
        }
        intervals = combine(draws, count=HALF_SAMPLES, pairs=[("a", "b")])
        results.append((intervals.deltas[("a", "b")]["Blobs"], intervals.scores["Blobs"]))
    return {"truth": truth, "results": results}


@pytest.mark.slow
def test_clustering_interval_covers_the_true_difference(clustering_replications: dict) -> None:
    """Nominal 95%: at least 90% of the replications' paired intervals hold the true difference (94% here;
    the item bootstrap of one k-means fit: 56%)."""
    truth = clustering_replications["truth"]
    deltas = [delta for delta, _ in clustering_replications["results"]]
    assert 5 < truth < 40  # a real difference, far from V-measure's bounds
    covered = np.mean([d["low"] <= truth <= d["high"] for d in deltas])
    assert covered >= 0.90, covered
    assert np.mean([d["high"] - d["low"] for d in deltas]) < 60  # not trivially wide


@pytest.mark.slow
def test_clustering_interval_holds_its_own_point(clustering_replications: dict) -> None:
    for delta, scores in clustering_replications["results"]:
        assert delta["low"] <= delta["delta"] <= delta["high"], delta
        for model in scores.values():
            assert model["low"] <= model["value"] <= model["high"], model
