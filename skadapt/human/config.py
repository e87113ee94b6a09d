"""Human baselines' options (recipe section ``human``)."""

from __future__ import annotations

from pydantic import Field

from skadapt.config import PositiveInt, Section


class HumanConfig(Section):
    """Human baselines (HUME): annotation sheets for a subset of the evaluation tasks, and the human scores
    beside the models' in the evaluation report (``skadapt human export|score``)."""

    dir: str = Field(description="Where the sheets, the subset suite and the human results live")
    tasks: list[str] = Field(default_factory=list, description="Default: evaluate.tasks")
    annotators: PositiveInt = 2
    sizes: dict[str, PositiveInt] = Field(
        default_factory=dict, description="Task type -> items drawn (default: HUME's sizes)"
    )
