"""Generation cache: sqlite (WAL) keyed by everything that decides an LLM's answer.

A rerun sends no request for a cached item, an interrupted run keeps every answer that arrived (each is
committed on arrival), and several processes may share one file (WAL + busy timeout).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any

from skadapt.llm.types import ChatRequest

SCHEMA = """
CREATE TABLE IF NOT EXISTS generations (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    created REAL NOT NULL,
    meta TEXT NOT NULL
)
"""


def default_cache_path() -> Path:
    """``$SKADAPT_CACHE/llm.sqlite`` (``~/.cache/skadapt`` when the variable is unset)."""
    root = os.environ.get("SKADAPT_CACHE") or Path.home() / ".cache" / "skadapt"
    return Path(root) / "llm.sqlite"


def request_key(backend: dict[str, Any], request: ChatRequest, template_version: str) -> str:
    """sha256 over the backend identity, the prompt template version, the messages, every sampling
    parameter, the seed and the output schema."""
    payload = {
        "backend": backend,
        "template": template_version,
        "messages": list(request.messages),
        "sampling": vars(request.sampling),
        "seed": request.seed,
        "schema": request.json_schema,
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class GenerationCache:
    """Answers by request key, stored in one sqlite file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA busy_timeout=60000")
        self._db.execute(SCHEMA)

    def get_many(self, keys: list[str]) -> dict[str, str]:
        """The cached answers among ``keys``."""
        found: dict[str, str] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT key, text FROM generations WHERE key IN ({marks})", chunk)
            found.update(dict(rows.fetchall()))
        return found

    def put(self, key: str, text: str, meta: dict[str, Any] | None = None) -> None:
        """Store one answer (committed at once; a second writer of the same key keeps the first)."""
        self._db.execute(
            "INSERT OR IGNORE INTO generations (key, text, created, meta) VALUES (?, ?, ?, ?)",
            (key, text, time.time(), json.dumps(meta or {}, ensure_ascii=False)),
        )

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM generations").fetchone()[0])

    def close(self) -> None:
        """Close the connection."""
        self._db.close()
