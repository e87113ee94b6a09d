"""The ``skadapt`` command line: thin wrappers that parse, call library functions and print."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from skadapt import stop
from skadapt.console import fail, handle_errors, out, usage_error
from skadapt.languages import LANGUAGES, get_language
from skadapt.recipe import Recipe, load_recipe, recipe_to_yaml
from skadapt.templates import render_recipe

if TYPE_CHECKING:
    from skadapt.pipeline import StageOutcome


class _Program(typer.Typer):
    """The ``skadapt`` program: what its console script and ``python -m skadapt`` call (typer's
    ``CliRunner`` runs the command in its caller's process, not through this). Once the command has run,
    the process ends as a stop signal says even while the interpreter exits (:func:`stop.program`)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with stop.program():
            return super().__call__(*args, **kwargs)


app = _Program(
    help="Adapt a multilingual text-embedding model to one language: trim, fine-tune, renormalize, evaluate.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # click's plain help (for every subcommand too): it wraps help text and never cuts an option's name,
    # where rich's option table cuts them at 80 columns ("--parity-tolera…")
    rich_markup_mode=None,
)
recipe_app = typer.Typer(help="Validate, show and create recipes.", no_args_is_help=True)
app.add_typer(recipe_app, name="recipe")


def _add_groups() -> None:
    from skadapt.commands.annotate import app as annotate_app
    from skadapt.commands.human import app as human_app
    from skadapt.commands.llm import app as llm_app

    app.add_typer(annotate_app, name="annotate")
    app.add_typer(human_app, name="human")
    from skadapt.commands.llm_select import command as llm_select

    llm_app.command("select")(llm_select)
    app.add_typer(llm_app, name="llm")


_add_groups()


RecipeArg = Annotated[Path, typer.Argument(help="Recipe YAML file.")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a recipe field, e.g. --set finetune.epochs=1 (repeatable)."),
]


@app.command()
@handle_errors
def train(
    recipe: RecipeArg,
    set_: SetOpt = None,
    from_stage: Annotated[
        str | None, typer.Option("--from", help="Re-run this stage and all later ones.")
    ] = None,
    only: Annotated[
        str | None, typer.Option("--only", help="Run only this stage (earlier ones must be done).")
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Only resolve every input (model, sources, tasks, LLM, disk) and exit; no stage starts.",
        ),
    ] = False,
    no_check: Annotated[
        bool, typer.Option("--no-check", help="Skip the preflight check that otherwise runs first.")
    ] = False,
    plan: Annotated[
        bool,
        typer.Option(
            "--plan",
            help="Only print the cost plan (per stage: the work, estimated time on this CPU and a GPU, peak "
            "memory, disk) from metadata and measured rates, and exit; nothing is downloaded or run.",
        ),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            help="Show third-party progress bars, trainers' loss printouts and known-harmless library "
            "warnings on the console too (without it the printouts and warnings go to run.log only).",
        ),
    ] = False,
) -> None:
    """Run a recipe stage by stage; finished stages are skipped, an interrupted run resumes."""
    from rich.markup import escape

    from skadapt.api import RunOptionError, check_options, run_recipe
    from skadapt.console import console, console_warnings, verbose_console
    from skadapt.outputs import writable_dir
    from skadapt.pipeline import RunHalted

    flags = {"from_stage": "--from", "only": "--only"}
    loaded = load_recipe(recipe, set_)
    try:
        check_options(loaded, from_stage=from_stage, only=only)
    except RunOptionError as error:
        reason = error.reason.replace("from_stage and only", "--from and --only")
        usage_error(f"{flags[error.option]} {error.value}: {reason}")
    if check and no_check:
        usage_error("--check and --no-check exclude each other")
    if plan:
        if check or no_check or from_stage or only:
            usage_error(
                "--plan prints the plan of the whole recipe: it excludes --check, --no-check, --from, --only"
            )
        _preflight(loaded, recipe, quiet=True, local=True)  # the plan stands on a valid recipe
        _plan(loaded, recipe)
        return
    if not no_check:
        _preflight(loaded, recipe, quiet=not check)
        if check:
            _contamination_preview(loaded)
            return

    def show(stage: str, event: str) -> None:
        label = {"start": "[cyan]running[/]", "skip": "[dim]up to date, skipped[/]", "done": "[green]done[/]"}
        console.print(f"stage [bold]{stage}[/]: {label[event]}")

    writable_dir(loaded.run_dir, "output_dir")  # before its log is announced (the preflight may be off)
    log_file = escape(str(loaded.run_dir / "run.log"))
    console.print(f"run [bold]{escape(loaded.name)}[/] -> {escape(str(loaded.run_dir))} (log: {log_file})")
    halted: RunHalted | None = None
    with console_warnings(verbose_console(verbose)):  # warnings reach the console as they happen
        try:
            outcomes = run_recipe(loaded, from_stage=from_stage, only=only, check=False, on_stage=show)
        except RunHalted as error:  # the run's table and summary first, then the reason, exit 1
            halted, outcomes = error, error.outcomes
    table = Table(title=f"run {loaded.name} -> {loaded.run_dir}")
    for column in ("stage", "status", "seconds", "artifact"):
        table.add_column(column)
    for outcome in outcomes:
        table.add_row(outcome.stage, outcome.status, f"{outcome.seconds:.1f}", str(outcome.path))
    out.print(table)
    _summary(loaded, outcomes)
    if halted is not None:
        fail(f"{halted} (the run stopped after stage {halted.stage}; its output is kept)")


