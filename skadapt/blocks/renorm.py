"""The renorm stage's R1/R2 as modules, outside a run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np


def renorm_modules(mu: np.ndarray, method: Literal["none", "r1", "r2"]) -> list[Any]:
    """The sentence-transformers modules the renorm stage appends to a model for ``method`` with the corpus
    mean ``mu`` of its embeddings (``renorm_mu.npy`` of its output): a ``Dense`` (R1 ``(I, -mu)``, R2
    ``(I - mu_hat mu_hat^T, 0)``), then ``Normalize``; none for ``none``."""
    from skadapt.renorm.stage import CandidateMap, renorm_weights

    if method == "none":
        return []
    return CandidateMap(method, len(mu), *renorm_weights(mu, method)).modules()
