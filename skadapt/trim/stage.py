"""The ``trim`` pipeline stage: trims the stage's input model into the stage directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skadapt.pipeline import StageContext
from skadapt.recipe import TrimConfig
from skadapt.trim.trimmer import trim_model


def run_stage(ctx: StageContext) -> dict[str, Any]:
    """Trim ``ctx.input_model`` with the recipe's ``trim`` section into ``ctx.out_dir``.

    Returns:
        The trim summary (rows, parameters, counts fingerprint, parity) for the stage manifest.
    """
    config = ctx.config
    assert isinstance(config, TrimConfig)
    return trim_model(ctx.input_model, config, Path(ctx.out_dir), show_progress=True)
