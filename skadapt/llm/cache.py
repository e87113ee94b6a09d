"""Generation cache: sqlite (WAL) keyed by everything that decides an LLM's answer.

A rerun sends no request for a cached item, an interrupted run keeps every answer that arrived (each is
committed on arrival), and several processes may share one file (WAL + busy timeout). The same file keeps
what was learnt about each endpoint (the structured-output form it honours, whether it honours seeds), so
a rerun does not probe again.
"""

from __future__ import annotations

import hashlib
import json
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
FACTS = """
CREATE TABLE IF NOT EXISTS endpoint_facts (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def default_cache_path() -> Path:
    """``$SKADAPT_CACHE/llm.sqlite`` (``~/.cache/skadapt`` when the variable is unset)."""
    from skadapt.paths import cache_path

    return cache_path("llm.sqlite")


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
        self._db.execute(FACTS)

    def get_many(self, keys: list[str]) -> dict[str, str]:
        """The cached answers among ``keys``."""
        found: dict[str, str] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT key, text FROM generations WHERE key IN ({marks})", chunk)
            found.update(dict(rows.fetchall()))
        return found

    def metas(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        """The stored metadata (e.g. ``finish_reason``) of the cached answers among ``keys``."""
        found: dict[str, dict[str, Any]] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(f"SELECT key, meta FROM generations WHERE key IN ({marks})", chunk)
            found.update({key: json.loads(meta) for key, meta in rows.fetchall()})
        return found

    def get_fact(self, key: str) -> dict[str, Any] | None:
        """What was remembered about an endpoint (see :meth:`put_fact`), or None."""
        row = self._db.execute("SELECT value FROM endpoint_facts WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_fact(self, key: str, value: dict[str, Any]) -> None:
        """Remember facts about an endpoint (replacing what was known)."""
        self._db.execute(
            "INSERT OR REPLACE INTO endpoint_facts (key, value, created) VALUES (?, ?, ?)",
            (key, json.dumps(value, sort_keys=True), time.time()),
        )

    def forget_fact(self, key: str) -> None:
        """Forget an endpoint's facts (the next run probes again)."""
        self._db.execute("DELETE FROM endpoint_facts WHERE key = ?", (key,))

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
