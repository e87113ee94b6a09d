"""Hard negatives: mined sets checked against a brute-force ranking on the same embeddings, the cache,
SkMTEB's random same-domain negatives, the guided losses training on a tiny model, and bad options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sentence_transformers.util as st_util

from skadapt.config import RecipeError
from skadapt.recipe import validate_recipe
from skadapt.tasks.rows import TrainingDataError
from skadapt.train.config import FinetuneDataset
from skadapt.train.datasets import build_task_dataset
from skadapt.train.loading import load_model
from skadapt.train.mining import effective_range_max, sequence_length
from skadapt.train.negatives import add_hard_negatives, cache_dir
from skadapt.train.negatives_config import HardNegativesConfig
from skadapt.train.stage import REPORT, finetune
from tests.support.finetune_recipe import tiny_recipe

QA = Path(__file__).parents[1] / "data" / "demo_sk" / "train" / "qa.jsonl"
STS_DEV = Path(__file__).parent / "data" / "finetune" / "sk_dev_sts.jsonl"


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "cache"))


def qa_rows(count: int) -> list[dict[str, str]]:
    return [json.loads(line) for line in QA.read_text(encoding="utf-8").splitlines()[:count]]


def write_pairs(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    return path


def pairs_entry(source: Path, **hard: Any) -> FinetuneDataset:
    return FinetuneDataset(
        name="qa",
        kind="pairs",
        source=str(source),
        columns={"anchor": "question", "positive": "passage"},
        hard_negatives=hard,
    )


def built(entry: FinetuneDataset, model: Any) -> Any:
    dataset = build_task_dataset(entry)
    dataset.resolve_prompts(model.prompts)
    return dataset


def mine(entry: FinetuneDataset, model: Any, model_dir: Path, **kwargs: Any) -> list[Any]:
    assert entry.hard_negatives is not None
    options = {"max_seq_length": 64, "seed": 7, "test_texts": {}, **kwargs}
    return add_hard_negatives(
        built(entry, model),
        entry.hard_negatives,
        starting_model=model,
        starting_ref=str(model_dir),
        **options,
    )


def above_margin(score: float, lowest: float, config: HardNegativesConfig) -> bool:
    if config.absolute_margin is not None and score + config.absolute_margin > lowest:
        return True
    return config.relative_margin is not None and score > lowest - abs(lowest) * config.relative_margin


def brute_force(
    model: Any, dataset: Any, corpus: list[str], config: HardNegativesConfig
) -> tuple[dict[str, list[int]], dict[str, int], list[str], np.ndarray, np.ndarray]:
    """Rank every candidate for every anchor with plain numpy on the model's embeddings, apply the rules
    one candidate at a time; returns per anchor the eligible candidates in rank order, and the counts."""
    anchors, positives = dataset.data["anchor"], dataset.data["positive"]
    candidates = list(dict.fromkeys(corpus + positives))
    unique = list(dict.fromkeys(anchors))
    own: dict[str, set[int]] = {a: set() for a in unique}
    for anchor, positive in zip(anchors, positives, strict=True):
        own[anchor].add(candidates.index(positive))
    encode = {"batch_size": config.batch_size, "normalize_embeddings": True, "convert_to_numpy": True}
    with sequence_length(model, 64):  # mining encodes at the training length
        queries = model.encode(unique, prompt=dataset.prompts["anchor"], **encode)
        docs = model.encode(candidates, prompt=dataset.prompts["positive"], **encode)
    widest = max(len(v) for v in own.values())
    range_max = effective_range_max(config, widest)
    counts = dict.fromkeys(("ranked", "positive", "margin", "max_score", "out_of_range", "eligible"), 0)
    eligible: dict[str, list[int]] = {}
    for q, anchor in enumerate(unique):
        scores = docs @ queries[q]
        lowest = min(float(scores[i]) for i in own[anchor])
        window = sorted(range(len(candidates)), key=lambda i: -scores[i])[: range_max + widest]
        counts["ranked"] += len(window)
        left = []
        for i in window:
            score = float(scores[i])
            if i in own[anchor]:
                counts["positive"] += 1
            elif above_margin(score, lowest, config):
                counts["margin"] += 1
            elif config.max_score is not None and score > config.max_score:
                counts["max_score"] += 1
            else:
                left.append(i)
        kept = left[:range_max][config.range_min :]
        counts["out_of_range"] += len(left) - len(kept)
        counts["eligible"] += len(kept)
        eligible[anchor] = kept
    return eligible, counts, candidates, queries, docs


@pytest.mark.parametrize(
    "options",
    [
        {"relative_margin": 0.004, "num_negatives": 2, "range_max": 12},
        {"relative_margin": None, "absolute_margin": 0.002, "max_score": 0.985, "range_min": 1},
    ],
    ids=["relative", "absolute+max_score+range_min"],
)
def test_mined_negatives_exclude_the_positive_and_everything_above_the_margin(
    tiny_models: dict[str, Path], tmp_path: Path, options: dict[str, Any], cpu_only: None
) -> None:
    rows = qa_rows(40)
    rows.append({"question": rows[0]["question"], "passage": rows[1]["passage"]})  # two positives, one anchor
    source = write_pairs(tmp_path / "qa.jsonl", rows)
    extra = [json.loads(line)["passage"] for line in QA.read_text(encoding="utf-8").splitlines()[40:70]]
    corpus = write_pairs(tmp_path / "corpus.jsonl", [{"text": t} for t in extra])
    entry = pairs_entry(source, corpus=str(corpus), **options)
    config = entry.hard_negatives
    assert config is not None
    model = load_model(str(tiny_models["unigram"]))
    test_texts = {"SomeTask": [extra[0], extra[5]]}  # evaluation test texts are never candidates
    parts = mine(entry, model, tiny_models["unigram"], test_texts=test_texts)

    dataset = built(entry, model)
    remaining = [t for t in extra if t not in test_texts["SomeTask"]]
    eligible, counts, candidates, queries, docs = brute_force(model, dataset, remaining, config)
    summary = parts[0].stats["hard_negatives"]
    assert summary["corpus"] == {"source": str(corpus), "texts": 28, "dropped_eval_overlap": 2}
    assert summary["removed"] == {k: counts[k] for k in ("positive", "margin", "max_score", "out_of_range")}
    assert (summary["ranked"], summary["eligible"]) == (counts["ranked"], counts["eligible"])
    assert summary["removed"]["margin"] + summary["removed"].get("max_score", 0) > 0  # the rules did remove

    mined = parts[0]
    columns = [c for c in mined.columns if c.startswith("negative")]
    assert len(columns) == config.num_negatives
    assert mined.prompts[columns[0]] == mined.prompts["positive"] == "passage: "
    positives: dict[str, set[str]] = {}
    for anchor, positive in zip(dataset.data["anchor"], dataset.data["positive"], strict=True):
        positives.setdefault(anchor, set()).add(positive)
    unique = list(dict.fromkeys(dataset.data["anchor"]))
    for row in range(len(mined)):
        anchor = mined.data["anchor"][row]
        negatives = [mined.data[c][row] for c in columns]
        assert not set(negatives) & positives[anchor]  # never the positive itself (nor another one)
        assert not set(negatives) & set(test_texts["SomeTask"])
        # sampling top: exactly the best-ranked eligible candidates, in rank order
        assert [candidates.index(n) for n in negatives] == eligible[anchor][: config.num_negatives]
        query = queries[unique.index(anchor)]
        lowest = min(float(docs[candidates.index(p)] @ query) for p in positives[anchor])
        for negative in negatives:
            score = float(docs[candidates.index(negative)] @ query)
            if config.relative_margin is not None:
                assert score <= lowest - abs(lowest) * config.relative_margin + 1e-6
            if config.absolute_margin is not None:
                assert score + config.absolute_margin <= lowest + 1e-6
            if config.max_score is not None:
                assert score <= config.max_score + 1e-6
    short = {a for a in unique if len(eligible[a]) < config.num_negatives}
    assert summary["short_anchors"] == len(short)
    without = sum(a in short for a in dataset.data["anchor"])
    assert summary["pairs_without_negatives"] == without
    if without:
        assert parts[-1].name == "qa_pairs" and len(parts[-1]) == without
    assert len(mined) == len(dataset) - without
    assert len(summary["sample"]) == min(3, len(mined))
    assert set(summary["sample"][0]) == {"anchor", "positive", "negatives", "scores"}


def test_the_mined_set_is_cached_and_reused(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real = st_util.mine_hard_negatives

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(st_util, "mine_hard_negatives", counted)
    source = write_pairs(tmp_path / "qa.jsonl", qa_rows(30))
    entry = pairs_entry(source, relative_margin=None)
    model = load_model(str(tiny_models["unigram"]))
    first = mine(entry, model, tiny_models["unigram"])
    [stored] = cache_dir().glob("*.npz")
    mtime = stored.stat().st_mtime_ns
    second = mine(entry, model, tiny_models["unigram"])
    assert len(calls) == 1  # no second mining
    assert stored.stat().st_mtime_ns == mtime
    assert not first[0].stats["hard_negatives"]["cached"] and second[0].stats["hard_negatives"]["cached"]
    assert first[0].data == second[0].data
    assert second[0].stats["hard_negatives"]["removed"] == first[0].stats["hard_negatives"]["removed"]

    mine(pairs_entry(source, relative_margin=None, num_negatives=2), model, tiny_models["unigram"])
    mine(entry, model, tiny_models["unigram"], max_seq_length=32)  # another training length
    assert len(calls) == 3 and len(list(cache_dir().glob("*.npz"))) == 3


def test_random_same_domain_negatives_are_seeded_and_never_the_positive(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(st_util, "mine_hard_negatives", None)  # no model ranks anything
    rows = qa_rows(25)
    source = write_pairs(tmp_path / "qa.jsonl", rows)
    entry = pairs_entry(source, strategy="random_same_domain", num_negatives=3)
    model = load_model(str(tiny_models["unigram"]))
    [dataset] = mine(entry, model, tiny_models["unigram"])
    assert dataset.columns == ["anchor", "positive", "negative_1", "negative_2", "negative_3"]
    passages = {r["passage"] for r in rows}
    for row in range(len(dataset)):
        negatives = [dataset.data[f"negative_{i}"][row] for i in (1, 2, 3)]
        assert dataset.data["positive"][row] not in negatives and len(set(negatives)) == 3
        assert set(negatives) <= passages
    again = mine(
        pairs_entry(source, strategy="random_same_domain", num_negatives=3),
        model,
        tiny_models["unigram"],
        seed=8,
    )
    assert again[0].data != dataset.data  # another seed, other draws
    summary = dataset.stats["hard_negatives"]
    assert summary["removed"] == {"positive": 25} and summary["strategy"] == "random_same_domain"
    assert "scores" not in summary["sample"][0]


def recipe_data(
    model: Path, run_dir: Path, datasets: list[dict[str, Any]], **finetune: Any
) -> dict[str, Any]:
    return tiny_recipe(model, run_dir, datasets, **{"epochs": 1, "save_steps": 2, **finetune})


def qa_dataset(source: Path, **extra: Any) -> dict[str, Any]:
    return {
        "name": "qa",
        "kind": "pairs",
        "source": str(source),
        "columns": {"anchor": "question", "positive": "passage"},
        **extra,
    }


@pytest.mark.slow
@pytest.mark.parametrize("loss", ["gist", "cached_gist"])
def test_guided_losses_train_with_a_frozen_copy_of_the_starting_model(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loss: str
) -> None:
    import torch

    import skadapt.train.stage as stage

    guides: list[Any] = []
    real = stage.load_guide

    def kept(*args: Any, **kwargs: Any) -> Any:
        guides.append(real(*args, **kwargs))
        return guides[-1]

    monkeypatch.setattr(stage, "load_guide", kept)
    source = write_pairs(tmp_path / "qa.jsonl", qa_rows(48))
    hard = {"relative_margin": None, "num_negatives": 1 if loss == "gist" else 2}
    data = recipe_data(
        tiny_models["unigram"],
        tmp_path / "run",
        [qa_dataset(source, loss=loss, hard_negatives=hard)],
        gist={"margin_strategy": "relative", "margin": 0.05},
        mini_batch_size=4,
        dev={"kind": "sts", "source": str(STS_DEV), "steps": 2, "select_best": True},
        interpolation={"grid": [0.0, 0.5, 1.0]},
    )
    out = tmp_path / "model"
    out.mkdir()
    finetune(validate_recipe(data).context("finetune", str(tiny_models["unigram"]), out, tmp_path / "work"))
    report = json.loads((out / REPORT).read_text(encoding="utf-8"))
    assert report["losses"] == {"qa": loss}
    assert report["steps"]["done"] == 6 and all(np.isfinite(p["loss"]) for p in report["loss_curve"])
    [entry] = report["datasets"]
    assert entry["stats"]["hard_negatives"]["pairs_with_negatives"] == 48
    assert len(entry["columns"]) == 2 + hard["num_negatives"]
    # the do-no-harm machinery runs unchanged: best checkpoint and WiSE-FT chosen on dev
    assert report["dev"]["best_checkpoint"] is not None and report["interpolation"]["chosen"] in (
        0.0,
        0.5,
        1.0,
    )
    [guide] = guides
    assert not guide.training and not any(p.requires_grad for p in guide.parameters())
    start = load_model(str(tiny_models["unigram"]))
    for (name, value), original in zip(guide.state_dict().items(), start.state_dict().values(), strict=True):
        assert torch.equal(value.cpu(), original), name  # the guide never moved


def test_bad_hard_negative_options_give_clear_errors(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    nli = {"name": "nli", "kind": "nli", "source": "x.jsonl", "hard_negatives": {}}
    with pytest.raises(
        RecipeError, match="dataset 'nli' is of kind 'nli'; use it on a dataset of kind pairs"
    ):
        validate_recipe(recipe_data(tiny_models["unigram"], tmp_path, [nli]))
    cases = [
        ({"range_min": 5, "range_max": 3}, "range_min \\(5\\) must be smaller than range_max \\(3\\)"),
        ({"num_negatives": 4, "range_min": 2, "range_max": 5}, "num_negatives \\(4\\) does not fit"),
        (
            {"strategy": "random_same_domain", "model": "x"},
            "random_same_domain .* model do\\(es\\) not apply",
        ),
        ({"relative_margin": 1.5}, "relative_margin"),
        ({"sampling": "best"}, "sampling"),
    ]
    for hard, message in cases:
        with pytest.raises(RecipeError, match=message):
            validate_recipe(
                recipe_data(tiny_models["unigram"], tmp_path, [qa_dataset(Path("x"), hard_negatives=hard)])
            )
    with pytest.raises(RecipeError, match="loss gist takes one negative per anchor"):
        validate_recipe(
            recipe_data(
                tiny_models["unigram"],
                tmp_path,
                [qa_dataset(Path("x"), loss="gist", hard_negatives={"num_negatives": 2})],
            )
        )
    with pytest.raises(RecipeError, match="maps a negative column and asks for hard_negatives"):
        validate_recipe(
            recipe_data(
                tiny_models["unigram"],
                tmp_path,
                [
                    qa_dataset(
                        Path("x"),
                        columns={"anchor": "q", "positive": "p", "negative": "n"},
                        hard_negatives={},
                    )
                ],
            )
        )
    clash = [qa_dataset(Path("x"), hard_negatives={}), {**qa_dataset(Path("y")), "name": "qa_pairs"}]
    with pytest.raises(RecipeError, match="'qa_pairs' is reserved for the pairs of dataset 'qa'"):
        validate_recipe(recipe_data(tiny_models["unigram"], tmp_path, clash))


def test_a_gist_loss_with_many_negatives_is_refused_before_training(tmp_path: Path) -> None:
    from skadapt.train.datasets import TaskDataset
    from skadapt.train.losses import check_loss

    data = {c: ["a"] for c in ("anchor", "positive", "negative_1", "negative_2")}
    dataset = TaskDataset("qa", "pairs", "gist", list(data), data, {})
    with pytest.raises(TrainingDataError, match="loss 'gist' takes \\(anchor, positive\\[, negative\\]\\)"):
        check_loss(dataset)
