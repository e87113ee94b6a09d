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


FLAGS = {"from_stage": "--from", "only": "--only"}
"""``run_recipe``'s arguments -> the options of ``skadapt train``."""
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

    from skadapt.api import PreflightError, RunOptionError, RunWatch, run_recipe
    from skadapt.console import console, console_warnings, verbose_console
    from skadapt.pipeline import RunHalted

    if check and no_check:
        usage_error("--check and --no-check exclude each other")
    if plan and (check or no_check or from_stage or only):
        usage_error(
            "--plan prints the plan of the whole recipe: it excludes --check, --no-check, --from, --only"
        )
    loaded = load_recipe(recipe, set_)

    def start(run_dir: Path) -> None:
        log_file = escape(str(run_dir / "run.log"))
        console.print(f"run [bold]{escape(loaded.name)}[/] -> {escape(str(run_dir))} (log: {log_file})")

    def show(stage: str, event: str) -> None:
        label = {"start": "[cyan]running[/]", "skip": "[dim]up to date, skipped[/]", "done": "[green]done[/]"}
        console.print(f"stage [bold]{stage}[/]: {label[event]}")

    watch = RunWatch(
        checks=lambda checks, local: _show_checks(recipe, checks, quiet=not check, local=local),
        plan=lambda made: out.print(_render_plan(made.model_copy(update={"recipe": str(recipe)}))),
        preview=_show_preview,
        start=start,
        stage=show,
    )
    until = "plan" if plan else "check" if check else None
    halted: RunHalted | None = None
    with console_warnings(verbose_console(verbose)):  # warnings reach the console as they happen
        try:
            outcomes = run_recipe(
                loaded, from_stage=from_stage, only=only, check=not no_check, until=until, watch=watch
            )
        except RunOptionError as error:
            reason = error.reason.replace("from_stage and only", "--from and --only")
            usage_error(f"{FLAGS[error.option]} {error.value}: {reason}")
        except PreflightError as error:
            what = "fix the recipe to plan it" if plan else "no stage started"
            fail(f"preflight: {len(error.problems)} of {len(error.checks)} inputs have a problem; {what}")
        except RunHalted as error:  # the run's table and summary first, then the reason, exit 1
            halted, outcomes = error, error.outcomes
    if until is not None:
        return
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
    """What each of the run's stages says of its run (:attr:`skadapt.stage.Stage.summary`), in run order."""
    from skadapt.stages import STAGES

    results = {outcome.stage: outcome.result for outcome in outcomes}
    for stage in STAGES:
        section = getattr(loaded, stage.name)
        if section is not None and stage.summary is not None:
            for line in stage.summary(section, results.get(stage.name), loaded.run_dir / stage.name):
                out.print(line, markup=False)


def _render_plan(made: Any) -> Any:
    from skadapt.plan import render_plan

    return render_plan(made)


def _show_checks(path: Path, checks: list[Any], *, quiet: bool, local: bool) -> None:
    """The preflight's table (always on a problem; ``quiet``: only then) and one line per problem."""
    from rich.text import Text

    from skadapt.console import console
    from skadapt.preflight import problems

    failed = problems(checks)
    if failed or not quiet:
        table = Table(title=f"preflight {path}")
        for column in ("input", "checked", "result"):
            table.add_column(column, overflow="fold")
        for item in checks:
            result = Text("OK", style="green") if item.ok else Text("problem (below)", style="red")
            table.add_row(Text(item.input), Text(item.checked), result)
        out.print(table)
    for item in failed:  # one plain line each, never wrapped: for logs and copying
        console.print(f"problem: {item.input}: {item.problem}", markup=False, emoji=False, soft_wrap=True)
    if not failed and quiet and not local:
        out.print(f"preflight: {len(checks)} inputs OK")


def _show_preview(shown: list[Any]) -> None:
    """A stage's preview: its tables, and its lines unwrapped (for logs and copying)."""
    from rich.text import Text

    for item in shown:
        out.print(item, soft_wrap=isinstance(item, Text))


@recipe_app.command("check")
@handle_errors
def recipe_check(recipe: RecipeArg, set_: SetOpt = None) -> None:
    """Resolve every input of a recipe in seconds, then show the contamination the fine-tuning stage will
    find (same as `skadapt train RECIPE --check`)."""
    from skadapt.api import PreflightError, RunWatch, run_recipe

    watch = RunWatch(
        checks=lambda checks, local: _show_checks(recipe, checks, quiet=False, local=local),
        preview=_show_preview,
    )
    try:
        run_recipe(load_recipe(recipe, set_), until="check", watch=watch)
    except PreflightError as error:
        fail(
            f"preflight: {len(error.problems)} of {len(error.checks)} inputs have a problem; no stage started"
        )
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
