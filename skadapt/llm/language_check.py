"""Is a text in the expected language? Three signals, because each alone is fooled.

- ``py3langid`` (offline, model in the wheel): the top language over all it knows;
- marker letters: a text meant to be Slovak must not use Czech-only letters (ě ř ů), and the reverse —
  py3langid labels Czech-flavoured gibberish Slovak;
- a word check: the share of the text's words found in the language's ``wordfreq`` list, which catches
  invented words that keep the right letters.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from skadapt.languages import Language, get_language

WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
MIN_WORDS_FOR_LANGID = 4
"""Below this many words py3langid's guess is too noisy to fail a text on."""
MIN_KNOWN_WORD_SHARE = 0.6
WORDLIST_SIZE = 200_000


@dataclass(frozen=True)
class LanguageVerdict:
    """Whether a text is in the expected language, and why not."""

    ok: bool
    reason: str = ""


@functools.cache
def _known_words(wordfreq_code: str) -> frozenset[str]:
    from wordfreq import top_n_list

    return frozenset(top_n_list(wordfreq_code, WORDLIST_SIZE))


def identify(text: str) -> str:
    """py3langid's ISO 639-1 code for ``text``."""
    import py3langid

    return str(py3langid.classify(text)[0])


@functools.cache
def _neighbours(codes: tuple[str, ...]) -> tuple[Language, ...]:
    """The registry entries of a language's neighbours (their codes), resolved once per process."""
    return tuple(get_language(code) for code in codes)


def check_language(text: str, language: Language) -> LanguageVerdict:
    """Whether ``text`` is written in ``language`` (its registry entry, resolved once by the caller)."""
    words = [w.lower() for w in WORD.findall(text)]
    if not words:
        return LanguageVerdict(False, "no words")
    neighbours = _neighbours(tuple(language.neighbours))
    for neighbour in neighbours:
        found = sorted({c for c in text.lower() if c in neighbour.marker_letters})
        if found:
            return LanguageVerdict(False, f"{neighbour.name} letters {' '.join(found)}")
    if language.wordfreq:
        known = _known_words(language.wordfreq)
        share = sum(w in known for w in words) / len(words)
        if share < MIN_KNOWN_WORD_SHARE:
            return LanguageVerdict(False, f"{share:.0%} of words are {language.name} words")
    if language.iso639_1 and len(words) >= MIN_WORDS_FOR_LANGID:
        found_code = identify(text)
        if found_code != language.iso639_1 and found_code not in {n.iso639_1 for n in neighbours}:
            return LanguageVerdict(False, f"identified as {found_code!r}")
    return LanguageVerdict(True)
