"""Encode each (prompt, text) once per model during an evaluation.

mteb encodes a task's texts through the model's ``encode``/``encode_query``/``encode_document``; the
per-task bootstrap (:mod:`skadapt.evaluate.bootstrap`) needs the same embeddings again, and several
tasks share texts. :func:`memoize` wraps one loaded ``SentenceTransformer``'s ``encode`` so that a text
already encoded with the same prompt and options is served from memory: the embedding its first encode
computed (encoding it again in another batch could differ in the last float bits, through padding).
:func:`memoized` does it for one block: the fine-tuning stage's dev sets' power reads the starting model's
dev embeddings its dev evaluator made, before training changes the model.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

PASSTHROUGH_OPTIONS = ("output_value", "precision", "truncate_dim", "pool", "chunk_size", "device")
"""encode() options the memo does not handle: a call that sets any of them goes to the model."""


class EncodeMemo:
    """A model's ``encode`` with a memory of what it has encoded.

    Attributes:
        hits: Texts served from memory.
        misses: Texts encoded by the model.
    """

    def __init__(self, model: Any) -> None:
        self.model = model
        self.original = model.encode
        self.store: dict[tuple[Any, ...], np.ndarray] = {}
        self.hits = 0
        self.misses = 0

    def _prompt(self, prompt_name: str | None, prompt: str | None) -> str:
        if prompt is not None:
            return prompt
        name = prompt_name or getattr(self.model, "default_prompt_name", None)
        return (self.model.prompts or {}).get(name, "") if name else ""

    def encode(
        self, inputs: Any = None, prompt_name: str | None = None, prompt: str | None = None, **options: Any
    ) -> Any:
        """``SentenceTransformer.encode`` for lists of texts, memoized; anything else goes to the model."""
        texts = inputs if inputs is not None else options.pop("sentences", None)
        unusual = any(
            options.get(key) not in (None, "sentence_embedding", "float32") for key in PASSTHROUGH_OPTIONS
        )
        if unusual or not isinstance(texts, list | tuple) or not all(isinstance(t, str) for t in texts):
            return self.original(texts, prompt_name=prompt_name, prompt=prompt, **options)
        text_prompt = self._prompt(prompt_name, prompt)
        as_tensor = bool(options.pop("convert_to_tensor", False))
        options.pop("convert_to_numpy", None)
        normalize = bool(options.get("normalize_embeddings", False))
        task = options.get("task")
        keys = [(text_prompt, normalize, task, text) for text in texts]
        missing = list(dict.fromkeys(key for key in keys if key not in self.store))
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        if missing:
            encoded = self.original(
                [key[-1] for key in missing], prompt=text_prompt, convert_to_numpy=True, **options
            )
            for key, row in zip(missing, np.asarray(encoded), strict=True):
                self.store[key] = row
        result = np.stack([self.store[key] for key in keys]) if keys else np.zeros((0, 0), np.float32)
        if as_tensor:
            import torch

            return torch.from_numpy(result)
        return result


@contextmanager
def memoized(model: Any) -> Iterator[Any]:
    """``model`` with a memoized ``encode`` (:func:`memoize`) inside the block, and its own after it (one
    memoized before keeps its memo): what one encoding serves twice, before the model changes."""
    if hasattr(model, "encode_memo"):
        yield model
        return
    memoize(model)
    try:
        yield model
    finally:
        del model.encode
        del model.encode_memo


def memoize(model: Any) -> Any:
    """Give ``model`` a memoized ``encode`` (its ``encode_query``/``encode_document`` go through it)."""
    if not isinstance(getattr(model, "encode", None), EncodeMemo) and not hasattr(model, "encode_memo"):
        memo = EncodeMemo(model)
        model.encode = memo.encode
        model.encode_memo = memo
    return model
