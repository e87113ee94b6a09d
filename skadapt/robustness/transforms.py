"""The eight transformations (three axes), their prompts, language pools and presets (PTEB, HTEB).

Every prompt keeps the text's language unless it translates, keeps a question a question, and asks for
the text only. Multi-step transformations (backtranslation, summarised expansion) chain steps; an item
fails when any step fails its checks.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from skadapt.languages import LANGUAGES, Language

AXES: dict[str, tuple[str, ...]] = {
    "lexical": ("paraphrase", "backtranslation", "style"),
    "length": ("expansion", "summarisation", "summarised_expansion"),
    "language": ("translation", "cross_translation"),
}
"""Transformations by axis; the Total is the mean of the three axes."""
TRANSFORMS: tuple[str, ...] = tuple(name for names in AXES.values() for name in names)
LANGUAGE_TRANSFORMS = frozenset(AXES["language"])

BACKTRANSLATION_POOL: tuple[str, ...] = ("en", "es", "fr", "de", "tr", "ar")
TRANSLATION_POOL: tuple[str, ...] = ("es", "fr", "de", "tr", "ar")
"""HTEB's pools (ISO 639-1), minus the source language at draw time."""

PRESETS: dict[str, dict[str, object]] = {
    "pteb": {"transforms": ["paraphrase"], "seeds": [1337, 1338, 1339, 1340, 1341, 1342]},
    "hteb": {"transforms": list(TRANSFORMS), "seeds": [1337, 1338, 1339], "temperature": 0.0, "top_p": 1.0},
    "hteb-min": {
        "transforms": ["paraphrase", "summarisation", "translation"],
        "seeds": [1337],
        "temperature": 0.0,
        "top_p": 1.0,
    },
}
"""``pteb``: paraphrasing over six seeds at the LLM's sampling; ``hteb``: all eight, three seeds, greedy
(seeds then vary the language draws); ``hteb-min``: one transformation per axis, one seed."""

_POOL_NAMES = {
    "en": "English",
    "es": "Spanish",
    "fr": "French",
    "de": "German",
    "tr": "Turkish",
    "ar": "Arabic",
}
_POOL_SCRIPTS = {"ar": "Arab"}


def pool_language(code: str) -> Language:
    """The registry entry of an ISO 639-1 code, or a minimal entry for a pool language it lacks."""
    for language in LANGUAGES.values():
        if language.iso639_1 == code:
            return language
    return Language(
        code=code,
        iso639_1=code,
        name=_POOL_NAMES.get(code, code),
        native_name=_POOL_NAMES.get(code, code),
        script=_POOL_SCRIPTS.get(code, "Latn"),
        fineweb2_config=None,
        corpus="",
        wordfreq=code,
    )


def draw(pool: tuple[str, ...], source: Language, key: str) -> str:
    """A deterministic draw from ``pool`` minus the source language, keyed by ``key`` (seed, text id)."""
    choices = [code for code in pool if code != source.iso639_1]
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return choices[int.from_bytes(digest[:4], "big") % len(choices)]


@dataclass(frozen=True)
class Step:
    """One LLM call of a transformation: its instruction and the language its output must be in."""

    prompt: str
    language: Language
    expands: bool = False
    summarises: bool = False


QUESTION_RULE = "If the text is a question, the result must be a question too."
TEXT_ONLY = "Answer with the rewritten text only: no introduction, no quotes, no explanation."


def _rewrite(instruction: str, language: Language) -> str:
    return (
        f"{instruction} Write it in {language.name}, the language of the text. {QUESTION_RULE} {TEXT_ONLY}"
        "\n\nText: {text}"
    )


def _translate(target: Language) -> str:
    return (
        f"Translate the following text into {target.name}. Keep its meaning and form. {QUESTION_RULE} "
        f"{TEXT_ONLY}\n\nText: {{text}}"
    )


PARAPHRASE = "Paraphrase the following text: keep its meaning, change its wording."
STYLE = (
    "Change the style of the following text: if it is formal, make it informal and colloquial; if it is "
    "informal, make it formal. Keep its meaning."
)
EXPAND = "Expand the following text with more detail and context, without changing what it says."
SUMMARISE = "Summarise the following text in fewer words, keeping its main point."


def steps(name: str, source: Language, seed: int, text_id: str) -> list[Step]:
    """The LLM calls of transformation ``name`` for one text (``{text}`` is filled in per step)."""
    expand = Step(_rewrite(EXPAND, source), source, expands=True)
    summarise = Step(_rewrite(SUMMARISE, source), source, summarises=True)
    if name == "paraphrase":
        return [Step(_rewrite(PARAPHRASE, source), source)]
    if name == "style":
        return [Step(_rewrite(STYLE, source), source)]
    if name == "expansion":
        return [expand]
    if name == "summarisation":
        return [summarise]
    if name == "summarised_expansion":
        return [expand, summarise]
    if name == "backtranslation":
        pivot = pool_language(draw(BACKTRANSLATION_POOL, source, f"{seed}|{text_id}|pivot"))
        return [Step(_translate(pivot), pivot), Step(_translate(source), source)]
    if name == "translation":  # one target for every text of the run (seed)
        target = pool_language(draw(TRANSLATION_POOL, source, f"{seed}|translation"))
        return [Step(_translate(target), target)]
    if name == "cross_translation":  # a target per text
        target = pool_language(draw(TRANSLATION_POOL, source, f"{seed}|{text_id}|cross"))
        return [Step(_translate(target), target)]
    raise ValueError(f"unknown transformation {name!r}; known: {', '.join(TRANSFORMS)}")


def axis_of(name: str) -> str:
    """The axis a transformation belongs to."""
    return next(axis for axis, names in AXES.items() if name in names)


def resolve_transforms(spec: list[str] | str) -> list[str]:
    """Transformation names from a list or ``"all"``; unknown names are a ValueError listing the known."""
    names = list(TRANSFORMS) if spec == "all" or spec == ["all"] else list(spec)
    unknown = [n for n in names if n not in TRANSFORMS]
    if unknown:
        raise ValueError(f"unknown transformation(s) {', '.join(unknown)}; known: {', '.join(TRANSFORMS)}")
    return names


def resolve_settings(
    preset: str | None,
    transforms: list[str] | None,
    seeds: list[int] | None,
    temperature: float | None,
    top_p: float | None,
) -> dict[str, object]:
    """Transformations, seeds and sampling overrides: explicit values, else the preset's, else all
    transformations over seeds 1337-1339 at the LLM's own sampling."""
    base: dict[str, object] = dict(PRESETS[preset]) if preset else {}
    return {
        "transforms": resolve_transforms(transforms or base.get("transforms") or "all"),  # type: ignore[arg-type]
        "seeds": list(seeds or base.get("seeds") or [1337, 1338, 1339]),  # type: ignore[call-overload]
        "temperature": temperature if temperature is not None else base.get("temperature"),
        "top_p": top_p if top_p is not None else base.get("top_p"),
    }
