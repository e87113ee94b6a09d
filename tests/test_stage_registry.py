"""A stage is one object plus its line in the stage list: the recipe, the pipeline, the plan, the commands and
publish read the list and name no stage.

The proof: a toy stage defined outside skadapt (its own package, here written into a temporary directory)
joins with :func:`skadapt.stages.register` and runs through ``run_recipe``, ``skadapt train --plan`` and
its own command ``skadapt toy``, has its Python entry point (``skadapt.api.entry("toy")``) and its summary
line after ``skadapt train``'s table, can be named in ``evaluate.models``, and its section is in the
published model card (``skadapt publish``), with no other skadapt module touched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from skadapt.recipe import Recipe
from skadapt.stages import STAGE_NAMES, STAGES

ROOT = Path(__file__).resolve().parents[1]

TOY_PACKAGE = '''
"""A toy model stage: its model is its input model's files (linked), with its words in its report; its
plan counts them, its card section says them."""

from __future__ import annotations

from pathlib import Path

from skadapt.artifacts import link_or_copy
from skadapt.config import Section
from skadapt.plan.model import StagePlan
from skadapt.results.base import StageReport, StageResult
from skadapt.stage import CardContext, PlanContext, Stage, StageContext
from skadapt.stages import register


class ToyConfig(Section):
    """The toy section."""

    words: int = 3
    word: str = "toy"


class ToyResult(StageResult):
    words: int
    input_model: str


class ToyReport(StageReport):
    FILE = "toy.json"

    text: str


def run(ctx: StageContext[ToyConfig]) -> ToyResult:
    source = Path(ctx.input_model)
    for path in source.rglob("*"):
        if path.is_file():
            link_or_copy(path, ctx.out_dir / path.relative_to(source))
    ToyReport(text=" ".join([ctx.config.word] * ctx.config.words)).write(ctx.out_dir)
    return ToyResult(words=ctx.config.words, input_model=ctx.input_model)


def plan(config: ToyConfig, ctx: PlanContext) -> StagePlan:
    return StagePlan(stage="toy", lines=[f"toy: writes {config.words} words (base {ctx.base.label()})"])


def card(ctx: CardContext) -> list[str]:
    report = ctx.report_as(ToyReport)
    said = report.text if report is not None else "nothing"
    return ["## Toy words", "", f"The toy said `{said}` ({ctx.config.get('words')} words).", ""]


def summary(config: ToyConfig, result: StageResult | None, stage_dir: Path) -> list[str]:
    said = ToyReport.read(stage_dir)
    return [f"toy said: {said.text}"] if said is not None else []


STAGE = Stage(
    "toy",
    ToyConfig,
    run,
    makes_model=True,
    report=ToyReport,
    result=ToyResult,
    plan=plan,
    card=card,
    card_tag="toy-words",
    summary=summary,
)
register(STAGE, before="publish")
'''


def test_the_declared_sections_are_the_stages_configs() -> None:
    """The recipe declares each stage's section typed (for type checkers) as its config, in run order;
    the stage list and the recipe's sections cannot drift apart."""
    declared = [name for name in Recipe.model_fields if name in STAGE_NAMES]
    assert declared == list(STAGE_NAMES)
    for stage in STAGES:
        assert Recipe.model_fields[stage.name].annotation == (stage.config | None), stage.name


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The toy package, a recipe with its section only, and how to run Python with the toy registered."""
    root = tmp_path_factory.mktemp("toy")
    (root / "toystage.py").write_text(textwrap.dedent(TOY_PACKAGE), encoding="utf-8")
    model = os.environ.get("SKADAPT_TEST_MODEL")
    if not model:
        pytest.skip("SKADAPT_TEST_MODEL is not set")
    recipe = root / "toy.yaml"
    recipe.write_text(
        f"name: toy\nlanguage: slk\nbase_model: {model}\noutput_dir: {root / 'run'}\ntoy:\n  words: 4\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{ROOT}", "COLUMNS": "200"}
    return {"root": root, "recipe": recipe, "model": model, "env": env}


def _python(toy: dict[str, object], code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", f"import toystage\n{code}", *args],
        capture_output=True,
        text=True,
        env=toy["env"],  # type: ignore[arg-type]
        cwd=toy["root"],  # type: ignore[arg-type]
        timeout=300,
        check=False,
    )


CLI = "from skadapt.cli import app\napp()"


def test_a_new_stage_runs_through_the_recipe_runner(toy: dict[str, object]) -> None:
    code = (
        "from skadapt import run_recipe\n"
        "import json, sys\n"
        "for attempt in range(2):\n"
        "    outcomes = run_recipe(sys.argv[1], check=False)\n"
        "    print(json.dumps([[o.stage, o.status, o.result.model_dump(mode='json')] for o in outcomes]))\n"
    )
    done = _python(toy, code, str(toy["recipe"]))
    assert done.returncode == 0, done.stderr
    first, second = (json.loads(line) for line in done.stdout.strip().splitlines()[-2:])
    result = {"kept": True, "words": 4, "input_model": toy["model"]}
    assert first[0][:2] == ["toy", "ran"] and first[0][2] == result
    assert second[0][:2] == ["toy", "skipped"] and second[0][2] == result  # read back through its result
    run = Path(str(toy["root"])) / "run" / "toy"
    assert json.loads((run / "toy.json").read_text())["text"] == "toy toy toy toy"
    assert json.loads((run / "manifest.json").read_text())["stage"] == "toy"


def test_a_new_stage_has_its_plan(toy: dict[str, object]) -> None:
    done = _python(toy, CLI, "train", str(toy["recipe"]), "--plan")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "toy: writes 4 words (base e5-small)" in done.stdout


def test_a_new_stage_has_its_command(toy: dict[str, object]) -> None:
    helped = _python(toy, CLI, "toy", "--help")
    assert helped.returncode == 0, helped.stderr
    assert "--words" in helped.stdout and "--word " in helped.stdout and "--out" in helped.stdout
    out = Path(str(toy["root"])) / "alone"
    done = _python(toy, CLI, "toy", str(toy["model"]), "--out", str(out), "--words", "2", "--word", "ahoj")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads((out / "toy.json").read_text())["text"] == "ahoj ahoj"
    assert '"words": 2' in done.stdout
    again = _python(toy, CLI, "toy", str(toy["model"]), "--out", str(out))
    assert again.returncode != 0 and "--overwrite" in again.stdout + again.stderr  # the stage run's rule


def test_a_new_stage_has_its_python_entry_and_its_summary_line(toy: dict[str, object]) -> None:
    root = Path(str(toy["root"]))
    code = (
        "import sys\n"
        "from skadapt.api import entry\n"
        "config = toystage.ToyConfig(words=3, word='ha')\n"
        "result = entry('toy')(sys.argv[1], config, language='sk', out=sys.argv[2])\n"
        "print(type(result).__name__, result.words)\n"
    )
    done = _python(toy, code, str(toy["model"]), str(root / "entry"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-2:] == ["ToyResult", "3"]
    assert json.loads((root / "entry" / "toy.json").read_text())["text"] == "ha ha ha"
    trained = _python(toy, CLI, "train", str(toy["recipe"]), "--no-check")
    assert trained.returncode == 0, trained.stdout + trained.stderr
    assert "toy said: toy toy toy toy" in trained.stdout  # its summary line, after the run's table


def test_a_new_stage_can_be_named_in_evaluate_models(toy: dict[str, object]) -> None:
    """``evaluate.models`` takes the models the stages make (:data:`skadapt.config.MODEL_NAMES`), a
    registered stage's too; a name no stage makes is refused."""
    code = (
        "import sys\n"
        "from skadapt.recipe import validate_recipe\n"
        "from skadapt.errors import SkadaptError\n"
        "base = {'name': 'x', 'language': 'slk', 'base_model': sys.argv[1], 'toy': {}}\n"
        "for models in (['base', 'toy'], ['base', 'nope']):\n"
        "    try:\n"
        "        recipe = validate_recipe({**base, 'evaluate': {'models': models}})\n"
        "        print('valid', recipe.evaluate.models)\n"
        "    except SkadaptError as error:\n"
        "        print('refused', str(error).splitlines()[1].strip())\n"
    )
    done = _python(toy, code, str(toy["model"]))
    assert done.returncode == 0, done.stderr
    valid, refused = done.stdout.strip().splitlines()[-2:]
    assert valid == "valid ['base', 'toy']"
    assert refused.startswith("refused evaluate.models.1: unknown model 'nope'") and "toy" in refused


