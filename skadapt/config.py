"""Base of every config section (recipe sections, stage options) and the field types they share."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from skadapt.errors import SkadaptError, UsageError

PositiveInt = Annotated[int, Field(gt=0)]
PositiveFloat = Annotated[float, Field(gt=0)]
Fraction = Annotated[float, Field(ge=0, le=1)]


def require_unique_names(items: list[Any], what: str) -> list[Any]:
    """``items`` (objects with a ``name``) unchanged, or a ValueError listing the repeated names."""
    names = [item.name for item in items]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"{what} names must be unique, repeated: {', '.join(repeated)}")
    return items


class Section(BaseModel):
    """Base of every recipe model: unknown fields are errors, assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


Tier = Literal["onnx", "onnx-int8", "static"]
"""A deployment tier of the final model (the export stage): fp32 ONNX, dynamic-int8 ONNX, model2vec static."""
TIERS: tuple[str, ...] = get_args(Tier)
DIMS_TIER = re.compile(r"dims-[1-9][0-9]*")
"""A Matryoshka tier of the final model (the export stage's ``dims``): ``dims-128`` is it truncated to 128
dimensions and renormalized."""


def dims_tier(dim: int) -> str:
    """The name of the Matryoshka tier of ``dim`` dimensions: ``dims-<dim>``."""
    return f"dims-{dim}"


def is_tier(name: str) -> bool:
    """Whether a model label names a deployment tier (one of :data:`TIERS` or a ``dims-<d>`` tier)."""
    return name in TIERS or DIMS_TIER.fullmatch(name) is not None


MODEL_NAMES: list[str] = ["base", "final", *TIERS]
"""The models a run may name: the base model, the last model kept, its tiers, and what the stages make
(:mod:`skadapt.stages` adds each model stage's name and its side models, those registered too)."""


def _known_model(name: str) -> str:
    if name not in MODEL_NAMES:
        raise ValueError(f"unknown model {name!r}; the run's models are {', '.join(MODEL_NAMES)}")
    return name


ModelRef = Annotated[str, AfterValidator(_known_model)]
"""A model of the run (one of :data:`MODEL_NAMES`): the base model, a model stage's output, the last model
kept, a side model of a stage (fine-tuning's plain arm), or a tier of the final model."""


class RecipeError(SkadaptError, ValueError):
    """A recipe that cannot be loaded; ``str()`` is the complete user-facing message."""


class OptionError(RecipeError, UsageError):
    """A command-line value a section or recipe rejects (an option, a ``--set KEY=VALUE``): a usage error."""


def got(value: Any) -> str:
    """`` (got VALUE)`` for an error message: the value a field was given, short; '' for a whole mapping or
    list (a section-level rule's message names what is wrong, not the section's repr)."""
    if isinstance(value, dict | list | BaseModel):
        return ""
    text = repr(value)
    return f" (got {text if len(text) <= 80 else text[:77] + '...'})"
