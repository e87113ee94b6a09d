"""The trained static tier: a static table fitted to its parent's sentence embeddings of corpus texts.

The method of tokenlearn (the parent's sentence embeddings of a corpus are the targets of a static table
started from the distillation), made to work on small corpora and on XLM-R/E5 vocabularies (tokenlearn
0.2.1 takes its padding id from ``token_to_id("[PAD]")``, ``None`` for ``<pad>`` vocabularies, and then
zeroes every token's weight):

1. **distill**: ``model2vec.distill_from_model`` on the model's own (trimmed) vocabulary, without PCA or
   SIF: one vector per token, the token alone through the transformer and its pooling;
2. **featurize**: the parent encodes the corpus texts (with its query prompt) once: the sentence
   embeddings are the targets, and the same pass gives every token's contextual output vectors;
3. **start**: a token seen in the corpus starts from the mean of its contextual vectors (shrunk toward
   the estimate of step 4 by ``shrinkage`` pseudo-counts), any other token from a ridge regression of the
   contextual means on the distilled vectors of the seen tokens (mean pooling of contextual vectors is
   what the parent's own pooling does);
4. **fit**: a ridge-regularised linear map from the static sentence embeddings (of the texts with and
   without the prompt) to the parent's centred sentence embeddings, folded into the table: the static
   model averages its rows, so ``mean(rows) @ W + b == mean(rows @ W + b)`` exactly;
5. **train** (``epochs`` > 0): the table itself with sentence-transformers' trainer — a
   ``StaticEmbedding`` started from the fitted table, ``Normalize``, ``MSELoss`` to the normalized
   targets (a cosine distillation loss);
6. **project** to ``pca_dims``: the principal directions of the centred targets.

The result is saved in model2vec's format plus sentence-transformers' layout (``static.py``), like the
distilled tier: ``StaticModel.from_pretrained(dir)`` and ``SentenceTransformer(dir)`` load it.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from skadapt.console import training_console
from skadapt.export.config import StaticTraining
from skadapt.export.corpus import Corpus
from skadapt.export.onnx import ExportError
from skadapt.export.static import save_static

log = logging.getLogger("skadapt.export")

TOKEN_RIDGE = 1e-2
"""Ridge penalty, relative to the mean squared norm of the distilled vectors, of the regression that
estimates an unseen token's contextual mean from its distilled vector."""
ENCODE_CHUNK = 256
"""Texts per encoding call of the featurization (bounds the token vectors held at once)."""


def prompt_text(prompts: dict[str, str], training: StaticTraining) -> str | None:
    """The parent's prompt that ``training.prompt`` names; None without a name, or for the default name
    when the model has no prompts at all (the preflight checks it on the base model's prompts too).

    Raises:
        ExportError: The model has prompts, but none called ``name``, or it was named explicitly.
    """
    name, explicit = training.prompt, "prompt" in training.model_fields_set
    if name is None or (not prompts and not explicit):
        return None
    if name not in prompts:
        have = ", ".join(sorted(prompts)) or "none"
        raise ExportError(
            f"export.static_training.prompt: the model has no prompt {name!r} (its prompts: {have}); name "
            "one of them, or null for none"
        )
    return str(prompts[name]) or None


def _token_lookup(model: Any, tokenizer: Any) -> np.ndarray:
    """Parent token id -> static token id (-1: special tokens and tokens the static vocabulary lacks)."""
    vocab = model.tokenizer.get_vocab()
    lookup = np.full(max(vocab.values()) + 1, -1, dtype=np.int64)
    special = set(getattr(model.tokenizer, "all_special_ids", []) or [])
    for token, pid in vocab.items():
        sid = tokenizer.token_to_id(token)
        if sid is not None and pid not in special:
            lookup[pid] = sid
    return lookup


def forward_outputs(
    model: Any, texts: list[str], prompt: str | None, batch_size: int
) -> list[dict[str, Any]]:
    """Per text (in order), the model's sentence embedding, token outputs and input ids, on CPU tensors.

    What ``SentenceTransformer.encode(output_value=None)`` gives (the same length-sorted batches), through
    the public ``preprocess`` and forward pass: sentence-transformers 6.0.1's ``encode`` fails on it
    ("string index out of range") when a batch's features hold a string.
    """
    import torch
    from sentence_transformers.util import batch_to_device

    order = np.argsort([-len(text) for text in texts])  # encode's order: longest first
    outputs: list[dict[str, Any]] = [{} for _ in texts]
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            features = model.preprocess([texts[i] for i in rows], prompt=prompt)
            out = model(batch_to_device(features, model.device))
            for j, i in enumerate(rows):
                outputs[i] = {
                    key: out[key][j].cpu() for key in ("sentence_embedding", "token_embeddings", "input_ids")
                }
    return outputs


