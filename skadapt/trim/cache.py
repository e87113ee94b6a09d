"""On-disk cache of token counts, keyed by tokenizer fingerprint + source spec (+ the commit a ``hub:``
branch is at) + limits.

Per key: ``KEY.npz`` + ``KEY.json`` (the finished counts and their metadata), ``KEY.partial.npz`` (the
counts of an interrupted run, with its position and parity-sampler state) and ``KEY.sample-SEED-SIZE.json``
(the parity sample drawn from the counted texts with that seed and size). Per ``hub:`` branch spec (the key
without its commit): ``BRANCH.commit.json``, the commit it was last counted at.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from skadapt import artifacts
from skadapt.paths import cache_path


def cache_dir() -> Path:
    """Where counts are cached: ``$SKADAPT_CACHE/counts``, else ``~/.cache/skadapt/counts``."""
    return cache_path("counts")


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


Partial = tuple[np.ndarray, dict[str, int], dict[str, Any] | None]
"""Partial counts, their ``position``/``documents``/``bytes`` and the parity sampler's state (or None)."""


def load_partial(key: str) -> Partial | None:
    """What an interrupted count saved (see :data:`Partial`), or None."""
    path = _partial_path(key)
    if not path.is_file():
        return None
    try:
        with np.load(path) as data:
            sampler = json.loads(str(data["sampler"])) if "sampler" in data.files else None
            return data["counts"].copy(), {name: int(data[name]) for name in PARTIAL_FIELDS}, sampler
    except (OSError, ValueError, KeyError):
        return None


def save_partial(
    key: str, counts: np.ndarray, meta: dict[str, int], sampler: dict[str, Any] | None = None
) -> None:
    """Store partial counts, their position and the sampler state in one file, atomically."""
    path = _partial_path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{key}.tmp-{uuid.uuid4().hex[:8]}.npz"
    extra = {"sampler": np.array(json.dumps(sampler, ensure_ascii=False))} if sampler is not None else {}
    np.savez(tmp, counts=counts, **{name: np.int64(meta[name]) for name in PARTIAL_FIELDS}, **extra)
    os.replace(tmp, path)


def drop_partial(key: str) -> None:
    """Remove the partial counts of a finished count."""
    _partial_path(key).unlink(missing_ok=True)


def _sample_path(key: str, seed: int, size: int) -> Path:
    return cache_dir() / f"{key}.sample-{seed}-{size}.json"


def load_sample(key: str, seed: int, size: int) -> list[str] | None:
    """The cached parity sample of counts ``key`` for that seed and size, or None."""
    data = artifacts.read_json(_sample_path(key, seed, size))
    if isinstance(data, list) and all(isinstance(text, str) for text in data):
        return data
    return None


def save_sample(key: str, seed: int, size: int, texts: list[str]) -> None:
    """Store a parity sample next to its counts (atomically)."""
    path = _sample_path(key, seed, size)
    path.parent.mkdir(parents=True, exist_ok=True)
    artifacts.write_json(path, texts)


def _branch_path(branch: str) -> Path:
    return cache_dir() / f"{branch}.commit.json"


def load_branch_commit(branch: str) -> dict[str, str] | None:
    """The commit a branch spec was last counted at and that count's key (``commit``, ``key``), or None."""
    data = artifacts.read_json(_branch_path(branch))
    if isinstance(data, dict) and isinstance(data.get("commit"), str):
        return data
    return None


def save_branch_commit(branch: str, commit: str, key: str) -> None:
    """Record the commit a branch spec was counted at now (atomically)."""
    path = _branch_path(branch)
    path.parent.mkdir(parents=True, exist_ok=True)
    artifacts.write_json(path, {"commit": commit, "key": key})
