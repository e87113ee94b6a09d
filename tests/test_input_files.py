"""Every input read right or refused by name: files in another encoding than UTF-8 (cp1250 from Excel),
YAML keys given twice, ISO 639-1 language codes, blank and repeated training rows, a trim corpus in
another language, and stage commands with the Hub unreachable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from skadapt.cli import app
from skadapt.recipe import load_recipe
from skadapt.sources import SourceError, iter_texts
from skadapt.tasks.suite import SuiteError, load_suite

runner = CliRunner()
SLOVAK = ["Žltý kôň ťahá voz do mesta.", "Dobrý deň, ako sa máte?", "Mladá lekárka sa učí po nemecky."]


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "cache"))


def _flat(text: str) -> str:
    return " ".join(text.split())


def _recipe(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------- not UTF-8 files


def _cp1250(path: Path, lines: list[str]) -> Path:
    """A file saved as Excel and Windows in Central Europe save it: cp1250, not UTF-8."""
    path.write_bytes("".join(line + "\n" for line in lines).encode("cp1250"))
    return path


def _refused_as_not_utf8(message: str, path: Path, line: int) -> None:
    text = _flat(message)
    assert f"{path}:{line}: not UTF-8 text" in text, message
    assert "re-save it as UTF-8" in text and "iconv -f cp1250 -t utf-8" in text
    assert "UnicodeDecodeError" not in text and "codec can't decode" not in text


def test_a_cp1250_training_file_is_refused_by_the_preflight_naming_file_and_line(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    rows = [{"sentence1": text, "sentence2": "Ahoj.", "score": 3.0} for text in SLOVAK]
    data = _cp1250(tmp_path / "sts.jsonl", [json.dumps(row, ensure_ascii=False) for row in rows])
    recipe = _recipe(
        tmp_path / "r.yaml",
        f"name: r\nlanguage: slk\nbase_model: {tiny_models['unigram']}\noutput_dir: {tmp_path / 'run'}\n"
        f"finetune:\n  datasets:\n    - {{name: sts, kind: sts, source: {data}}}\n",
    )
    result = runner.invoke(app, ["train", str(recipe), "--check"])
    assert result.exit_code == 1, result.output
    _refused_as_not_utf8(result.output, data, 1)


def test_a_cp1250_corpus_is_refused_by_trim_naming_file_and_line(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    corpus = _cp1250(tmp_path / "corpus.txt", ["Hello.", "", *SLOVAK])
    out = tmp_path / "out"
    args = ["trim", str(tiny_models["unigram"]), "--corpus", str(corpus), "--out", str(out), "--workers", "1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    _refused_as_not_utf8(result.output, corpus, 3)
    assert _flat(result.output).count("error:") == 1 and not out.exists()


def test_every_local_text_reader_names_a_cp1250_file(tmp_path: Path) -> None:
    csv = _cp1250(tmp_path / "pairs.csv", ["text,label", *(f"{t},1" for t in SLOVAK)])
    with pytest.raises(SourceError) as table:
        list(iter_texts(str(csv)))
    _refused_as_not_utf8(str(table.value), csv, 2)

    suite = _cp1250(tmp_path / "suite.yaml", ["# Slovenské úlohy", "tasks: []"])
    with pytest.raises(SuiteError) as read:
        load_suite(suite)
    _refused_as_not_utf8(str(read.value), suite, 1)

    recipe = _cp1250(tmp_path / "r.yaml", ["name: r", "language: slk", "base_model: m", "# Žilina"])
    result = runner.invoke(app, ["recipe", "show", str(recipe)])
    assert result.exit_code == 1
    _refused_as_not_utf8(result.output, recipe, 4)


def test_a_utf8_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    data = tmp_path / "texts.jsonl"
    data.write_text("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in SLOVAK), "utf-8-sig")
    assert list(iter_texts(str(data))) == SLOVAK


# ------------------------------------------------------------------------------------- YAML keys twice


def test_a_recipe_with_a_key_twice_is_refused_naming_both_lines(tmp_path: Path) -> None:
    recipe = _recipe(tmp_path / "r.yaml", "name: r\nlanguage: slk\nseed: 1\nbase_model: m\nseed: 2\n")
    result = runner.invoke(app, ["recipe", "show", str(recipe)])
    assert result.exit_code == 1
    assert f"{recipe}:5: key 'seed' is given twice (lines 3 and 5)" in _flat(result.output)

    nested = _recipe(
        tmp_path / "n.yaml",
        "name: r\nlanguage: slk\nbase_model: m\nfinetune:\n  datasets:\n    - name: a\n      kind: sts\n"
        "      source: a.jsonl\n      kind: pairs\n",
    )
    result = runner.invoke(app, ["train", str(nested), "--check"])
    assert result.exit_code == 1
    assert f"{nested}:9: key 'kind' is given twice (lines 7 and 9)" in _flat(result.output)
    assert yaml.safe_load(nested.read_text())["finetune"]["datasets"][0]["kind"] == "pairs"  # what it was


def test_a_suite_with_a_key_twice_is_refused_naming_both_lines(tmp_path: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "language: slk\ntasks:\n  - {name: A, type: STS, data: a.jsonl, data: b.jsonl}\n", encoding="utf-8"
    )
    with pytest.raises(SuiteError, match=r"suite.yaml:3: key 'data' is given twice \(lines 3 and 3\)"):
        load_suite(suite)


# --------------------------------------------------------------------------------------- ISO 639-1 codes


def test_iso_639_1_codes_are_taken_in_recipes_suites_and_recipe_new(tmp_path: Path) -> None:
    from skadapt.tasks.local_tasks import lang_script

    recipe = load_recipe(_recipe(tmp_path / "r.yaml", "name: r\nlanguage: sk\nbase_model: m\n"))
    assert recipe.language == "slk" and recipe.language_entry.name == "Slovak"
    assert lang_script("sk") == "slk-Latn"

    result = runner.invoke(app, ["recipe", "new", "--language", "uk"])
    assert result.exit_code == 0, result.output
    assert load_recipe(_recipe(tmp_path / "uk.yaml", result.output)).language == "ukr"

    result = runner.invoke(app, ["recipe", "new", "--language", "xx"])
    assert result.exit_code == 2
    assert "unknown language 'xx'; known codes (ISO 639-3, ISO 639-1):" in _flat(result.output)
    assert "slk (sk)" in result.output


# ------------------------------------------------------------------------------ blank and repeated rows


def _pairs(path: Path, rows: list[tuple[str, str]]) -> Path:
    lines = [json.dumps({"question": q, "passage": p}, ensure_ascii=False) for q, p in rows]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


QUESTIONS = [(f"Otázka {i}?", f"Odpoveď na otázku {i} je tu.") for i in range(40)]
PAIRS_COLUMNS = {"anchor": "question", "positive": "passage"}


def test_blank_and_repeated_rows_are_dropped_and_named(tmp_path: Path) -> None:
    from skadapt.train.config import FinetuneDataset
    from skadapt.train.datasets import build_task_datasets, drop_summary

    blank = [(f"Prázdna {i}?", " ") for i in range(4)]
    source = _pairs(tmp_path / "qa.jsonl", QUESTIONS[:20] + blank + [QUESTIONS[0]] * 3 + QUESTIONS[20:])
    entry = FinetuneDataset(name="qa", kind="pairs", source=str(source), columns=PAIRS_COLUMNS)
    built = build_task_datasets(entry)[0]
    assert built.data["anchor"] == [q for q, _ in QUESTIONS]  # each pair once, in order
    assert built.stats["dropped"] == {"blank": 4, "duplicate": 3}
    line, warn = drop_summary(built.stats)
    assert line == "dropped 14.9% of 47 rows (4 blank, 3 duplicate)" and warn  # not "by design"

    sts = tmp_path / "sts.jsonl"
    rows = [{"sentence1": q, "sentence2": p, "score": 4.0} for q, p in QUESTIONS[:10]]
    sts.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [*rows, rows[2]]), "utf-8")
    repeated = build_task_datasets(FinetuneDataset(name="sts", kind="sts", source=str(sts)))[0]
    assert len(repeated) == 10 and repeated.stats["dropped"] == {"duplicate": 1}


def test_a_source_mostly_blank_or_repeated_is_refused_before_any_model_loads(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    blank = [(f"Prázdna {i}?", "") for i in range(10)]  # a quarter of the passages, one pair 40 times
    source = _pairs(tmp_path / "qa.jsonl", QUESTIONS[:20] + blank + [QUESTIONS[30]] * 40)
    recipe = _recipe(
        tmp_path / "r.yaml",
        f"name: r\nlanguage: slk\nbase_model: {tiny_models['unigram']}\noutput_dir: {tmp_path / 'run'}\n"
        f"finetune:\n  datasets:\n    - {{name: qa, kind: pairs, source: {source}, "
        "columns: {anchor: question, positive: passage}}\n",
    )
    result = runner.invoke(app, ["train", str(recipe)])
    assert result.exit_code == 1, result.output
    text = _flat(result.output)
    assert text.count("error:") == 1 and "Traceback" not in result.output
    assert (
        f"dataset 'qa': {source}: 49 of 70 rows (70%) are blank (10 without a positive) or repeat an earlier "
        "row (39), more than 20%" in text
    )
    assert not (tmp_path / "run" / "finetune").exists()


# ------------------------------------------------------------------------ a trim corpus in another language

DATA = Path(__file__).resolve().parent / "data"


def test_a_trim_on_a_corpus_in_another_language_warns_in_the_log_and_the_report(
    tiny_models: dict[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out, english = tmp_path / "en", DATA / "en_corpus.txt"
    args = ["trim", str(tiny_models["unigram"]), "--language", "sk", "--workers", "1", "--out"]
    with caplog.at_level("WARNING", logger="skadapt.trim"):
        result = runner.invoke(app, [*args, str(out), "--corpus", str(english)])
    assert result.exit_code == 0, result.output  # a warning, not a refusal
    line = f"trim corpus {english}: 10 of 10 sampled texts are not Slovak"
    assert f"warning: {line}" in _flat(result.output)
    assert any(line in record.getMessage() for record in caplog.records)  # run.log and a run's console
    checked = json.loads((out / "trim_report.json").read_text(encoding="utf-8"))["corpus_language"]
    assert checked["language"] == "slk" and checked["other"] == checked["checked"] == 10
    assert line in checked["warning"] and "identified as 'en'" in checked["warning"]

    slovak = runner.invoke(app, [*args, str(tmp_path / "sk"), "--corpus", str(DATA / "sk_corpus.txt")])
    assert slovak.exit_code == 0 and "not Slovak" not in slovak.output
    report = json.loads((tmp_path / "sk" / "trim_report.json").read_text(encoding="utf-8"))
    assert report["corpus_language"]["warning"] is None and report["corpus_language"]["other"] <= 2


# ------------------------------------------------------------------------------------ the Hub unreachable

ROOT = Path(__file__).resolve().parents[1]
HUB_DOWN_LIMIT_S = 20.0
"""Before the probe, the Hub clients slept 23 s between five retries (35-50 s in all); the probe answers at
once. The rest is importing skadapt and mteb: ~4 s of CPU, up to 15 s seen on a machine loaded 5 times
over its cores."""


def test_stage_commands_know_what_they_read_from_the_hub(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    from skadapt.evaluate.config import EvaluateConfig
    from skadapt.pipeline.alone import hub_uses
    from skadapt.stage import RunFacts
    from skadapt.trim.config import TrimConfig
    from tests.support.suite_fixtures import write_tiny_suite

    facts, local = RunFacts(run_dir=tmp_path, language=None), {"m": str(tiny_models["unigram"])}
    suite = str(write_tiny_suite(tmp_path / "suite"))
    tasks = EvaluateConfig(tasks=["SlovakSTS", suite])
    assert hub_uses("evaluate", tasks, facts, local) == ["evaluate.tasks SlovakSTS"]
    mirrored = EvaluateConfig(tasks=["SlovakSTS", suite], dataset_mirrors={"SlovakSTS": str(tmp_path)})
    assert hub_uses("evaluate", mirrored, facts, {**local, "e5": "intfloat/multilingual-e5-small"}) == [
        "model intfloat/multilingual-e5-small"
    ]
    corpus = TrimConfig.model_validate({"corpus": "hub:HuggingFaceFW/fineweb-2:slk_Latn"})
    assert hub_uses("trim", corpus, facts, local) == ["trim.corpus hub:HuggingFaceFW/fineweb-2:slk_Latn"]
    assert hub_uses("trim", TrimConfig.model_validate({"corpus": "wordfreq:sk"}), facts, local) == []


def test_a_stage_command_with_the_hub_unreachable_stops_at_once_in_one_line(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    import os
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as closed:  # bound, never listening: a real connection refusal
        closed.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{closed.getsockname()[1]}"
        env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")}
        env.update(HF_ENDPOINT=endpoint, HF_HOME=str(tmp_path / "hf"), SKADAPT_CACHE=str(tmp_path / "cache"))
        out = tmp_path / "out"
        command = ["evaluate", str(tiny_models["unigram"]), "--tasks", "SlovakSTS", "--out", str(out)]
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "skadapt", *command], cwd=ROOT, env=env, capture_output=True, text=True
        )
        seconds = time.perf_counter() - start
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert seconds < HUB_DOWN_LIMIT_S, output
    text = _flat(output)
    assert text.count("error:") == 1 and "Retrying" not in output and "Traceback" not in output
    assert (
        f"error: the Hugging Face Hub is unreachable ({endpoint} cannot be reached (ConnectionRefusedError: "
        in text
    )
    assert (
        "evaluate.tasks SlovakSTS is read from it; nothing was loaded" in text and "HF_HUB_OFFLINE=1" in text
    )
    assert not out.exists() and not list(tmp_path.glob(".out.*"))
