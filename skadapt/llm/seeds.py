"""Per-request seeds: one item's retry or a new item never changes another item's output."""

from __future__ import annotations

import hashlib

MAX_SEED = 2**31 - 1


def request_seed(run_seed: int, item_id: str, attempt: int) -> int:
    """A seed for one request, derived from (run seed, item id, attempt) alone."""
    digest = hashlib.sha256(f"{run_seed}\x1f{item_id}\x1f{attempt}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % MAX_SEED
