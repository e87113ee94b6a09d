"""How much of the counted corpus a trimmed vocabulary keeps.

When every token counted in the corpus is kept, every counted text tokenizes exactly as before (the
trimmed Unigram/WordPiece/BPE model still finds the original segmentation and nothing better), which the
parity check then enforces. When ``vocab_size`` (or ``min_frequency``) cuts counted tokens, the texts
using them re-tokenize into smaller pieces; this module measures how much: the share of counted token
occurrences kept and the most frequent dropped tokens.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

DROPPED_SHOWN = 20
"""Most frequent dropped tokens listed in the report."""


@dataclass
class CorpusCoverage:
    """Counted tokens kept by a selection.

    Attributes:
        occurrences: Counted token occurrences (special tokens excluded).
        kept_occurrences: Occurrences of kept tokens.
        distinct: Distinct counted tokens.
        dropped: Distinct counted tokens not kept.
        top_dropped: The most frequent dropped tokens as (id, token, count), most frequent first.
    """

    occurrences: int
    kept_occurrences: int
    distinct: int
    dropped: int
    top_dropped: list[tuple[int, str, int]] = field(default_factory=list)

    @property
    def share(self) -> float:
        """Share of counted token occurrences kept (1.0 for an empty count)."""
        return self.kept_occurrences / self.occurrences if self.occurrences else 1.0

    @property
    def complete(self) -> bool:
        """Whether every counted token is kept (so every counted text must tokenize identically)."""
        return self.dropped == 0

    def summary(self) -> dict[str, Any]:
        """JSON-friendly description."""
        return {
            "all_counted_tokens_kept": self.complete,
            "corpus_coverage": round(self.share, 6),
            "counted_token_occurrences": self.occurrences,
            "kept_token_occurrences": self.kept_occurrences,
            "distinct_counted_tokens": self.distinct,
            "distinct_dropped_tokens": self.dropped,
            "top_dropped_tokens": [
                {"id": index, "token": token, "count": count} for index, token, count in self.top_dropped
            ],
        }


def corpus_coverage(
    counts: np.ndarray, keep: Iterable[int], tokens: list[str], *, shown: int = DROPPED_SHOWN
) -> CorpusCoverage:
    """Coverage of the counted tokens by the kept ids.

    Args:
        counts: Corpus counts per old token id.
        keep: Kept old ids.
        tokens: Token string per old id.
        shown: How many of the most frequent dropped tokens to list.
    """
    kept = np.zeros(len(counts), dtype=bool)
    kept[[i for i in keep if i < len(counts)]] = True
    seen = counts > 0
    dropped_ids = np.flatnonzero(seen & ~kept)
    order = np.lexsort((dropped_ids, -counts[dropped_ids]))[:shown]
    top = [(int(i), tokens[i] if i < len(tokens) else "", int(counts[i])) for i in dropped_ids[order]]
    return CorpusCoverage(
        occurrences=int(counts.sum()),
        kept_occurrences=int(counts[kept].sum()),
        distinct=int(seen.sum()),
        dropped=len(dropped_ids),
        top_dropped=top,
    )
