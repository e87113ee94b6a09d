"""On-disk cache of token counts, keyed by tokenizer fingerprint + source spec + limits."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from skadapt import artifacts


def cache_dir() -> Path:
    """Where counts are cached: ``$SKADAPT_CACHE/counts``, else ``~/.cache/skadapt/counts``."""
    root = os.environ.get("SKADAPT_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "skadapt"
    return base / "counts"


def cache_key(parts: dict[str, Any]) -> str:
    """Stable key of everything that determines a count vector."""
    return artifacts.hash_json(parts)


def load_counts(key: str) -> tuple[np.ndarray, dict[str, Any]] | None:
    """Cached counts and their metadata, or None when absent or unreadable."""
    path = cache_dir() / f"{key}.npz"
    meta = artifacts.read_json(cache_dir() / f"{key}.json")
    if not path.is_file() or not isinstance(meta, dict):
        return None
    try:
        with np.load(path) as data:
            return data["counts"].copy(), meta
    except (OSError, ValueError, KeyError):
        return None


def save_counts(key: str, counts: np.ndarray, meta: dict[str, Any]) -> Path:
    """Store counts atomically (temp file + rename); returns the ``.npz`` path."""
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{key}.npz"
    tmp = directory / f".{key}.tmp-{uuid.uuid4().hex[:8]}.npz"
    np.savez_compressed(tmp, counts=counts)
    os.replace(tmp, path)
    artifacts.write_json(directory / f"{key}.json", meta)
    return path


def _partial_path(key: str) -> Path:
    return cache_dir() / f"{key}.partial.npz"


PARTIAL_FIELDS = ("position", "documents", "bytes")


def load_partial(key: str) -> tuple[np.ndarray, dict[str, int]] | None:
    """Counts saved by an interrupted count with its ``position``/``documents``/``bytes``, or None."""
    path = _partial_path(key)
    if not path.is_file():
        return None
    try:
        with np.load(path) as data:
            return data["counts"].copy(), {name: int(data[name]) for name in PARTIAL_FIELDS}
    except (OSError, ValueError, KeyError):
        return None


def save_partial(key: str, counts: np.ndarray, meta: dict[str, int]) -> None:
    """Store partial counts and their position in one file, atomically (temp file + rename)."""
    path = _partial_path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{key}.tmp-{uuid.uuid4().hex[:8]}.npz"
    np.savez(tmp, counts=counts, **{name: np.int64(meta[name]) for name in PARTIAL_FIELDS})
    os.replace(tmp, path)


def drop_partial(key: str) -> None:
    """Remove the partial counts of a finished count."""
    _partial_path(key).unlink(missing_ok=True)
