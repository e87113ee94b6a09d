"""The robustness stage's options (recipe section ``robustness``; ``skadapt robustness`` derives its
options from it)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from skadapt.config import ModelRef, PositiveInt, Section
from skadapt.llm.config import JudgeConfig
from skadapt.robustness.transforms import resolve_transforms


class RobustnessConfig(Section):
    """Evaluation under LLM-made transformations of the test texts (uses the recipe's ``llm``)."""

    preset: Literal["pteb", "hteb", "hteb-min"] | None = Field(
        None, description="Transformations, seeds and sampling of PTEB or HTEB (fields set here win)"
    )
    validated: str | None = Field(
        None,
        description="A verdict of `skadapt annotate agreement` on rewrite sheets (validation.json): only the "
        "transformations people accepted are scored; the others are listed as rejected with their ratings",
    )
    transforms: list[str] | None = Field(
        None, description="Transformation names, or all (default: the preset's, else all)"
    )
    seeds: list[int] | None = Field(
        None, description="Seeds, one rewrite of every text each (default: the preset's, else 1337 1338 1339)"
    )
    temperature: Annotated[float, Field(ge=0, le=2)] | None = Field(
        None,
        description="Sampling temperature of the rewrites; wins over llm.temperature (default: the "
        "preset's, else llm.temperature)",
    )
    top_p: Annotated[float, Field(gt=0, le=1)] | None = Field(
        None,
        description="Nucleus sampling of the rewrites; wins over llm.top_p (default: the preset's, "
        "else llm.top_p)",
    )
    tasks: list[str] = Field(
        default_factory=list,
        description="mteb benchmark/task or suite .yaml (default: evaluate.tasks, else the language's)",
    )
    models: list[ModelRef] = Field(
        default_factory=lambda: ["base", "final"], description="The run's models to score, in table order"
    )
    prompt_policy: dict[str, str] | None = Field(
        None, description="Prompt per task type, e.g. STS='query: ' (default: evaluate.prompt_policy)"
    )
    batch_size: PositiveInt = Field(32, description="Encoding batch size")
    judge: JudgeConfig | None = Field(
        None,
        description="An LLM judge rating each rewrite against its original 0-5: rewrites below "
        "judge.threshold (or not rated) fail and are excluded like failed checks (null: no judge)",
    )

    @field_validator("transforms")
    @classmethod
    def _known_transforms(cls, names: list[str] | None) -> list[str] | None:
        if names is None:
            return None
        return resolve_transforms(names)
