"""Command options derived from config models: each option is defined once, as a config field.

A command declares a parameter annotated with a config model (``config: TrimConfig``, ``llm: LLMConfig``);
:func:`config_command` replaces it with one option per field (``--vocab-size``; ``--llm-model`` for a
parameter named ``llm``), whose help is the field's description and whose default is the field's default,
plus ``--config FILE`` (the section as YAML, or a whole recipe holding it) and ``--set KEY=VALUE`` (any
field, nested ones too, as in ``skadapt train --set``). The command receives the validated model.

The grammar (README "Command line"): lists are repeated options (``--tasks A --tasks B``), maps are
repeated ``KEY=VALUE`` options (``--prompt-policy STS=query``), fields that are sections or lists of
sections are set with ``--config``/``--set``. Options given on the command line win over ``--config``;
``--set`` wins over both.
"""

from __future__ import annotations

import copy
import functools
import inspect
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

import typer
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from skadapt.config import OptionError, RecipeError, got
from skadapt.errors import SkadaptError

SET_HELP = "Set any field, nested ones too: KEY=VALUE with a YAML value (repeatable), e.g. --set {example}."
CONFIG_HELP = "YAML of the {section} section, or a recipe holding one; command-line options win over it."


@dataclass(frozen=True)
class Options:
    """How a config parameter becomes options (put it in ``Annotated[Config, Options(...)]``).

    Attributes:
        section: The recipe section's name (``--config`` takes it from a recipe; ``--set`` keys may start
            with it).
        exclude: Fields the command takes otherwise (e.g. positional models); not options.
        file: Whether the section is read from ``--config FILE`` (a recipe holding it; the ``config``
            parameter's section also alone) and set with ``--set``.
        short: Field -> a short flag it also answers to (``{"tasks": "-t"}``).
    """

    section: str
    exclude: frozenset[str] = frozenset()
    file: bool = True
    short: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _Field:
    name: str  # config field
    param: str  # Python parameter name
    flag: str  # --option
    kind: str  # "scalar" | "list" | "map" | "one_or_many"
    sub: str | None = None  # a field of a section with a short form (--corpus-columns: corpus.columns)
    short_form: str | None = None  # that section's short-form field (a string given is it)

    @property
    def loc(self) -> tuple[str, ...]:
        """The field path it sets (the short form's option names the section)."""
        return (self.name,) if self.sub is None or self.sub == self.short_form else (self.name, self.sub)


def _strip_optional(annotation: Any) -> tuple[Any, bool]:
    args = get_args(annotation)
    if get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in args:
        rest = [a for a in args if a is not type(None)]
        return (rest[0] if len(rest) == 1 else typing.Union[tuple(rest)]), True  # noqa: UP007
    return annotation, False


def _scalar(annotation: Any) -> bool:
    if get_origin(annotation) is Annotated:
        return _scalar(get_args(annotation)[0])
    return annotation in (int, float, str, bool, Path) or get_origin(annotation) is Literal


def _plain(annotation: Any) -> Any:
    """``Annotated[int, Field(gt=0)]`` -> ``int`` (pydantic checks the constraint)."""
    return get_args(annotation)[0] if get_origin(annotation) is Annotated else annotation


def option_kind(info: FieldInfo) -> tuple[str, Any] | None:
    """How a field is spelled on the command line: its kind and the option's type, or None (a section,
    a list of sections, a tuple: set through ``--config``/``--set``)."""
    annotation, _ = _strip_optional(info.annotation)
    origin, args = get_origin(annotation), get_args(annotation)
    if _scalar(annotation):
        return "scalar", _plain(annotation)
    if origin is list and args and _scalar(args[0]):
        item = _plain(args[0])  # typer takes no list of Literal: strings, which pydantic then checks
        return "list", list[str if get_origin(item) is Literal else item]  # type: ignore[misc]
    if origin is dict and len(args) == 2 and _scalar(args[1]):
        return "map", list[str]
    if origin in (typing.Union, types.UnionType):  # str | list[str]: one value or several
        scalars = [a for a in args if _scalar(a)]
        lists = [a for a in args if get_origin(a) is list]
        if len(scalars) == 1 and len(lists) == 1 and get_args(lists[0]) == (scalars[0],):
            return "one_or_many", list[_plain(scalars[0])]  # type: ignore[misc]
    return None


def _default_text(info: FieldInfo) -> str:
    if info.is_required():
        return "required"
    default = info.get_default(call_default_factory=True)
    if default is None or default == [] or default == {}:
        return ""
    if isinstance(default, list):
        return "default: " + " ".join(map(str, default))
    if isinstance(default, dict):
        return "default: " + " ".join(f"{k}={v}" for k, v in default.items())
    if isinstance(default, bool):
        return f"default: {'on' if default else 'off'}"
    return f"default: {default}"


