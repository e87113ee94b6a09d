"""The ``tokenizers.Tokenizer`` that counting and comparing use: whole texts, special ids, fingerprint."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np


def tokenizer_fingerprint(tokenizer_json: str) -> str:
    """sha256 of a serialized ``tokenizer.json``."""
    return hashlib.sha256(tokenizer_json.encode("utf-8")).hexdigest()


def load_tokenizer(tokenizer_json: str) -> Any:
    """A ``tokenizers.Tokenizer`` from JSON, with padding and truncation off (counting sees whole texts)."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(tokenizer_json)
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def special_ids(tokenizer: Any) -> np.ndarray:
    """Ids of the tokenizer's special added tokens (never counted), ascending."""
    return np.array(
        sorted(i for i, token in tokenizer.get_added_tokens_decoder().items() if token.special),
        dtype=np.int64,
    )
