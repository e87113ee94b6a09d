"""``run_recipe`` of the public API: a recipe run the way ``skadapt train`` runs it, from Python."""

from __future__ import annotations

from pathlib import Path

from skadapt.config import RecipeError
from skadapt.errors import SkadaptError
from skadapt.pipeline import PipelineError, StageOutcome
from skadapt.pipeline import run_recipe as run_stages
from skadapt.recipe import Recipe, load_recipe
from skadapt.stages import STAGE_NAMES


class PreflightError(SkadaptError):
    """Some input of the recipe cannot be read (one line per problem); no stage started.

    Attributes:
        problems: ``(input, problem)`` per failed check.
    """

    def __init__(self, message: str, problems: list[tuple[str, str]]) -> None:
        super().__init__(message)
        self.problems = problems


def run_recipe(
    recipe: Recipe | str | Path,
    *,
    overrides: list[str] | None = None,
    from_stage: str | None = None,
    only: str | None = None,
    check: bool = True,
) -> list[StageOutcome]:
    """Run a recipe stage by stage, as ``skadapt train`` does: finished stages are skipped, an interrupted
    run resumes, each stage is written atomically with its manifest into the run directory.

    Args:
        recipe: A recipe YAML file, or a :class:`~skadapt.recipe.Recipe` (``load_recipe(path)``).
        overrides: ``KEY=VALUE`` overrides of a recipe file (``skadapt train --set``).
        from_stage: Re-run this stage and every later one (``--from``).
        only: Run just this stage; earlier ones must be finished (``--only``).
        check: Resolve every input first and raise :class:`PreflightError` on any problem (``--no-check``
            is ``check=False``).

    Returns:
        One :class:`~skadapt.pipeline.StageOutcome` per stage run or skipped, in run order.

    Raises:
        RecipeError: The recipe cannot be read, is invalid, or has no stage section.
        OptionError: Every problem of the recipe lies in a field an override sets.
        PipelineError: ``from_stage``/``only`` name no stage of the recipe, both are given, or earlier
            stages are not finished.
        PreflightError: ``check`` found a problem.
    """
    if isinstance(recipe, Recipe):
        if overrides:
            raise ValueError("overrides apply to a recipe file: give its path, or change the Recipe itself")
        loaded, name = recipe, recipe.name
    else:
        loaded, name = load_recipe(recipe, overrides), str(recipe)
    for option, value in (("from_stage", from_stage), ("only", only)):
        if value is not None and value not in STAGE_NAMES:
            raise PipelineError(f"{option}={value!r}: unknown stage; stages are {', '.join(STAGE_NAMES)}")
    if from_stage and only:
        raise PipelineError("from_stage and only exclude each other")
    if not loaded.enabled_stages():
        raise RecipeError(
            f"{name}: the recipe has no stage sections ({', '.join(STAGE_NAMES)}); nothing to do"
        )
    if check:
        from skadapt.preflight import preflight, problems

        checks = preflight(loaded)
        failed = [(item.input, item.problem or "") for item in problems(checks)]
        if failed:
            lines = "".join(f"\nproblem: {item}: {problem}" for item, problem in failed)
            raise PreflightError(
                f"preflight: {len(failed)} of {len(checks)} inputs have a problem; no stage started{lines}",
                failed,
            )
    return run_stages(loaded, from_stage=from_stage, only=only)
