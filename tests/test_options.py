"""Every recipe field of a stage can be set from its command, each option is defined once (as the field),
and the one grammar holds: lists repeat, maps are KEY=VALUE, --config then options then --set."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from pydantic import BaseModel
from typer.testing import CliRunner

from skadapt.commands.options import Options, config_command, option_flags, option_kind

PositionalFields = frozenset({"models"})
"""Fields a command takes as its positional MODELS, not as options."""


def _commands() -> dict[str, tuple[Any, type[BaseModel], bool]]:
    """Command -> (function, its stage's config model, whether it generates text with the LLM)."""
    from skadapt.commands.stage import command_name, stage_command
    from skadapt.stages import STAGES

    return {command_name(s): (stage_command(s), s.config, s.uses_llm) for s in STAGES}


def _flag(prefix: str, name: str) -> str:
    return f"--{prefix}{name}".replace("_", "-")


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_recipe_field_of_a_stage_can_be_set_from_its_command(name: str) -> None:
    from skadapt.llm.config import LLMConfig

    command, model, uses_llm = _commands()[name]
    flags = option_flags(command)
    sections = [(model, "")] + ([(LLMConfig, "llm-")] if uses_llm else [])
    missing = []
    for section, prefix in sections:
        for field, info in section.model_fields.items():
            if field in PositionalFields:
                assert "models" in inspect.signature(command).parameters
            elif option_kind(info) is not None:
                if _flag(prefix, field) not in flags:
                    missing.append(_flag(prefix, field))
            elif "--set" not in flags or "--config" not in flags:  # sections: --config FILE / --set a.b=v
                missing.append(f"--set {field}.…")
    assert not missing, f"skadapt {name}: no option for {missing}"


def test_no_option_is_declared_twice() -> None:
    """A derived option is never also spelled by hand in a command (two definitions, two defaults)."""
    for name, (command, _model, _llm) in _commands().items():
        declared: list[str] = []
        for parameter in inspect.signature(command).parameters.values():
            for extra in getattr(parameter.annotation, "__metadata__", ()):
                declared.extend(d for d in getattr(extra, "param_decls", ()) or () if d.startswith("--"))
                default = getattr(extra, "default", None)
                if isinstance(default, str) and default.startswith("--"):
                    declared.append(default)
        repeated = sorted({d for d in declared if declared.count(d) > 1})
        assert not repeated, f"skadapt {name}: {repeated} declared twice"


class Toy(BaseModel):
    """A toy section."""

    size: int = 3
    tags: list[str] = []
    policy: dict[str, str] = {}
    flag: bool = False
    nested: dict[str, list[int]] = {}


def _toy_app(seen: dict[str, Any]) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @config_command
    def run(
        thing: Annotated[str, typer.Argument()],
        config: Annotated[Toy, Options("toy")],
        other: Annotated[Toy, Options("other")],
    ) -> None:
        seen["thing"], seen["config"], seen["other"] = thing, config, other

    @app.command()
    def other() -> None:  # two commands: typer then takes the command name
        pass

    return app


def test_config_then_options_then_set(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}
    app = _toy_app(seen)
    config = tmp_path / "toy.yaml"
    config.write_text("size: 5\ntags: [a]\nnested: {x: [1]}\n")
    args = ["run", "t", "--config", str(config), "--tags", "b", "--tags", "c", "--policy", "STS=query: "]
    result = CliRunner().invoke(app, [*args, "--flag", "--set", "nested.y=[2, 3]", "--set", "toy.size=9"])
    assert result.exit_code == 0, result.output
    assert seen["config"] == Toy(
        size=9, tags=["b", "c"], policy={"STS": "query: "}, flag=True, nested={"x": [1], "y": [2, 3]}
    )
    assert seen["other"] == Toy()  # a section file is the config's section only


def test_a_second_section_has_prefixed_options_its_recipe_section_and_its_set_keys(tmp_path: Path) -> None:
    """A parameter other than ``config`` (as ``llm``): ``--other-size``, the recipe's ``other:`` section,
    ``--set other.KEY=VALUE``; keys without its name set ``config``."""
    seen: dict[str, Any] = {}
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("name: r\ntoy: {size: 4}\nother: {tags: [r]}\n")
    args = ["run", "t", "--config", str(recipe), "--other-size", "6", "--set", "other.flag=true"]
    result = CliRunner().invoke(_toy_app(seen), [*args, "--set", "flag=true"])
    assert result.exit_code == 0, result.output
    assert seen["config"] == Toy(size=4, flag=True) and seen["other"] == Toy(size=6, tags=["r"], flag=True)
    without = tmp_path / "without.yaml"
    without.write_text("name: r\ntoy: {size: 4}\n")
    assert CliRunner().invoke(_toy_app(seen), ["run", "t", "--config", str(without)]).exit_code == 0
    assert seen["other"] == Toy()  # a recipe without the section leaves it at its defaults


def test_defaults_come_from_the_model_and_errors_name_the_option() -> None:
    seen: dict[str, Any] = {}
    app = _toy_app(seen)
    assert CliRunner().invoke(app, ["run", "t"]).exit_code == 0 and seen["config"] == Toy()
    result = CliRunner().invoke(app, ["run", "t", "--policy", "no-equals"])
    assert result.exit_code != 0 and "--policy 'no-equals': expected KEY=VALUE" in str(result.exception or "")
    help_text = CliRunner().invoke(app, ["run", "--help"]).output
    assert "default: 3" in help_text and "--other-size" in help_text


def test_every_option_has_one_spelling_and_no_hidden_parameter() -> None:
    """No command keeps a hidden option or parameter (old spellings of a release that never happened)."""
    import click
    from typer.main import get_command

    from skadapt.cli import app

    def walk(command: click.Command, path: str) -> list[str]:
        found = [f"{path} {p.name}" for p in command.params if getattr(p, "hidden", False)]
        for name, sub in getattr(command, "commands", {}).items():
            found += walk(sub, f"{path} {name}")
        return found

    assert walk(get_command(app), "skadapt") == []


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_command_names_a_field_as_the_user_wrote_it(name: str) -> None:
    """One rule across the stage commands: an unknown ``--set`` key is named as typed (``--set
    section.key``, not a ``--flag`` the user never typed), with a did-you-mean; a bad value names the
    option or the key that gave it."""
    from skadapt.cli import app

    model = _commands()[name][1]
    field = next(f for f in model.model_fields if f not in PositionalFields and len(f) > 4)
    section = {"synth-sts": "synth_sts"}.get(name, name)
    typo = field[:-1] + ("x" if field[-1] != "x" else "y")
    args = {
        "trim": ["m", "--out", "o"],
        "finetune": ["m", "--out", "o", "--language", "slk"],
        "renorm": ["m", "--out", "o"],
        "export": ["m", "--out", "o"],
        "evaluate": ["a=m", "--tasks", "t"],
        "robustness": ["a=m", "--out", "o", "--language", "slk"],
        "synth-sts": ["--out", "o", "--language", "slk", "--llm-model", "x"],
        "publish": ["m", "--repo-id", "me/m", "--dry-run"],
    }[name]
    result = CliRunner().invoke(app, [name, *args, "--set", f"{section}.{typo}=1"])
    assert result.exit_code == 2, result.output
    assert f"--set {section}.{typo}: unknown field; did you mean {field!r}?" in result.output, result.output
    assert "Extra inputs" not in result.output
