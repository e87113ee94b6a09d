"""WiSE-FT: weight-space interpolation between the starting and the fine-tuned model, chosen on dev.

``theta(a) = (1 - a) * theta_start + a * theta_tuned`` for every floating-point tensor (integer buffers
such as position ids are the same in both). ``a = 0`` is the starting model and ``a = 1`` the fine-tuned
one. **The fine-tuned model is kept unless a mixture beats it beyond the noise**: each ``a`` of the grid
is scored on every dev set (the dev texts encoded once per ``a``, each set's metric as its evaluator
computes it: :mod:`skadapt.tasks.dev_scores`), and a mixture replaces ``a = 1`` only when the lower end of
its paired bootstrap interval of (mixture - fine-tuned) in mean dev score, one-sided at
``1 - (1 - CONFIDENCE) / (mixtures)`` (Bonferroni over the grid), is above 0; of those, the best mean is
kept. Choosing the raw best on a few hundred dev examples pulled the model back towards its start on
differences of 0.005 (noise), and the pull cost most where no dev set looked (clustering, classification).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from skadapt.results.finetune import Interpolation

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer

    from skadapt.tasks.dev import DevSet
    from skadapt.tasks.dev_scores import EncodedSet

log = logging.getLogger(__name__)


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
    model: SentenceTransformer,
    start: dict[str, torch.Tensor],
    grid: list[float],
    dev_sets: list[DevSet],
    *,
    batch_size: int = 32,
    seed: int = 42,
    known: dict[float, list[EncodedSet]] | None = None,
) -> Interpolation:
    """Score every grid point on ``dev_sets`` and leave ``model`` holding the one kept (see the module).

    Args:
        model: The fine-tuned model (changed in place to the chosen mixture).
        start: :func:`snapshot` of the starting model.
        grid: Mixing coefficients in [0, 1] (1.0, the reference, is scored whether listed or not).
        dev_sets: The dev sets, one evaluator each (:func:`skadapt.tasks.dev.build_dev_sets`).
        batch_size: Encoding batch size.
        seed: Seed of the bootstrap resamples.
        known: Dev sets already encoded at a grid point, not encoded again (0.0: the starting model's
            embeddings, which the stage's dev check before training made).
    """
    from skadapt.tasks.dev_scores import (
        CONFIDENCE,
        REPLICATES,
        encode_dev_set,
        paired_interval,
        resamples,
        score_candidate,
    )

    tuned = snapshot(model)
    device = next(model.parameters()).device
    alphas = sorted({*grid, 1.0}, reverse=True)  # the reference first
    indices: list[Any] | None = None
    scored = {}
    for alpha in alphas:
        encoded = (known or {}).get(alpha)
        if encoded is None:
            model.load_state_dict({k: v.to(device) for k, v in mix(start, tuned, alpha).items()})
            encoded = [encode_dev_set(model, dev_set, batch_size) for dev_set in dev_sets]
        indices = indices if indices is not None else resamples(encoded, REPLICATES, seed)
        scored[alpha] = score_candidate(encoded, None, indices)
        log.info("finetune: interpolation a=%.2f: mean dev score %.4f %s", alpha, scored[alpha].mean, {
            name: round(value, 4) for name, value in scored[alpha].scores.items()
        })  # fmt: skip
    reference = scored[1.0]
    level = (1 - CONFIDENCE) / max(len(alphas) - 1, 1)
    scores, winners = [], []
    for alpha in alphas:
        entry: dict[str, Any] = {
            "alpha": alpha,
            "score": round(scored[alpha].mean, 6),
            "sets": {name: round(value, 6) for name, value in scored[alpha].scores.items()},
        }
        if alpha != 1.0:
            low, high = paired_interval(scored[alpha], reference, level)
            difference = round(scored[alpha].mean - reference.mean, 6)
            entry.update(difference=difference, interval=[round(low, 6), round(high, 6)])
            if low > 0:
                winners.append(alpha)
        scores.append(entry)
    chosen = max(winners, key=lambda a: scored[a].mean, default=1.0)
    reason = _reason(chosen, scores)
    log.info("finetune: interpolation: %s", reason)
    model.load_state_dict({k: v.to(device) for k, v in mix(start, tuned, chosen).items()})
    return Interpolation(
        chosen=chosen,
        metric="mean dev score",
        scores=sorted(scores, key=lambda e: e["alpha"]),
        reason=reason,
        confidence=CONFIDENCE,
        replicates=REPLICATES,
    )


def _reason(chosen: float, scores: list[dict[str, Any]]) -> str:
    """Why ``chosen`` was kept, in one line (differences in points of mean dev score)."""
    mixtures = [e for e in scores if e["alpha"] != 1.0]
    if chosen != 1.0:
        entry = next(e for e in mixtures if e["alpha"] == chosen)
        low, high = entry["interval"]
        return (
            f"a={chosen:g} beats the fine-tuned model by {100 * entry['difference']:+.2f} "
            f"[{100 * low:+.2f}, {100 * high:+.2f}] points of mean dev score"
        )
    if not mixtures:
        return "the fine-tuned model (no mixture in the grid)"
    top = max(mixtures, key=lambda e: e["score"])
    low, high = top["interval"]
    return (
        f"the fine-tuned model (a=1): no mixture beats it beyond the noise (best: a={top['alpha']:g} "
        f"{100 * top['difference']:+.2f} [{100 * low:+.2f}, {100 * high:+.2f}] points of mean dev score)"
    )
