"""The recipe of the fine-tuning tests on the tiny models: small batches, a high learning rate."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data" / "finetune"
"""The fine-tuning tests' Slovak NLI and STS training files."""
NLI_STS = [
    {"name": "nli", "kind": "nli", "source": str(DATA / "sk_train_nli.jsonl"), "max_samples": 48},
    {"name": "sts", "kind": "sts", "source": str(DATA / "sk_train_sts.jsonl"), "max_samples": 48},
]
"""Two datasets, two losses: the default of :func:`tiny_recipe`."""


def tiny_recipe(
    model: Path, run_dir: Path, datasets: list[dict[str, Any]] | None = None, **finetune: Any
) -> dict[str, Any]:
    """A recipe (as data) fine-tuning ``model`` on ``datasets`` (default :data:`NLI_STS`) into ``run_dir``:
    batch 8, learning rate 1e-3, 2 epochs, 32 tokens, a checkpoint every 4 steps; ``finetune`` overrides any
    field of the finetune section."""
    section = {
        "datasets": copy.deepcopy(NLI_STS if datasets is None else datasets),  # tests edit their recipe
        "batch_size": 8,
        "learning_rate": 1e-3,
        "epochs": 2,
        "max_seq_length": 32,
        "save_steps": 4,
        **finetune,
    }
    return {
        "name": "tiny",
        "language": "slk",
        "base_model": str(model),
        "output_dir": str(run_dir),
        "finetune": section,
    }
