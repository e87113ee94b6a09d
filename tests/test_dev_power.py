"""The dev sets' power (skadapt.tasks.dev_power): standard errors, the minimum detectable effect, chance
levels, the saturated / below-chance flags, the preflight's size-only line, and the reports that carry it."""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from skadapt.results.dev import DevSetPower
from skadapt.tasks.config import DevSets
from skadapt.tasks.dev import DevSet, build_dev_set, build_dev_sets
from skadapt.tasks.dev_power import (
    MDE_FACTOR,
    chance_level,
    dev_power,
    flag_lines,
    random_ndcg,
    set_power,
    size_line,
    size_mde,
)
from skadapt.tasks.dev_scores import EncodedSet
from skadapt.textsample import split_sentences
from tests.support.finetune_recipe import DATA, tiny_recipe

CORPUS = Path(__file__).parent / "data" / "sk_corpus.txt"
STS = DATA / "sk_dev_sts.jsonl"


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _sentences(count: int) -> list[str]:
    return split_sentences(CORPUS.read_text(encoding="utf-8"), "sk")[:count]


def _model(path: Path) -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(path), device="cpu")


def _triplets(correct: list[bool], dim: int = 8, seed: int = 0) -> EncodedSet:
    """Triplets whose positive (True) or negative (False) is the anchor itself, the other a random vector."""
    rng = np.random.default_rng(seed)
    anchor = rng.normal(size=(len(correct), dim))
    other = rng.normal(size=(len(correct), dim))
    right = np.asarray(correct)[:, None]
    embeddings = {
        "anchor": anchor,
        "positive": np.where(right, anchor, other),
        "negative": np.where(right, other, anchor),
    }
    return EncodedSet("triplets-0", "triplets", "triplets-0_cosine_accuracy", embeddings)


def test_the_standard_error_is_the_bootstrap_one_and_the_mde_follows() -> None:
    from scipy.stats import bootstrap

    correct = [i % 10 < 7 for i in range(120)]  # 70% right
    power = set_power(_triplets(correct), seed=1)
    values = np.asarray(correct, dtype=float)
    independent = bootstrap((values,), np.mean, n_resamples=4000, method="percentile", rng=5).standard_error
    analytic = math.sqrt(0.7 * 0.3 / len(values))  # the bootstrap se of a share is its binomial se
    assert power.score == pytest.approx(0.7) and power.size == 120
    assert power.se == pytest.approx(independent, rel=0.1) and power.se == pytest.approx(analytic, rel=0.1)
    assert power.mde == pytest.approx((1.96 + 0.84) * math.sqrt(2) * power.se, abs=1e-6)
    assert pytest.approx(3.9598, abs=1e-4) == MDE_FACTOR
    assert power.chance == 0.5 and not power.saturated and not power.below_chance
    assert power.summary.startswith(
        "triplets-0: 120 triplets, accuracy 0.700 ± 0.04"
    ) and power.summary.endswith("; ok")


def test_the_sts_standard_error_matches_scipys_paired_bootstrap() -> None:
    from scipy.stats import bootstrap, spearmanr

    rng = np.random.default_rng(3)
    gold = rng.uniform(size=80)
    first = rng.normal(size=(80, 6))
    second = first + rng.normal(scale=0.8, size=(80, 6)) * (1.2 - gold)[:, None]
    encoded = EncodedSet("sts-0", "sts", "m", {"first": first, "second": second}, gold=gold)
    power = set_power(encoded, seed=2)
    cosine = np.sum(first * second, axis=1) / np.linalg.norm(first, axis=1) / np.linalg.norm(second, axis=1)
    assert power.score == pytest.approx(spearmanr(gold, cosine).statistic, abs=1e-6)
    independent = bootstrap(
        (gold, cosine),
        lambda a, b: spearmanr(a, b).statistic,
        paired=True,
        vectorized=False,
        n_resamples=2000,
        method="percentile",
        rng=4,
    ).standard_error
    assert power.se == pytest.approx(independent, rel=0.15)
    assert power.chance == 0.0


@pytest.mark.parametrize(("relevant", "corpus"), [(1, 25), (3, 25), (2, 6), (12, 30)])
def test_random_ndcg_matches_a_brute_force_simulation(relevant: int, corpus: int) -> None:
    rng = np.random.default_rng(relevant * 100 + corpus)
    discounts = 1.0 / np.log2(np.arange(2, 12))
    ideal = discounts[: min(relevant, 10)].sum()
    gains = np.zeros(corpus)
    gains[:relevant] = 1.0
    runs = 20000
    simulated = np.mean(
        [gains[rng.permutation(corpus)[:10]] @ discounts[: min(10, corpus)] for _ in range(runs)]
    )
    assert random_ndcg(relevant, corpus) == pytest.approx(simulated / ideal, abs=0.006)


