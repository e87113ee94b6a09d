"""Preflight (`skadapt train RECIPE --check`, `skadapt recipe check`): every bad input named in one line,
within seconds, before any stage starts."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from skadapt.cli import app
from tests.support.llm_server import Reply, scripted_server

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "sk_corpus.txt"
SUITE = ROOT / "tests" / "data" / "suite_sk" / "suite.yaml"
NLI_NAMES = ["entailment", "neutral", "contradiction", "other"]
NLI_ROWS = [
    {"premise": "Pes šteká na dvore.", "hypothesis": "Na dvore je pes.", "label": 0},
    {"premise": "Pes šteká na dvore.", "hypothesis": "Na dvore je úplné ticho.", "label": 2},
    {"premise": "Vonku prší.", "hypothesis": "Ulice sú mokré.", "label": 0},
    {"premise": "Vonku prší.", "hypothesis": "Svieti slnko a je sucho.", "label": 2},
    {"premise": "Vonku prší.", "hypothesis": "Zajtra možno bude pršať tiež.", "label": 3},
]


def _nli_parquet(path: Path) -> Path:
    """NLI rows in a Parquet file written by ``datasets``: its label column keeps the ClassLabel names."""
    from datasets import ClassLabel, Dataset, Features, Value

    features = Features(
        {"premise": Value("string"), "hypothesis": Value("string"), "label": ClassLabel(names=NLI_NAMES)}
    )
    Dataset.from_list(NLI_ROWS, features=features).to_parquet(str(path))
    return path


def _recipe(tmp_path: Path, tiny: Path, **sections: Any) -> Path:
    data = {
        "name": "pf",
        "language": "slk",
        "base_model": str(tiny),
        "output_dir": str(tmp_path / "run"),
        "trim": {"corpus": str(CORPUS), "vocab_size": 200},
        "finetune": {
            "datasets": [
                {"name": "nli", "kind": "nli", "source": str(_nli_parquet(tmp_path / "nli.parquet")),
                 "label_map": {"3": "neutral"}},
            ]
        },
        "evaluate": {"tasks": [str(SUITE)]},
        **sections,
    }  # fmt: skip
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def _check(path: Path, *extra: str) -> tuple[Any, float]:
    start = time.perf_counter()
    result = CliRunner().invoke(app, ["train", str(path), "--check", *extra], env={"COLUMNS": "300"})
    return result, time.perf_counter() - start


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_good_recipe_passes_and_starts_nothing(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    from skadapt.preflight import preflight
    from skadapt.recipe import load_recipe

    path = _recipe(tmp_path, tiny_models["unigram"])
    result, seconds = _check(path)
    assert result.exit_code == 0, result.output
    assert seconds < 30 and not (tmp_path / "run" / "trim").exists()
    checks = {c.input.split(":")[0]: c for c in preflight(load_recipe(path))}
    nli = checks["finetune.datasets nli"]  # label_map maps "other", the fourth ClassLabel name
    assert nli.ok and "labels entailment, neutral, contradiction, other" in nli.checked
    recipe = CliRunner().invoke(app, ["recipe", "check", str(tmp_path / "recipe.yaml")])
    assert recipe.exit_code == 0 and "preflight OK" in recipe.output


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"finetune.datasets.0.columns": {"premise": "text1"}}, "no column for premise -> 'text1'"),
        ({"finetune.datasets.0.label_map": {}}, "ClassLabel name 'other' (label 3)"),
        ({"evaluate.tasks": ["NoSuchTaskAnywhere"]}, "NoSuchTaskAnywhere"),
        ({"evaluate.tasks": ["STSBenchmark"]}, "STSBenchmark"),
        ({"trim.corpus": "missing_corpus.txt"}, "missing_corpus.txt: no such file"),
        ({"export": {"pca_dims": 64}}, "pca_dims 64 is larger than the model's dimension 32"),
        ({"export": {"pca_dims": 16, "dims": [32, 8]}}, "32 is not below the model's dimension 32"),
    ],
    ids=["column", "label_map", "unknown_task", "task_language", "corpus", "pca_dims", "dims"],
)
def test_each_bad_input_is_named_in_one_line(
    tiny_models: dict[str, Path], tmp_path: Path, change: dict[str, Any], expected: str
) -> None:
    path = _recipe(tmp_path, tiny_models["unigram"])
    sets = [f"{key}={json.dumps(value)}" for key, value in change.items()]
    result, seconds = _check(path, *(arg for s in sets for arg in ("--set", s)))
    assert result.exit_code == 1, result.output
    assert expected in result.output
    [line] = [line for line in result.output.splitlines() if line.startswith("problem: ")]
    assert expected in line  # the one line naming the input and what is wrong
    assert "1 of " in result.output and "no stage started" in result.output
    assert seconds < 30 and not (tmp_path / "run" / "trim").exists()


def test_an_llm_server_that_is_down_or_lacks_the_model(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    robust = {"robustness": {"tasks": [str(SUITE)], "transforms": ["paraphrase"]}}
    llm = {"backend": "openai", "model": "served-model", "base_url": f"http://127.0.0.1:{_closed_port()}/v1"}
    result, seconds = _check(_recipe(tmp_path, tiny_models["unigram"], llm=llm, **robust))
    assert result.exit_code == 1 and "does not answer" in result.output and seconds < 30
    with scripted_server(lambda body, count: Reply("ok")) as server:
        llm["base_url"] = server.url
        result, _ = _check(_recipe(tmp_path, tiny_models["unigram"], llm=llm, **robust))
    assert result.exit_code == 0, result.output  # it answers (no model list to check the model against)
    assert server.hits == 0  # the preflight asks for the model list only, never for a completion


def test_no_network_is_one_message_within_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    from skadapt import hub

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "0")
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    hub._probe.cache_clear()
    try:
        result, seconds = _check(ROOT / "recipes" / "e5_sk_small.yaml")
    finally:
        hub._probe.cache_clear()
    assert result.exit_code == 1 and seconds < 30
    assert result.output.count("cannot be reached") == 1  # one message, the Hub inputs are marked unchecked
    assert "not checked: the Hub is unreachable" in result.output


def test_check_shows_the_contamination_the_finetune_stage_will_find(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    test_rows = [json.loads(line) for line in (SUITE.parent / "sts.jsonl").read_text().splitlines()[:2]]
    rows = [
        {
            "sentence1": test_rows[0]["sentence1"],
            "sentence2": "Úplne iná veta o počasí v horách.",
            "score": 1,
        },
        {"sentence1": "Kniha leží na stole v obývačke.", "sentence2": test_rows[1]["sentence2"], "score": 2},
        {"sentence1": "Vlak odchádza o siedmej ráno.", "sentence2": "Ráno o siedmej ide vlak.", "score": 5},
    ]
    sts = tmp_path / "sts.jsonl"
    sts.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    path = _recipe(tmp_path, tiny_models["unigram"])
    entry = {"name": "sts", "kind": "sts", "source": str(sts)}
    result, _ = _check(path, "--set", f"finetune.datasets={json.dumps([entry])}")
    assert result.exit_code == 0, result.output
    assert "│ sts              │ 3    │ 2                            │ SkTestSTS 2 │" in result.output
    assert "the finetune stage will stop" in result.output and "action: drop" in result.output
