"""The public API: every name of ``skadapt.__all__`` is the function the Python API reference names
(docs/reference/api.md, generated from ``skadapt.__all__`` by docs/gen_reference.py), the
package root imports nothing until a name is used, and ``run_recipe`` runs a recipe as ``skadapt train``
does (the synthetic-STS recipe of tests/support/synth_llm.py, against its scripted LLM server)."""

from __future__ import annotations

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import skadapt
from skadapt.cli import app
from skadapt.pipeline import PipelineError
from tests.support.llm_server import scripted_server
from tests.support.synth_llm import script_for, synth_recipe

ROOT = Path(__file__).resolve().parents[1]


def _documented() -> dict[str, str]:
    """Name -> defining module, from the table of the Python API reference (docs/reference/api.md)."""
    text = (ROOT / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    section = text.split("| name | module | what |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| \[`(\w+)`\]\(#([\w.]+)\) \| `(skadapt[\w.]*)` \|", section, re.MULTILINE)
    assert all(anchor == f"{module}.{name}" for name, anchor, module in rows)  # each links to its docstring
    return {name: module for name, _, module in rows}


def test_every_public_name_is_the_documented_one() -> None:
    documented = _documented()
    assert sorted(documented) == skadapt.__all__
    for name, module in documented.items():
        assert getattr(skadapt, name) is getattr(importlib.import_module(module), name), name
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        skadapt.nothing  # noqa: B018


def test_the_type_checking_imports_are_the_lazy_ones() -> None:
    """What type checkers and the import-rule test see is what ``__getattr__`` loads."""
    tree = ast.parse((ROOT / "skadapt" / "__init__.py").read_text(encoding="utf-8"))
    guarded = next(node for node in tree.body if isinstance(node, ast.If))
    imported = {
        alias.name: node.module
        for node in guarded.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert imported == skadapt._EXPORTS
    assert skadapt.__all__ == sorted(skadapt._EXPORTS)


def test_import_skadapt_stays_cheap() -> None:
    heavy = "{'torch', 'pydantic', 'mteb', 'skadapt'}"
    code = f"import sys, skadapt; print([m for m in sys.modules if m.split('.')[0] in {heavy}])"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['skadapt']"


def test_run_recipe_runs_as_train_does(tmp_path: Path, tiny_models: dict[str, Path]) -> None:
    from datasets import load_from_disk

    with scripted_server(script_for({})) as server:
        api_recipe = synth_recipe(tmp_path, tiny_models["unigram"], server.url, model="a", run="api")
        outcomes = skadapt.run_recipe(api_recipe)
        assert [(o.stage, o.status) for o in outcomes] == [("synth_sts", "ran")] and server.hits == 8
        result = CliRunner().invoke(
            app,
            ["train", str(synth_recipe(tmp_path, tiny_models["unigram"], server.url, model="a", run="cli"))],
        )
        assert result.exit_code == 0, result.output
        assert server.hits == 8  # the same requests: answered from the shared LLM cache
        api, cli = (
            json.loads((tmp_path / r / "synth_sts" / "manifest.json").read_text()) for r in ("api", "cli")
        )
        assert api["key"] == cli["key"] and api["result"] == outcomes[0].result.as_json()
        same = ("pairs", "splits", "failed_sources")
        assert {k: api["result"][k] for k in same} == {k: cli["result"][k] for k in same}
        assert api["result"]["requests_sent"] == cli["result"]["cache_hits"] == 8
        datasets = [load_from_disk(str(tmp_path / r / "synth_sts" / "dataset")) for r in ("api", "cli")]
        assert datasets[0]["train"].to_list() == datasets[1]["train"].to_list()
        again = skadapt.run_recipe(skadapt.load_recipe(tmp_path / "api.yaml"))
        assert [(o.stage, o.status, o.result.as_json()) for o in again] == [
            ("synth_sts", "skipped", api["result"])
        ]
        overridden = skadapt.run_recipe(
            tmp_path / "api.yaml", overrides=["synth_sts.n_sources=6"], check=False
        )
        assert [(o.stage, o.status) for o in overridden] == [("synth_sts", "ran")]
        assert overridden[0].result.pairs == 6 * 6


def test_run_recipe_checks_inputs_first(tmp_path: Path, tiny_models: dict[str, Path]) -> None:
    url = "http://127.0.0.1:9/v1"
    path = synth_recipe(
        tmp_path, tiny_models["unigram"], url, model="a", corpus=str(tmp_path / "missing.txt")
    )
    with pytest.raises(skadapt.PreflightError, match=r"inputs have a problem; no stage started") as caught:
        skadapt.run_recipe(path)
    assert any("missing.txt" in problem for _, problem in caught.value.problems)
    assert not (tmp_path / "run" / "synth_sts").exists()
    with pytest.raises(PipelineError, match="only='trimm': unknown stage"):
        skadapt.run_recipe(path, only="trimm", check=False)


def test_run_recipe_stops_on_harm_as_train_does(
    tmp_path: Path, tiny_models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``evaluate.fail_on_harm`` is a rule of the run, not of the command: ``run_recipe`` stops after an
    evaluation that cannot exclude harm (the later stages do not run) and says why; without it, the run
    goes on. The evaluation's work is replaced by its result; the rule is the stage's own ``halt``."""
    from dataclasses import replace

    import yaml

    from skadapt import stages
    from skadapt.pipeline import RunHalted

    ran: list[str] = []
    harm = {"verdicts": {"base->final": "harms"}, "harms": ["base->final"]}

    def stand_in(name: str, result: dict[str, object]) -> None:
        def run(ctx: object) -> dict[str, object]:
            ran.append(name)
            return result

        monkeypatch.setitem(stages.BY_NAME, name, replace(stages.BY_NAME[name], run=run))

    stand_in("evaluate", harm)
    stand_in("publish", {"repo_id": "me/model", "dry_run": True, "files": 0, "bytes": 0})
    recipe = {
        "name": "r",
        "language": "slk",
        "base_model": str(tiny_models["unigram"]),
        "output_dir": str(tmp_path / "run"),
        "evaluate": {"tasks": ["suite.yaml"], "fail_on_harm": True},
        "publish": {"repo_id": "me/model", "dry_run": True},
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe))
    with pytest.raises(RunHalted, match=r"evaluate.fail_on_harm: .* for base->final") as caught:
        skadapt.run_recipe(path, check=False)
    assert ran == ["evaluate"] and [o.stage for o in caught.value.outcomes] == ["evaluate"]
    assert (tmp_path / "run" / "evaluate" / "manifest.json").is_file()  # the evaluation is kept
    with pytest.raises(RunHalted):  # a finished harmful run stops again, its evaluation skipped
        skadapt.run_recipe(path, check=False)
    assert ran == ["evaluate"]
    outcomes = skadapt.run_recipe(path, overrides=["evaluate.fail_on_harm=false"], check=False)
    assert [o.stage for o in outcomes] == ["evaluate", "publish"] and ran[-1] == "publish"