def _summary(loaded: Recipe, outcomes: list[StageOutcome]) -> None:
    """What the run's stages say, read through their result types (:mod:`skadapt.results`)."""
    from skadapt.results import (
        EvaluationReport,
        EvaluationSummary,
        FinetuneSummary,
        PublishSummary,
        RenormSummary,
    )
    from skadapt.tasks.dev import overlap_line

    by_stage = {outcome.stage: outcome for outcome in outcomes}
    report = loaded.run_dir / "evaluate" / EvaluationReport.MARKDOWN
    if "evaluate" in loaded.enabled_stages() and report.is_file():
        out.print(f"evaluation report: {report}")
    renormed = by_stage.get("renorm")
    selection = RenormSummary.parse(renormed.result).selection if renormed is not None else None
    if selection is not None:
        means = ", ".join(f"{c.name} {c.mean:.4f}" for c in selection.candidates)
        kept = "kept its input (no renormalization)" if selection.choice == "none" else "kept"
        out.print(f"renorm chosen on dev: {selection.choice} {kept}: {selection.reason}", markup=False)
        out.print(f"renorm mean dev scores: {means}", markup=False)
        for entry in selection.sets:
            if entry.get("training_overlap"):
                line = overlap_line(entry["training_overlap"])
                out.print(f"renorm dev {entry['name']}: {line}", markup=False)
    finetuned = by_stage.get("finetune")
    tuned = FinetuneSummary.parse(finetuned.result) if finetuned else FinetuneSummary()
    for name, line in tuned.dev_overlap.items():
        out.print(f"finetune dev {name}: {line}", markup=False)
    for name, line in tuned.dropped_rows.items():
        out.print(f"finetune data {name}: {line}", markup=False)
    for name, line in tuned.hard_negatives.items():
        out.print(f"finetune negatives {name}: {line}", markup=False)
    evaluated = by_stage.get("evaluate")
    if evaluated is not None:
        summary = EvaluationSummary.parse(evaluated.result)
        for pair, verdict in summary.verdicts.items():
            tasks = summary.harmed_tasks.get(pair)
            named = f" (below the margin on {', '.join(tasks)})" if tasks is not None else ""
            out.print(f"do-no-harm {pair}: {verdict}{named}")
    publish = by_stage["publish"].result if "publish" in by_stage else None
    if isinstance(publish, PublishSummary):
        done = "dry run, nothing uploaded" if publish.dry_run else "uploaded"
        for repository in publish.repositories:
            out.print(f"publish ({done}) {repository.line()}", markup=False)


def _plan(loaded: Recipe, path: Path) -> None:
    """Print the recipe's cost plan (see :mod:`skadapt.plan`)."""
    from skadapt.plan import render_plan
    from skadapt.planning import plan_recipe

    out.print(render_plan(plan_recipe(loaded, str(path))))


def _preflight(loaded: Recipe, path: Path, *, quiet: bool = False, local: bool = False) -> None:
    """Run the preflight checks (``local``: those that need no network); print the table (always on a
    problem) and exit 1 on any problem."""
    from rich.text import Text

    from skadapt.api import PreflightError, check_inputs
    from skadapt.preflight import problems

    try:
        checks = check_inputs(loaded, local=local)
    except PreflightError as error:
        checks = error.checks
    failed = problems(checks)
    if failed or not quiet:
        table = Table(title=f"preflight {path}")
        for column in ("input", "checked", "result"):
            table.add_column(column, overflow="fold")
        for item in checks:
            result = Text("OK", style="green") if item.ok else Text("problem (below)", style="red")
            table.add_row(Text(item.input), Text(item.checked), result)
        out.print(table)
    from skadapt.console import console

    for item in failed:  # one plain line each, never wrapped: for logs and copying
        console.print(f"problem: {item.input}: {item.problem}", markup=False, emoji=False, soft_wrap=True)
    if failed and local:
        fail(f"preflight: {len(failed)} of {len(checks)} inputs have a problem; fix the recipe to plan it")
    if failed:
        fail(f"preflight: {len(failed)} of {len(checks)} inputs have a problem; no stage started")
    if quiet and not local:
        out.print(f"preflight: {len(checks)} inputs OK")


