"""benchmark/ uses skadapt's public API: ``from skadapt import NAME`` with NAME in ``skadapt.__all__``.

Every import counts: module level, inside functions, and in the code strings a benchmark runs in a child
process. A benchmark that times one of skadapt's components alone (the planner's rate calibration, the
int8 variants, the static tier's two trainings, the LLM batching) still imports that component's module;
those imports are listed below, name by name, so the list only shrinks: a new internal import fails, and
so does a listed one that is gone (take it off the list).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import skadapt

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmark"

COMPONENTS: dict[str, set[str]] = {
    # the planner's rate calibration: each data-path component's rate, alone (plan/rates/*.json), at the
    # sizes where the sentence splitter goes parallel
    "data_rates.py": {
        "skadapt.tasks.contamination.overlapping_rows",
        "skadapt.textsample.PARALLEL_AFTER",
        "skadapt.textsample.split_workers",
        "skadapt.train.datasets.build_task_datasets",
    },
    # the training texts the finetune stage hands to the dev sets, rebuilt outside a run
    "dev_overlap.py": {
        "skadapt.tasks.contamination.folded_words",
        "skadapt.train.stage.build_datasets",
        "skadapt.train.stage.dataset_texts",
        "skadapt.train.stage.training_texts",
    },
    # every int8 variant scored on the suite: the export stage keeps only the one it chooses
    "int8_variants.py": {
        "skadapt.evaluate.stage.run_evaluation",
        "skadapt.export.int8.choose",
        "skadapt.export.int8.machine",
        "skadapt.export.int8.make_variants",
        "skadapt.export.onnx.copy_model_dir",
        "skadapt.export.onnx.export_fp32",
        "skadapt.export.speed.measure_models",
        "skadapt.export.stage.speed_texts",
        "skadapt.export.stage.training_corpus",
        "skadapt.modeldir.finalize_model_dir",
        "skadapt.results.export.Int8Candidate",
        "skadapt.tasks.backends.load_sentence_model",
        "skadapt.tasks.contamination.gather_test_texts",
    },
    # the paired bootstrap of "All" between any two arms (the evaluation's draws; its report has the
    # verdicts of neighbours only)
    "renorm_prompt.py": {
        "skadapt.evaluate.aggregate.aggregate",
        "skadapt.evaluate.bootstrap.model_draws",
        "skadapt.tasks.runner.evaluate_models",
        "skadapt.tasks.selection.suites_in",
    },
    # the no-reuse arm: each rewritten task scored by a fresh model, as a script without skadapt would
    "robustness_cost.py": {
        "skadapt.robustness.run.RobustnessPlan",
        "skadapt.robustness.run.build_variants",
        "skadapt.tasks.runner.evaluate_model",
        "skadapt.tasks.runner.load_encoder",
    },
    # renormalization's dev choice against the evaluators it replaced: its bootstrap differences recorded
    # inside the stage, the candidates rebuilt from its mu
    "renorm_projection.py": {
        "skadapt.renorm.stage.CONFIDENCE",
        "skadapt.renorm.stage.CandidateMap",
        "skadapt.renorm.stage.renorm_weights",
        "skadapt.tasks.contamination.gather_test_texts",
        "skadapt.tasks.dev_scores",
    },
    # one LLM backend's batching, request by request
    "llm_batching.py": {
        "skadapt.llm.backends.make_backend",
        "skadapt.llm.seeds.request_seed",
        "skadapt.llm.types.ChatRequest",
        "skadapt.llm.types.Sampling",
        "skadapt.synth.prompts.JSON_SCHEMA",
        "skadapt.synth.prompts.load_template",
        "skadapt.synth.prompts.render",
        "skadapt.synth.sources.select_sources",
    },
}
"""Benchmark file -> the internal names it imports (``module.name``, or a module imported whole)."""


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
    """(public names imported from ``skadapt``, internal names imported from its modules) of a file."""
    public: set[str] = set()
    internal: set[str] = set()
    for tree in _trees(path):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("skadapt."):
                        internal.add(alias.name)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "skadapt":
                if node.module == "skadapt":
                    public.update(alias.name for alias in node.names)
                else:
                    internal.update(f"{node.module}.{alias.name}" for alias in node.names)
    return public, internal


FILES = sorted(BENCHMARK.glob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_benchmark_imports_the_public_api(path: Path) -> None:
    public, internal = imported(path)
    unknown = sorted(public - set(skadapt.__all__))
    assert not unknown, f"{path.name} imports {unknown} from skadapt, which has no such public name"
    listed = COMPONENTS.get(path.name, set())
    new = sorted(internal - listed)
    assert not new, (
        f"{path.name} imports skadapt internals {new}: use the public API (`from skadapt import ...`, "
        "skadapt/__init__.py), or add the name there if a user would call it too"
    )
    gone = sorted(listed - internal)
    assert not gone, f"{path.name} no longer imports {gone}: take them off COMPONENTS"


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
        {"load_recipe"},
        {"skadapt.tasks.dev_scores", "skadapt.trim.encoder.special_ids", "skadapt.sources.read_rows"},
    )
    assert set(COMPONENTS) <= {path.name for path in FILES}
