"""Each distinct text of a dev set encoded once: what the dev evaluators that encode their texts themselves
and the dev scores computed from embeddings (:mod:`skadapt.tasks.dev_scores`) share, so that both see the
same vectors to the last bit (a text encoded again in another batch could differ through padding)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def encode_distinct(fn: Callable[..., Any], texts: list[str], batch_size: int, **kwargs: Any) -> np.ndarray:
    """``fn`` (a model's encode method) on the distinct ``texts`` once, rows in the order of ``texts``.

    Args:
        fn: ``model.encode`` (or ``encode_query`` / ``encode_document``).
        texts: The texts, repeats allowed.
        batch_size: Encoding batch size.
        **kwargs: Passed to ``fn`` (a prompt, ...).

    Returns:
        float32 embeddings, one row per text of ``texts``.
    """
    unique = list(dict.fromkeys(texts))
    vectors = np.asarray(
        fn(unique, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False, **kwargs),
        dtype=np.float32,
    )
    where = {text: i for i, text in enumerate(unique)}
    return vectors[[where[text] for text in texts]]
