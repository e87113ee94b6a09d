"""The parity sample: a seeded, uniform sample of the counted texts, drawn while they stream past.

Each text gets a pseudo-random 64-bit priority computed from the seed and its position in the stream
alone (SplitMix64), and the sample is the ``size`` texts with the smallest priorities (bottom-k sampling =
a uniform sample without replacement). Because a priority depends on nothing but (seed, position):

- the sample is the same whether it is drawn while counting, by re-reading the source later, or across a
  count interrupted and resumed from a checkpoint (the sampler state is saved with the partial counts);
- the work per batch is one vectorized hash; only texts that beat the current k-th priority touch the
  heap (about ``k * ln(n / k)`` of ``n`` texts).
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

_MASK = (1 << 64) - 1
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)


def _splitmix64(values: np.ndarray) -> np.ndarray:
    """SplitMix64 finalizer of a uint64 array (wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        z = values + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _MIX_1
        z = (z ^ (z >> np.uint64(27))) * _MIX_2
        return z ^ (z >> np.uint64(31))


def priorities(seed: int, positions: np.ndarray) -> np.ndarray:
    """Priority (uint64) of each stream position under ``seed``; the sample keeps the smallest."""
    key = _splitmix64(np.array([seed & _MASK], dtype=np.uint64))
    return _splitmix64(positions.astype(np.uint64) ^ key[0])


class ParitySampler:
    """Bottom-k sample of a text stream, fed batch by batch in stream order.

    Attributes:
        size: Texts to keep (0 = sample nothing, only advance the position).
        seed: The sampling seed (the recipe seed).
        position: Texts observed so far (the stream position of the next text).
    """

    def __init__(self, size: int, seed: int, position: int = 0) -> None:
        self.size = max(size, 0)
        self.seed = seed
        self.position = position
        self._heap: list[tuple[int, int, str]] = []  # (-priority, position, text): max-heap on priority

    def observe(self, texts: Sequence[str]) -> None:
        """Offer the next texts of the stream."""
        start = self.position
        self.position += len(texts)
        if self.size == 0 or not texts:
            return
        keys = priorities(self.seed, np.arange(start, start + len(texts), dtype=np.uint64))
        heap = self._heap
        candidates: Iterable[int] = range(len(texts))
        if len(heap) >= self.size:
            candidates = np.flatnonzero(keys < np.uint64(-heap[0][0])).tolist()
        for index in candidates:
            entry = (-int(keys[index]), start + index, texts[index])
            if len(heap) < self.size:
                heapq.heappush(heap, entry)
            elif entry[0] > heap[0][0]:
                heapq.heapreplace(heap, entry)

    def sample(self) -> list[str]:
        """The sampled texts, in stream order."""
        return [text for _, _, text in sorted(self._heap, key=lambda entry: entry[1])]

    def state(self) -> dict[str, Any]:
        """JSON-friendly state, saved with checkpointed counts (see :meth:`from_state`)."""
        items = sorted(self._heap, key=lambda entry: entry[1])
        return {
            "size": self.size,
            "seed": self.seed,
            "position": self.position,
            "items": [[position, text] for _, position, text in items],
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> ParitySampler:
        """A sampler continuing from :meth:`state`."""
        sampler = cls(int(state["size"]), int(state["seed"]), int(state["position"]))
        items = [(int(position), str(text)) for position, text in state["items"]]
        if items:
            keys = priorities(sampler.seed, np.array([p for p, _ in items], dtype=np.uint64))
            sampler._heap = [(-int(k), p, t) for k, (p, t) in zip(keys, items, strict=True)]
            heapq.heapify(sampler._heap)
        return sampler

    def matches(self, size: int, seed: int) -> bool:
        """Whether this sampler draws the sample of that size and seed."""
        return self.size == max(size, 0) and self.seed == seed


def sample_stream(texts: Iterable[str], size: int, seed: int, batch_size: int = 1000) -> list[str]:
    """The sample :class:`ParitySampler` draws from ``texts`` (used when re-reading a source)."""
    sampler = ParitySampler(size, seed)
    iterator = iter(texts)
    while batch := list(itertools.islice(iterator, batch_size)):
        sampler.observe(batch)
    return sampler.sample()
