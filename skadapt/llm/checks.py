"""Output checks with HTEB's error types: every LLM output is checked before it is used, each failure is
named and counted, and a failed output is never silently replaced by its input."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from skadapt.languages import Language
from skadapt.llm.language_check import WORD, check_language

CHECKS: tuple[str, ...] = (
    "transport",
    "empty",
    "ellipsis",
    "broken_json",
    "missing_fields",
    "json_in_text",
    "reasoning_leak",
    "identical",
    "wrong_language",
    "runaway_length",
    "truncated",
    "longer_summary",
    "out_of_range",
)
"""Every check, in report order (``transport``: no answer at all after the HTTP retries; ``out_of_range``: a
number outside the scale asked for, e.g. a judge's score)."""

RUNAWAY_FACTOR = 5.0
TRUNCATED_SHARE = 0.2
LEAK = re.compile(
    r"^\s*(?:<think>|here(?:'s| is)\b|sure\b|certainly\b|okay\b|of course\b|as an ai\b|"
    r"(?:paraphrase|translation|output|answer|summary|rewritten(?: text)?|note|text)\s*:|"
    r"tu je\b|samozrejme\b|parafráza\s*:|preklad\s*:|odpoveď\s*:|poznámka\s*:|zhrnutie\s*:|text\s*:)",
    re.IGNORECASE,
)
ELLIPSIS = re.compile(r"^[\s.…]*$")


@dataclass(frozen=True)
class CheckFailure:
    """One failed check: its name (one of :data:`CHECKS`) and what was seen."""

    check: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.check}: {self.detail}" if self.detail else self.check


def word_count(text: str) -> int:
    """Words (letter runs) in ``text``."""
    return len(WORD.findall(text))


def _looks_like_json(text: str) -> bool:
    stripped = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    if not stripped.startswith(("{", "[")):
        return False
    try:
        json.loads(stripped, strict=False)
    except ValueError:
        return stripped.startswith("{") and stripped.rstrip().endswith("}")
    return True


def check_text(
    output: str,
    source: str,
    language: Language | None,
    *,
    expands: bool = False,
    summarises: bool = False,
) -> list[CheckFailure]:
    """Every failed check of a text output written from ``source``.

    Args:
        output: The LLM's text.
        source: The text it was asked to rewrite (lengths and identity are measured against it).
        language: The language the output must be in (None: not checked).
        expands: The task asks for a longer text (no runaway-length check).
        summarises: The task asks for a shorter text (no truncation check; longer than the input fails).
    """
    text = output.strip()
    if not text:
        return [CheckFailure("empty")]
    if ELLIPSIS.match(text):
        return [CheckFailure("ellipsis")]
    failures: list[CheckFailure] = []
    if _looks_like_json(text):
        failures.append(CheckFailure("json_in_text"))
    if LEAK.match(text) or "</think>" in text:
        failures.append(CheckFailure("reasoning_leak", text[:40]))
    if text.casefold() == source.strip().casefold():
        failures.append(CheckFailure("identical"))
    if language is not None and not failures:
        verdict = check_language(text, language)
        if not verdict.ok:
            failures.append(CheckFailure("wrong_language", verdict.reason))
    out_words, in_words = word_count(text), max(word_count(source), 1)
    if not expands and out_words > RUNAWAY_FACTOR * in_words:
        failures.append(CheckFailure("runaway_length", f"{out_words} words from {in_words}"))
    if not summarises and out_words < TRUNCATED_SHARE * in_words:
        failures.append(CheckFailure("truncated", f"{out_words} words from {in_words}"))
    if summarises and out_words > in_words:
        failures.append(CheckFailure("longer_summary", f"{out_words} words from {in_words}"))
    return failures


def parse_json_object(output: str) -> dict[str, object] | CheckFailure:
    """The JSON object an output consists of (a Markdown code fence around it is allowed).

    Text around a valid object (``Here is the JSON: {...}``) is a ``reasoning_leak``; anything else that
    does not parse to one object is ``broken_json``.
    """
    text = output.strip()
    fence = re.match(r"^```(?:json)?\s*(.*?)\s*```$", text, re.DOTALL)
    if fence:
        text = fence.group(1)
    if not text:
        return CheckFailure("empty")
    try:
        value = json.loads(text, strict=False)  # llama.cpp's JSON grammar lets raw newlines in
    except ValueError as error:
        start, end = text.find("{"), text.rfind("}")
        if 0 <= start < end:
            try:
                json.loads(text[start : end + 1], strict=False)
            except ValueError:
                pass
            else:
                return CheckFailure("reasoning_leak", (text[:start] + text[end + 1 :]).strip()[:40])
        return CheckFailure("broken_json", str(error)[:80])
    if not isinstance(value, dict):
        return CheckFailure("broken_json", f"a JSON {type(value).__name__}, not an object")
    return value
