"""benchmark/ uses skadapt's public API: ``from skadapt import NAME`` with NAME in ``skadapt.__all__``, or
``from skadapt.api import NAME`` / ``from skadapt.blocks import NAME`` with NAME in that subpackage's
``__all__`` (the stage entry points and their configs; the building blocks).

Every import counts: module level, inside functions, and in the code strings a benchmark runs in a child
process. A benchmark that runs one component alone uses its public building block (``skadapt/blocks/``:
``quantize_int8``, ``score_models``, ``training_texts``, ``sts_requests``, ...). No internal import is
allowed.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

PUBLIC = ("skadapt", "skadapt.api", "skadapt.blocks")
"""The modules whose ``__all__`` is the public API."""

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmark"


def _trees(path: Path) -> list[ast.AST]:
    """The file's syntax tree and those of its string constants that are Python code (child processes)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    trees: list[ast.AST] = [tree]
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "skadapt" in node.value:
            try:
                trees.append(ast.parse(node.value))
            except SyntaxError:
                continue
    return trees


def imported(path: Path) -> tuple[set[str], set[str]]:
    """(public names imported from :data:`PUBLIC`, as ``module.name``; internal names imported from the other
    modules) of a file."""
    public: set[str] = set()
    internal: set[str] = set()
    for tree in _trees(path):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("skadapt."):
                        internal.add(alias.name)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "skadapt":
                if node.module in PUBLIC:
                    public.update(f"{node.module}.{alias.name}" for alias in node.names)
                else:
                    internal.update(f"{node.module}.{alias.name}" for alias in node.names)
    return public, internal


FILES = sorted(BENCHMARK.glob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_benchmark_imports_the_public_api(path: Path) -> None:
    public, internal = imported(path)
    names = {f"{module}.{name}" for module in PUBLIC for name in importlib.import_module(module).__all__}
    unknown = sorted(public - names)
    assert not unknown, f"{path.name} imports {unknown}, which are no public names"
    assert not internal, (
        f"{path.name} imports skadapt internals {sorted(internal)}: use the public API "
        f"(the __all__ of {', '.join(PUBLIC)}), or add the name there if a user would call it too"
    )


def test_the_checker_sees_every_kind_of_import(tmp_path: Path) -> None:
    """Imports inside functions and in child-process code strings count (else the test is vacuous)."""
    script = tmp_path / "bench.py"
    script.write_text(
        "from skadapt import load_recipe\n"
        "import skadapt.tasks.dev_scores as dev_scores\n"
        "def f():\n"
        "    from skadapt.trim.encoder import special_ids\n"
        "CHILD = 'import sys\\nfrom skadapt.sources import read_rows\\n'\n",
        encoding="utf-8",
    )
    assert imported(script) == (
        {"skadapt.load_recipe"},
        {"skadapt.tasks.dev_scores", "skadapt.trim.encoder.special_ids", "skadapt.sources.read_rows"},
    )
