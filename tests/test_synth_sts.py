"""Synthetic STS end to end against a scripted OpenAI-compatible server: malformed JSON, missing levels,
English and Czech answers, 500s and slow answers are retried or recorded; reruns send nothing; the same
seed gives the same dataset; held-out (test) sources never reach train; annotation and agreement."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from datasets import load_from_disk
from typer.testing import CliRunner

from skadapt.annotate.sheetio import SheetError
from skadapt.annotate.sheets import KEY, SHEETS, read_sheets
from skadapt.cli import app
from skadapt.languages import get_language
from skadapt.llm.config import LLMConfig
from skadapt.synth.config import SynthSTSConfig
from skadapt.synth.run import synthesize_sts
from skadapt.synth.sources import select_sources
from skadapt.tasks.config import ContaminationConfig
from tests.support.llm_server import scripted_server
from tests.support.synth_llm import CORPUS, script_for, synth_recipe

SLOVAK = get_language("slk")


def llm(url: str, cache: Path) -> LLMConfig:
    return LLMConfig(
        backend="openai",
        model="scripted",
        base_url=url,
        cache=str(cache),
        http_retries=3,
        timeout_s=10,
        attempts=3,
    )


def config(n: int = 12, **changes: object) -> SynthSTSConfig:
    settings = {
        "corpus": str(CORPUS),
        "n_sources": n,
        "annotation_sample_per_level": 4,
        "annotators": 3,
        "contamination_tasks": [],
        "contamination": ContaminationConfig(),
    } | changes
    return SynthSTSConfig(**settings)  # type: ignore[arg-type]


KINDS = {
    0: "broken",
    1: "missing",
    2: "english",
    3: "czech",
    4: "error",
    5: "slow",
    6: "always_broken",
    7: "leak",
}


def test_sources_are_unique_in_range_slovak_and_seeded() -> None:
    first = select_sources(str(CORPUS), SLOVAK, 10, seed=3)
    assert first.sentences == select_sources(str(CORPUS), SLOVAK, 10, seed=3).sentences
    assert first.sentences != select_sources(str(CORPUS), SLOVAK, 10, seed=4).sentences
    texts = [s.text for s in first.sentences]
    assert len(set(texts)) == 10 and all(60 <= len(t) <= 200 for t in texts)


def test_generation_end_to_end(tmp_path: Path) -> None:
    with scripted_server(script_for(KINDS)) as server:
        report = synthesize_sts(
            config(), llm(server.url, tmp_path / "c.sqlite"), SLOVAK, tmp_path / "a", seed=7
        )
        hits = server.hits
        again = synthesize_sts(
            config(), llm(server.url, tmp_path / "c.sqlite"), SLOVAK, tmp_path / "b", seed=7
        )
        assert server.hits == hits  # the rerun sent zero requests
    generation = report["generation"]
    counts = {row["check"]: row["failed"] for row in generation["error_rates"]}
    assert counts["broken_json"] == 4 and counts["missing_fields"] == 1
    assert counts["wrong_language"] == 2 and counts["reasoning_leak"] == 1
    assert report["failed_sources"] == 1  # always broken: recorded, never replaced
    failures = [json.loads(line) for line in (tmp_path / "a" / "failures.jsonl").read_text().splitlines()]
    assert len(failures) == 1 and failures[0]["attempts"] == 3
    assert all("broken_json" in reasons[0] for reasons in failures[0]["failures"])
    assert report["pairs"] == 11 * 6
    assert again["generation"]["requests_sent"] == 0
    # same seed, same dataset
    a, b = load_from_disk(str(tmp_path / "a" / "dataset")), load_from_disk(str(tmp_path / "b" / "dataset"))
    assert a["train"].to_list() == b["train"].to_list() and a["heldout"].to_list() == b["heldout"].to_list()
    train_sources = set(a["train"]["source_id"])
    held = set(a["heldout"]["source_id"])
    assert len(held) == 4 and not train_sources & held
    assert sorted(a["heldout"]["score"]) == sorted([float(level) for level in range(6)] * 4)
    assert set(a["train"].column_names) >= {"sentence1", "sentence2", "score", "explanation", "source_id"}
    card = (tmp_path / "a" / "README.md").read_text()
    assert "| wrong_language | 2 |" in card and "task_categories" in card
    table = (tmp_path / "a" / "error_rates.md").read_text()
    assert "| broken_json |" in table


def test_different_seed_different_choice(tmp_path: Path) -> None:
    with scripted_server(script_for({})) as server:
        first = synthesize_sts(config(6), llm(server.url, tmp_path / "c"), SLOVAK, tmp_path / "a", seed=1)
        second = synthesize_sts(config(6), llm(server.url, tmp_path / "c"), SLOVAK, tmp_path / "b", seed=2)
    assert first["generation"]["requests_sent"] == second["generation"]["requests_sent"] == 6
    a = set(load_from_disk(str(tmp_path / "a" / "dataset"))["train"]["sentence1"])
    b = set(load_from_disk(str(tmp_path / "b" / "dataset"))["train"]["sentence1"])
    assert a != b


def test_pilot_writes_a_review_sheet_only(tmp_path: Path) -> None:
    with scripted_server(script_for({1: "always_broken"})) as server:
        synthesize_sts(config(), llm(server.url, tmp_path / "c"), SLOVAK, tmp_path / "p", seed=1, pilot=3)
    rows = list(csv.DictReader((tmp_path / "p" / "pilot_review.csv").open(encoding="utf-8-sig")))
    assert len(rows) == 2 * 6 + 1 and any(r["status"].startswith("failed: broken_json") for r in rows)
    assert not (tmp_path / "p" / "dataset").exists()


def fill_sheets(directory: Path, rate) -> None:
    key = {
        json.loads(line)["item_id"]: json.loads(line) for line in (directory / KEY).read_text().splitlines()
    }
    for number, sheet in enumerate(sorted((directory / SHEETS).glob("*.csv"))):
        rows = list(csv.DictReader(sheet.open(encoding="utf-8-sig")))
        for row in rows:
            row["score"] = str(rate(key[row["item_id"]]["score"], number))
        with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


def split(tmp_path: Path, annotation: Path) -> None:
    """``skadapt annotate split`` of the run under ``tmp_path/s`` into ``tmp_path/final``."""
    dataset, out = tmp_path / "s" / "dataset", tmp_path / "final"
    args = ["annotate", "split", str(annotation), str(dataset), "--language", "slk", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output


def test_annotate_split_takes_the_dataset_as_its_second_argument(tmp_path: Path) -> None:
    """The dataset is an argument (required); ``--dataset`` (never released) is refused."""
    args = ["annotate", "split", str(tmp_path / "annotation"), "--language", "slk", "--out", str(tmp_path)]
    missing = CliRunner().invoke(app, args)
    assert missing.exit_code == 2 and "Missing argument 'dataset'" in missing.output
    old = CliRunner().invoke(app, [*args, "--dataset", str(tmp_path / "dataset")])
    assert old.exit_code == 2 and "No such option: --dataset" in old.output


def test_annotation_round_trip_and_test_split(tmp_path: Path) -> None:
    with scripted_server(script_for({})) as server:
        synthesize_sts(config(10), llm(server.url, tmp_path / "c"), SLOVAK, tmp_path / "s", seed=3)
    annotation = tmp_path / "s" / "annotation"
    for sheet in (annotation / SHEETS).glob("*.csv"):
        text = sheet.read_text(encoding="utf-8-sig")
        header, *lines = text.splitlines()
        assert header == "item_id,sentence1,sentence2,score"
        assert all(line.endswith(",") for line in lines)  # the intended score is not in the sheet
    with pytest.raises(SheetError, match=r"annotator_1\.csv row 2 score: empty"):
        read_sheets(annotation)
    # annotator 1 agrees with the intended level, 2 is one higher (capped), 3 one lower (floored)
    fill_sheets(annotation, lambda level, n: int(min(5, max(0, level + (0, 1, -1)[n]))))
    runner = CliRunner()
    result = runner.invoke(app, ["annotate", "agreement", str(annotation)])
    assert result.exit_code == 0, result.output
    report = json.loads((annotation / "agreement.json").read_text())
    assert report["items"] == 24 and report["vs_reference"][0]["accuracy"] == 1.0
    split(tmp_path, annotation)
    final = load_from_disk(str(tmp_path / "final" / "dataset"))
    assert len(final["test"]) == 24
    assert not set(final["train"]["source_id"]) & set(final["test"]["source_id"])
    assert all(abs(r["score"] - sum(r["ratings"]) / 3) < 1e-9 for r in final["test"])
    assert (tmp_path / "final" / "suite.yaml").is_file()


def test_sheet_errors_name_sheet_row_and_field(tmp_path: Path) -> None:
    with scripted_server(script_for({})) as server:
        synthesize_sts(config(8), llm(server.url, tmp_path / "c"), SLOVAK, tmp_path / "s", seed=3)
    annotation = tmp_path / "s" / "annotation"
    fill_sheets(annotation, lambda level, n: int(level))
    sheet = annotation / SHEETS / "annotator_2.csv"
    rows = list(csv.reader(sheet.open(encoding="utf-8-sig")))
    rows[1][3], rows[2][3], rows[3][0] = "7", "dva", "unknown"
    with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
        csv.writer(handle).writerows(rows)
    with pytest.raises(SheetError) as error:
        read_sheets(annotation)
    message = str(error.value)
    assert "annotator_2.csv row 2 score: 7 is not a whole number from 0 to 5" in message
    assert "annotator_2.csv row 3 score: 'dva' is not a number" in message
    assert "annotator_2.csv row 4 item_id: unknown item 'unknown'" in message


def test_the_dataset_plugs_into_finetune_and_evaluate(tmp_path: Path, tiny_models: dict[str, Path]) -> None:
    from skadapt.prompts import E5_PROMPTS
    from skadapt.tasks.runner import evaluate_model
    from skadapt.tasks.selection import select_tasks
    from skadapt.train.config import FinetuneDataset
    from skadapt.train.datasets import build_task_dataset

    with scripted_server(script_for({})) as server:
        synthesize_sts(config(10), llm(server.url, tmp_path / "c"), SLOVAK, tmp_path / "s", seed=3)
    annotation = tmp_path / "s" / "annotation"
    fill_sheets(annotation, lambda level, n: int(level))
    split(tmp_path, annotation)
    entry = FinetuneDataset(
        name="synth", kind="sts", source=str(tmp_path / "final" / "dataset"), score_range=(0, 5)
    )
    built = build_task_dataset(entry, model_prompts=E5_PROMPTS)
    assert len(built) == 6 * 6 and built.loss == "cosine"  # the train split: 10 sources - 4 held out
    tasks = select_tasks([str(tmp_path / "final" / "suite.yaml")], language="slk")
    scores = evaluate_model(
        str(tiny_models["unigram"]), "tiny", tasks, cache_dir=tmp_path / "cache", results_dir=tmp_path / "res"
    )
    assert [(s.task, s.type) for s in scores] == [("SynthSTS", "STS")]


def test_recipe_stage_runs_skips_and_reruns_when_the_llm_changes(
    tmp_path: Path, tiny_models: dict[str, Path]
) -> None:
    import yaml

    from skadapt.recipe import RecipeError, load_recipe

    def recipe(model: str) -> Path:
        return synth_recipe(tmp_path, tiny_models["unigram"], url, model=model, file=model)

    runner = CliRunner()
    with scripted_server(script_for({})) as server:
        url = server.url
        first = runner.invoke(app, ["train", str(recipe("a"))])
        assert first.exit_code == 0, first.output
        assert server.hits == 8
        again = runner.invoke(app, ["train", str(recipe("a"))])
        assert "up to date, skipped" in again.output and server.hits == 8
        other = runner.invoke(app, ["train", str(recipe("b"))])
        assert other.exit_code == 0 and server.hits == 16  # another model: new key, new requests
        annotation = tmp_path / "run" / "synth_sts" / "annotation"
        fill_sheets(annotation, lambda level, n: int(level))
        filled = {p.name: p.read_bytes() for p in (annotation / SHEETS).iterdir()}
        refused = runner.invoke(app, ["train", str(recipe("a"))])  # a rerun would replace filled sheets
        assert refused.exit_code == 1 and server.hits == 16
        assert "holds filled sheets (annotation/sheets/annotator_1.csv, " in refused.output
        assert {p.name: p.read_bytes() for p in (annotation / SHEETS).iterdir()} == filled
        annotation.rename(tmp_path / "rated")  # moved out of the run: the stage runs again
        assert runner.invoke(app, ["train", str(recipe("a"))]).exit_code == 0
        assert (annotation / SHEETS / "annotator_1.csv").is_file() and server.hits == 16  # cached answers
    manifest = json.loads((tmp_path / "run" / "synth_sts" / "manifest.json").read_text())
    assert manifest["result"]["pairs"] == 48 and manifest["result"]["splits"] == {"train": 36, "heldout": 12}
    data = yaml.safe_load(recipe("a").read_text())
    del data["llm"]
    (tmp_path / "no_llm.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(RecipeError, match="add an llm: section"):
        load_recipe(tmp_path / "no_llm.yaml")


def test_cli_fails_closed_without_reachable_evaluation_data(tmp_path: Path) -> None:
    with scripted_server(script_for({})) as server:
        args = [
            "synth-sts",
            "--corpus",
            str(CORPUS),
            "--language",
            "slk",
            "--n-sources",
            "8",
            "--annotation-sample-per-level",
            "2",
            "--llm-model",
            "scripted",
            "--llm-base-url",
            server.url,
            "--llm-cache",
            str(tmp_path / "c"),
            "--out",
            str(tmp_path / "out"),
        ]
        closed = CliRunner().invoke(app, args)  # default check: MTEB(slk, v1), not reachable offline
        assert closed.exit_code == 1
        assert "contamination" in closed.output and "cannot be reached" in closed.output
        assert [p.name for p in tmp_path.iterdir() if "out" in p.name] == []  # no half-written --out
        suite = Path(__file__).parent / "data" / "suite_sk" / "suite.yaml"
        checked = CliRunner().invoke(app, [*args, "--contamination-tasks", str(suite)])
        assert checked.exit_code == 0, checked.output
        assert "| wrong_language |" in checked.output
        again = CliRunner().invoke(app, [*args, "--contamination-tasks", str(suite)])
        assert again.exit_code == 1 and "already exists" in again.output
        assert [p.name for p in tmp_path.iterdir() if "out" in p.name] == ["out"]
    report = json.loads((tmp_path / "out" / "generation_report.json").read_text())
    assert report["contamination"]["status"] == "checked" and report["contamination"]["max_rate"] == 0.0
