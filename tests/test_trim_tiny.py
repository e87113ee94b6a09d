"""Trimming tiny Unigram / WordPiece / BPE models: parity, loading, consistent ids, selection rules."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from skadapt.trim import parity, selection, tokenizer
from skadapt.trim.config import TrimConfig
from skadapt.trim.errors import TrimError
from skadapt.trim.report import REPORT_FILE
from skadapt.trim.trimmer import trim_model
from tests.support.tiny_models import FIXTURE_TEXTS

CORPUS = FIXTURE_TEXTS[:6]


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "cache"))


def _trim(model: Path, tmp_path: Path, texts: list[str], **options: object) -> tuple[Path, dict]:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
    out = tmp_path / "trimmed"
    out.mkdir()
    config = TrimConfig(corpus=str(corpus), workers=1, parity_documents=0, **options)  # type: ignore[arg-type]
    return out, trim_model(str(model), config, out)


def test_keeping_every_used_token_changes_nothing(tiny_model: Path, tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer

    out, summary = _trim(tiny_model, tmp_path, CORPUS, vocab_size=10_000)
    assert summary["embedding_rows"] < summary["embedding_rows_before"]
    result = parity.check_parity(tiny_model, out, CORPUS)
    assert result.identical == len(CORPUS)
    assert result.token_coverage == 1.0
    assert result.max_abs_diff <= 1e-5

    original = SentenceTransformer(str(tiny_model), device="cpu")
    trimmed = SentenceTransformer(str(out), device="cpu")
    assert trimmed.prompts == {**original.prompts, "document": original.prompts["passage"]}
    assert trimmed.max_seq_length == original.max_seq_length
    assert [type(m).__name__ for m in trimmed] == [type(m).__name__ for m in original]
    for text in CORPUS:
        before = original.tokenizer.convert_ids_to_tokens(original.tokenizer(text)["input_ids"])
        after = trimmed.tokenizer.convert_ids_to_tokens(trimmed.tokenizer(text)["input_ids"])
        assert after == before
    np.testing.assert_allclose(
        trimmed.encode(CORPUS, prompt_name="query"), original.encode(CORPUS, prompt_name="query"), atol=1e-5
    )

    loaded = AutoTokenizer.from_pretrained(out)
    config = json.loads((out / "config.json").read_text())
    assert config["vocab_size"] == len(loaded) == summary["embedding_rows"]
    for name in ("pad_token", "unk_token", "cls_token", "sep_token", "mask_token"):
        token = getattr(loaded, name)
        assert loaded.convert_tokens_to_ids(token) == original.tokenizer.convert_tokens_to_ids(token) or (
            loaded.convert_ids_to_tokens(loaded.convert_tokens_to_ids(token)) == token
        )
    assert config["pad_token_id"] == loaded.pad_token_id
    data = json.loads((out / "tokenizer.json").read_text())
    for added in data["added_tokens"]:
        assert loaded.convert_ids_to_tokens(added["id"]) == added["content"]
    report = json.loads((out / REPORT_FILE).read_text())
    assert report["embedding_rows"] == {"before": summary["embedding_rows_before"], "after": len(loaded)}
    assert report["parameters"]["after"] < report["parameters"]["before"]
    assert report["counts_fingerprint"] == summary["counts_fingerprint"]


def test_unseen_characters_stay_spellable(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    """Texts outside the corpus still tokenize without new unknowns when their characters were seen."""
    from transformers import AutoTokenizer

    model = tiny_models["unigram"]
    out, _ = _trim(model, tmp_path, CORPUS, vocab_size=10_000)
    trimmed = AutoTokenizer.from_pretrained(out)
    text = "Vysoko leží na Slovensku."  # every character occurs in CORPUS, the words in other forms
    assert set(text) <= set("".join(CORPUS))
    assert trimmed.unk_token_id not in trimmed(text)["input_ids"]


def test_bpe_keeps_only_merges_whose_parts_survive(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    out, _ = _trim(tiny_models["bpe"], tmp_path, CORPUS[:2], vocab_size=10_000)
    data = json.loads((out / "tokenizer.json").read_text())
    vocab = data["model"]["vocab"]
    for merge in data["model"]["merges"]:
        left, right = merge.split(" ", 1) if isinstance(merge, str) else merge
        assert left in vocab and right in vocab and left + right in vocab
    original = json.loads((tiny_models["bpe"] / "tokenizer.json").read_text())
    assert len(data["model"]["merges"]) < len(original["model"]["merges"])
    from tokenizers.pre_tokenizers import ByteLevel

    assert set(ByteLevel.alphabet()) <= set(vocab)  # every byte stays encodable


def test_vocab_size_counts_encodable_tokens(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    """N counts corpus tokens + <s> </s> <unk>; <pad> and <mask> come on top (mE5: 60,000 -> 60,002)."""
    model = tiny_models["unigram"]
    info = tokenizer.analyse((model / "tokenizer.json").read_text())
    assert {info.tokens[i] for i in info.encoding_special_ids} == {"<s>", "</s>", "<unk>"}
    _, summary = _trim(model, tmp_path, FIXTURE_TEXTS, vocab_size=100)
    assert summary["embedding_rows"] == 102
    assert summary["warnings"] == []


def test_corpus_smaller_than_n_keeps_what_it_supports(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    out, summary = _trim(tiny_models["wordpiece"], tmp_path, CORPUS[:1], vocab_size=250)
    assert summary["embedding_rows"] < 250
    assert "supports only" in summary["warnings"][0]
    report = json.loads((out / REPORT_FILE).read_text())
    assert report["selection"]["warnings"] == summary["warnings"]


def test_min_frequency_keep_list_and_extra_corpus(tiny_models: dict[str, Path]) -> None:
    from tokenizers import Tokenizer

    model = tiny_models["unigram"]
    text = (model / "tokenizer.json").read_text()
    info = tokenizer.analyse(text)
    encoder = Tokenizer.from_str(text)
    counts = np.zeros(info.size, dtype=np.int64)
    once = encoder.encode("Košice", add_special_tokens=False).ids
    often = encoder.encode("Bratislava je mesto", add_special_tokens=False).ids
    counts[once] += 1
    counts[often] += 5
    strict = selection.select_vocabulary(info, counts, vocab_size=10_000, min_frequency=2)
    assert set(often) <= set(strict.keep)
    keep = selection.keep_list_ids(info, lambda t: encoder.encode(t, add_special_tokens=False).ids, ["Tatry"])
    kept = selection.select_vocabulary(info, counts, vocab_size=10_000, min_frequency=2, keep_ids=keep)
    assert keep <= set(kept.keep)
    extra = np.zeros(info.size, dtype=np.int64)
    english = encoder.encode("The quick brown fox", add_special_tokens=False).ids
    extra[english] = 3
    with_extra = selection.select_vocabulary(
        info, counts, vocab_size=10_000, extra_counts=extra, extra_vocab_size=100
    )
    assert set(english) <= set(with_extra.keep)
    assert with_extra.by_reason["extra_corpus"] > 0


def test_n_smaller_than_special_tokens_is_an_error(tiny_models: dict[str, Path]) -> None:
    info = tokenizer.analyse((tiny_models["wordpiece"] / "tokenizer.json").read_text())
    with pytest.raises(TrimError, match=r"vocab_size 3 is smaller than the 5 special"):
        selection.check_vocab_size(info, 3)
    counts = np.ones(info.size, dtype=np.int64)
    with pytest.raises(TrimError, match="tokens that must be kept"):
        selection.select_vocabulary(info, counts, vocab_size=6)


def test_unsupported_tokenizer_type_is_an_error() -> None:
    from tokenizers import Tokenizer, models

    word_level = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    with pytest.raises(tokenizer.UnsupportedTokenizerError, match="'WordLevel' is not supported"):
        tokenizer.analyse(word_level.to_str())
