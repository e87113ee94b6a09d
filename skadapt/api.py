"""``run_recipe`` of the public API: a recipe run, the one path ``skadapt train`` takes too.

Every rule of a run lives here: ``from_stage``/``only`` name stages of the recipe, the recipe has a stage,
the preflight finds no problem; the pipeline stops where a stage's result says so (``evaluate.fail_on_harm``
on harm). The command only parses its options, calls :func:`run_recipe` and prints what it returns or raises.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from skadapt.config import RecipeError
from skadapt.errors import SkadaptError, UsageError
from skadapt.pipeline import PipelineError, StageOutcome
from skadapt.pipeline import run_recipe as run_stages
from skadapt.recipe import Recipe, load_recipe
from skadapt.stages import STAGE_NAMES

if TYPE_CHECKING:
    from skadapt.preflight import Check


class PreflightError(SkadaptError):
    """Some input of the recipe cannot be read (one line per problem); no stage started.

    Attributes:
        problems: ``(input, problem)`` per failed check.
        checks: Every check made, the failed ones included.
    """

    def __init__(
        self, message: str, problems: list[tuple[str, str]], checks: list[Check] | None = None
    ) -> None:
        super().__init__(message)
        self.problems = problems
        self.checks = checks or []


class RunOptionError(PipelineError, UsageError):
    """``from_stage``/``only`` name no stage, or both are given (the command's ``--from``/``--only``).

    Attributes:
        option: The argument at fault (``from_stage`` or ``only``).
        value: Its value.
        reason: What is wrong with it.
    """

    def __init__(self, option: str, value: str, reason: str) -> None:
        super().__init__(f"{option}={value!r}: {reason}")
        self.option, self.value, self.reason = option, value, reason


def check_options(recipe: Recipe, *, from_stage: str | None = None, only: str | None = None) -> None:
    """The rules of a run's options and sections, before anything is read.

    Raises:
        RunOptionError: ``from_stage``/``only`` name no stage, or both are given.
        RecipeError: The recipe has no stage section.
    """
    for option, value in (("from_stage", from_stage), ("only", only)):
        if value is not None and value not in STAGE_NAMES:
            raise RunOptionError(option, value, f"unknown stage; stages are {', '.join(STAGE_NAMES)}")
    if from_stage and only:
        raise RunOptionError("only", only, "from_stage and only exclude each other")
    if not recipe.enabled_stages():
        raise RecipeError(
            f"{recipe.name}: the recipe has no stage sections ({', '.join(STAGE_NAMES)}); nothing to do"
        )


def check_inputs(recipe: Recipe, *, local: bool = False) -> list[Check]:
    """Resolve every input of ``recipe`` (the preflight); every check made.

    Args:
        recipe: The recipe.
        local: Only what needs no network (no Hub, no LLM server): what a cost plan stands on.

    Raises:
        PreflightError: Some input has a problem (its ``checks`` hold every check).
    """
    from skadapt.preflight import preflight, problems

    checks = preflight(recipe, local=local)
    failed = [(item.input, item.problem or "") for item in problems(checks)]
    if failed:
        lines = "".join(f"\nproblem: {item}: {problem}" for item, problem in failed)
        raise PreflightError(
            f"preflight: {len(failed)} of {len(checks)} inputs have a problem; no stage started{lines}",
            failed,
            checks,
        )
    return checks


def run_recipe(
    recipe: Recipe | str | Path,
    *,
    overrides: list[str] | None = None,
    from_stage: str | None = None,
    only: str | None = None,
    check: bool = True,
    on_stage: Callable[[str, str], None] | None = None,
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
        on_stage: Called with ``(stage, "start" | "skip" | "done")`` as the run goes.

    Returns:
        One :class:`~skadapt.pipeline.StageOutcome` per stage run or skipped, in run order.

    Raises:
        RecipeError: The recipe cannot be read, is invalid, or has no stage section.
        OptionError: Every problem of the recipe lies in a field an override sets.
        RunOptionError: ``from_stage``/``only`` name no stage, or both are given.
        PipelineError: ``from_stage``/``only`` name no stage of this recipe, or earlier stages are not
            finished.
        PreflightError: ``check`` found a problem.
        RunHalted: A stage's result stops the run (``evaluate.fail_on_harm`` and harm beyond the margin
            cannot be excluded): the later stages do not run; its ``outcomes`` hold those that did.
    """
    if isinstance(recipe, Recipe):
        if overrides:
            raise ValueError("overrides apply to a recipe file: give its path, or change the Recipe itself")
        loaded = recipe
    else:
        loaded = load_recipe(recipe, overrides)
    check_options(loaded, from_stage=from_stage, only=only)
    if check:
        check_inputs(loaded)
    return run_stages(loaded, from_stage=from_stage, only=only, on_stage=on_stage)
