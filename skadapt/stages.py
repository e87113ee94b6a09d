"""The explicit list of stages, in run order (each an optional recipe section of the same name).

Everything else that knows the stages reads them here: the recipe's sections, the pipeline, the preflight,
the plan, the keys and the commands (``skadapt <stage>``). Adding a stage is its own package (its
:class:`~skadapt.stage.Stage`: config, run, result, report, plan, inputs, ...) plus its line in
:data:`STAGES`; a stage from outside the package (a plugin, a test) joins with :func:`register`.
"""

from __future__ import annotations

from typing import Any

from skadapt.config import MODEL_NAMES
from skadapt.errors import SkadaptError
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


def _name_models(stages: tuple[Stage[Any], ...]) -> None:
    """Add the models ``stages`` make to :data:`skadapt.config.MODEL_NAMES` (what ``evaluate.models`` may
    name)."""
    for stage in stages:
        for name in ((stage.name,) if stage.makes_model else ()) + stage.models:
            if name not in MODEL_NAMES:
                MODEL_NAMES.append(name)


_name_models(STAGES)


def every_stage() -> tuple[Stage[Any], ...]:
    """Every stage in run order, those added with :func:`register` since import included (what a stage that
    walks the others, publish, gets in :attr:`~skadapt.stage.StageContext.stages`)."""
    return STAGES


def register(stage: Stage[Any], *, before: str | None = None) -> None:
    """Add a stage from outside this list (a plugin, a test) to :data:`STAGES` and the names derived from it.

    Call it before importing :mod:`skadapt.recipe`, :mod:`skadapt.api` or :mod:`skadapt.cli` (a plugin
    registers on its own import): they build the recipe's sections and the commands from the list when
    they are imported.

    Args:
        stage: The stage.
        before: The stage it runs before (default: it runs last).

    Raises:
        SkadaptError: A stage of that name exists, or ``before`` names none.
    """
    global STAGES, STAGE_NAMES, MODEL_STAGES, LLM_STAGES
    if stage.name in BY_NAME:
        raise SkadaptError(f"stage {stage.name!r}: a stage of that name exists")
    if before is not None and before not in BY_NAME:
        raise SkadaptError(f"before={before!r}: no such stage; stages are {', '.join(STAGE_NAMES)}")
    at = STAGE_NAMES.index(before) if before is not None else len(STAGES)
    STAGES = (*STAGES[:at], stage, *STAGES[at:])
    STAGE_NAMES = tuple(s.name for s in STAGES)
    MODEL_STAGES = tuple(s.name for s in STAGES if s.makes_model)
    LLM_STAGES = tuple(s.name for s in STAGES if s.uses_llm)
    BY_NAME.clear()
    BY_NAME.update({s.name: s for s in STAGES})
    _name_models((stage,))