def test_chance_levels_per_kind() -> None:
    rng = np.random.default_rng(0)
    retrieval = EncodedSet(
        "retrieval-0",
        "retrieval",
        "m",
        {"query": rng.normal(size=(3, 4)), "corpus": rng.normal(size=(25, 4))},
        relevant=[np.array([0]), np.array([1, 2, 3]), np.array([4])],
        tie_rank=np.arange(25),
    )
    expected = (2 * random_ndcg(1, 25) + random_ndcg(3, 25)) / 3
    assert chance_level("retrieval", retrieval) == pytest.approx(expected)
    pairs = {"first": rng.normal(size=(8, 4)), "second": rng.normal(size=(8, 4))}
    labels = np.array([1, 0, 0, 1, 0, 0, 0, 1])
    assert chance_level("rte", EncodedSet("rte-0", "rte", "m", pairs, gold=labels)) == pytest.approx(3 / 8)
    assert chance_level("bitext", EncodedSet("bitext-0", "bitext", "m", pairs)) == pytest.approx(1 / 8)
    assert chance_level("triplets", _triplets([True])) == chance_level("nli", _triplets([True])) == 0.5
    classes = EncodedSet(
        "classification-0", "classification", "m", pairs, gold=np.array([2, 2, 2, 0, 1, 2, 1, 0])
    )
    assert chance_level("classification", classes) == pytest.approx(4 / 8)
    assert chance_level("clustering", classes) == 0.0 and chance_level("sts", classes) == 0.0
    assert chance_level("a-kind-added-later", classes) is None


def test_a_set_near_the_top_is_saturated_and_one_below_chance_is_flagged() -> None:
    near_top = set_power(_triplets([i % 20 != 0 for i in range(40)]), seed=0)  # 95% of 40: se ~0.034
    assert near_top.score == pytest.approx(0.95) and near_top.mde is not None and near_top.mde > 0.05
    assert near_top.saturated and not near_top.below_chance
    assert near_top.summary.endswith(": SATURATED, cannot rank candidates")
    below = set_power(_triplets([i % 4 == 0 for i in range(40)]), seed=0)
    assert below.below_chance and not below.saturated and below.summary.endswith("BELOW CHANCE (0.500)")
    [saturated, low] = flag_lines([near_top, below], "the starting model")
    assert saturated.startswith(
        "dev set triplets-0 is saturated for the starting model (accuracy 0.950: 0.050 below"
    )
    assert saturated.endswith("it cannot tell candidates apart; use harder negatives or a larger set")
    assert low.startswith(
        "dev set triplets-0 scores below chance for the starting model (accuracy 0.250, chance 0.500)"
    )


