"""WiSE-FT: weight-space interpolation between the starting and the fine-tuned model, chosen on dev.

``theta(a) = (1 - a) * theta_start + a * theta_tuned`` for every floating-point tensor (integer buffers
such as position ids are the same in both). Each ``a`` of the grid is scored on the dev set; the best one
is kept (ties go to the smaller ``a``, the model closer to where it started). ``a = 0`` is the starting
model and ``a = 1`` the fine-tuned one, so with both in the grid the result is never worse on dev than
either.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from skadapt.results.finetune import Interpolation

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer

    from skadapt.tasks.dev import DevSet

log = logging.getLogger(__name__)

TIE_TOLERANCE = 1e-9


def snapshot(model: SentenceTransformer) -> dict[str, torch.Tensor]:
    """A detached CPU copy of the model's state (the starting point of the interpolation)."""
    return {key: value.detach().to("cpu", copy=True) for key, value in model.state_dict().items()}


def mix(start: dict[str, torch.Tensor], tuned: dict[str, torch.Tensor], alpha: float) -> dict[str, Any]:
    """``(1 - alpha) * start + alpha * tuned`` on floating-point tensors; other tensors from ``tuned``.

    Raises:
        ValueError: The two states do not have the same tensors and shapes.
    """
    if start.keys() != tuned.keys():
        missing = sorted(start.keys() ^ tuned.keys())[:5]
        raise ValueError(f"interpolation: the models have different tensors ({', '.join(missing)} ...)")
    mixed = {}
    for key, end in tuned.items():
        begin = start[key]
        if begin.shape != end.shape:
            raise ValueError(f"interpolation: {key} has shape {tuple(begin.shape)} vs {tuple(end.shape)}")
        mixed[key] = (1 - alpha) * begin + alpha * end if end.is_floating_point() else end
    return mixed


def choose_interpolation(
    model: SentenceTransformer, start: dict[str, torch.Tensor], grid: list[float], dev: DevSet
) -> Interpolation:
    """Score every grid point on ``dev`` and leave ``model`` holding the best mixture.

    Args:
        model: The fine-tuned model (changed in place to the chosen mixture).
        start: :func:`snapshot` of the starting model.
        grid: Mixing coefficients in [0, 1].
        dev: The dev evaluator and its metric.
    """
    tuned = snapshot(model)
    device = next(model.parameters()).device
    scores = []
    best_alpha, best_score = None, float("-inf")
    for alpha in grid:
        model.load_state_dict({k: v.to(device) for k, v in mix(start, tuned, alpha).items()})
        score = float(dev.evaluator(model)[dev.metric])
        scores.append({"alpha": alpha, "score": round(score, 6)})
        log.info("finetune: interpolation a=%.2f: dev %s = %.4f", alpha, dev.metric, score)
        better = score > best_score + TIE_TOLERANCE
        tie_closer_to_start = abs(score - best_score) <= TIE_TOLERANCE and alpha < (best_alpha or 0)
        if best_alpha is None or better or tie_closer_to_start:
            best_alpha, best_score = alpha, score
    assert best_alpha is not None
    model.load_state_dict({k: v.to(device) for k, v in mix(start, tuned, best_alpha).items()})
    return Interpolation(chosen=best_alpha, metric=dev.metric, scores=scores)
