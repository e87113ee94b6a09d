""" "Exact" means exact: the whole corpus is counted, every counted text tokenizes identically when every
counted token is kept (else the stage fails), a cut vocabulary reports what it loses, and the trimmed
directory carries a model card and no stale exports of the untrimmed model.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml
from tokenizers import Tokenizer

from skadapt.trim import counting, tokenizer
from skadapt.trim.config import TrimConfig
from skadapt.trim.errors import ParityError
from skadapt.trim.report import REPORT_FILE
from skadapt.trim.trimmer import trim_model
from tests.support.tiny_models import FIXTURE_TEXTS

DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def corpus_texts() -> list[str]:
    """204 Slovak texts: 188 the tiny tokenizers were not trained on, with their 16 training texts at
    positions 9, 19, ..., 159 (whole-word tokens of those texts occur nowhere else; a regression test for
    counting that held every 10th text out)."""
    other = [line for line in (DATA / "sk_corpus.txt").read_text(encoding="utf-8").splitlines() if line]
    texts: list[str] = []
    for own in FIXTURE_TEXTS:
        texts += [*other[:9], own]
        other = other[9:]
    return texts + other


def _trim(model: Path, tmp_path: Path, texts: list[str], name: str = "trimmed", **options: object) -> Path:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
    out = tmp_path / name
    out.mkdir()
    config = TrimConfig(corpus=str(corpus), workers=1, **options)  # type: ignore[arg-type]
    trim_model(str(model), config, out)  # the default seed: 42
    return out


def _encoder(model_dir: Path) -> Tokenizer:
    return Tokenizer.from_file(str(model_dir / "tokenizer.json"))


def _tokens(model_dir: Path, texts: list[str]) -> list[list[str]]:
    """Each text's tokens (with the special tokens the tokenizer adds) under a model's tokenizer."""
    encoder = _encoder(model_dir)
    return [[encoder.id_to_token(i) for i in e.ids] for e in encoder.encode_batch(texts)]


def _counted(model_dir: Path, texts: list[str]) -> Counter[str]:
    """Brute-force token counts as trimming counts them: no special tokens (``<unk>`` included)."""
    encoder = _encoder(model_dir)
    specials = {i for i, t in encoder.get_added_tokens_decoder().items() if t.special}
    encodings = encoder.encode_batch(texts, add_special_tokens=False)
    return Counter(encoder.id_to_token(i) for e in encodings for i in e.ids if i not in specials)


def test_every_corpus_text_tokenizes_identically_when_every_token_fits(
    tiny_model: Path, tmp_path: Path, corpus_texts: list[str]
) -> None:
    """Unigram, WordPiece and BPE: nothing of the corpus is held out of counting, so nothing changes."""
    out = _trim(tiny_model, tmp_path, corpus_texts, vocab_size=10_000)  # default parity_documents: 1000
    assert _tokens(out, corpus_texts) == _tokens(tiny_model, corpus_texts)  # EVERY corpus text
    report = json.loads((out / REPORT_FILE).read_text())
    assert report["counts"]["documents"] == len(corpus_texts)
    assert report["coverage"]["all_counted_tokens_kept"] and report["coverage"]["corpus_coverage"] == 1.0
    assert report["coverage"]["top_dropped_tokens"] == []
    parity = report["parity"]
    assert parity["texts"] == len(corpus_texts) and parity["identical_fraction"] == 1.0
    assert parity["identical_required"] and parity["passed"] and parity["seed"] == 42
    assert report["exact"] and report["verdict"].startswith("exact:")


def test_a_cut_vocabulary_reports_identical_share_coverage_and_dropped_tokens(
    tiny_model: Path, tmp_path: Path, corpus_texts: list[str]
) -> None:
    full_dir = _trim(tiny_model, tmp_path, corpus_texts, "full", vocab_size=10_000)
    full = json.loads((full_dir / REPORT_FILE).read_text())
    vocab_size = full["selection"]["vocab_size_kept"] - 12
    out = _trim(tiny_model, tmp_path, corpus_texts, "cut", vocab_size=vocab_size, parity_documents=150)
    report = json.loads((out / REPORT_FILE).read_text())
    assert not report["exact"] and report["verdict"].startswith("not exact:")

    counted = _counted(tiny_model, corpus_texts)
    kept = set(_encoder(out).get_vocab(with_added_tokens=True))
    dropped = {token: count for token, count in counted.items() if token not in kept}
    coverage = report["coverage"]
    assert not coverage["all_counted_tokens_kept"]
    assert coverage["distinct_dropped_tokens"] == len(dropped) > 0
    assert coverage["counted_token_occurrences"] == sum(counted.values())
    lost = sum(dropped.values()) / sum(counted.values())
    assert coverage["corpus_coverage"] == pytest.approx(1 - lost, abs=1e-6)
    top = coverage["top_dropped_tokens"]
    assert len(top) == min(20, len(dropped))
    assert [(d["token"], d["count"]) for d in top] == sorted(
        ((d["token"], d["count"]) for d in top), key=lambda pair: -pair[1]
    )
    assert all(dropped[d["token"]] == d["count"] for d in top)
    assert max(dropped.values()) == top[0]["count"]

    sample = counting.draw_sample(str(tmp_path / "corpus.txt"), "text", 150, 42)
    before, after = _tokens(tiny_model, sample), _tokens(out, sample)
    identical = sum(a == b for a, b in zip(before, after, strict=True))
    parity = report["parity"]
    assert parity["texts"] == 150 and parity["identically_tokenized"] == identical < 150
    assert parity["identical_fraction"] == pytest.approx(identical / 150, abs=1e-6)
    assert not parity["identical_required"] and parity["passed"]  # embedding parity still enforced
    assert f"{coverage['corpus_coverage']:.2%}" in report["verdict"]
    assert f"{parity['identical_fraction']:.1%}" in report["verdict"]


def test_a_rewrite_that_changes_tokenization_fails_when_every_token_fits(
    tiny_models: dict[str, Path], tmp_path: Path, corpus_texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_rewrite = tokenizer.rewrite

    def flatten_scores(info: tokenizer.TokenizerInfo, keep: list[int]) -> dict:
        data = real_rewrite(info, keep)
        data["model"]["vocab"] = [[piece, -1.0] for piece, _ in data["model"]["vocab"]]  # a wrong rewrite
        return data

    monkeypatch.setattr(tokenizer, "rewrite", flatten_scores)
    with pytest.raises(ParityError, match=r"every token counted in the corpus is kept.*tokenize differently"):
        _trim(tiny_models["unigram"], tmp_path, corpus_texts, vocab_size=10_000, parity_documents=50)


def test_stale_exports_are_left_behind_and_a_model_card_is_written(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    corpus_texts = FIXTURE_TEXTS[:8]
    model = tmp_path / "with-exports"
    shutil.copytree(tiny_models["unigram"], model)
    for stale in ("onnx/model.onnx", "onnx/model_qint8_avx512.onnx", "openvino/openvino_model.xml"):
        (model / stale).parent.mkdir(exist_ok=True)
        (model / stale).write_bytes(b"stale export of the untrimmed model")
    (model / "openvino" / "openvino_model.bin").write_bytes(b"\0" * 16)
    (model / "model.onnx").write_bytes(b"stale")
    (model / "README.md").write_text("# the base model's own card\n", encoding="utf-8")

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(corpus_texts) + "\n", encoding="utf-8")
    out = tmp_path / "trimmed"
    out.mkdir()
    config = TrimConfig(corpus=str(corpus), vocab_size=10_000, workers=1, parity_documents=40)
    summary = trim_model(str(model), config, out, seed=5, language="sk")

    files = [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()]
    assert not (out / "onnx").exists() and not (out / "openvino").exists()
    assert not [f for f in files if f.endswith(".onnx") or "openvino" in f]
    text = (out / "README.md").read_text(encoding="utf-8")
    assert "the base model's own card" not in text
    front, body = text.split("---\n")[1], text.split("---\n", 2)[2]
    metadata = yaml.safe_load(front)
    assert metadata["base_model"] == str(model)
    assert metadata["language"] == ["sk"]
    assert metadata["library_name"] == "sentence-transformers"
    assert {"sentence-transformers", "vocabulary-trimming"} <= set(metadata["tags"])
    report = json.loads((out / REPORT_FILE).read_text())
    vocab, parameters = report["vocab"], report["parameters"]
    assert f"| vocabulary (tokens) | {vocab['before']:,} | {vocab['after']:,} |" in body
    assert f"| parameters | {parameters['before']:,} | {parameters['after']:,} |" in body
    assert vocab["after"] == summary["embedding_rows"] < vocab["before"]
    assert f"`{corpus}`" in body and f"{len(corpus_texts):,} texts" in body
    assert "corpus coverage: 100.00%" in body and "8 of 8 sampled corpus texts (seed 5)" in body
    assert "exact: yes" in body
    assert f"skadapt trim {model} --corpus {corpus} --out OUT --vocab-size 10000" in body
    assert "--parity-documents 40 --seed 5" in body


def test_card_metadata_helpers() -> None:
    from skadapt.trim import card

    cached = "/root/.cache/huggingface/hub/models--intfloat--multilingual-e5-small/snapshots/abc"
    assert card.hub_id(cached) == "intfloat/multilingual-e5-small"
    assert card.hub_id("intfloat/multilingual-e5-small") == "intfloat/multilingual-e5-small"
    assert card.infer_language("wordfreq:sk") == "sk"
    assert card.infer_language("hub:HuggingFaceFW/fineweb-2:slk_Latn:train") == "sk"
    assert card.infer_language("corpus.txt") is None and card.infer_language(None) is None


def test_a_trimmed_unigram_scores_unknown_characters_as_before() -> None:
    """tokenizers scores an unknown character min(scores) - 10: dropping the rarest piece must not change it.

    Here "X" has no piece of its own; the original picks "Xy" + "z" (-24) over <unk> + "yz" (-41). Without
    the original lowest score (-30, piece "q", unused) the unknown would cost -22 and win (-23).
    """
    from tokenizers import AddedToken, models

    from skadapt.trim import parallel, selection

    vocab = [("<unk>", 0.0), ("q", -30.0), ("Xy", -12.0), ("z", -12.0), ("yz", -1.0), ("y", -1.0)]
    original = Tokenizer(models.Unigram(vocab, unk_id=0))
    original.add_special_tokens([AddedToken("<unk>", special=True)])
    texts = ["Xyz", "yz"]
    info = tokenizer.analyse(original.to_str())
    counts, _, _ = parallel.count_texts(original.to_str(), texts, workers=1)
    chosen = selection.select_vocabulary(info, counts, vocab_size=100)
    assert info.token_id("q") not in chosen.keep
    trimmed = Tokenizer.from_str(json.dumps(tokenizer.rewrite(info, chosen.keep)))
    assert [[trimmed.id_to_token(i) for i in trimmed.encode(t).ids] for t in texts] == [["Xy", "z"], ["yz"]]