def test_built_sets_a_model_cannot_miss_or_cannot_get_right(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    sentences = _sentences(40)
    retrieval = _write(tmp_path / "qa.jsonl", [{"query": s, "positive": s} for s in sentences[:20]])
    triplets = _write(
        tmp_path / "triplets.jsonl",
        [
            {"anchor": a, "positive": p, "negative": a}
            for a, p in zip(sentences[20:30], sentences[30:], strict=True)
        ],
    )  # the negative is the anchor itself: always closer than the positive
    dev = DevSets(
        sets=[
            {"kind": "sts", "source": str(STS)},
            {"kind": "retrieval", "source": str(retrieval)},
            {"kind": "triplets", "source": str(triplets)},
        ]
    )
    sets = build_dev_sets(dev)  # no prompts: a query is its passage's exact text
    model = _model(tiny_models["unigram"])
    sts, found, wrong = dev_power(model, sets, seed=0)
    assert [p.name for p in (sts, found, wrong)] == ["sts-0", "retrieval-1", "triplets-2"]
    assert found.score == 1.0 and found.se == 0.0 and found.saturated and not found.below_chance
    assert found.chance == pytest.approx(random_ndcg(1, 20), abs=1e-6)
    assert found.summary == "retrieval-1: 20 queries, nDCG@10 1.000: SATURATED, cannot rank candidates"
    assert wrong.score == 0.0 and wrong.below_chance and not wrong.saturated
    assert sts.size == 240 and sts.se is not None and sts.se > 0 and "detects differences >= " in sts.summary
    assert sts.score == pytest.approx(sets[0].evaluator(model)[sets[0].metric], abs=1e-4)
    lines = flag_lines([sts, found, wrong], "the starting model")
    assert (
        "dev set retrieval-1 is saturated for the starting model (nDCG@10 1.000): it cannot tell candidates "
        "apart; add distractor passages or a larger set"
    ) in lines
    combined = build_dev_set(dev)  # the finetune stage's combined set: its parts, named as it names them
    assert [p.evaluator.name for p in combined.sets] == [
        "dev-sts-0",
        "dev-retrieval-1",
        "dev-triplets-2",
    ]
    assert build_dev_set(DevSets(kind="sts", source=str(STS))).sets[0].evaluator.name == "dev"


def test_the_power_reads_the_embeddings_the_evaluator_made(tiny_models: dict[str, Path]) -> None:
    from skadapt.tasks.embedding_memo import memoized

    dev = build_dev_set(DevSets(kind="sts", source=str(STS)))
    model = _model(tiny_models["unigram"])
    with memoized(model):
        before = dev.evaluator(model)
        misses = model.encode_memo.misses
        [power] = dev_power(model, dev.sets)
        assert model.encode_memo.misses == misses and model.encode_memo.hits > 0  # no text encoded again
    assert "encode" not in vars(model) and not hasattr(model, "encode_memo")  # the model's own encode back
    assert power.score == pytest.approx(before[dev.metric], abs=2e-6)


def test_a_kind_without_per_example_scores_gets_an_entry_not_an_error() -> None:
    class Clusters:
        name = "clustering-3"

    dev_set = DevSet(
        Clusters(), "clustering-3_v_measure", 50, [{"name": "clustering-3", "kind": "clustering"}]
    )
    [entry] = dev_power(None, [dev_set])
    assert entry.kind == "clustering" and entry.size == 50 and entry.score is None and not entry.saturated
    assert (
        entry.summary
        == "clustering-3: 50 examples, no per-example scores for kind clustering: power not computed"
    )
    assert flag_lines([entry], "the starting model") == []


def test_the_size_only_estimate() -> None:
    assert size_mde("triplets", 100) == pytest.approx(MDE_FACTOR * math.sqrt(0.75 * 0.25 / 100))
    assert size_mde("sts", 90) == pytest.approx(MDE_FACTOR * (1 - 0.75**2) * math.sqrt(1.06 / 87))
    assert size_mde("retrieval", 60) == pytest.approx(MDE_FACTOR * 0.3 / math.sqrt(60))
    assert size_mde("clustering", 60) is None and size_mde("sts", 3) is None
    assert size_line("sts", 90) == "dev sts (90 pairs): detects differences >= ~0.19"
    assert size_line("retrieval", 60) == "dev retrieval (60 queries): detects differences >= ~0.15"
    assert size_line("clustering", 60) == "dev clustering (60 examples)"


def test_the_preflight_shows_each_dev_sets_size_estimate(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from skadapt.cli import app
    from skadapt.preflight import preflight
    from skadapt.recipe import validate_recipe

    qa = _write(tmp_path / "qa.jsonl", [{"query": s, "positive": s} for s in _sentences(60)])
    dev = {"sets": [{"kind": "sts", "source": str(STS)}, {"kind": "retrieval", "source": str(qa)}]}
    data = tiny_recipe(tiny_models["unigram"], tmp_path / "run", dev=dev)
    checks = {c.input.split(":")[0]: c for c in preflight(validate_recipe(data), local=True)}
    sts, retrieval = checks["finetune.dev.sets.0 sts"], checks["finetune.dev.sets.1 retrieval"]
    assert sts.ok and sts.checked.endswith("; dev sts (240 pairs): detects differences >= ~0.12)")
    assert retrieval.ok and "dev retrieval (60 queries): detects differences >= ~0.15" in retrieval.checked
    import yaml

    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(path), "--check"], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    assert "dev sts (240 pairs): detects differences >= ~0.12" in result.output


def _one_passage(path: Path, count: int = 12) -> Path:
    """A retrieval set whose corpus is one passage: every model ranks it first (nDCG@10 1 for all)."""
    return _write(
        path, [{"query": s, "positive": "Jediná pasáž v celom korpuse."} for s in _sentences(count)]
    )


@pytest.mark.slow
def test_the_training_report_carries_the_starting_models_power(
    tiny_models: dict[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from skadapt.recipe import validate_recipe
    from skadapt.results import TrainingReport
    from skadapt.train.card import training_section
    from skadapt.train.stage import REPORT, finetune

    sets = [
        {"kind": "sts", "source": str(STS)},
        {"kind": "retrieval", "source": str(_one_passage(tmp_path / "qa.jsonl"))},
    ]
    dev = {"steps": 4, "select_best": True, "sets": sets}  # evaluated during training too
    data = tiny_recipe(tiny_models["unigram"], tmp_path / "run", dev=dev, epochs=1)
    recipe = validate_recipe(data)
    out = tmp_path / "model"
    out.mkdir()
    with caplog.at_level(logging.WARNING):
        finetune(recipe.context("finetune", str(tiny_models["unigram"]), out, tmp_path / "work"))
    report = json.loads((out / REPORT).read_text(encoding="utf-8"))
    sts, retrieval = report["dev"]["power"]
    assert [sts["name"], retrieval["name"]] == ["dev-sts-0", "dev-retrieval-1"]
    assert sts["score"] == pytest.approx(report["dev"]["before"]["dev-sts-0_spearman_cosine"], abs=2e-6)
    assert sts["se"] > 0 and sts["mde"] == pytest.approx(MDE_FACTOR * sts["se"], abs=1e-5)
    assert not sts["saturated"] and sts["saturated_for_all"] is False
    assert retrieval["score"] == 1.0 and retrieval["saturated"] and retrieval["saturated_for_all"]
    assert retrieval["chance"] == 1.0  # one passage: a random ranking finds it too
    history = report["dev"]["history"]
    assert [h["step"] for h in history] == [4, 8, 12] and all(
        set(h["sets"]) == {"dev-sts-0", "dev-retrieval-1"} for h in history
    )
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert (
        "finetune: dev set dev-retrieval-1 is saturated for the starting model (nDCG@10 1.000): it cannot "
        "tell candidates apart; add distractor passages or a larger set"
    ) in warnings
    assert any(
        w.startswith(
            "finetune: dev set dev-retrieval-1 scored the top (nDCG@10 1.000) for the starting model, the 3 "
            "checkpoints scored and the final model: it chose nothing"
        )
        for w in warnings
    )
    typed = TrainingReport.read(out)
    assert typed is not None and typed.dev is not None
    assert [type(p) for p in typed.dev.power] == [DevSetPower, DevSetPower]
    card = "\n".join(training_section(typed, {}, None, []))
    assert "| dev set | kind | size | start score | detects ≥ | flag |" in card
    assert (
        "| dev-retrieval-1 | retrieval | 12 | 1.000 | 0.000 | saturated, at the top for every candidate |"
        in card
    )


def test_the_renorm_report_carries_the_input_models_power(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    from skadapt.renorm.card import renorm_section
    from skadapt.renorm.config import RenormConfig
    from skadapt.renorm.stage import renormalize
    from skadapt.results import RenormReport

    sts = _write(
        tmp_path / "sts.jsonl",
        [
            {"sentence1": a, "sentence2": b, "score": float(i % 6)}
            for i, (a, b) in enumerate(zip(_sentences(24)[::2], _sentences(24)[1::2], strict=True))
        ],
    )
    dev = DevSets(
        sets=[
            {"kind": "sts", "source": str(sts)},
            {"kind": "retrieval", "source": str(_one_passage(tmp_path / "qa.jsonl"))},
        ]
    )
    out = tmp_path / "out"
    out.mkdir()
    config = RenormConfig(corpus=str(CORPUS), samples=80, min_chars=20, projection_dims=[])
    renormalize(str(tiny_models["unigram"]), out, config, seed=3, dev=dev)
    report = json.loads((out / "renorm_report.json").read_text(encoding="utf-8"))
    selection = report["selection"]
    first, one = selection["power"]
    none = selection["candidates"][0]
    assert none["name"] == "none" and first["score"] == pytest.approx(none["scores"]["sts-0"], abs=1e-6)
    assert first["size"] == 12 and first["se"] > 0 and first["saturated_for_all"] is False
    assert one["name"] == "retrieval-1" and one["saturated"] and one["saturated_for_all"]
    typed = RenormReport.read(out)
    assert typed is not None and typed.selection is not None
    card = "\n".join(renorm_section(typed, {}))
    assert "| dev set | kind | size | input score | detects ≥ | flag |" in card
    assert (
        "| retrieval-1 | retrieval | 12 | 1.000 | 0.000 | saturated, at the top for every candidate |" in card
    )
