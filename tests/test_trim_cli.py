"""``skadapt trim`` and the pipeline's trim stage: exit codes, clear errors, no partial output."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skadapt.artifacts import read_manifest
from skadapt.cli import app
from skadapt.pipeline import run_recipe
from skadapt.recipe import validate_recipe
from skadapt.trim.report import REPORT_FILE
from tests.support.tiny_models import FIXTURE_TEXTS

runner = CliRunner()


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in FIXTURE_TEXTS), encoding="utf-8")
    return path


def _trim(model: Path, corpus: str, out: Path, *extra: str) -> tuple[int, str]:
    args = ["trim", str(model), "--corpus", corpus, "--out", str(out), "--workers", "1", *extra]
    result = runner.invoke(app, args)
    return result.exit_code, result.output


def _assert_nothing_written(out: Path) -> None:
    assert not out.exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]


def test_trim_command_writes_a_model(tiny_models: dict[str, Path], corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, output = _trim(tiny_models["unigram"], str(corpus), out, "--vocab-size", "80", "--keep", "Žilina")
    assert code == 0, output
    assert "embedding rows" in output
    report = json.loads((out / REPORT_FILE).read_text())
    assert report["embedding_rows"]["after"] == 82
    assert report["parity"]["texts"] == len(FIXTURE_TEXTS) and report["parity"]["passed"]  # whole corpus
    assert report["parity"]["seed"] == 42
    assert not report["exact"] and not report["coverage"]["all_counted_tokens_kept"]  # 80 cuts tokens
    flat = " ".join(output.split())
    assert "not exact" in flat and "corpus coverage" in flat and "most frequent dropped tokens" in flat
    assert (out / "modules.json").is_file() and (out / "1_Pooling" / "config.json").is_file()
    assert (out / "README.md").is_file()

    exact_out = tmp_path / "exact"
    code, output = _trim(tiny_models["unigram"], str(corpus), exact_out, "--seed", "3", "--language", "sk")
    assert code == 0, output
    assert "exact: every counted corpus token is kept" in " ".join(output.split())
    report = json.loads((exact_out / REPORT_FILE).read_text())
    assert report["exact"] and report["parity"]["seed"] == 3
    assert "language:\n- sk" in (exact_out / "README.md").read_text()

    code, output = _trim(tiny_models["unigram"], str(corpus), out)
    assert code == 1 and "already exists" in output
    code, output = _trim(tiny_models["unigram"], str(corpus), out, "--overwrite", "--vocab-size", "90")
    assert code == 0, output
    assert json.loads((out / REPORT_FILE).read_text())["embedding_rows"]["after"] == 92


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ("missing_column", "no column 'text'"),
        ("empty", "the source is empty"),
        ("no_file", "no such file"),
        ("small_n", "smaller than the 5 special"),
        ("unsupported", "'WordLevel' is not supported"),
        ("bad_option", "--min-frequency: Input should be greater than 0"),
    ],
)
def test_bad_inputs_fail_clearly_without_output(
    tiny_models: dict[str, Path], corpus: Path, tmp_path: Path, setup: str, message: str
) -> None:
    model, source, extra = tiny_models["unigram"], str(corpus), []
    if setup == "missing_column":
        source = str(tmp_path / "rows.jsonl")
        Path(source).write_text('{"body": "Dobrý deň"}\n', encoding="utf-8")
    elif setup == "empty":
        source = str(tmp_path / "empty.txt")
        Path(source).write_text("\n\n", encoding="utf-8")
    elif setup == "no_file":
        source = str(tmp_path / "missing.txt")
    elif setup == "small_n":
        extra = ["--vocab-size", "3"]
    elif setup == "unsupported":
        from tokenizers import Tokenizer, models, pre_tokenizers

        from skadapt.languages import get_language

        model = tmp_path / "word-level"
        shutil.copytree(tiny_models["unigram"], model)
        words = [w for w, _ in pre_tokenizers.Whitespace().pre_tokenize_str(get_language("slk").sample_text)]
        vocab = {w: i for i, w in enumerate(dict.fromkeys(["<s>", "<pad>", "</s>", "<unk>", *words]))}
        tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))  # reads Slovak: not an empty one
        tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
        tokenizer.save(str(model / "tokenizer.json"))
    elif setup == "bad_option":
        extra = ["--min-frequency", "0"]
    out = tmp_path / "out"
    code, output = _trim(model, source, out, *extra)
    assert code == (2 if setup == "bad_option" else 1), output  # 2: a usage error
    assert message in " ".join(output.split())
    assert "Traceback" not in output
    _assert_nothing_written(out)


def test_trim_stage_runs_in_the_pipeline(tiny_models: dict[str, Path], corpus: Path, tmp_path: Path) -> None:
    recipe = validate_recipe(
        {
            "name": "tiny",
            "language": "slk",
            "base_model": str(tiny_models["wordpiece"]),
            "output_dir": str(tmp_path / "run"),
            "trim": {"corpus": str(corpus), "vocab_size": 150, "workers": 1, "parity_documents": 5},
        }
    )
    outcomes = run_recipe(recipe)
    assert [o.status for o in outcomes] == ["ran"]
    stage_dir = tmp_path / "run" / "trim"
    manifest = read_manifest(stage_dir)
    assert manifest is not None
    assert (
        manifest["result"]["embedding_rows"]
        == json.loads((stage_dir / REPORT_FILE).read_text())["embedding_rows"]["after"]
    )
    assert manifest["result"]["parity"]["passed"]
    assert manifest["result"]["parity"]["texts"] == 5
    card = (stage_dir / "README.md").read_text()
    assert "language:\n- sk" in card and f"base_model: {tiny_models['wordpiece']}" in card
    from sentence_transformers import SentenceTransformer

    assert SentenceTransformer(str(stage_dir), device="cpu").encode(["Dobrý deň"]).shape == (1, 32)
    assert [o.status for o in run_recipe(recipe)] == ["skipped"]
