"""Prompts are data: a model's own prompts, or the known defaults of its family, drive every stage.

Training columns, dev evaluation, the anchor, renormalization and evaluation ask for a *role*
(``query`` or ``document``) and get the model's prompt for it. A model that carries no prompts gets the
documented defaults of its family when its name matches one below, else no prompt at all.
"""

from __future__ import annotations

from fnmatch import fnmatch
from typing import Literal

Role = Literal["query", "document"]

E5_PROMPTS = {"query": "query: ", "passage": "passage: ", "document": "passage: "}
KNOWN_PROMPTS: dict[str, dict[str, str]] = {
    "*multilingual-e5-*": E5_PROMPTS,  # intfloat/multilingual-e5-{small,base,large} and copies of them
    "intfloat/e5-*": E5_PROMPTS,
}
"""Model name pattern (fnmatch, lower case) -> prompts, for models saved without their prompts."""

DOCUMENT_KEYS = ("document", "passage", "corpus")


def role_prompt(prompts: dict[str, str | None], role: Role) -> str:
    """The prompt for a role: ``query``, or the first non-empty of document/passage/corpus; '' if none."""
    keys = ("query",) if role == "query" else DOCUMENT_KEYS
    return next((text for key in keys if (text := prompts.get(key))), "")


def model_prompts(own: dict[str, str | None] | None, name: str = "") -> dict[str, str]:
    """A model's prompts: its own non-empty ones, else the known defaults for ``name``, else none."""
    prompts = {key: text for key, text in (own or {}).items() if text}
    if prompts:
        return prompts
    lowered = name.casefold()
    return next((dict(p) for pattern, p in KNOWN_PROMPTS.items() if fnmatch(lowered, pattern)), {})