def _help(info: FieldInfo, kind: str, section: str, name: str) -> str:
    text = (info.description or f"{section}.{name}").rstrip(".")
    extra = {"list": "repeatable", "map": "KEY=VALUE, repeatable", "one_or_many": "repeatable"}.get(kind)
    notes = ", ".join(n for n in (extra, _default_text(info)) if n)
    return f"{text} ({notes})." if notes else f"{text}."


CHOICES_SHOWN = 40
"""Longest ``a|b|c`` metavar of a choice option; longer ones read ``CHOICE`` (the help names the choices)."""


def _choice_metavar(option_type: Any, help_text: str) -> tuple[str | None, str]:
    """Metavar and help of an option: ``CHOICE`` (the help names the choices) for a choice option whose
    ``a|b|c`` would not fit on an 80-column help line; else typer's metavar and the help unchanged."""
    choices = [str(c) for c in get_args(option_type)] if get_origin(option_type) is Literal else []
    if len("|".join(choices)) <= CHOICES_SHOWN:
        return None, help_text
    if any(c not in help_text for c in choices):
        help_text = f"{help_text} One of: {', '.join(choices)}."
    return "CHOICE", help_text


def short_form(info: FieldInfo) -> type[BaseModel] | None:
    """The section type of a field whose section has a short form (a :class:`CorpusSource`: a plain
    string is its ``source``), else None."""
    annotation, _ = _strip_optional(info.annotation)
    found = isinstance(annotation, type) and issubclass(annotation, BaseModel)
    return annotation if found and getattr(annotation, "SHORT_FORM", None) else None


def _spellings(model: type[BaseModel]) -> list[tuple[str, str | None, str | None, FieldInfo]]:
    """(field, sub-field, short-form field, the info spelled) of every option candidate: a field, and for a
    section with a short form (``corpus``), the section itself as its short form (``--corpus X``) and its
    other fields (``--corpus-columns``, ``--corpus-max-documents``)."""
    found: list[tuple[str, str | None, str | None, FieldInfo]] = []
    for name, info in model.model_fields.items():
        section = short_form(info)
        if section is None:
            found.append((name, None, None, info))
            continue
        short = section.SHORT_FORM  # type: ignore[attr-defined]
        spelled = copy.copy(info)  # the field's own default and description, the short form's type
        spelled.annotation = section.model_fields[short].annotation
        found.append((name, short, short, spelled))
        found += [(name, sub, short, item) for sub, item in section.model_fields.items() if sub != short]
    return found


def _fields(model: type[BaseModel], prefix: str, options: Options) -> list[tuple[_Field, inspect.Parameter]]:
    found = []
    for field_name, sub, short, info in _spellings(model):
        if field_name in options.exclude:
            continue
        spelled = option_kind(info)
        if spelled is None:
            continue
        kind, option_type = spelled
        name = field_name if sub is None or sub == short else f"{field_name}_{sub}"
        flag = f"--{prefix}{name}".replace("_", "-")
        param = f"{prefix}{name}".replace("-", "_")
        help_text = _help(info, kind, options.section, name.replace(f"{field_name}_", f"{field_name}."))
        shorts = [options.short[name]] if name in options.short else []
        if option_type is bool:
            decl = typer.Option(f"{flag}/--no-{prefix}{name}".replace("_", "-"), *shorts, help=help_text)
        else:
            metavar, help_text = _choice_metavar(option_type, help_text)
            decl = typer.Option(flag, *shorts, help=help_text, metavar=metavar)
        annotation = Annotated[option_type | None, decl]  # type: ignore[valid-type]
        found.append(
            (
                _Field(field_name, param, flag, kind, sub, short),
                inspect.Parameter(param, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation),
            )
        )
    return found


def parse_key_values(values: list[str] | None, option: str) -> dict[str, str]:
    """``["A=1", "B=x"]`` -> ``{"A": "1", "B": "x"}``: the one parser of ``KEY=VALUE`` options.

    Raises:
        OptionError: A value without ``=`` or with an empty key, naming the option.
    """
    pairs: dict[str, str] = {}
    for value in values or []:
        key, sep, rest = value.partition("=")
        if not sep or not key.strip():
            raise OptionError(f"{option} {value!r}: expected KEY=VALUE")
        pairs[key.strip()] = rest
    return pairs


def _section_data(path: Path, section: str) -> dict[str, Any]:
    from skadapt.recipe import load_recipe_data

    data = load_recipe_data(path)
    if section in data and ("name" in data or "base_model" in data):  # a whole recipe
        data = data[section]
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: the {section} section must be a mapping of fields")
    return dict(data)


