"""The static tier: a model2vec ``StaticModel`` distilled from the final model on its own vocabulary.

``model2vec.distill.distill_from_model`` embeds every token of the model's (trimmed) vocabulary with the
transformer and its mean pooling, reduces the vectors with PCA and weights them by SIF. The directory is
saved in model2vec's format and made loadable by ``SentenceTransformer(dir)`` as a ``StaticEmbedding``
module (``modules.json``). The static model has no attention: a prompt would add the same tokens to every
text, so it is saved without prompts, and a renormalization ``Dense`` of the parent (defined on the
transformer's sentence embeddings) is not carried: its vectors are distilled from the transformer and
pooling alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from skadapt.export.onnx import ExportError


def distill_static(model: Any, out: Path, *, pca_dims: int | None, sif_coefficient: float | None) -> dict:
    """Distill ``model`` (a loaded ``SentenceTransformer``) into a static model saved at ``out``.

    Returns:
        ``{method: "distilled", vocabulary, dimension, pca_dims, sif_coefficient}``.

    Raises:
        ExportError: The model is not a transformer with a fast tokenizer, or ``pca_dims`` exceeds its
            dimension.
    """
    from model2vec.distill import distill_from_model

    first = model[0]
    inner = getattr(first, "model", None) or getattr(first, "auto_model", None)
    tokenizer = getattr(first, "tokenizer", None)
    if inner is None or tokenizer is None or not getattr(tokenizer, "is_fast", False):
        raise ExportError("the static tier needs a transformers model with a fast tokenizer")
    dimension = int(first.get_embedding_dimension() or 0)  # distilled from the transformer, before any Dense
    if pca_dims is not None and dimension and pca_dims > dimension:
        raise ExportError(
            f"export: pca_dims {pca_dims} is larger than the model's dimension {dimension}; set it to "
            f"{dimension} or less, or null for no PCA"
        )
    dims = pca_dims if pca_dims is not None and pca_dims < dimension else None  # equal: nothing to reduce
    static = distill_from_model(
        inner.eval(),
        tokenizer,
        device="cpu",
        pca_dims=dims,
        sif_coefficient=sif_coefficient,
        token_remove_pattern=None,
    )
    static.save_pretrained(str(out))
    _sentence_transformers_layout(out)
    return {
        "method": "distilled",
        "vocabulary": int(static.embedding.shape[0]),
        "dimension": int(static.embedding.shape[1]),
        "pca_dims": dims,
        "sif_coefficient": sif_coefficient,
    }


def save_static(
    static: Any, vectors: np.ndarray, out: Path, *, pca_dims: int | None, sif_coefficient: float | None
) -> None:
    """Save ``vectors`` (one row per token of ``static``'s tokenizer) as a static model at ``out``:
    model2vec's format with ``static``'s tokenizer and config (float16 rows, as model2vec's distillation
    saves them), plus sentence-transformers' layout."""
    from model2vec import StaticModel

    config = {
        **dict(static.config),
        "apply_pca": pca_dims,
        "sif_coefficient": sif_coefficient,
        "hidden_dim": int(vectors.shape[1]),
    }
    config.pop("embedding_dtype", None)
    model = StaticModel(
        vectors=vectors.astype(np.float16), tokenizer=static.tokenizer, config=config, normalize=True
    )
    model.save_pretrained(str(out))
    _sentence_transformers_layout(out)


def _sentence_transformers_layout(out: Path) -> None:
    """Make ``out`` load as ``SentenceTransformer(out)``: one ``StaticEmbedding`` module at the root
    (model2vec's ``model.safetensors`` + ``tokenizer.json``), then ``Normalize`` (model2vec normalizes);
    module types in the ``sentence_transformers.models`` format that sentence-transformers 3.x-6.x read."""
    normalize = out / "1_Normalize"
    normalize.mkdir(exist_ok=True)
    modules = [
        {
            "idx": 0,
            "name": "0",
            "path": "",
            "type": "sentence_transformers.models.StaticEmbedding",
        },
        {
            "idx": 1,
            "name": "1",
            "path": "1_Normalize",
            "type": "sentence_transformers.models.Normalize",
        },
    ]
    (out / "modules.json").write_text(json.dumps(modules, indent=2) + "\n", encoding="utf-8")
