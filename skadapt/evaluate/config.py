"""The evaluate stage's options (recipe section ``evaluate``; ``skadapt evaluate`` derives its options
from it)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from skadapt.config import ModelRef, PositiveFloat, PositiveInt, Section


class EvaluateConfig(Section):
    """MTEB-style evaluation of one or more of the run's models."""

    tasks: list[str] = Field(
        default_factory=list,
        description="mteb benchmark (e.g. 'MTEB(slk, v1)'), mteb task, or local suite .yaml",
    )
    models: list[ModelRef] = Field(
        default_factory=lambda: ["final"], description="The run's models to evaluate, in table order"
    )
    exclude_tasks: list[str] = Field(
        default_factory=list,
        description="Task names left out of the selection (e.g. a gated dataset without a token); every "
        "average then says 'N of M tasks'",
    )
    prompt_policy: dict[str, str] = Field(
        default_factory=dict, description="Prompt per task type, e.g. STS='query: ' (added to the model's)"
    )
    dataset_mirrors: dict[str, str] = Field(
        default_factory=dict, description="mteb task -> local copy of its dataset repository (air-gapped)"
    )
    batch_size: PositiveInt | None = Field(
        None, description="Encoding batch size (default: 32 on a CPU, 256 on a GPU)"
    )
    tost_margin: PositiveFloat = Field(2.0, description="TOST equivalence (do-no-harm) margin in points")
    alpha: Annotated[float, Field(gt=0, lt=0.5)] = Field(
        0.05, description="Significance level (the TOST CI is 1-2*alpha)"
    )
    bootstrap: int = Field(
        1000, ge=0, description="Bootstrap resamples for per-task CIs of local suites (0 = none)"
    )
    fail_on_harm: bool = Field(
        False, description="Exit non-zero when a model harms the one before it (do-no-harm verdict)"
    )
