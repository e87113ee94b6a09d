"""Human baselines' options (recipe section ``human``)."""

from __future__ import annotations

from pydantic import Field

from skadapt.config import PositiveInt, Section


class HumanConfig(Section):
    """Human baselines (HUME): annotation sheets for a subset of the evaluation tasks, and the human scores
    beside the models' in the evaluation report (``skadapt human export|score``)."""

    dir: str = Field(description="Where the sheets, the subset suite and the human results live")
    tasks: list[str] = Field(
        default_factory=list,
        description="mteb benchmark/task names or suite .yaml files (recipe default: evaluate.tasks)",
    )
    annotators: PositiveInt = Field(2, description="Sheets per task (one per annotator)")
    sizes: dict[str, PositiveInt] = Field(
        default_factory=dict, description="Task type -> items drawn, e.g. STS=50 (default: HUME's sizes)"
    )
