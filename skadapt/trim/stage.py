"""The ``trim`` pipeline stage: trims the stage's input model into the stage directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skadapt.languages import get_language
from skadapt.pipeline import StageContext
from skadapt.recipe import TrimConfig
from skadapt.trim.trimmer import trim_model


def run_stage(ctx: StageContext) -> dict[str, Any]:
    """Trim ``ctx.input_model`` with the recipe's ``trim`` section into ``ctx.out_dir``.

    The parity sample is drawn with the recipe seed; the model card names the recipe language.

    Returns:
        The trim summary (rows, parameters, counts fingerprint, coverage, parity, exact) for the manifest.
    """
    config = ctx.config
    assert isinstance(config, TrimConfig)
    language = get_language(ctx.recipe.language)
    return trim_model(
        ctx.input_model,
        config,
        Path(ctx.out_dir),
        show_progress=True,
        seed=ctx.recipe.seed,
        language=language.iso639_1 or language.code,
    )
