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
    """The real multilingual-e5-small made by ../shared/tools/offline-e5 (skipped when absent).

    Point SKADAPT_TEST_MODEL at it; the default is the tool's own default location.
    """
    path = Path(
        os.environ.get("SKADAPT_TEST_MODEL", Path.home() / ".cache/skadapt-offline/multilingual-e5-small")
    )
    if not (path / "model.safetensors").is_file():
        pytest.skip(f"real multilingual-e5-small not found at {path}; run ../shared/tools/offline-e5")
    return path
