"""The static tier trained on its parent (skadapt.export.static_train): it trains, saves, loads in plain
sentence-transformers and model2vec, agrees with its parent on held-out texts better than the distillation,
keeps evaluation texts out of its corpus, and bad options are clear errors."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from skadapt.export.config import ExportConfig, FitCorpus, StaticTraining
from skadapt.export.corpus import finetune_sources, fit_corpus, read_corpus
from skadapt.export.onnx import ExportError
from skadapt.export.stage import export_tiers, training_corpus
from skadapt.export.static import distill_static
from skadapt.export.static_train import train_static
from skadapt.sources import CorpusSource
from skadapt.tasks.backends import load_sentence_model
from skadapt.textsample import normalize_text
from tests.support.suite_fixtures import write_tiny_suite

pytest.importorskip("model2vec")

ROOT = Path(__file__).resolve().parents[1]
CORPUS = CorpusSource(source=str(ROOT / "data/demo_sk/train/sts.jsonl"), columns=["sentence1", "sentence2"])
"""Hand-written Slovak sentence pairs of the demo's training data."""
HELDOUT = ROOT / "data/demo_sk/train/sts_dev.jsonl"
"""The demo's STS dev set: written apart from the training pairs, never trained on here."""


def _heldout() -> list[str]:
    rows = [json.loads(line) for line in HELDOUT.read_text(encoding="utf-8").splitlines() if line.strip()]
    return sorted({r["sentence1"] for r in rows} | {r["sentence2"] for r in rows})


def _corpus(fit: FitCorpus, exclude: set[str] | None = None):
    return read_corpus(list(fit.sources or []), fit, exclude=exclude or set(), language="sk", seed=0)


@pytest.fixture(scope="module")
def trained(tiny_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory):
    training = StaticTraining(epochs=1)
    corpus = _corpus(FitCorpus(sources=[CORPUS]))
    out = tmp_path_factory.mktemp("static") / "trained"
    parent = load_sentence_model(str(tiny_models["unigram"]))
    report = train_static(parent, out, training, corpus, pca_dims=16, seed=0)
    return out, report, corpus


def test_trained_static_model_loads_in_plain_sentence_transformers_and_model2vec(trained) -> None:
    from model2vec import StaticModel
    from sentence_transformers import SentenceTransformer

    out, report, _ = trained
    modules = json.loads((out / "modules.json").read_text(encoding="utf-8"))
    assert [m["type"] for m in modules] == [
        "sentence_transformers.models.StaticEmbedding",
        "sentence_transformers.models.Normalize",
    ]
    texts = _heldout()
    plain = SentenceTransformer(str(out), device="cpu").encode(texts)
    own = StaticModel.from_pretrained(str(out)).encode(texts)
    assert plain.shape == own.shape == (len(texts), 16) == (len(texts), report["dimension"])
    assert np.abs(plain - own).max() < 1e-3  # <unk> is a zero row: model2vec drops it, the direction agrees
    assert report["vocabulary"] == StaticModel.from_pretrained(str(out)).embedding.shape[0]


