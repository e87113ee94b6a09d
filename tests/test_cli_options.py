"""Every command keeps its options: the option set of each command and subcommand (its flags, whether
each takes a value, its positional arguments) against a snapshot made from the code before the commands
were generated from the stages (``tests/data/cli_options.json``).

Regenerate the snapshot only for a deliberate change of the command line:
``python -m tests.test_cli_options > tests/data/cli_options.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer.main

from skadapt.cli import app

SNAPSHOT = Path(__file__).resolve().parent / "data" / "cli_options.json"


def _options(command: Any) -> dict[str, list[str]]:
    """A command's parameters: each option by its flags (``--a/--no-a`` for a switch, ``=VALUE`` when it
    takes one, ``...`` when repeatable, ``*`` when required), each argument by its name."""
    params = []
    for param in command.params:
        if param.param_type_name == "argument":
            many = "..." if param.nargs == -1 else ""
            params.append(f"{param.name}{many}{'' if param.required else '?'}")
            continue
        flags = "/".join(sorted(param.opts)) + (
            "/" + "/".join(sorted(param.secondary_opts)) if param.secondary_opts else ""
        )
        value = "" if param.is_flag else "=VALUE"
        many = "..." if param.multiple else ""
        params.append(f"{flags}{value}{many}{'*' if param.required else ''}")
    return {"params": sorted(params)}


def snapshot() -> dict[str, dict[str, list[str]]]:
    """Every command and group (``llm select``) -> its parameters."""
    found: dict[str, dict[str, list[str]]] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        found[" ".join(path) or "skadapt"] = _options(command)
        for name, sub in sorted((getattr(command, "commands", None) or {}).items()):
            walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return found


def test_every_command_keeps_its_options() -> None:
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    now = snapshot()
    assert sorted(now) == sorted(expected), "commands added or removed"
    for name, params in expected.items():
        assert now[name] == params, name


if __name__ == "__main__":
    print(json.dumps(snapshot(), indent=1, sort_keys=True))
