"""How far a transformation moved the texts: normalized word edit distance, length ratio, embedding drift."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from skadapt.llm.language_check import WORD


def word_edit_distance(a: str, b: str) -> float:
    """Levenshtein distance over lower-cased words, divided by the longer text's word count (0-1)."""
    x, y = [w.lower() for w in WORD.findall(a)], [w.lower() for w in WORD.findall(b)]
    if not x and not y:
        return 0.0
    previous = list(range(len(y) + 1))
    for i, word in enumerate(x, 1):
        current = [i]
        for j, other in enumerate(y, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (word != other)))
        previous = current
    return previous[-1] / max(len(x), len(y))


def length_ratio(a: str, b: str) -> float:
    """Words of the transformed text per word of the original."""
    return len(WORD.findall(b)) / max(len(WORD.findall(a)), 1)


def embedding_drift(original: np.ndarray, transformed: np.ndarray) -> np.ndarray:
    """1 - cosine between each original embedding and its transformed text's."""
    a = original / np.linalg.norm(original, axis=1, keepdims=True)
    b = transformed / np.linalg.norm(transformed, axis=1, keepdims=True)
    return 1 - (a * b).sum(axis=1)


def diversity(pairs: Sequence[tuple[str, str]], model: object | None = None) -> dict[str, float]:
    """Means over (original, transformed) pairs; drift needs a sentence-transformers ``model``."""
    if not pairs:
        return {"pairs": 0}
    result = {
        "pairs": len(pairs),
        "word_edit_distance": float(np.mean([word_edit_distance(a, b) for a, b in pairs])),
        "length_ratio": float(np.mean([length_ratio(a, b) for a, b in pairs])),
    }
    if model is not None:
        originals = model.encode([a for a, _ in pairs], convert_to_numpy=True)  # type: ignore[attr-defined]
        changed = model.encode([b for _, b in pairs], convert_to_numpy=True)  # type: ignore[attr-defined]
        result["embedding_drift"] = float(
            np.mean(embedding_drift(np.asarray(originals), np.asarray(changed)))
        )
    return result
