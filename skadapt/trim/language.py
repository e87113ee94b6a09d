"""Is the trim corpus in the run's language? A trim keeps the tokens its corpus uses, so a Slovak trim
counted on an English corpus keeps English tokens, cuts Slovak ones - and succeeds. The parity sample's
texts go through the LLM layer's language check (:func:`skadapt.llm.language_check.check_language`); a
word list's language is its spec's (``wordfreq:LANG``)."""

from __future__ import annotations

from typing import Any

from skadapt.languages import Language
from skadapt.llm.language_check import check_language
from skadapt.sources import parse_source

CHECKED_TEXTS = 100
"""Texts of the parity sample (a seeded sample of the counted texts) checked: enough to tell "mostly"."""
MOSTLY = 0.5
"""More than this share of the checked texts not in the run's language is a warning."""
EXAMPLE_CHARS = 60


def corpus_language(spec: str, sample: list[str], language: Language) -> dict[str, Any]:
    """What the check of the corpus ``spec`` against ``language`` found, for the trim report:
    ``{"language", "checked", "other", "warning"}`` (``checked``: texts of the parity ``sample`` checked,
    0 for a word list or without a sample; ``other``: those not in the language; ``warning``: the line to
    show, None when the corpus is mostly in the language).
    """
    found: dict[str, Any] = {"language": language.code, "checked": 0, "other": 0, "warning": None}
    parsed = parse_source(spec)
    if parsed.kind == "wordfreq":
        if parsed.name not in {language.wordfreq, language.iso639_1, language.code}:
            own = f" (wordfreq:{language.wordfreq})" if language.wordfreq else ""
            found["warning"] = (
                f"trim corpus {spec} is the word list of {parsed.name!r}, not of {language.name}: the "
                f"vocabulary is cut to another language's tokens; use a {language.name} corpus{own}, or "
                f"check the language ({language.code})"
            )
        return found
    texts = sample[:CHECKED_TEXTS]
    failed = [(text, verdict.reason) for text in texts if not (verdict := check_language(text, language)).ok]
    found.update(checked=len(texts), other=len(failed))
    if texts and len(failed) / len(texts) > MOSTLY:
        text, reason = failed[0]
        example = text if len(text) <= EXAMPLE_CHARS else text[: EXAMPLE_CHARS - 1] + "…"
        found["warning"] = (
            f"trim corpus {spec}: {len(failed)} of {len(texts)} sampled texts are not {language.name} "
            f"(e.g. {example!r}: {reason}): the vocabulary is cut to another language's tokens; check "
            f"trim.corpus, or the language ({language.code})"
        )
    return found