def _apply_sets(
    data: dict[str, Any], sets: list[str], section: str, origins: dict[tuple[str, ...], str]
) -> dict[str, Any]:
    """Apply each ``--set KEY=VALUE``; ``origins`` gets each field path -> the key as the user typed it."""
    from skadapt.recipe import apply_override, parse_override

    for text in sets:
        typed, value = parse_override(text)
        path = typed[1:] if typed[0] == section and len(typed) > 1 else typed
        apply_override(data, path, value)
        origins[tuple(path)] = f"--set {'.'.join(typed)}"
    return data


def _spelled(loc: tuple[str, ...], origins: dict[tuple[str, ...], str], section: str) -> str:
    """A field path as the user wrote it: the ``--set`` key or the option that gave it (the longest that
    covers it), else its dotted recipe path."""
    for end in range(len(loc), 0, -1):
        if loc[:end] in origins:
            rest = ".".join(loc[end:])
            return origins[loc[:end]] + (f" ({rest})" if rest else "")
    for path, typed in origins.items():  # a shorthand the model rewrote (dev.kind -> dev.sets.0.kind)
        if loc and len(path) > 1 and path[0] == loc[0] and path[-1] == loc[-1]:
            return typed
    return ".".join((section, *loc))


def _option_error(
    error: ValidationError, model: type[BaseModel], origins: dict[tuple[str, ...], str], section: str
) -> OptionError:
    """One line per problem, each naming the option, ``--set`` key or file field as the user wrote it;
    an unknown field with a did-you-mean and the fields allowed there."""
    from skadapt.recipe import allowed_fields, unknown_field_hint

    problems = []
    for item in error.errors():
        loc = tuple(str(part) for part in item["loc"])
        where = _spelled(loc, origins, section)
        if item["type"] == "extra_forbidden":
            allowed = allowed_fields(model, tuple(item["loc"][:-1])) or []
            hint = unknown_field_hint(model, tuple(item["loc"]))
            known = f"{hint.removeprefix('; ')} " if hint else ""
            there = ".".join((section, *loc[:-1]))
            problems.append(f"{where}: unknown field; {known}{there} fields: {', '.join(allowed)}")
        elif item["type"] == "missing":
            problems.append(f"{where}: required (give it, or --set {'.'.join((section, *loc))}=...)")
        else:
            message = re.sub(r"^Value error, ", "", item["msg"])
            value = got(item.get("input"))
            said = value.strip()[1:-1]  # "got 'x'": a validator's message may say it already
            problems.append(f"{where}: {message}{'' if said and said in message else value}")
    return OptionError("invalid option: " + "; ".join(problems))


def build_section(
    model: type[BaseModel],
    fields: list[_Field],
    given: dict[str, Any],
    options: Options,
    *,
    config_file: Path | None = None,
    sets: list[str] | None = None,
) -> BaseModel:
    """The section from ``--config``, then the options given, then ``--set``; errors name the option.

    Raises:
        RecipeError: A value the section rejects, a malformed ``KEY=VALUE``, an unreadable file.
    """
    section = options.section
    data = _section_data(config_file, section) if config_file is not None else {}
    origins = {(name,): f"{config_file}: {section}.{name}" for name in data}
    origins |= {spec.loc: spec.flag for spec in fields}  # a missing field is named by its option
    for spec in fields:
        value = given.get(spec.param)
        if value is None or value == []:
            continue
        if spec.kind == "map":
            value = parse_key_values(value, spec.flag)
        elif spec.kind == "one_or_many" and len(value) == 1:
            value = value[0]
        if spec.sub is None:
            data[spec.name] = value
            continue
        held = data.get(spec.name)  # a section given in short form, in full or not at all
        held = {spec.short_form: held} if isinstance(held, str) else dict(held or {})
        data[spec.name] = {**held, spec.sub: value}
    _apply_sets(data, sets or [], section, origins)
    try:
        return model(**data)
    except ValidationError as error:
        raise _option_error(error, model, origins, section) from None


def _keyword(name: str, kind: Any, option: Any) -> inspect.Parameter:
    """A keyword-only typer option parameter named ``name`` (default None)."""
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[kind, option]
    )


def _options_of(annotation: Any) -> tuple[type[BaseModel], Options] | None:
    if get_origin(annotation) is Annotated:
        base, *extras = get_args(annotation)
        found = [e for e in extras if isinstance(e, Options)]
        if found and isinstance(base, type) and issubclass(base, BaseModel):
            return base, found[0]
    return None


