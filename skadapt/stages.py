"""The explicit list of stages, in run order (each an optional recipe section of the same name)."""

from __future__ import annotations

from typing import Any

from skadapt.evaluate.stage import STAGE as EVALUATE
from skadapt.export.stage import STAGE as EXPORT
from skadapt.publish.stage import STAGE as PUBLISH
from skadapt.renorm.stage import STAGE as RENORM
from skadapt.robustness.stage import STAGE as ROBUSTNESS
from skadapt.stage import Stage
from skadapt.synth.stage import STAGE as SYNTH_STS
from skadapt.train.stage import STAGE as FINETUNE
from skadapt.trim.stage import STAGE as TRIM

STAGES: tuple[Stage[Any], ...] = (SYNTH_STS, TRIM, FINETUNE, RENORM, EXPORT, EVALUATE, ROBUSTNESS, PUBLISH)
"""Every stage, in run order."""

STAGE_NAMES: tuple[str, ...] = tuple(stage.name for stage in STAGES)
MODEL_STAGES: tuple[str, ...] = tuple(stage.name for stage in STAGES if stage.makes_model)
LLM_STAGES: tuple[str, ...] = tuple(stage.name for stage in STAGES if stage.uses_llm)

BY_NAME: dict[str, Stage[Any]] = {stage.name: stage for stage in STAGES}
