"""Fine-tuning that does no harm: WiSE-FT kept only beyond the noise on dev, the anchor, the last weights."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from skadapt.recipe import RecipeError, validate_recipe
from skadapt.train.interpolation import mix
from skadapt.train.stage import REPORT, finetune
from tests.test_finetune_train import DATA, recipe_data

CORPUS = Path(__file__).parent / "data" / "sk_corpus.txt"
DEV = {"kind": "sts", "source": str(DATA / "sk_dev_sts.jsonl"), "steps": 4}


def _embed(model: Path, texts: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(model), device="cpu").encode(texts, prompt="")


def _held_out() -> list[str]:
    return [line for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()][-20:]


def test_mix_interpolates_floats_and_keeps_integer_buffers() -> None:
    start = {"w": torch.zeros(2, 2), "ids": torch.arange(3)}
    tuned = {"w": torch.ones(2, 2), "ids": torch.arange(3)}
    mixed = mix(start, tuned, 0.3)
    assert torch.allclose(mixed["w"], torch.full((2, 2), 0.3))
    assert torch.equal(mixed["ids"], torch.arange(3))
    with pytest.raises(ValueError, match="shape"):
        mix(start, {"w": torch.ones(3), "ids": torch.arange(3)}, 0.5)


def test_interpolation_needs_a_dev_set(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match=r"interpolation .* add finetune.dev"):
        validate_recipe(recipe_data(tiny_models["unigram"], tmp_path, interpolation={}))


@pytest.mark.slow
def test_interpolation_keeps_the_fine_tuned_model_unless_a_mixture_beats_it_beyond_the_noise(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    base = tiny_models["unigram"]
    data = recipe_data(base, tmp_path / "run", dev=DEV, epochs=1, interpolation={"grid": [0.0, 0.5]})
    recipe = validate_recipe(data)
    out = tmp_path / "model"
    out.mkdir()
    summary = finetune(recipe.context("finetune", str(base), out, tmp_path / "work"))
    report = json.loads((out / REPORT).read_text(encoding="utf-8"))
    interpolation = report["interpolation"]
    scores = {s["alpha"]: s for s in interpolation["scores"]}
    assert list(scores) == [0.0, 0.5, 1.0]  # a = 1, the reference, is scored though not listed
    assert "interval" not in scores[1.0] and interpolation["replicates"] == 2000
    winners = [a for a, s in scores.items() if a != 1.0 and s["interval"][0] > 0]
    expected = max(winners, key=lambda a: scores[a]["score"], default=1.0)
    assert interpolation["chosen"] == summary["interpolation"] == expected
    for alpha, entry in scores.items():  # the difference from a = 1 lies in its interval
        if alpha != 1.0:
            low, high = entry["interval"]
            assert entry["difference"] == pytest.approx(entry["score"] - scores[1.0]["score"], abs=1e-5)
            assert low <= entry["difference"] <= high
    # a = 0 is the starting model: its dev score is the "before" score, as the evaluator computes it
    assert scores[0.0]["score"] == pytest.approx(report["dev"]["before"]["dev_spearman_cosine"], abs=1e-5)
    # the saved model is the kept mixture: its dev score is that grid point's
    assert report["dev"]["final"]["dev_spearman_cosine"] == pytest.approx(scores[expected]["score"], abs=1e-5)


@pytest.mark.slow
def test_interpolation_at_zero_gives_back_the_starting_model(tiny_models: dict[str, Path]) -> None:
    from sentence_transformers import SentenceTransformer

    from skadapt.train.interpolation import snapshot

    start = SentenceTransformer(str(tiny_models["unigram"]))
    before = snapshot(start)
    tuned = {k: v + 1.0 if v.is_floating_point() else v for k, v in before.items()}
    start.load_state_dict(mix(before, tuned, 0.0))
    texts = _held_out()
    assert np.abs(start.encode(texts) - _embed(tiny_models["unigram"], texts)).max() < 1e-5


@pytest.mark.slow
def test_anchor_keeps_the_model_near_its_start(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    base = tiny_models["unigram"]
    texts = _held_out()
    start = _embed(base, texts)
    drift = {}
    for name, extra in {
        "free": {},
        "anchored": {"anchor": {"corpus": str(CORPUS), "samples": 200, "weight": 50.0, "min_chars": 20}},
    }.items():
        out = tmp_path / name
        out.mkdir()
        data = recipe_data(base, tmp_path / f"run-{name}", epochs=2, learning_rate=3e-3, **extra)
        finetune(validate_recipe(data).context("finetune", str(base), out, tmp_path / f"work-{name}"))
        drift[name] = float(np.mean(1 - np.sum(_embed(out, texts) * start, axis=1)))
        report = json.loads((out / REPORT).read_text(encoding="utf-8"))
    anchor = next(d for d in report["datasets"] if d["name"] == "anchor")
    assert anchor["loss"] == "anchor_mse" and anchor["source"] == str(CORPUS)
    assert 0 < anchor["examples"] <= 200 and anchor["stats"]["weight"] == 50.0
    assert drift["anchored"] < 0.5 * drift["free"], drift


def test_anchor_sample_leaves_out_evaluation_texts(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    lines = [line for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    suite = tmp_path / "suite"
    suite.mkdir()
    rows = [{"text": line, "label": i % 2} for i, line in enumerate(lines[:10])]
    (suite / "c.jsonl").write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8"
    )
    (suite / "s.yaml").write_text("tasks:\n  - {name: C, type: Clustering, data: c.jsonl}\n")
    data = recipe_data(
        tiny_models["unigram"],
        tmp_path / "run",
        max_steps=2,
        anchor={"corpus": str(CORPUS), "samples": 10_000, "min_chars": 5},
    )
    data["evaluate"] = {"tasks": [str(suite / "s.yaml")]}
    out = tmp_path / "model"
    out.mkdir()
    finetune(validate_recipe(data).context("finetune", str(tiny_models["unigram"]), out, tmp_path / "work"))
    anchor = next(d for d in json.loads((out / REPORT).read_text())["datasets"] if d["name"] == "anchor")
    assert anchor["stats"]["dropped_eval_overlap"] >= 10


@pytest.mark.slow
def test_the_last_weights_are_kept_by_default(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    # training length = inference length, so that the last step's dev score is the final one
    data = recipe_data(tiny_models["unigram"], tmp_path / "run", dev=DEV, epochs=1, max_seq_length=128)
    recipe = validate_recipe(data)
    assert recipe.finetune is not None and recipe.finetune.dev is not None
    assert not recipe.finetune.dev.select_best
    out = tmp_path / "model"
    out.mkdir()
    finetune(recipe.context("finetune", str(tiny_models["unigram"]), out, tmp_path / "work"))
    report = json.loads((out / REPORT).read_text(encoding="utf-8"))
    # no checkpoint chosen and no dev evaluation during training: scored before and after only
    assert report["dev"]["best_checkpoint"] is None and report["dev"]["history"] == []
    assert report["steps"]["done"] == report["steps"]["planned"]


@pytest.mark.slow
def test_a_model_without_prompts_trains_end_to_end(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    from sentence_transformers import SentenceTransformer

    bare = tmp_path / "bare"
    shutil.copytree(tiny_models["unigram"], bare)
    config_path = bare / "config_sentence_transformers.json"
    config = json.loads(config_path.read_text())
    config["prompts"] = {}
    config_path.write_text(json.dumps(config))
    data = recipe_data(bare, tmp_path / "run", dev=DEV, epochs=1, interpolation={"grid": [0.0, 1.0]})
    data["finetune"]["anchor"] = {"corpus": str(CORPUS), "samples": 50, "min_chars": 20}
    out = tmp_path / "model"
    out.mkdir()
    finetune(validate_recipe(data).context("finetune", str(bare), out, tmp_path / "work"))
    report = json.loads((out / REPORT).read_text(encoding="utf-8"))
    assert all(set(d["prompts"].values()) <= {""} for d in report["datasets"])
    assert not any(SentenceTransformer(str(out)).prompts.values())


@pytest.mark.slow
def test_several_dev_sets_score_their_mean(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    triplets = tmp_path / "triplets.jsonl"
    rows = [json.loads(line) for line in (DATA / "sk_train_nli.jsonl").read_text().splitlines()[:60]]
    premises: dict[str, dict[str, str]] = {}
    for row in rows:
        premises.setdefault(row["premise"], {})[row["label"]] = row["hypothesis"]
    lines = [
        {"anchor": p, "positive": h["entailment"], "negative": h["contradiction"]}
        for p, h in premises.items()
        if "entailment" in h and "contradiction" in h
    ]
    triplets.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in lines), encoding="utf-8")
    dev = {
        "steps": 4,
        "sets": [{"kind": "sts", "source": DEV["source"]}, {"kind": "triplets", "source": str(triplets)}],
        "training_overlap": "keep",  # the triplets are training rows: scored anyway, this test is the mean
    }
    data = recipe_data(tiny_models["unigram"], tmp_path / "run", dev=dev, max_steps=4, max_seq_length=128)
    out = tmp_path / "model"
    out.mkdir()
    finetune(validate_recipe(data).context("finetune", str(tiny_models["unigram"]), out, tmp_path / "work"))
    final = json.loads((out / REPORT).read_text())["dev"]["final"]
    parts = [final["dev-sts-0_spearman_cosine"], final["dev-triplets-1_cosine_accuracy"]]
    assert final["sequential_score"] == pytest.approx(sum(parts) / 2, abs=1e-6)


def test_inline_dev_set_is_one_set(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    recipe = validate_recipe(recipe_data(tiny_models["unigram"], tmp_path, dev=DEV))
    assert recipe.finetune is not None and recipe.finetune.dev is not None
    assert [s.kind for s in recipe.finetune.dev.sets] == ["sts"] and recipe.finetune.dev.steps == 4


PARALLEL = Path(__file__).parents[1] / "data" / "demo_sk" / "train" / "parallel.jsonl"


def _bitext_pull(model: Path, start: Path, pairs: list[dict[str, str]]) -> float:
    """Mean cosine of the model's Slovak sides to the starting model's English sides (query prompt)."""
    return float(
        np.mean(np.sum(_embed(model, [p["sk"] for p in pairs]) * _embed(start, [p["en"] for p in pairs]), 1))
    )


@pytest.mark.slow
def test_parallel_anchor_pulls_each_side_to_the_start_s_translation(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    base = tiny_models["unigram"]
    pairs = [json.loads(line) for line in PARALLEL.read_text(encoding="utf-8").splitlines()]
    pull = {}
    for name, extra in {
        "free": {},
        "anchored": {
            "anchor": {"parallel": [{"source": str(PARALLEL), "columns": ["sk", "en"]}], "weight": 50.0}
        },
    }.items():
        out = tmp_path / name
        out.mkdir()
        data = recipe_data(base, tmp_path / f"run-{name}", epochs=2, learning_rate=3e-3, **extra)
        finetune(validate_recipe(data).context("finetune", str(base), out, tmp_path / f"work-{name}"))
        pull[name] = _bitext_pull(out, base, pairs)
        report = json.loads((out / REPORT).read_text(encoding="utf-8"))
    entry = next(d for d in report["datasets"] if d["name"] == "anchor_parallel")
    assert entry["loss"] == "anchor_mse" and entry["source"] == str(PARALLEL)
    assert entry["examples"] == 2 * len(pairs) and entry["stats"]["pairs"] == len(pairs)
    assert pull["anchored"] > pull["free"] + 0.05 and pull["anchored"] > _bitext_pull(base, base, pairs), pull


def test_parallel_anchor_targets_leave_out_evaluation_and_blank_pairs(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    from sentence_transformers import SentenceTransformer

    from skadapt.textsample import normalize_text
    from skadapt.train.anchor import AnchorError, build_anchor_datasets
    from skadapt.train.config import AnchorConfig

    rows = [
        {"sk": "Dobré ráno, susedka.", "en": "Good morning, neighbour."},
        {"sk": "Vlak mešká desať minút.", "en": "The train is ten minutes late."},
        {"sk": "  ", "en": "A blank side."},
        {"sk": "Text z hodnotenia.", "en": "An evaluation text."},
    ]
    source = tmp_path / "parallel.jsonl"
    source.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    model = SentenceTransformer(str(tiny_models["unigram"]), device="cpu")
    config = AnchorConfig(parallel=[{"source": str(source), "columns": ["sk", "en"]}])
    exclude = {normalize_text("An evaluation text.")}
    (dataset,) = build_anchor_datasets(config, model, seed=1, language="sk", exclude=exclude)
    assert dataset.data["text"] == [rows[0]["sk"], rows[0]["en"], rows[1]["sk"], rows[1]["en"]]
    assert dataset.stats | {"weight": 1.0} == {
        "pairs": 2,
        "texts": 4,
        "dropped_eval_overlap": 1,
        "blank": 1,
        "weight": 1.0,
    }
    english = model.encode([rows[0]["en"], rows[1]["en"]], prompt=dataset.prompts["text"])
    assert np.allclose(dataset.data["label"], np.repeat(english, 2, axis=0), atol=1e-6)
    with pytest.raises(AnchorError, match="no column 'cs'"):
        build_anchor_datasets(
            AnchorConfig(parallel=[{"source": str(source), "columns": ["cs", "en"]}]),
            model,
            seed=1,
            language="sk",
            exclude=set(),
        )
    with pytest.raises(ValueError, match="corpus, parallel or both"):
        AnchorConfig()