def _contamination_preview(loaded: Recipe) -> None:
    """Print the rows the fine-tuning stage's contamination check will drop or stop on."""
    from skadapt.preflight import contamination_preview
    from skadapt.tasks.dev import overlap_line

    preview = contamination_preview(loaded)
    if preview is None:
        return
    table = Table(title=f"contamination the finetune stage will find (action: {preview['action']})")
    for column in ("training dataset", "rows", "with an evaluation test text", "by task"):
        table.add_column(column, overflow="fold")
    for name, found in preview["dropped"].items():
        by_task = ", ".join(f"{task} {n}" for task, n in found["by_task"].items()) or "-"
        table.add_row(name, str(found["rows"]), str(found["dropped"]), by_task)
    if preview["dropped"]:
        out.print(table)
    if preview["dev"]:
        dev = Table(title="dev examples with an evaluation test text (dropped: nothing is chosen on them)")
        for column in ("dev set", "examples", "with an evaluation test text", "by task"):
            dev.add_column(column, overflow="fold")
        for name, found in preview["dev"].items():
            by_task = ", ".join(f"{task} {n}" for task, n in found["by_task"].items()) or "-"
            dev.add_row(name, str(found["rows"]), str(found["dropped"]), by_task)
        out.print(dev)
        for name, found in preview["dev"].items():  # a retrieval set's distractor passages
            corpus = found.get("corpus")
            if corpus and corpus["dropped"]:
                by_task = ", ".join(f"{task} {n}" for task, n in corpus["by_task"].items())
                out.print(
                    f"dev set {name}: {corpus['dropped']} of {corpus['rows']} distractor passages are "
                    f"evaluation test texts and will be dropped ({by_task})",
                    markup=False,
                    soft_wrap=True,
                )
    for name, found in preview["dev_training"].items():  # plain lines: for logs and copying
        out.print(f"dev set {name}: {overlap_line(found)}", markup=False, soft_wrap=True)
        if found["action"] == "drop" and found["checked"] and found["overlapping"] == found["checked"]:
            out.print(
                f"[yellow]the stage choosing on dev set {name} will stop[/]: every example shares a text "
                "with the training data; use another split, or set training_overlap: keep in its dev section"
            )
    if preview["unreachable"]:
        out.print(f"not checked (data unreachable): {', '.join(preview['unreachable'])}")
    if preview["over_threshold"] and preview["action"] == "stop":
        out.print(
            f"[yellow]the finetune stage will stop[/]: {', '.join(preview['over_threshold'])} over "
            f"threshold {preview['threshold']:.2%}; set finetune.contamination.action: drop to train without "
            "those rows"
        )


@recipe_app.command("check")
@handle_errors
def recipe_check(recipe: RecipeArg, set_: SetOpt = None) -> None:
    """Resolve every input of a recipe in seconds, then show the contamination the fine-tuning stage will
    find (same as `skadapt train RECIPE --check`)."""
    loaded = load_recipe(recipe, set_)
    _preflight(loaded, recipe)
    _contamination_preview(loaded)
    out.print("[green]preflight OK[/]")


@recipe_app.command("validate")
@handle_errors
def recipe_validate(recipe: RecipeArg, set_: SetOpt = None) -> None:
    """Check a recipe; exit 0 if it is valid."""
    loaded = load_recipe(recipe, set_)
    stages = ", ".join(loaded.enabled_stages()) or "none"
    out.print(
        f"[green]valid[/] {recipe}: {loaded.name} ({loaded.language}, stages: {stages}) -> {loaded.run_dir}"
    )


@recipe_app.command("show")
@handle_errors
def recipe_show(recipe: RecipeArg, set_: SetOpt = None) -> None:
    """Print the resolved recipe with every default filled in."""
    typer.echo(recipe_to_yaml(load_recipe(recipe, set_)), nl=False)


@recipe_app.command("new")
@handle_errors
def recipe_new(
    language: Annotated[str, typer.Option(help="ISO 639-3 or 639-1 code, e.g. ces or cs.")],
    base_model: Annotated[str, typer.Option(help="Model to adapt.")] = "intfloat/multilingual-e5-small",
    name: Annotated[
        str | None, typer.Option(help="Recipe name (default e5_<ISO 639-1 code>_small, e.g. e5_cs_small).")
    ] = None,
) -> None:
    """Print a complete recipe for a language (redirect it into a file): trim, fine-tune (public or
    synthetic data), renorm, evaluate, robustness."""
    typer.echo(render_recipe(get_language(language), base_model, name), nl=False)


@app.command()
def languages() -> None:
    """List the languages of the registry."""
    table = Table(title="skadapt languages")
    for column in ("code", "name", "native", "FineWeb2", "wordfreq", "mteb"):
        table.add_column(column)
    for lang in LANGUAGES.values():
        tasks = ", ".join(lang.eval_tasks)
        table.add_row(
            lang.code, lang.name, lang.native_name, lang.fineweb2_config or "-", lang.wordfreq or "-", tasks
        )
    out.print(table)


def _register_stage_commands() -> None:
    """One command per stage of :data:`skadapt.stages.STAGES` (:func:`skadapt.commands.stage.stage_command`:
    the same library code the recipe's stages run), plus publish-dataset."""
    from skadapt.commands import publish_dataset
    from skadapt.commands.stage import command_name, stage_command
    from skadapt.stages import STAGES

    for stage in STAGES:
        app.command(command_name(stage))(stage_command(stage))
    app.command("publish-dataset")(publish_dataset.command)


_register_stage_commands()
