"""Fine-tuning a tiny model on CPU: two datasets/two losses, prompts saved, resume after a crash, the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from skadapt.cli import app
from skadapt.pipeline import run_recipe
from skadapt.recipe import validate_recipe
from skadapt.train.stage import REPORT, finetune
from tests.support.crash import CrashAt
from tests.support.finetune_recipe import DATA, tiny_recipe

recipe_data = tiny_recipe


@pytest.mark.slow
def test_two_datasets_two_losses_train_and_reload(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    recipe = validate_recipe(recipe_data(tiny_models["unigram"], tmp_path / "run", epochs=4))
    out = tmp_path / "model"
    out.mkdir()
    summary = finetune(recipe.context("finetune", str(tiny_models["unigram"]), out, tmp_path / "work"))
    report = json.loads((out / REPORT).read_text(encoding="utf-8"))
    assert report["losses"] == {"nli": "mnrl", "sts": "cosine"}
    assert [d["examples"] for d in report["datasets"]] == [48, 48]
    assert report["steps"]["done"] == report["steps"]["planned"] == summary["steps"]["done"] == 48
    curve = [point["loss"] for point in report["loss_curve"]]
    quarter = len(curve) // 4
    assert sum(curve[-quarter:]) / quarter < 0.8 * sum(curve[:quarter]) / quarter, curve
    assert report["contamination"]["status"] == "no evaluation tasks"

    model = SentenceTransformer(str(out))  # vanilla loading, no skadapt involved
    assert model.prompts["query"] == "query: " and model.prompts["passage"] == "passage: "
    assert model.max_seq_length == 128  # the starting model's inference length, not the training 32
    assert report["max_seq_length"] == {"training": 32, "inference": 128}
    assert model.encode(["Prší."], prompt_name="query").shape == (1, 32)


@pytest.mark.slow
def test_killed_training_resumes_from_checkpoint(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    recipe = validate_recipe(recipe_data(tiny_models["unigram"], tmp_path / "run"))

    def crashing(ctx: Any) -> dict[str, Any]:
        return finetune(ctx, callbacks=[CrashAt(7)])

    with pytest.raises(KeyboardInterrupt):
        run_recipe(recipe, runners={"finetune": crashing})
    assert not (tmp_path / "run" / "finetune").exists()  # nothing half-written
    [work] = (tmp_path / "run" / ".work").iterdir()
    assert sorted(p.name for p in (work / "checkpoints").glob("checkpoint-*")) == ["checkpoint-4"]

    [outcome] = run_recipe(recipe)  # the real stage runner, same key -> same work dir
    report = json.loads((outcome.path / REPORT).read_text(encoding="utf-8"))
    assert report["resumed_from"] == "checkpoint-4"
    assert report["steps"] == {"done": 24, "planned": 24}  # 2 epochs x (48/8 + 48/8) batches
    assert report["loss_curve"][0]["step"] == 1  # history of the killed attempt kept
    manifest = json.loads((outcome.path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["result"]["resumed_from"] == "checkpoint-4"
    assert not work.exists()  # scratch removed once the stage completed


@pytest.mark.slow
def test_dev_set_selects_best_checkpoint(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    dev = {"kind": "sts", "source": str(DATA / "sk_dev_sts.jsonl"), "steps": 4, "select_best": True}
    data = recipe_data(tiny_models["unigram"], tmp_path / "run", dev=dev, epochs=1, max_seq_length=128)
    recipe = validate_recipe(data)
    out = tmp_path / "model"
    out.mkdir()
    finetune(recipe.context("finetune", str(tiny_models["unigram"]), out, tmp_path / "work"))
    report = json.loads((out / REPORT).read_text(encoding="utf-8"))
    history = report["dev"]["history"]
    assert [h["step"] for h in history] == [4, 8, 12]
    assert all(h["seconds"] > 0 for h in history)  # each dev evaluation's time (the trainer's eval_runtime)
    best = max(history, key=lambda h: h["score"])
    assert report["dev"]["best_checkpoint"] == f"checkpoint-{best['step']}"
    assert report["dev"]["final"]["dev_spearman_cosine"] == pytest.approx(best["score"], abs=1e-4)


def write_recipe(tmp_path: Path, data: dict[str, Any]) -> Path:
    import yaml

    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def test_cli_bad_data_clear_error_and_no_model_dir(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"sentence1": "a", "sentence2": "b", "score": 3}\n{"sentence1": "a", "sentence2": "b", "score": 9}\n'
    )
    data = recipe_data(tiny_models["unigram"], tmp_path / "run")
    data["finetune"]["datasets"][1]["source"] = str(bad)
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "finetune",
            str(tiny_models["unigram"]),
            "--config",
            str(write_recipe(tmp_path, data)),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 1, result.output
    assert "dataset 'sts'" in result.output and ".jsonl:2:" in result.output
    assert "score_range" in result.output
    assert "Traceback" not in result.output
    assert not out.exists() and not list(tmp_path.glob(".out.tmp-*"))


def test_cli_contamination_stops_and_set_allows(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    test_file = tmp_path / "sts_test.jsonl"
    test_file.write_text((DATA / "sk_train_sts.jsonl").read_text(encoding="utf-8").splitlines()[0] + "\n")
    (tmp_path / "suite.yaml").write_text("tasks:\n  - {name: Leaky, type: STS, data: sts_test.jsonl}\n")
    data = recipe_data(tiny_models["unigram"], tmp_path / "run", max_steps=2)
    data["evaluate"] = {"tasks": [str(tmp_path / "suite.yaml")]}
    recipe = write_recipe(tmp_path, data)
    out = tmp_path / "out"
    args = ["finetune", str(tiny_models["unigram"]), "--config", str(recipe), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1 and "Leaky: 2/2 test texts" in result.output, result.output
    assert not out.exists() and not list(tmp_path.glob(".out.finetune-*"))  # nothing to resume from

    result = CliRunner().invoke(app, [*args, "--set", "finetune.contamination.allow=true"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / REPORT).read_text(encoding="utf-8"))
    assert report["contamination"]["tasks"]["Leaky"]["rate"] == 1.0 and report["steps"]["done"] == 2
    assert not list(tmp_path.glob(".out.finetune-*"))

    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1 and "--overwrite" in result.output


@pytest.mark.slow
def test_full_warmup_ratio_warms_up_over_the_whole_run(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    from skadapt.train.trainer import training_arguments, warmup_as_ratio

    recipe = validate_recipe(recipe_data(tiny_models["unigram"], tmp_path / "run", warmup_ratio=1.0))
    assert recipe.finetune is not None
    args = training_arguments(recipe.finetune, 42, tmp_path, [], None, 24)
    for steps in (1, 24, 1000, 123_457):
        assert args.get_warmup_steps(steps) == steps
    assert (
        training_arguments(
            recipe.finetune.model_copy(update={"warmup_ratio": 0.1}), 42, tmp_path, [], None, 24
        ).get_warmup_steps(24)
        == 3
    )  # ceil(2.4), the trainer's own ratio semantics
    assert warmup_as_ratio(0.0) == 0.0

    out = tmp_path / "model"
    out.mkdir()
    finetune(recipe.context("finetune", str(tiny_models["unigram"]), out, tmp_path / "work"))
    state = json.loads(
        next((tmp_path / "work" / "checkpoints").glob("checkpoint-*/trainer_state.json")).read_text()
    )
    rates = [e["learning_rate"] for e in state["log_history"] if "learning_rate" in e]
    assert rates == sorted(rates) and len(set(rates)) > 3  # still rising at the end


def test_standalone_checkpoint_directory_is_keyed_by_the_inputs(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    from skadapt.pipeline.alone import alone_work_dir

    model = str(tiny_models["unigram"])
    out = tmp_path / "out"

    def key(model: str = model, **changes: object) -> Path:
        recipe = validate_recipe(recipe_data(tiny_models["unigram"], tmp_path, **changes))
        assert recipe.finetune is not None
        models = {"base": model, "final": model}
        return alone_work_dir("finetune", recipe.finetune, recipe.run_facts(), models, out)

    first = key()
    assert first == key()
    other = key(epochs=1)
    assert first != other and first.parent == other.parent == tmp_path
    assert first.name.startswith(".out.finetune-")
    assert key(model=str(tiny_models["wordpiece"])) != first  # another model: another run


def test_nli_pairs_are_trained_and_the_dropped_share_is_reported(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A premise whose contradicted row differs by one character: its entailed rows train as pairs, the
    lone contradiction is dropped; over 5% dropped is a console warning, the report keeps the counts."""
    from skadapt.train import trainer

    rows = [
        json.loads(line) for line in (DATA / "sk_train_nli.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    for row in rows[:60]:  # 20 premises: their contradicted rows now end in a space
        if row["label"] == "contradiction":
            row["premise"] += " "
    source = tmp_path / "nli.jsonl"
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    data = recipe_data(tiny_models["unigram"], tmp_path / "run", max_steps=2)
    data["finetune"]["datasets"] = [{"name": "nli", "kind": "nli", "source": str(source)}]
    given: dict[str, Any] = {}
    recording_base = trainer.trainer_class()

    class Recording(recording_base):  # type: ignore[misc,valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            given.update(kwargs["train_dataset"])
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(trainer, "trainer_class", lambda: Recording)
    recipe = write_recipe(tmp_path, data)
    check = CliRunner().invoke(app, ["train", str(recipe), "--check"], env={"COLUMNS": "400"})
    assert check.exit_code == 0, check.output
    assert "first 432 rows: 164 premises -> 124 triplets, 20 pairs; dropped 6.9% of 288 rows" in check.output
    result = CliRunner().invoke(app, ["train", str(recipe)], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output

    assert sorted(given) == ["nli", "nli_pairs"]  # the trainer's dataset dict holds the pairs
    assert given["nli_pairs"].column_names == ["anchor", "positive"] and len(given["nli_pairs"]) == 20
    assert given["nli_pairs"][0]["anchor"] == rows[0]["premise"]
    warning = "warning: finetune: dataset nli (" + str(source) + "): dropped 6.9% of 288 rows (20 "
    assert warning in " ".join(result.stderr.split()), result.stderr
    assert "more than 5% of its rows are not trained on" in result.stderr
    assert "finetune data nli: dropped 6.9% of 288 rows" in result.stdout
    report = json.loads((tmp_path / "run" / "finetune" / REPORT).read_text(encoding="utf-8"))
    [nli] = report["datasets"]
    assert (nli["name"], nli["examples"]) == ("nli", 144)
    assert [(p["name"], p["examples"], p["columns"]) for p in nli["parts"]] == [
        ("nli", 124, ["anchor", "positive", "negative"]),
        ("nli_pairs", 20, ["anchor", "positive"]),
    ]
    assert nli["stats"]["dropped"] == {"neutral": 144, "contradiction_without_entailment": 20}
    assert (nli["stats"]["premises"], nli["stats"]["triplets"], nli["stats"]["pairs"]) == (164, 124, 20)
    assert report["losses"] == {"nli": "mnrl", "nli_pairs": "mnrl"}
