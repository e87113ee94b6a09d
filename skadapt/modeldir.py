"""Conventions of the sentence-transformers directories skadapt writes."""

from __future__ import annotations

import json
from pathlib import Path

from skadapt import artifacts

ST_CONFIG = "config_sentence_transformers.json"


def fill_document_prompt(model_dir: Path) -> dict[str, str]:
    """Give an E5-style model (``query``/``passage`` prompts) a ``document`` prompt equal to ``passage``.

    sentence-transformers 6 adds an empty ``document`` prompt to every model it loads, and
    ``encode_document`` (and mteb, which asks for the ``document`` prompt) then encodes passages with no
    prompt at all. Writing ``document`` into the saved config makes both use ``passage: ``.

    Returns:
        The prompts now saved in ``model_dir``.
    """
    path = model_dir / ST_CONFIG
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    prompts = dict(data.get("prompts") or {})
    passage = prompts.get("passage")
    if passage and not prompts.get("document"):
        prompts["document"] = passage
        data["prompts"] = prompts
        artifacts.write_json(path, data)
    return prompts