def featurize(
    model: Any, texts: list[str], prompt: str | None, lookup: np.ndarray, vocabulary: int, batch_size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The parent's normalized sentence embeddings of ``texts`` and, from the same pass, the sum and count of
    every static token's contextual output vectors.

    Returns:
        ``(targets [texts, dim], sums [vocabulary, hidden], counts [vocabulary])``.
    """
    targets: list[np.ndarray] = []
    sums: np.ndarray | None = None
    counts = np.zeros(vocabulary, dtype=np.int64)
    for start in range(0, len(texts), ENCODE_CHUNK):
        chunk = texts[start : start + ENCODE_CHUNK]
        for output in forward_outputs(model, chunk, prompt, batch_size):
            targets.append(output["sentence_embedding"].float().numpy())
            tokens = output["token_embeddings"].float().numpy().astype(np.float64)
            ids = lookup[output["input_ids"].numpy()]
            if sums is None:
                sums = np.zeros((vocabulary, tokens.shape[1]), dtype=np.float64)
            keep = ids >= 0
            np.add.at(sums, ids[keep], tokens[: len(ids)][keep])
            np.add.at(counts, ids[keep], 1)
    assert sums is not None
    embeddings = np.stack(targets).astype(np.float64)
    embeddings /= np.maximum(np.linalg.norm(embeddings, axis=1, keepdims=True), 1e-12)
    return embeddings, sums, counts


def initial_table(
    distilled: np.ndarray, sums: np.ndarray, counts: np.ndarray, shrinkage: float
) -> np.ndarray:
    """Step 3: contextual means for seen tokens, shrunk toward the ridge estimate from the distilled vectors
    that every unseen token gets."""
    from sklearn.linear_model import Ridge

    seen = counts > 0
    means = sums[seen] / counts[seen, None]
    alpha = TOKEN_RIDGE * float((distilled**2).sum(1).mean())
    estimate = Ridge(alpha=alpha).fit(distilled[seen], means, sample_weight=np.sqrt(counts[seen]))
    table = estimate.predict(distilled)
    table[seen] = (sums[seen] + shrinkage * table[seen]) / (counts[seen] + shrinkage)[:, None]
    return table


def _pooling(tokenizer: Any, texts: list[str], vocabulary: int) -> Any:
    """The sparse [texts, vocabulary] matrix whose product with the table is the static model's (mean-pooled,
    unnormalized) sentence embedding of each text."""
    from scipy.sparse import csr_matrix

    rows, cols, values = [], [], []
    for i, encoding in enumerate(tokenizer.encode_batch(texts, add_special_tokens=False)):
        ids = encoding.ids or []
        rows += [i] * len(ids)
        cols += ids
        values += [1.0 / len(ids)] * len(ids) if ids else []
    return csr_matrix((values, (rows, cols)), shape=(len(texts), vocabulary))


def fit_map(table: np.ndarray, pooled: Any, targets: np.ndarray, ridge: float) -> np.ndarray:
    """Step 4: the table times the ridge map from its sentence embeddings (``pooled @ table``) to
    ``targets``, plus the intercept on every row (exact under mean pooling)."""
    from sklearn.linear_model import Ridge

    features = pooled @ table
    spread = float(((features - features.mean(0)) ** 2).sum(1).mean())
    linear = Ridge(alpha=ridge * spread).fit(features, targets)
    return table @ linear.coef_.T + linear.intercept_


def train_table(
    table: np.ndarray,
    tokenizer: Any,
    texts: list[str],
    targets: np.ndarray,
    training: StaticTraining,
    seed: int,
) -> np.ndarray:
    """Step 5: the table trained with sentence-transformers' trainer (``StaticEmbedding`` + ``Normalize``,
    ``MSELoss`` to the normalized targets)."""
    import tempfile

    import torch
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.sentence_transformer.losses import MSELoss
    from sentence_transformers.sentence_transformer.modules import Normalize, StaticEmbedding

    unit = targets / np.maximum(np.linalg.norm(targets, axis=1, keepdims=True), 1e-12)
    embedding = StaticEmbedding(tokenizer, embedding_weights=torch.tensor(table, dtype=torch.float32))
    student = SentenceTransformer(modules=[embedding, Normalize()], device="cpu")
    data = Dataset.from_dict({"text": texts, "label": unit.astype(np.float32).tolist()})
    with tempfile.TemporaryDirectory(prefix="skadapt-static-") as scratch:
        args = SentenceTransformerTrainingArguments(
            output_dir=scratch,
            num_train_epochs=training.epochs,
            per_device_train_batch_size=training.batch_size,
            learning_rate=training.learning_rate,
            seed=seed,
            data_seed=seed,
            report_to=[],
            save_strategy="no",
            logging_strategy="no",
            use_cpu=True,
            disable_tqdm=True,
        )
        trainer = SentenceTransformerTrainer(
            model=student, args=args, train_dataset=data, loss=MSELoss(student)
        )
        with training_console(trainer, "export: static table"):
            trainer.train()
    return embedding.embedding.weight.detach().double().numpy()


def train_static(
    model: Any,
    out: Path,
    training: StaticTraining,
    corpus: Corpus,
    *,
    pca_dims: int | None,
    seed: int,
    batch_size: int = 32,
) -> dict[str, Any]:
    """Train a static model on ``model`` (a loaded ``SentenceTransformer``, the parent); save it at ``out``.

    Returns:
        What was done and what it cost: the corpus, the prompt, the vocabulary and dimension, the seconds
        of each step, the mean cosine to the parent's embeddings of the training texts after the fit.

    Raises:
        ExportError: The model is not a transformer with a fast tokenizer, or the prompt is unknown.
    """
    from model2vec.distill import distill_from_model

    first = model[0]
    inner = getattr(first, "model", None) or getattr(first, "auto_model", None)
    if inner is None or not getattr(getattr(first, "tokenizer", None), "is_fast", False):
        raise ExportError("the static tier needs a transformers model with a fast tokenizer")
    prompt = prompt_text(dict(getattr(model, "prompts", None) or {}), training)
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    static = distill_from_model(
        inner.eval(),
        first.tokenizer,
        device="cpu",
        pca_dims=None,
        sif_coefficient=None,
        token_remove_pattern=None,
        quantize_to="float32",
    )
    distilled = np.asarray(static.embedding, dtype=np.float64)
    tokenizer = static.tokenizer
    vocabulary = distilled.shape[0]
    seconds["distill"] = time.perf_counter() - started
    log.info("export: static training: featurizing %d texts with the parent", len(corpus.texts))
    started = time.perf_counter()
    lookup = _token_lookup(model, tokenizer)
    targets, sums, counts = featurize(model, corpus.texts, prompt, lookup, vocabulary, batch_size)
    seconds["featurize"] = time.perf_counter() - started
    started = time.perf_counter()
    centred = targets - targets.mean(0)
    forms = [corpus.texts] + ([[prompt + text for text in corpus.texts]] if prompt else [])
    inputs = [text for form in forms for text in form]
    stacked = np.vstack([centred] * len(forms))
    table = initial_table(distilled, sums, counts, training.shrinkage)
    pooled = _pooling(tokenizer, inputs, vocabulary)
    unknown = _unknown_id(tokenizer)
    if unknown is not None:
        table[unknown] = 0.0
    table = fit_map(table, pooled, stacked, training.ridge)
    seconds["fit"] = time.perf_counter() - started
    if training.epochs > 0:
        log.info("export: static training: %g epochs of the table", training.epochs)
        started = time.perf_counter()
        table = train_table(table, tokenizer, inputs, stacked, training, seed)
        seconds["train"] = time.perf_counter() - started
    unknown = _unknown_id(tokenizer)
    if unknown is not None:  # model2vec leaves <unk> out of the mean: a zero row has the same direction
        table[unknown] = 0.0
    agreement = _agreement(pooled @ table, stacked)
    dims = pca_dims if pca_dims is not None and pca_dims < table.shape[1] else None
    if dims is not None:
        _, _, components = np.linalg.svd(centred, full_matrices=False)
        table = table @ components[:dims].T
    save_static(static, table.astype(np.float32), out, pca_dims=dims, sif_coefficient=None)
    return {
        "method": "trained",
        "vocabulary": int(table.shape[0]),
        "dimension": int(table.shape[1]),
        "pca_dims": dims,
        "corpus": {
            "sources": corpus.sources,
            "texts": len(corpus.texts),
            "sentences_added": corpus.sentences_added,
            "dropped_eval_overlap": corpus.dropped_eval_overlap,
            "tokens_seen": int((counts > 0).sum()),
            "token_occurrences": int(counts.sum()),
        },
        "prompt": prompt,
        "epochs": training.epochs,
        "train_cosine": round(agreement, 4),
        "seconds": {step: round(value, 2) for step, value in seconds.items()},
    }


def _unknown_id(tokenizer: Any) -> int | None:
    """The static tokenizer's unknown-token id (its model's ``unk_token``/``unk_id``), which model2vec drops
    before averaging."""
    import json

    model = json.loads(tokenizer.to_str())["model"]
    if isinstance(model.get("unk_id"), int):
        return int(model["unk_id"])
    token = model.get("unk_token")
    return tokenizer.token_to_id(token) if isinstance(token, str) else None


def _agreement(outputs: np.ndarray, targets: np.ndarray) -> float:
    """Mean cosine between the static sentence embeddings and the (centred) targets."""
    norms = np.linalg.norm(outputs, axis=1) * np.linalg.norm(targets, axis=1)
    return float(((outputs * targets).sum(1) / np.maximum(norms, 1e-12)).mean())
