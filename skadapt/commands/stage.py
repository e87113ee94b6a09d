"""``skadapt <stage>``: every stage's command, from the stage list.

A stage's command is the ``command`` of ``skadapt.commands.<stage name>`` where that module exists (a
command tailored to the stage: its own arguments and what it prints); any other stage gets
:func:`generic_command`: ``MODEL --out DIR`` with its recipe section's fields as options, a one-stage run
through :func:`skadapt.api.run_stage` (the recipe runner's execution of the stage) that prints its result.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from skadapt.commands.options import Options, config_command
from skadapt.console import handle_errors, out
from skadapt.stage import Option, Stage


def command_name(stage: Stage[Any]) -> str:
    """The stage's command: its name with dashes (``synth_sts`` -> ``synth-sts``)."""
    return stage.name.replace("_", "-")


def stage_command(stage: Stage[Any]) -> Callable[..., Any]:
    """The stage's command: its own module's (``skadapt.commands.<name>``), else :func:`generic_command`."""
    module = f"{__package__}.{stage.name}"
    if importlib.util.find_spec(module) is not None:
        command: Callable[..., Any] = importlib.import_module(module).command
        return command
    return generic_command(stage)


def generic_command(stage: Stage[Any]) -> Callable[..., Any]:
    """``skadapt <stage> MODEL --out DIR [--language L] [--seed N] [section options] [its options]``: the
    stage run alone on MODEL into DIR, as a recipe runs it (its :class:`~skadapt.stage.Entrance`); prints
    what the entrance shows of it, else where it wrote and its result."""
    name = command_name(stage)
    entrance = stage.entrance

    def command(**kwargs: Any) -> None:
        from skadapt.api import entry
        from skadapt.console import fail, usage_error
        from skadapt.tasks.contamination import UnreachableTestDataError

        config, out_dir = kwargs["config"], kwargs["out_dir"]
        problem = entrance.check(config) if entrance.check is not None else None
        if problem is not None:
            usage_error(problem)
        values = {
            option.name: (option.value or (lambda given: given))(kwargs[_param(option)])
            for option in entrance.options
        }
        try:  # an unreachable task is named as this command's option, not as a recipe field
            result = entry(stage.name)(
                kwargs["model"], config, language=kwargs["language"], out=out_dir, seed=kwargs["seed"],
                overwrite=kwargs["overwrite"], **values,
            )  # fmt: skip
        except UnreachableTestDataError as error:
            tasks = [_flag(o) for o in entrance.options if o.name == "eval_tasks"]
            if not tasks:
                raise
            fail(error.for_command(tasks[0]))
        if result is None:  # another rank of a distributed launch: rank 0 writes and reports
            return
        if entrance.shows is not None:
            for line in entrance.shows(out_dir, result):
                out.print(line)
            return
        out.print(f"[green]{name}[/] {kwargs['model']} -> {out_dir}", highlight=False)
        out.print(result.model_dump_json(indent=2), markup=False, highlight=False)

    command.__name__ = name.replace("-", "_")
    command.__module__ = f"{__package__}.{stage.name}"  # its name in failure messages: skadapt <stage> failed
    command.__doc__ = entrance.help or (
        f"Run the {stage.name} stage alone on MODEL into --out, as a recipe's {stage.name} section runs it "
        "(its fields are the options)."
    )
    command.__annotations__ = {
        "model": Annotated[str, typer.Argument(help=entrance.model)],
        "out_dir": Annotated[Path, typer.Option("--out", help=entrance.out)],
        "config": Annotated[stage.config, Options(stage.name)],
        "language": Annotated[str | None, typer.Option(help=entrance.language)],
        "seed": Annotated[int, typer.Option(help=entrance.seed)],
        **{_param(o): Annotated[o.type, typer.Option(_flag(o), help=o.help)] for o in entrance.options},
        "overwrite": Annotated[bool, typer.Option(help="Replace an existing --out directory.")],
        "return": None,
    }
    defaults = {"language": None, "seed": 42, "overwrite": False}
    _signature(command, {**defaults, **{_param(o): o.default for o in entrance.options}})
    return handle_errors(config_command(command))


def _flag(option: Option) -> str:
    return option.flag or f"--{option.name.replace('_', '-')}"


def _param(option: Option) -> str:
    """The command's parameter of ``option``: its flag's name (``--no-cache`` -> ``no_cache``)."""
    return _flag(option).lstrip("-").replace("-", "_")


def _signature(function: Callable[..., Any], defaults: dict[str, Any]) -> None:
    """Give ``function`` (which takes ``**kwargs``) the parameters of its annotations, with ``defaults``."""
    import inspect

    parameters = [
        inspect.Parameter(
            key, inspect.Parameter.KEYWORD_ONLY, default=defaults.get(key, inspect.Parameter.empty)
        )
        for key in function.__annotations__
        if key != "return"
    ]
    function.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