def config_command(function: Callable[..., Any]) -> Callable[..., Any]:
    """Expand the function's config parameters (``Annotated[Model, Options(...)]``) into options.

    The parameter named ``config`` gets unprefixed options, ``--config FILE`` (its section alone, or a
    recipe holding it) and ``--set``; any other (``llm``) gets options prefixed with its name and reads
    ``--config`` only when that is a recipe holding its section. A ``--set`` key starting with another
    section's name (``llm.model=...``) sets that section; any other sets ``config``.
    """
    hints = typing.get_type_hints(function, include_extras=True)
    signature = inspect.signature(function)
    positional: list[inspect.Parameter] = []
    keyword: list[inspect.Parameter] = []
    sections: dict[str, tuple[type[BaseModel], Options, str, list[_Field]]] = {}
    for parameter in signature.parameters.values():
        annotation = hints.get(parameter.name, parameter.annotation)
        found = _options_of(annotation)
        if found is None:
            target = positional if parameter.default is inspect.Parameter.empty else keyword
            target.append(parameter.replace(annotation=annotation, kind=inspect.Parameter.KEYWORD_ONLY))
            continue
        model, options = found
        prefix = "" if parameter.name == "config" else f"{parameter.name}-"
        derived = _fields(model, prefix, options)
        sections[parameter.name] = (model, options, prefix, [spec for spec, _ in derived])
        keyword.extend(p for _, p in derived)
        if parameter.name == "config" and options.file:
            if "config_file" not in signature.parameters:
                help_text = CONFIG_HELP.format(section=options.section)
                keyword.append(_keyword("config_file", Path | None, typer.Option("--config", help=help_text)))
            if "set_" not in signature.parameters:
                help_text = SET_HELP.format(example=f"{options.section}.<field>=VALUE")
                keyword.append(_keyword("set_", list[str] | None, typer.Option("--set", help=help_text)))
    others = {options.section: name for name, (_, options, _, _) in sections.items() if name != "config"}

    @functools.wraps(function)
    def wrapper(**kwargs: Any) -> Any:
        # A command that declares config_file/set_ itself (e.g. to read a whole recipe) still gets them.
        config_file = (kwargs.get if "config_file" in signature.parameters else kwargs.pop)(
            "config_file", None
        )
        sets = (kwargs.get if "set_" in signature.parameters else kwargs.pop)("set_", None) or []
        routed: dict[str, list[str]] = {}
        for text in sets:
            head, dot, _ = text.partition("=")[0].partition(".")
            routed.setdefault(others.get(head.strip(), "config") if dot else "config", []).append(text)
        built: dict[str, Any] = {}
        for name, (model, options, _, fields) in sections.items():
            given = {spec.param: kwargs.pop(spec.param, None) for spec in fields}
            file = config_file if options.file else None
            if name != "config" and file is not None and options.section not in _recipe_sections(file):
                file = None
            built[name] = build_section(
                model, fields, given, options, config_file=file, sets=routed.get(name, [])
            )
        try:
            return function(**kwargs, **built)
        except SkadaptError as error:
            _respell(error, flags)
            raise

    flags = {
        f"{options.section}.{'.'.join(spec.loc)}": spec.flag
        for _, options, _, fields in sections.values()
        for spec in fields
    }
    wrapper.__signature__ = signature.replace(parameters=[*positional, *keyword])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in [*positional, *keyword]}
    return wrapper


def _respell(error: Exception, flags: dict[str, str]) -> None:
    """A message that starts with a recipe field the command has as an option (``synth_sts.prompt_template:
    file not found``, raised by the code a recipe runs too) names the option instead (``--prompt-template``).
    """
    text = str(error)
    found = re.match(r"([a-z_]+\.[a-z_]+)(?=[:\s]|$)", text)
    if found and found.group(1) in flags and error.args == (text,):
        error.args = (flags[found.group(1)] + text[found.end() :],)


def _recipe_sections(path: Path) -> set[str]:
    from skadapt.recipe import load_recipe_data

    data = load_recipe_data(path)
    return set(data) if "name" in data or "base_model" in data else set()


def option_flags(command: Callable[..., Any]) -> set[str]:
    """Every ``--flag`` a command (its typer signature) accepts."""
    flags: set[str] = set()
    for parameter in inspect.signature(command).parameters.values():
        for extra in get_args(parameter.annotation)[1:]:
            for decl in getattr(extra, "param_decls", None) or ():
                flags.update(part for part in str(decl).split("/") if part.startswith("--"))
            default = getattr(extra, "default", None)
            if isinstance(default, str) and default.startswith("--"):
                flags.update(part for part in default.split("/") if part.startswith("--"))
    return flags
