"""Renorm's projection candidates: dev scores from embeddings equal the evaluators on the model with the
candidate appended, the noise rule, the kept model in plain sentence-transformers, the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from skadapt.renorm.config import RenormConfig, RenormError, default_projection_dims, projection_dims
from skadapt.renorm.stage import CandidateMap, candidate_maps, choose
from skadapt.tasks.config import DevSets
from skadapt.tasks.dev import build_dev_sets
from skadapt.tasks.dev_scores import EncodedSet, encode_dev_set, example_values, set_metric
from skadapt.textsample import split_sentences
from tests.test_dev_sets import _rows, _write
from tests.test_finetune_train import DATA

CORPUS = Path(__file__).parent / "data" / "sk_corpus.txt"
NLI = DATA / "sk_train_nli.jsonl"
STS = DATA / "sk_dev_sts.jsonl"


def _dev_of_every_kind(tmp_path: Path) -> DevSets:
    """sts, retrieval (premise -> its entailed hypothesis), nli triplets and rte, from the fixture data."""
    nli = _rows(NLI)[:150]
    qa = [{"query": r["premise"], "positive": r["hypothesis"]} for r in nli if r["label"] == "entailment"]
    rte = [
        {"premise": r["premise"], "hypothesis": r["hypothesis"], "label": r["label"]}
        for r in nli
        if r["label"] != "neutral"
    ]
    return DevSets(
        sets=[
            {"kind": "sts", "source": str(STS)},
            {"kind": "retrieval", "source": str(_write(tmp_path / "qa.jsonl", qa))},
            {"kind": "nli", "source": str(_write(tmp_path / "nli.jsonl", nli))},
            {"kind": "rte", "source": str(_write(tmp_path / "rte.jsonl", rte))},
        ]
    )


def _corpus_embeddings(model: Any) -> tuple[np.ndarray, np.ndarray]:
    """mu (no prompt) and the basis embeddings (each prompt) of the corpus fixture's sentences."""
    sentences = split_sentences(CORPUS.read_text(encoding="utf-8"), "sk")[:120]
    plain = model.encode(sentences, prompt="")
    prompted = np.concatenate([model.encode(sentences, prompt=p) for p in ("passage: ", "query: ")])
    return plain.astype(np.float64).mean(axis=0), prompted


