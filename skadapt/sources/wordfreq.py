"""``wordfreq:LANG`` sources: a wordfreq frequency list (offline) as ``(word, count)`` pairs."""

from __future__ import annotations

from collections.abc import Iterator

from skadapt.sources.spec import SourceError


def iter_wordfreq(lang: str, max_words: int | None = None) -> Iterator[tuple[str, int]]:
    """``(word, pseudo_count)`` pairs from wordfreq, most frequent first.

    Counts are frequencies scaled to occurrences per billion words, so they mix with corpus counts.

    Raises:
        SourceError: wordfreq does not know the language.
    """
    import wordfreq

    if lang not in wordfreq.available_languages():
        known = ", ".join(sorted(wordfreq.available_languages()))
        raise SourceError(f"wordfreq:{lang}: wordfreq has no list for {lang!r} (it has: {known})")
    for rank, word in enumerate(wordfreq.iter_wordlist(lang, "best")):
        if max_words is not None and rank >= max_words:
            return
        count = round(wordfreq.word_frequency(word, lang, "best") * 1e9)
        if count <= 0:
            return
        yield word, count


def word_forms(word: str) -> list[str]:
    """The forms of a (lowercased) word-list entry that are counted: itself and its capitalised form."""
    capitalised = word[:1].upper() + word[1:]
    return [word, capitalised] if capitalised != word else [word]


def iter_word_forms(lang: str, max_words: int | None = None) -> Iterator[str]:
    """Every counted form of a word list, in list order (what the parity sample is drawn from)."""
    for word, _ in iter_wordfreq(lang, max_words):
        yield from word_forms(word)