def test_a_new_stage_has_its_card_section(toy: dict[str, object]) -> None:
    """Publish reads the toy's report through the type the toy declares and appends the toy's own card
    section, both in a recipe's publish stage and in ``skadapt publish``."""
    root = Path(str(toy["root"]))
    recipe = root / "published.yaml"
    recipe.write_text(
        f"name: published\nlanguage: slk\nbase_model: {toy['model']}\noutput_dir: {root / 'published'}\n"
        "toy:\n  words: 2\n  word: ahoj\npublish:\n  repo_id: me/toy\n  dry_run: true\n",
        encoding="utf-8",
    )
    out = root / "by-command"
    args = ("publish", str(root / "published"), "--repo-id", "me/toy", "--dry-run", "--out", str(out))
    code = "from skadapt import run_recipe\nimport sys\nrun_recipe(sys.argv[1], check=False)\n"
    done = _python(toy, code + CLI.replace("app()", "app(sys.argv[2:])"), str(recipe), *args)  # one process
    assert done.returncode == 0, done.stdout + done.stderr
    section = "## Toy words\n\nThe toy said `ahoj ahoj` (2 words).\n"
    upload = root / "published" / "publish" / "upload"
    card = (upload / "README.md").read_text(encoding="utf-8")
    assert section in card and "with skadapt (toy)" in card  # the toy made the published model
    assert "- toy-words\n" in card  # its tag
    assert json.loads((upload / "skadapt" / "toy" / "toy.json").read_text())["text"] == "ahoj ahoj"
    assert section in (out / "upload" / "README.md").read_text(encoding="utf-8")  # skadapt publish's card


def test_register_refuses_a_taken_name_and_an_unknown_place() -> None:
    from skadapt.errors import SkadaptError
    from skadapt.stages import BY_NAME, register

    with pytest.raises(SkadaptError, match="'trim': a stage of that name exists"):
        register(BY_NAME["trim"])
    toy = replace(BY_NAME["trim"], name="toy")
    with pytest.raises(SkadaptError, match="before='nope': no such stage"):
        register(toy, before="nope")
    assert "toy" not in BY_NAME


def test_a_stage_without_a_plan_is_said_to_have_none(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The plan asks each stage for its own; one that declares none is listed, without an estimate."""
    from skadapt import stages
    from skadapt.planning import plan_recipe
    from skadapt.recipe import load_recipe

    monkeypatch.setitem(stages.BY_NAME, "renorm", replace(stages.BY_NAME["renorm"], plan=None))
    plan = plan_recipe(load_recipe(ROOT / "recipes" / "demo_sk.yaml", [f"output_dir={tmp_path}"]))
    renorm = plan.stage("renorm")
    assert renorm.lines == ["no cost estimate: the stage declares no plan"] and not renorm.parts
    assert plan.stage("finetune").parts  # the others planned as before