def test_dev_scores_from_embeddings_equal_the_evaluators_on_the_appended_model(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    """Each dev set encoded once; every candidate's per-set metric, computed from the embeddings, equals
    what the sentence-transformers evaluator reports on the model with the candidate's modules appended."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(tiny_models["unigram"]), device="cpu")
    sets = build_dev_sets(_dev_of_every_kind(tmp_path), 32, dict(model.prompts))
    encoded = [encode_dev_set(model, dev_set) for dev_set in sets]
    assert [e.kind for e in encoded] == ["sts", "retrieval", "triplets", "rte"]
    mu, basis = _corpus_embeddings(model)
    maps, energy = candidate_maps(mu, [24, 8], basis)
    assert [m.name for m in maps] == [
        "none", "r1", "r2", "proj-24", "proj-8", "r1+proj-24", "r1+proj-8", "r2+proj-24", "r2+proj-8"
    ]  # fmt: skip
    assert energy is not None and 0 < energy["none"][8] < energy["none"][24] < 1
    texts = list(sets[0].evaluator.sentences1[:40])
    base = model.encode(texts, batch_size=64)
    checked = 0
    for candidate in maps:
        modules = candidate.modules()
        for module in modules:
            model.append(module)
        try:
            assert model.get_embedding_dimension() == candidate.dimension
            appended = model.encode(texts, batch_size=64)  # the same batch: the same transformer outputs
            mapped = base if candidate.name == "none" else candidate(base)
            assert np.abs(appended - mapped).max() < 1e-6, candidate.name
            for dev_set, enc in zip(sets, encoded, strict=True):
                expected = dev_set.evaluator(model)[dev_set.metric]
                mine = set_metric(enc, example_values(enc, None if candidate.name == "none" else candidate))
                # float32 noise (batch padding, float32 vs float64 cosines) can swap two near-tied examples
                # of this tiny random model: one swap moves Spearman or AP by ~1e-4 here
                assert mine == pytest.approx(expected, abs=1e-3), (candidate.name, enc.name)
                checked += 1
        finally:
            for _ in modules:
                del model[-1]
    assert checked == 4 * 9


def _sts_set(rng: np.random.Generator, n: int, noise: float, gold: np.ndarray | None = None) -> EncodedSet:
    """Pairs whose signal lies in dims 0-7 (cosine ~ gold) plus ``noise`` in dims 8-31."""
    gold = rng.uniform(0, 1, n) if gold is None else gold
    a = rng.normal(size=(n, 8))
    other = rng.normal(size=(n, 8))
    b = gold[:, None] * a + (1 - gold[:, None]) * other
    first = np.hstack([a / np.linalg.norm(a, axis=1, keepdims=True), noise * rng.normal(size=(n, 24))])
    second = np.hstack([b / np.linalg.norm(b, axis=1, keepdims=True), noise * rng.normal(size=(n, 24))])
    embeddings = {"first": first.astype(np.float32), "second": second.astype(np.float32)}
    return EncodedSet("sts-0", "sts", "sts-0_spearman_cosine", embeddings, gold=gold)


def _corpus(rng: np.random.Generator) -> np.ndarray:
    """Corpus embeddings: almost all their energy in dims 0-7."""
    x = np.hstack([rng.normal(size=(400, 8)), 0.05 * rng.normal(size=(400, 24))])
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_a_projection_that_clearly_wins_is_kept_and_says_why() -> None:
    rng = np.random.default_rng(0)
    corpus = _corpus(rng)
    sets = [_sts_set(rng, 200, noise=0.5)]
    maps, _ = candidate_maps(corpus.mean(axis=0), [8], corpus)
    candidates, choice, reason = choose(sets, maps, seed=1)
    scores = {c.name: c for c in candidates}
    assert scores["proj-8"].mean > scores["none"].mean + 0.2  # the noise dims are gone
    assert choice.endswith("proj-8") and scores[choice].beats_none
    chosen = scores[choice]
    assert chosen.interval is not None and 0 < chosen.interval[0] < chosen.difference < chosen.interval[1]
    assert reason.startswith(f"{choice} beats none by +{100 * chosen.difference:.2f} [")
    assert candidates[0].interval is None and candidates[0].difference is None
    # the looser one-sided bounds lie between the selection's own bound and the difference, 90% above 95%
    bounds = chosen.lower_bounds
    assert bounds is not None and candidates[0].lower_bounds is None
    assert chosen.interval[0] <= bounds["95%"] <= bounds["90%"] <= chosen.difference


def test_differences_within_the_noise_keep_none() -> None:
    """Gold scores unrelated to the embeddings: every candidate differs from none by chance only. Over 30
    such dev sets the rule (family-wise 95%, one-sided) keeps something at most rarely."""
    kept = []
    for seed in range(30):
        rng = np.random.default_rng(100 + seed)
        corpus = _corpus(rng)
        data = _sts_set(rng, 80, noise=0.3)
        data.gold = rng.uniform(0, 1, 80)  # no relation to the embeddings
        maps, _ = candidate_maps(corpus.mean(axis=0), [16, 8], corpus)
        candidates, choice, reason = choose([data], maps, seed=seed)
        kept.append(choice)
        if choice == "none":
            assert reason.startswith("no candidate beats none beyond the noise (best: ")
            assert not any(c.beats_none for c in candidates)
    assert sum(choice != "none" for choice in kept) <= 3, kept


def test_default_projection_dims_and_their_errors() -> None:
    assert default_projection_dims(384) == [256, 128]
    assert default_projection_dims(768) == [512, 256]
    assert default_projection_dims(1024) == [672, 352]
    assert default_projection_dims(32) == [24, 8]
    assert projection_dims(RenormConfig(projection_dims=[64, 192]), 384) == [192, 64]
    assert projection_dims(RenormConfig(projection_dims=[]), 384) == []
    with pytest.raises(RenormError, match=r"renorm.projection_dims \[384, 64\]: 384 is not below"):
        projection_dims(RenormConfig(projection_dims=[384, 64]), 384)
    with pytest.raises(ValueError, match="named twice"):
        RenormConfig(projection_dims=[64, 64])


def test_a_kept_projection_is_a_plain_sentence_transformers_model(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the rule keeps r2+proj-8 the stage saves Dense (R2), Dense (projection), Normalize: vanilla
    sentence-transformers loads it and its vectors equal the candidate's map of the input's; recorded
    Matryoshka dimensions at or above 8 are dropped; the report says what and why."""
    from sentence_transformers import SentenceTransformer

    from skadapt.modeldir import finalize_model_dir, matryoshka_dims_of, record_matryoshka_dims
    from skadapt.renorm import stage

    source = tmp_path / "source"
    SentenceTransformer(str(tiny_models["unigram"]), device="cpu").save(str(source))
    finalize_model_dir(source)  # as every stage saves a model: document prompt = passage prompt
    record_matryoshka_dims(source, [16, 4])
    real = stage._decide
    monkeypatch.setattr(stage, "_decide", lambda candidates: ("r2+proj-8", real(candidates)[1]))
    dev = DevSets(kind="sts", source=str(STS))
    out = tmp_path / "out"
    out.mkdir()
    config = RenormConfig(corpus=str(CORPUS), samples=80, min_chars=20, projection_dims=[16, 8])
    result = stage.renormalize(str(source), out, config, seed=3, dev=dev)
    assert result.kept and result.method == "r2+proj-8"
    assert (result.dimension, result.output_dimension) == (32, 8)
    modules = json.loads((out / "modules.json").read_text())
    assert [m["type"] for m in modules[-3:]] == [
        "sentence_transformers.models.Dense",
        "sentence_transformers.models.Dense",
        "sentence_transformers.models.Normalize",
    ]
    assert matryoshka_dims_of(out) == [4]
    report = json.loads((out / "renorm_report.json").read_text())
    selection = report["selection"]
    assert [c["name"] for c in selection["candidates"]][:5] == ["none", "r1", "r2", "proj-16", "proj-8"]
    assert selection["basis"]["prompts"] == ["passage: ", "query: "] and selection["basis"]["texts"] == 80
    assert selection["replicates"] == stage.REPLICATES and selection["confidence"] == stage.CONFIDENCE
    assert list(report["seconds"]) == ["sample", "encode", "select"]
    texts = [r["sentence1"] for r in _rows(STS)[:12]]
    loaded = SentenceTransformer(str(out), device="cpu", trust_remote_code=False)
    vectors = loaded.encode(texts, prompt="")
    assert vectors.shape == (12, 8)
    # the same map, rebuilt from the saved mu and the basis of the sample's embeddings
    base = SentenceTransformer(str(source), device="cpu")
    weight = loaded[-3].linear.weight.detach().numpy()
    projection = loaded[-2].linear.weight.detach().numpy()
    mu = np.load(out / "renorm_mu.npy")
    unit = mu / np.linalg.norm(mu)
    assert np.allclose(weight, np.eye(32) - np.outer(unit, unit), atol=1e-6)
    expected = CandidateMap("r2+proj-8", 8, weight, np.zeros(32), projection)(base.encode(texts, prompt=""))
    assert np.abs(vectors - expected).max() < 1e-5
    assert np.allclose(projection @ projection.T, np.eye(8), atol=1e-5)  # orthonormal basis rows
    # the card says what was kept and why, with every candidate's difference to none
    from skadapt.renorm.card import renorm_section
    from skadapt.results.renorm import RenormReport

    card = "\n".join(renorm_section(RenormReport.model_validate(report), {}))
    assert "R2: remove each embedding's component along mu-hat" in card
    assert "then projection on the top 8 directions" in card and "embedding dimension 32 -> 8" in card
    assert f"`r2+proj-8`: {selection['reason']}" in card and "| r2+proj-8 | 8 |" in card
    # the dims tiers of a projected parent: the asked dimensions at or above its own are skipped
    from skadapt.export.dims import ExportError, fit_basis, tier_dims, write_dims_tier

    assert tier_dims([16, 8, 4], out, 8, hidden=32) == [4]
    with pytest.raises(ExportError, match="32 is not below the model's dimension 32"):
        tier_dims([32, 4], out, 8, hidden=32)
    tier = write_dims_tier(out, tmp_path / "dims-4", 4, 8, fit_basis(loaded, texts))
    assert tier["dimension"] == 4
    assert SentenceTransformer(str(tmp_path / "dims-4"), device="cpu").encode(texts).shape == (12, 4)


def test_candidates_need_dims_below_the_models(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    from skadapt.renorm.stage import renormalize

    config = RenormConfig(corpus=str(CORPUS), samples=20, min_chars=20, projection_dims=[32])
    with pytest.raises(RenormError, match="not below the model's dimension 32"):
        renormalize(str(tiny_models["unigram"]), tmp_path, config, dev=DevSets(kind="sts", source=str(STS)))


def test_the_basis_is_never_fitted_on_dev_text(tiny_models: dict[str, Path]) -> None:
    """Sample sentences that are dev texts (or sentences of them) stay out of the basis subset."""
    from sentence_transformers import SentenceTransformer

    from skadapt.renorm.stage import _sample_embeddings, dev_keys

    model = SentenceTransformer(str(tiny_models["unigram"]), device="cpu")
    dev = DevSets(kind="sts", source=str(STS))
    row = _rows(STS)[0]
    sentences = split_sentences(CORPUS.read_text(encoding="utf-8"), "sk")[:30]
    sample = [*sentences, row["sentence1"], "  " + row["sentence2"].upper()]  # as written, and folded
    prompts = ["passage: ", "query: "]
    embeddings, basis, report = _sample_embeddings(model, sample, "", prompts, 16, 1, dev_keys(dev, "sk"))
    assert embeddings.shape == (32, 32) and basis is not None and basis.shape == (60, 32)
    assert report == {
        "texts": 30,
        "prompts": prompts,
        "source": "the renorm corpus sample",
        "dropped_dev_overlap": 2,
    }
    assert np.allclose(basis[:30], model.encode(sentences, prompt="passage: "), atol=1e-5)
