"""Loading a sentence-transformers model to train with or beside: the starting model, the GIST guide, the
hard-negative miner's model. Its own module, so that the GIST loss (:mod:`skadapt.train.gist`, which the
trainer's losses import) loads its guide without importing the trainer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skadapt.errors import SkadaptError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


def load_model(model: str) -> SentenceTransformer:
    """Load the starting model (local directory or Hub id) as it is saved (its own max_seq_length), once
    its tokenizer passed :func:`skadapt.tokenizer_check.check_loaded`.

    Raises:
        SkadaptError: The model cannot be loaded, or its tokenizer reads ordinary text mostly as unknown.
    """
    from sentence_transformers import SentenceTransformer

    from skadapt.tokenizer_check import check_loaded

    try:
        loaded = SentenceTransformer(model)
    except Exception as error:  # missing dir, no network, not a model: one clear message
        raise SkadaptError(
            f"cannot load model {model!r} ({type(error).__name__}: {str(error)[:300]}); give a "
            "sentence-transformers directory or a reachable Hub id"
        ) from None
    check_loaded(loaded, model)
    return loaded
