"""The corpus basis of a model's embeddings and the linear maps appended to a model as plain modules.

Both the renorm stage (its projection candidates) and the export stage (its dims tiers) reduce a model's
embedding to its top ``d`` directions on corpus text: the right singular vectors of the uncentered matrix
of its (unit) embeddings of corpus texts, each text encoded with each of the model's prompts, ordered by
singular value. The full basis is a rotation (cosines at the full dimension are unchanged); the top ``d``
keep the most of the embeddings' energy on that text that any ``d``-dimensional projection can.

A map is appended as sentence-transformers' own ``Dense`` (identity activation; weight, optional bias), so
the result loads in vanilla ``SentenceTransformer(path)`` without skadapt or remote code.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

BASIS_TEXTS = 2000
"""Corpus texts a basis is fitted on at most, each encoded with each prompt of the model: well above any
model dimension, a minute or two of encoding on a CPU."""


@dataclass
class Basis:
    """A model's embedding basis fitted on corpus text: ``vectors`` (rows, orthonormal, by decreasing
    singular value), what was fitted (``report``: texts, prompts, seconds, share of energy kept) and its
    ``name`` (``corpus``; the dims tiers' ``parallel``: corpus plus parallel text)."""

    vectors: np.ndarray
    report: dict[str, Any]
    name: str = "corpus"


def basis_prompts(model: Any) -> list[str]:
    """The distinct prompt strings of a loaded ``SentenceTransformer`` (``[""]`` without prompts)."""
    return sorted(set((getattr(model, "prompts", None) or {}).values())) or [""]


def basis_of(embeddings: np.ndarray) -> tuple[np.ndarray, dict[int, float]]:
    """The right singular vectors of ``embeddings`` (rows: unit vectors, uncentered) as rows by decreasing
    singular value, and per power-of-two ``d`` below the dimension the share of energy the top ``d`` keep."""
    stacked = np.asarray(embeddings, dtype=np.float64)
    values, columns = np.linalg.eigh(stacked.T @ stacked)  # its right singular vectors, a full basis
    order = np.argsort(values)[::-1]
    vectors, values = columns[:, order].T, np.clip(values[order], 0.0, None)
    energy = np.cumsum(values) / np.sum(values)
    kept = {d: round(float(energy[d - 1]), 4) for d in (2**k for k in range(4, 12)) if d < len(energy)}
    return vectors, kept


def sample_embeddings(model: Any, texts: list[str], batch_size: int = 32) -> np.ndarray:
    """``model``'s embeddings of ``texts[:BASIS_TEXTS]``, each text encoded with each of its prompts
    (:func:`basis_prompts`), stacked prompt by prompt: what a basis is fitted on."""
    sample = texts[:BASIS_TEXTS]
    return np.concatenate(
        [
            model.encode(sample, prompt=p, batch_size=batch_size, convert_to_numpy=True)
            for p in basis_prompts(model)
        ]
    )


def fit_basis(model: Any, texts: list[str], batch_size: int = 32) -> Basis:
    """The basis of ``model``'s (a loaded ``SentenceTransformer``) embeddings of ``texts[:BASIS_TEXTS]``,
    each text encoded with each of its prompts (:func:`basis_prompts`); the report gives, per power-of-two
    ``d``, the share of the embeddings' energy the top ``d`` directions keep."""
    started = time.perf_counter()
    sample = texts[:BASIS_TEXTS]
    prompts = basis_prompts(model)
    vectors, kept = basis_of(sample_embeddings(model, sample, batch_size))
    return Basis(
        vectors,
        {
            "texts": len(sample),
            "prompts": prompts,
            "energy_kept": kept,
            "seconds": round(time.perf_counter() - started, 1),
        },
    )


def dense_module(weight: np.ndarray, bias: np.ndarray | None = None) -> Any:
    """sentence-transformers' ``Dense`` computing ``x @ weight.T (+ bias)`` (identity activation, float32)."""
    import torch
    from sentence_transformers.sentence_transformer.modules import Dense

    out_features, in_features = weight.shape
    return Dense(
        in_features=int(in_features),
        out_features=int(out_features),
        bias=bias is not None,
        activation_function=torch.nn.Identity(),
        init_weight=torch.tensor(np.asarray(weight, dtype=np.float32)),
        init_bias=None if bias is None else torch.tensor(np.asarray(bias, dtype=np.float32)),
    )
