"""Token counting: brute-force equality, parallel workers, the on-disk cache, word lists, parity sample."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from skadapt.sources import SourceError
from skadapt.trim import checkpoint, counting, parallel, sampling, wordlist
from tests.support.tiny_models import FIXTURE_TEXTS


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "cache"))


def _tokenizer_json(model_dir: Path) -> str:
    return (model_dir / "tokenizer.json").read_text(encoding="utf-8")


def _brute_force(tokenizer_json: str, texts: list[str]) -> Counter[int]:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(tokenizer_json)
    specials = {i for i, t in tokenizer.get_added_tokens_decoder().items() if t.special}
    counter: Counter[int] = Counter()
    for text in texts:
        counter.update(i for i in tokenizer.encode(text, add_special_tokens=False).ids if i not in specials)
    return counter


@pytest.mark.parametrize("workers", [1, 2])
def test_counts_equal_brute_force(tiny_model: Path, workers: int) -> None:
    tokenizer_json = _tokenizer_json(tiny_model)
    texts = [*FIXTURE_TEXTS, "Neznáme znaky ☃ a 日本 tiež.", *FIXTURE_TEXTS[:5]]
    counts, documents, size = parallel.count_texts(tokenizer_json, texts, batch_size=3, workers=workers)
    expected = _brute_force(tokenizer_json, texts)
    assert {i: int(c) for i, c in enumerate(counts) if c} == dict(expected)
    assert documents == len(texts)
    assert size == sum(len(t.encode()) for t in texts)


def test_special_tokens_are_not_counted(tiny_models: dict[str, Path]) -> None:
    tokenizer_json = _tokenizer_json(tiny_models["unigram"])
    counts, _, _ = parallel.count_texts(tokenizer_json, ["<s> Bratislava </s> <mask>"], workers=1)
    for special in range(5):  # <s> <pad> </s> <unk> <mask> are ids 0-4
        assert counts[special] == 0


def test_cache_is_hit_on_the_second_run(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"text": t}) + "\n" for t in FIXTURE_TEXTS), encoding="utf-8")
    tokenizer_json = _tokenizer_json(tiny_models["wordpiece"])
    first = counting.count_source(tokenizer_json, str(corpus), workers=1)
    assert not first.cached
    assert first.documents == len(FIXTURE_TEXTS)

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("counted again although the counts are cached")

    monkeypatch.setattr(parallel, "count_texts", fail)
    second = counting.count_source(tokenizer_json, str(corpus), workers=1)
    assert second.cached
    assert second.key == first.key
    np.testing.assert_array_equal(second.counts, first.counts)
    assert list((tmp_path / "cache" / "counts").glob("*.npz"))

    monkeypatch.undo()
    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "cache"))
    limited = counting.count_source(tokenizer_json, str(corpus), workers=1, max_documents=3)
    assert limited.key != first.key and not limited.cached and limited.documents == 3


def test_cache_key_changes_with_the_file(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(FIXTURE_TEXTS[:4]) + "\n", encoding="utf-8")
    tokenizer_json = _tokenizer_json(tiny_models["unigram"])
    first = counting.count_source(tokenizer_json, str(corpus), workers=1)
    corpus.write_text("\n".join(FIXTURE_TEXTS[4:10]) + "\n", encoding="utf-8")
    second = counting.count_source(tokenizer_json, str(corpus), workers=1)
    assert second.key != first.key and not second.cached and second.documents == 6


def _numbered_corpus(tmp_path: Path, count: int) -> tuple[Path, list[str]]:
    texts = [f"{FIXTURE_TEXTS[i % len(FIXTURE_TEXTS)]} {i}" for i in range(count)]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
    return corpus, texts


def test_whole_corpus_is_counted_and_the_sample_is_drawn_from_it(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus, texts = _numbered_corpus(tmp_path, 35)
    tokenizer_json = _tokenizer_json(tiny_models["unigram"])
    counted = counting.count_source(tokenizer_json, str(corpus), workers=1, parity_documents=5, seed=7)
    assert counted.documents == 35  # nothing held out
    assert {i: int(c) for i, c in enumerate(counted.counts) if c} == dict(_brute_force(tokenizer_json, texts))
    assert len(counted.sample) == 5 and set(counted.sample) <= set(texts)
    assert counted.sample == sorted(counted.sample, key=texts.index)  # stream order
    assert counted.sample == counting.draw_sample(str(corpus), "text", 5, 7)  # re-reading draws the same
    other_seed = counting.draw_sample(str(corpus), "text", 5, 8)
    assert other_seed != counted.sample and len(other_seed) == 5
    assert counting.draw_sample(str(corpus), "text", 100, 7) == texts  # a sample larger than the corpus

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("counted again although the counts are cached")

    monkeypatch.setattr(parallel, "count_texts", fail)
    again = counting.count_source(tokenizer_json, str(corpus), workers=1, parity_documents=5, seed=7)
    assert again.cached and again.sample == counted.sample
    reseeded = counting.count_source(tokenizer_json, str(corpus), workers=1, parity_documents=5, seed=8)
    assert reseeded.cached and reseeded.key == counted.key and reseeded.sample == other_seed


def test_sampler_is_uniform_and_independent_of_batching() -> None:
    texts = [f"text {i}" for i in range(2000)]
    whole = sampling.ParitySampler(50, 3)
    whole.observe(texts)
    pieces = sampling.ParitySampler(50, 3)
    for start in range(0, 2000, 7):
        pieces.observe(texts[start : start + 7])
    assert whole.sample() == pieces.sample() == sampling.sample_stream(texts, 50, 3, batch_size=13)
    halfway = sampling.ParitySampler(50, 3)
    halfway.observe(texts[:1000])
    resumed = sampling.ParitySampler.from_state(json.loads(json.dumps(halfway.state())))
    resumed.observe(texts[1000:])
    assert resumed.sample() == whole.sample()
    positions = [int(t.split()[1]) for s in range(200) for t in sampling.sample_stream(texts, 10, s)]
    assert abs(np.mean(positions) - 999.5) < 60  # 2000 draws: the mean of a uniform sample
    assert min(positions) < 100 and max(positions) > 1900


def test_wordfreq_counts_capitalised_forms_digits_and_punctuation(e5_small: Path) -> None:
    from tokenizers import Tokenizer

    tokenizer_json = _tokenizer_json(e5_small)
    tokenizer = Tokenizer.from_str(tokenizer_json)
    counted = counting.count_source(tokenizer_json, "wordfreq:sk", max_documents=3000, parity_documents=20)
    counts = counted.counts
    forms = list(wordlist.iter_word_forms("sk", 3000))
    assert len(counted.sample) == 20 and set(counted.sample) <= set(forms)  # the sample is counted forms
    assert counted.sample == counting.draw_sample("wordfreq:sk", "text", 20, 0, max_documents=3000)
    texts = [
        "Slovensko",
        "slovensko",
        "Bratislava",
        "2024",
        "1848",
        "(áno)",
        "Áno!",
        *"0123456789.,;:!?()€%§",
    ]
    for text in texts:
        ids = tokenizer.encode(text, add_special_tokens=False).ids
        assert all(counts[i] > 0 for i in ids), (text, [tokenizer.id_to_token(i) for i in ids])


def test_the_progress_hook_hears_the_totals_of_a_word_list_and_of_cached_counts(
    tiny_models: dict[str, Path],
) -> None:
    """A word list is counted at once and cached counts are read: the counting bar still shows what they
    cover (not ``0 texts 0.0 MB``)."""
    tokenizer_json = _tokenizer_json(tiny_models["unigram"])
    for cached in (False, True):
        heard: list[tuple[int, int]] = []
        counted = counting.count_source(
            tokenizer_json,
            "wordfreq:sk",
            max_documents=500,
            on_progress=lambda d, b, h=heard: h.append((d, b)),
        )
        assert counted.cached == cached and counted.documents == 500
        assert heard == [(500, counted.bytes)] and counted.bytes > 0


def test_source_errors_are_clear(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    tokenizer_json = _tokenizer_json(tiny_models["unigram"])
    missing_column = tmp_path / "rows.jsonl"
    missing_column.write_text('{"body": "Dobrý deň"}\n', encoding="utf-8")
    with pytest.raises(SourceError, match="no column 'text'"):
        counting.count_source(tokenizer_json, str(missing_column), workers=1)
    empty = tmp_path / "empty.txt"
    empty.write_text("\n  \n", encoding="utf-8")
    with pytest.raises(SourceError, match="empty"):
        counting.count_source(tokenizer_json, str(empty), workers=1)
    with pytest.raises(SourceError, match="no such file"):
        counting.count_source(tokenizer_json, str(tmp_path / "nope.txt"), workers=1)
    with pytest.raises(SourceError, match="wordfreq has no list"):
        counting.count_source(tokenizer_json, "wordfreq:xx")


@pytest.mark.parametrize("checkpoint_texts", [4, 7, 100])
def test_segmented_count_equals_brute_force(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, checkpoint_texts: int
) -> None:
    corpus, texts = _numbered_corpus(tmp_path, 35)
    tokenizer_json = _tokenizer_json(tiny_models["wordpiece"])
    monkeypatch.setattr(checkpoint, "CHECKPOINT_TEXTS", checkpoint_texts)
    counted = counting.count_source(tokenizer_json, str(corpus), workers=1, parity_documents=6, seed=1)
    assert {i: int(c) for i, c in enumerate(counted.counts) if c} == dict(_brute_force(tokenizer_json, texts))
    assert (counted.documents, counted.bytes) == (35, sum(len(t.encode()) for t in texts))
    assert counted.sample == counting.draw_sample(str(corpus), "text", 6, 1)


@pytest.mark.parametrize("same_sample", [True, False])
def test_interrupted_count_resumes_from_its_last_checkpoint(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, same_sample: bool
) -> None:
    """A count killed after two segments resumes at text 8 and tokenizes only the rest; same result.

    The parity sample equals an uninterrupted run's: continued from the checkpoint when the resumed run
    asks for the same seed and size, drawn again by re-reading the source otherwise.
    """
    corpus, texts = _numbered_corpus(tmp_path, 30)
    tokenizer_json = _tokenizer_json(tiny_models["bpe"])
    monkeypatch.setattr(checkpoint, "CHECKPOINT_TEXTS", 4)
    real_count_texts = parallel.count_texts
    seen: list[str] = []

    def count_then_die(tokenizer: str, segment, **kwargs):
        batch = list(segment)
        if len(seen) >= 8:
            raise KeyboardInterrupt  # killed while counting the third segment
        seen.extend(batch)
        return real_count_texts(tokenizer, batch, **kwargs)

    monkeypatch.setattr(parallel, "count_texts", count_then_die)
    with pytest.raises(KeyboardInterrupt):
        counting.count_source(tokenizer_json, str(corpus), workers=1, parity_documents=3, seed=5)
    assert seen == texts[:8]

    resumed: list[str] = []

    def count_and_record(tokenizer: str, segment, **kwargs):
        batch = list(segment)
        resumed.extend(batch)
        return real_count_texts(tokenizer, batch, **kwargs)

    monkeypatch.setattr(parallel, "count_texts", count_and_record)
    seed = 5 if same_sample else 6
    counted = counting.count_source(tokenizer_json, str(corpus), workers=1, parity_documents=3, seed=seed)
    assert resumed == texts[8:]
    assert {i: int(c) for i, c in enumerate(counted.counts) if c} == dict(_brute_force(tokenizer_json, texts))
    assert counted.documents == 30
    assert counted.sample == sampling.sample_stream(texts, 3, seed)
    assert not list((tmp_path / "cache" / "counts").glob("*.partial.npz"))  # removed once complete