def test_training_brings_the_static_model_closer_to_its_parent_on_held_out_texts(
    trained, tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    """Pairwise cosines on texts never trained on track the parent's far better than the distillation's."""
    out, _, _ = trained
    parent = load_sentence_model(str(tiny_models["unigram"]))
    distill_static(parent, tmp_path / "distilled", pca_dims=16, sif_coefficient=1e-4)
    texts = _heldout()
    upper = np.triu_indices(len(texts), 1)
    reference = parent.encode(texts, prompt="query: ")
    reference = (reference @ reference.T)[upper]

    def agreement(directory: Path) -> float:
        vectors = load_sentence_model(str(directory)).encode(texts, prompt="query: ")
        return float(np.corrcoef((vectors @ vectors.T)[upper], reference)[0, 1])

    assert agreement(out) > agreement(tmp_path / "distilled") + 0.15


def test_report_gives_corpus_prompt_epochs_and_the_cost_of_each_step(trained) -> None:
    _, report, corpus = trained
    assert report["method"] == "trained" and report["prompt"] == "query: " and report["epochs"] == 1
    assert report["corpus"]["texts"] == len(corpus.texts) > 600
    (source,) = report["corpus"]["sources"]
    assert source["columns"] == ["sentence1", "sentence2"] and source["texts_read"] == 660
    assert report["corpus"]["tokens_seen"] > 0 and report["corpus"]["token_occurrences"] > len(corpus.texts)
    assert set(report["seconds"]) == {"distill", "featurize", "fit", "train"}
    assert 0.5 < report["train_cosine"] <= 1.0


def test_the_fit_is_folded_exactly_and_the_run_is_reproducible(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    """No epochs: the saved table is the fitted one (its mean cosine to the targets is what the fit reached),
    and the same corpus and seed give the same table."""
    from safetensors.numpy import load_file

    training = StaticTraining(epochs=0)
    corpus = _corpus(FitCorpus(sources=[CORPUS], sentences=False))
    parent = load_sentence_model(str(tiny_models["unigram"]))
    first = train_static(parent, tmp_path / "a", training, corpus, pca_dims=None, seed=0)
    train_static(parent, tmp_path / "b", training, corpus, pca_dims=None, seed=0)
    assert "train" not in first["seconds"] and first["dimension"] == 32
    tables = [load_file(str(tmp_path / d / "model.safetensors"))["embeddings"] for d in ("a", "b")]
    assert np.array_equal(tables[0], tables[1])
    targets = parent.encode(corpus.texts, prompt="query: ")
    targets = targets - targets.mean(0)
    ours = load_sentence_model(str(tmp_path / "a")).encode(corpus.texts)
    cosine = (ours * targets).sum(1) / np.linalg.norm(targets, axis=1)
    assert abs(float(cosine.mean()) - first["train_cosine"]) < 0.02  # the plain form; the report is over both


def test_evaluation_texts_and_their_sentences_stay_out_of_the_corpus(tmp_path: Path) -> None:
    source = tmp_path / "texts.jsonl"
    rows = [
        {"text": "Prší a fúka vietor. Zajtra bude slnečno."},  # holds an evaluation sentence: left out
        {"text": "Hokejisti vyhrali finále."},  # an evaluation text (spacing and case aside): left out
        {"text": "Vlak mešká. Cestujúci čakajú na stanici."},  # kept, and its two sentences added
        {"text": "Most cez rieku je nový."},
    ]
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    fit = FitCorpus(sources=[CorpusSource(source=str(source))])
    exclude = {normalize_text("Hokejisti vyhrali  FINÁLE."), normalize_text("Zajtra bude slnečno.")}
    corpus = _corpus(fit, exclude)
    assert corpus.dropped_eval_overlap == 2 and corpus.sentences_added == 2
    assert sorted(corpus.texts) == [
        "Cestujúci čakajú na stanici.",
        "Most cez rieku je nový.",
        "Vlak mešká.",
        rows[2]["text"],
    ]
    assert corpus.sources == [{"source": str(source), "columns": ["text"], "texts_read": 4, "texts_kept": 2}]
    capped = _corpus(fit.model_copy(update={"max_texts": 3}), exclude)  # reads 3 rows, keeps 3 texts
    assert capped.sources[0]["texts_read"] == 3 and len(capped.texts) == 3


def _training_report(directory: Path) -> None:
    datasets = [
        {"name": "nli", "kind": "triplets", "source": "nli.jsonl", "examples": 3, "loss": "mnrl",
         "stats": {"source_columns": {"anchor": "premise", "positive": "entailment", "negative": "contra"}}},
        {"name": "sts", "kind": "sts", "source": "sts.jsonl", "examples": 3, "loss": "cosine",
         "stats": {"source_columns": {"sentence1": "s1", "sentence2": "s2", "score": "score"}}},
        {"name": "anchor", "kind": "anchor", "source": "qa.jsonl", "examples": 3, "loss": "anchor_mse",
         "stats": {"sentences": 3}},
    ]  # fmt: skip
    report = {
        "model": "trim", "seed": 0, "datasets": datasets, "sampling": "proportional", "world_size": 1,
        "steps": {"done": 1, "planned": 1}, "max_seq_length": {"training": 8, "inference": 8},
        "train_metrics": {}, "interpolation": None,
    }  # fmt: skip
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "training_report.json").write_text(json.dumps(report), encoding="utf-8")


def test_the_default_corpus_is_what_the_model_was_fine_tuned_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _training_report(tmp_path / "finetune")
    assert finetune_sources(tmp_path / "finetune") == [
        CorpusSource(source="nli.jsonl", columns=["premise", "entailment", "contra"]),
        CorpusSource(source="sts.jsonl", columns=["s1", "s2"]),
    ]  # the score column and the anchor (a corpus sample) are not texts to train on
    fit = FitCorpus()
    with pytest.raises(ExportError, match=r"nli\.jsonl"):  # the finetune stage's report names the sources
        fit_corpus(
            fit, parent=str(tmp_path / "model"), finetune_dir=str(tmp_path / "finetune"),
            exclude=set(), language="sk", seed=0,
        )  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="skadapt.export"):  # not fine-tuned by skadapt
        assert fit_corpus(
            fit, parent=str(tmp_path / "model"), finetune_dir=None, exclude=set(), language="sk", seed=0
        ) is None  # fmt: skip
    assert "distilled alone" in caplog.text and "export.corpus.sources" in caplog.text


