"""CLI exit codes and messages."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from skadapt.cli import app

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def test_help_lists_every_command() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in (
        "train",
        "recipe",
        "trim",
        "finetune",
        "renorm",
        "evaluate",
        "robustness",
        "synth-sts",
        "annotate",
        "publish",
        "publish-dataset",
    ):
        assert command in result.output


def test_validate_shipped_recipe() -> None:
    result = runner.invoke(app, ["recipe", "validate", str(ROOT / "recipes" / "e5_sk_small.yaml")])
    assert result.exit_code == 0, result.output
    assert "valid" in result.output


def test_validate_misspelled_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nlanguage: slk\nbase_model: m\ntrim:\n  vocab_sizee: 5\n")
    result = runner.invoke(app, ["recipe", "validate", str(path)])
    assert result.exit_code == 1
    assert "trim.vocab_sizee: unknown field" in result.output
    assert str(path) in result.output
    assert "Traceback" not in result.output


def test_show_resolves_defaults_and_overrides() -> None:
    result = runner.invoke(
        app, ["recipe", "show", str(ROOT / "recipes" / "e5_sk_small.yaml"), "--set", "finetune.epochs=1"]
    )
    assert result.exit_code == 0, result.output
    shown = yaml.safe_load(result.stdout)
    assert shown["finetune"]["epochs"] == 1
    assert shown["trim"]["parity_documents"] == 1000  # a default not written in the file


@pytest.mark.parametrize("code", ["pol", "ces", "ukr"])
def test_recipe_new_prints_a_loadable_recipe(code: str) -> None:
    result = runner.invoke(app, ["recipe", "new", "--language", code])
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(result.stdout)
    assert data["language"] == code


def test_recipe_new_unknown_language() -> None:
    result = runner.invoke(app, ["recipe", "new", "--language", "xxx"])
    assert result.exit_code == 2  # a usage error
    assert "unknown language 'xxx'" in result.output


def test_train_rejects_unknown_stage_option(tmp_path: Path) -> None:
    result = runner.invoke(app, ["train", str(ROOT / "recipes" / "e5_sk_small.yaml"), "--from", "trimm"])
    assert result.exit_code == 2  # a usage error
    assert "unknown stage" in result.output


def test_train_missing_recipe(tmp_path: Path) -> None:
    result = runner.invoke(app, ["train", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 1
    assert "recipe file not found" in result.output


def test_languages_table() -> None:
    result = runner.invoke(app, ["languages"])
    assert result.exit_code == 0
    assert "slk" in result.output and "Slovak" in result.output


# ------------------------------------------------------------------ the command-line grammar, old spellings

SUITE = ROOT / "tests" / "data" / "suite_sk" / "suite.yaml"


def _flat(text: str) -> str:
    return " ".join(text.split())


def _fake_evaluation(seen: dict) -> object:
    from skadapt.artifacts import write_json
    from skadapt.evaluate.aggregate import Table

    def run_evaluation(config: object, models: dict, out_dir: Path, **facts: object) -> tuple:
        seen.update(facts, config=config, models=models)
        table = Table(task_types={}, rows=[])  # the report the command prints from: empty
        write_json(out_dir / "report.json", {**table.to_dict(), "comparisons": [], "verdicts": []})
        return table, [], []

    return run_evaluation


def _no_such_option(result: object, flag: str) -> bool:
    """Whether click refused ``flag`` as an option the command does not have (exit 2)."""
    return result.exit_code == 2 and f"No such option: {flag}" in _flat(result.output)  # type: ignore[attr-defined]


def test_evaluate_options_come_from_the_config_and_old_spellings_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict = {}
    monkeypatch.setattr("skadapt.evaluate.stage.run_evaluation", _fake_evaluation(seen))
    args = ["evaluate", "A=org/model", "--tasks", str(SUITE), "--batch-size", "8", "--bootstrap", "0"]
    result = runner.invoke(
        app,
        [*args, "--prompt-policy", "STS=query: ", "--dataset-mirrors", "T=/d", "--tost-margin", "1.5"],
    )
    assert result.exit_code == 0, result.output
    assert seen["language"] is None and seen["recompute"] is False  # no language filter unless asked
    config = seen["config"]
    assert config.prompt_policy == {"STS": "query: "} and config.dataset_mirrors == {"T": "/d"}
    assert config.tost_margin == 1.5 and config.batch_size == 8 and config.bootstrap == 0
    assert seen["models"] == {"A": "org/model"} and config.tasks == [str(SUITE)]

    again = runner.invoke(app, [*args, "--no-cache", "--language", "slk"])
    assert again.exit_code == 0, again.output
    assert seen["recompute"] is True and seen["language"] == "slk"

    for old, value in (("--prompt", "STS=query: "), ("--mirror", "T=/d"), ("--margin", "1.5")):
        assert _no_such_option(runner.invoke(app, [*args, old, value]), old), old

    bad = runner.invoke(app, [*args, "--prompt-policy", "STS"])
    assert bad.exit_code == 2 and "--prompt-policy 'STS': expected KEY=VALUE" in bad.output


def test_evaluate_without_language_needs_languages_of_local_tasks(tmp_path: Path) -> None:
    (tmp_path / "s.yaml").write_text("tasks:\n  - {name: A, type: STS, data: d.jsonl}\n")
    (tmp_path / "d.jsonl").write_text('{"sentence1": "a", "sentence2": "b", "score": 1}\n')
    result = runner.invoke(app, ["evaluate", "org/model", "--tasks", str(tmp_path / "s.yaml")])
    assert result.exit_code == 1
    assert "task A declares no language; pass --language CODE" in _flat(result.output)


def _fake_robustness(seen: dict) -> object:
    def run_robustness(
        tasks: list, plan: object, llm: object, language: object, out_dir: Path, **kwargs: object
    ) -> dict:
        seen.update(plan=plan, llm=llm, language=language, out_dir=out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "robustness.md").write_text("# profile\n")
        (out_dir / "robustness.json").write_text("{}\n")
        (out_dir / "cache").mkdir(exist_ok=True)
        return {"statistics": {"models": {}}, "texts_encoded": 0}

    return run_robustness


def test_robustness_options_and_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict = {}
    monkeypatch.setattr("skadapt.robustness.stage.run_robustness", _fake_robustness(seen))
    out = tmp_path / "out"
    base = ["robustness", "m=org/model", "-t", str(SUITE), "--llm-model", "x", "--out", str(out)]
    missing = runner.invoke(app, base)
    assert missing.exit_code == 2 and "--language" in missing.output

    options = ["--language", "slk", "--transforms", "paraphrase", "--transforms", "style", "--seeds", "7"]
    result = runner.invoke(
        app,
        [
            *base,
            *options,
            "--seeds",
            "8",
            "--prompt-policy",
            "STS=query: ",
            "--llm-temperature",
            "0.2",
            "--llm-max-tokens",
            "64",
        ],
    )
    assert result.exit_code == 0, result.output
    plan, llm = seen["plan"], seen["llm"]
    assert plan.models == {"m": "org/model"}
    assert plan.transforms == ["paraphrase", "style"] and plan.seeds == [7, 8]
    assert plan.prompt_policy == {"STS": "query: "} and plan.temperature is None
    assert llm.temperature == 0.2 and llm.max_tokens == 64 and llm.structured == "auto"
    assert seen["out_dir"].parent == tmp_path and seen["out_dir"].name.startswith(".out.robustness-")
    assert sorted(p.name for p in out.iterdir()) == ["robustness.json", "robustness.md"]  # no cache
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # the work directory is gone

    again = runner.invoke(app, [*base, *options])
    assert again.exit_code == 1 and "already exists" in again.output
    replaced = runner.invoke(app, [*base, "--language", "slk", "--seeds", "9", "--overwrite"])
    assert replaced.exit_code == 0, replaced.output
    assert seen["plan"].seeds == [9]
    comma = runner.invoke(
        app, [*base, "--language", "slk", "--overwrite", "--transforms", "paraphrase,style"]
    )
    assert comma.exit_code == 2 and "paraphrase,style" in comma.output, comma.output  # one value, not split
    assert _no_such_option(runner.invoke(app, [*base, "--language", "slk", "--prompt", "STS=q"]), "--prompt")


def test_synth_sts_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict = {}

    def synthesize_sts(
        config: object, llm: object, language: object, out_dir: Path, **kwargs: object
    ) -> dict:
        seen.update(config=config, llm=llm, out_dir=out_dir, **kwargs)
        (out_dir / "error_rates.md").write_text("| rates |\n")
        return {"pairs": 0, "failed_sources": 0, "generation": {"requests_sent": 0, "cache_hits": 0}}

    monkeypatch.setattr("skadapt.synth.stage.synthesize_sts", synthesize_sts)  # the stage's run calls it
    out = tmp_path / "out"
    base = ["synth-sts", "--corpus", "c.txt", "--llm-model", "x", "--out", str(out), "--pilot", "2"]
    assert runner.invoke(app, base).exit_code == 2  # --language is required

    result = runner.invoke(
        app,
        [
            *base,
            "--language",
            "slk",
            "--annotation-sample-per-level",
            "7",
            "--contamination-tasks",
            "T",
            "--set",
            "contamination.allow=true",
            "--temperature",
            "0.5",
            "--llm-temperature",
            "0.1",
        ],
    )
    assert result.exit_code == 0, result.output
    config, llm = seen["config"], seen["llm"]
    assert config.annotation_sample_per_level == 7 and config.contamination_tasks == ["T"]
    assert config.contamination.allow and config.temperature == 0.5 and llm.temperature == 0.1
    assert llm.max_tokens == 2048 and seen["seed"] == 42 and seen["pilot"] == 2  # the config defaults
    assert seen["out_dir"] != out and (out / "error_rates.md").is_file()

    new = runner.invoke(app, [*base, "--language", "slk", "--overwrite", "--set", "llm.max_tokens=100"])
    assert new.exit_code == 0, new.output
    assert not seen["config"].contamination.allow and seen["llm"].max_tokens == 100
    assert seen["config"].contamination_tasks == ["MTEB(slk, v1)"]  # the language's benchmark
    for old in ("--per-level", "--contamination-task", "--contamination-allow"):
        value = [] if old == "--contamination-allow" else ["7"]
        assert _no_such_option(runner.invoke(app, [*base, "--language", "slk", old, *value]), old), old