def test_bad_options_are_clear_errors(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="epochs"):
        StaticTraining(epochs=-1)
    with pytest.raises(ValidationError, match="columns"):
        CorpusSource(source="x.jsonl", columns=[])
    with pytest.raises(ValidationError, match="max_texts"):
        FitCorpus(max_texts=0)
    with pytest.raises(ValidationError, match="ridge"):
        StaticTraining(ridge=0)
    with pytest.raises(ValidationError, match="static_training"):
        ExportConfig(static_training={"epoch": 2})
    with pytest.raises(ValidationError, match="corpus"):
        ExportConfig(corpus={"source": "x.jsonl"})
    missing = FitCorpus(sources=[CorpusSource(source=str(tmp_path / "none.jsonl"))])
    with pytest.raises(ExportError, match=r"export\.corpus.*none\.jsonl"):
        _corpus(missing)
    column = FitCorpus(sources=[CORPUS.model_copy(update={"columns": ["sentence3"]})])
    with pytest.raises(ExportError, match="sentence3"):
        _corpus(column)
    with pytest.raises(ExportError, match="wordfreq"):
        _corpus(FitCorpus(sources=[CorpusSource(source="wordfreq:sk")]))
    empty = tmp_path / "empty.txt"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(ExportError, match=r"empty\.txt: the source is empty"):
        _corpus(FitCorpus(sources=[CorpusSource(source=str(empty))]))
    only = tmp_path / "only.txt"
    only.write_text("Most je nový.\n", encoding="utf-8")
    with pytest.raises(ExportError, match=r"no text to fit on \(1 were evaluation texts\)"):
        _corpus(FitCorpus(sources=[CorpusSource(source=str(only))]), {normalize_text("Most je nový.")})
    parent = load_sentence_model(str(tiny_models["unigram"]))
    training = StaticTraining(prompt="search_query")
    with pytest.raises(
        ExportError, match=r"no prompt 'search_query' \(its prompts: document, passage, query\)"
    ):
        corpus = _corpus(FitCorpus(sources=[CORPUS]))
        train_static(parent, tmp_path / "out", training, corpus, pca_dims=None, seed=0)


@pytest.mark.slow  # the ONNX export and the speed processes come with it
def test_export_stage_trains_the_static_tier(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    """``export_tiers`` with the default ``static_training`` and a corpus: the trained tier, reported, and the
    suite's texts kept out of the corpus."""
    suite = write_tiny_suite(tmp_path / "suite")
    config = ExportConfig(
        tiers=["static"], pca_dims=16, speed_texts=8, speed_repeats=1,
        corpus={"sources": [CORPUS.model_dump()]}, static_training={"epochs": 0.5},
    )  # fmt: skip
    model = str(tiny_models["unigram"])
    held_out = _corpus(FitCorpus(sources=[CORPUS])).texts[0]  # an "evaluation test text" of an mteb task
    corpus = training_corpus(
        config, model, finetune_dir=None, eval_tasks=[str(suite)],
        test_texts={"Task": [held_out]}, language="sk", seed=0,
    )  # fmt: skip
    assert corpus is not None and held_out not in corpus.texts and corpus.dropped_eval_overlap >= 1
    out = tmp_path / "out"
    out.mkdir()
    report = export_tiers(model, out, config, _heldout()[:8], corpus, 0)
    assert report["static"]["method"] == "trained" and report["static"]["epochs"] == 0.5
    assert report["tiers"]["static"] == "static" and report["speed"]["static"]["texts_per_s"] > 0
    assert "featurization (parent encoding)" in (out / "export.md").read_text(encoding="utf-8")
    assert (
        training_corpus(
            config.model_copy(update={"static_training": None}),
            model,
            finetune_dir=None,
            eval_tasks=[],
            test_texts=None,
            language="sk",
            seed=0,
        )
        is None
    )
    unreported = config.model_copy(update={"corpus": FitCorpus()})  # no training report
    assert training_corpus(
        unreported, model, finetune_dir=None, eval_tasks=[], test_texts=None, language="sk", seed=0
    ) is None  # fmt: skip


def test_export_command_rejects_a_bad_static_training_option(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from skadapt.cli import app

    args = ["export", str(tiny_models["unigram"]), "--out", str(tmp_path / "tiers"), "--tiers", "static"]
    result = CliRunner().invoke(app, [*args, "--set", "static_training.epochs=-1"])
    assert result.exit_code == 2 and "--set static_training.epochs" in result.output
    assert "greater than or equal to 0" in result.output and not (tmp_path / "tiers").exists()
    result = CliRunner().invoke(app, [*args, "--set", "corpus.sources=[{source: x.jsonl, column: t}]"])
    assert result.exit_code == 2 and "--set corpus.sources (0.column): unknown field" in result.output
