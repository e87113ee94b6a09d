"""Dev sets checked against the fine-tuning training texts (skadapt.tasks.heldout, skadapt.tasks.dev).

The data imitates skLEP (tests/support/hub_shared_paragraphs.py): question-answering validation rows
sampled from the training paragraphs, STS sentences recurring across splits.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from skadapt.tasks.config import DevSets
from skadapt.tasks.dev import build_dev_set, build_dev_sets, overlap_with_training
from skadapt.tasks.heldout import TrainingTexts
from skadapt.tasks.rows import TrainingDataError
from skadapt.train.config import FinetuneConfig
from skadapt.train.stage import training_texts
from tests.support import hub_shared_paragraphs as shared
from tests.support.hub_fixtures import HUB_DATA, HubClient
from tests.support.hub_server import LocalHub

QA = {"anchor": "question", "positive": "context"}
QA_DEV = {"query": "question", "positive": "context"}
STS = {"score": "similarity_score"}


def _datasets(sources: dict[tuple[str, str], Any]) -> list[dict[str, Any]]:
    return [
        {
            "name": "skquad",
            "kind": "pairs",
            "source": str(sources["question-answering", "train"]),
            "columns": QA,
        },
        {"name": "sts", "kind": "sts", "source": str(sources["sts", "train"]), "columns": STS},
    ]


def _dev(sources: dict[tuple[str, str], Any], **options: Any) -> dict[str, Any]:
    return {
        "sets": [
            {
                "kind": "retrieval",
                "source": str(sources["question-answering", "validation"]),
                "columns": QA_DEV,
            },
            {"kind": "sts", "source": str(sources["sts", "validation"]), "columns": STS},
        ],
        **options,
    }


@pytest.fixture
def local(tmp_path: Path) -> dict[tuple[str, str], Path]:
    """The fixture's splits as local JSON-lines files."""
    return shared.write_local(tmp_path / "shared")


def _training(sources: dict[tuple[str, str], Any]) -> TrainingTexts:
    return training_texts(FinetuneConfig(datasets=_datasets(sources)))


def test_the_committed_repository_is_what_its_generator_writes(tmp_path: Path) -> None:
    written = shared.write_repo(tmp_path)
    committed = HUB_DATA / "datasets" / shared.REPO_ID
    assert sorted(p.relative_to(tmp_path) for p in written) == sorted(
        p.relative_to(HUB_DATA) for p in committed.rglob("*") if p.is_file()
    )
    for path in written:
        assert (HUB_DATA / path.relative_to(tmp_path)).read_bytes() == path.read_bytes(), path


def test_training_texts_match_folded_texts_and_ignore_short_ones() -> None:
    texts = TrainingTexts.from_texts(
        {
            "a": ["Pes šteká na dvore celý deň.", "Prší."],
            "b": ["Pes šteká na dvore celý deň.", "Iná veta tu."],
        }
    )
    assert len(texts) == 3 and texts.nbytes == 3 * 8  # "Prší." is shorter than MIN_CHARS: not kept
    assert texts.owners(
        ["PES šteká  na dvore, celý deň!", "Prší.", "iná veta tu", "Nová veta o niečom."]
    ) == [
        ("a", "b"),
        (),
        ("b",),
        (),
    ]
    assert TrainingTexts.from_texts({}).owners(["Pes šteká na dvore celý deň."]) == [()]


def test_overlap_is_counted_per_dev_set_and_dropped_by_default(local: dict[tuple[str, str], Path]) -> None:
    training = _training(local)
    assert list(training.digests) == ["skquad", "sts"]
    retrieval, sts = build_dev_sets(DevSets.model_validate(_dev(local)), training=training)
    qa_report, sts_report = retrieval.report[0]["training_overlap"], sts.report[0]["training_overlap"]
    assert qa_report == {
        "action": "drop",
        "checked": 12,
        "overlapping": shared.QA_OVERLAP["rows"],
        "by_dataset": {"skquad": shared.QA_OVERLAP["rows"]},
        "by_role": {"query": shared.QA_OVERLAP["query"], "positive": shared.QA_OVERLAP["positive"]},
        "examples": qa_report["examples"],
    }
    assert sts_report == {
        "action": "drop",
        "checked": 10,
        "overlapping": shared.STS_OVERLAP["rows"],
        "by_dataset": {"sts": shared.STS_OVERLAP["rows"]},
        "by_role": {
            "sentence1": shared.STS_OVERLAP["sentence1"],
            "sentence2": shared.STS_OVERLAP["sentence2"],
        },
        "examples": sts_report["examples"],
    }
    # What is left is held out: no query or passage of the retrieval set, no sentence of the STS set is a
    # training text (folded), and every held-out row is still there.
    assert retrieval.size == 12 - 7 and sts.size == 10 - 4
    evaluator = retrieval.evaluator
    left = [*evaluator.queries, *evaluator.corpus]
    assert training.owners(left) == [()] * len(left)
    assert set(evaluator.corpus) == {
        shared.HOCKEY,
        shared.VLHOVA,
        shared.TWO_FACTOR,
        shared.BEER,
    }
    assert "Prší." in sts.evaluator.sentences1  # too short to count: kept
    assert training.owners(sts.evaluator.sentences1 + sts.evaluator.sentences2) == [()] * 12
    # The preflight's preview counts the same.
    preview = overlap_with_training(DevSets.model_validate(_dev(local)).sets[0], training)
    assert {k: preview[k] for k in ("checked", "overlapping", "by_dataset", "by_role")} == {
        k: qa_report[k] for k in ("checked", "overlapping", "by_dataset", "by_role")
    }


def test_keep_scores_them_and_still_reports_them(local: dict[tuple[str, str], Path]) -> None:
    training = _training(local)
    dev = build_dev_set(DevSets.model_validate(_dev(local, training_overlap="keep")), training=training)
    assert dev.size == 12 + 10
    reports = [entry["training_overlap"] for entry in dev.report]
    assert [(r["action"], r["checked"], r["overlapping"]) for r in reports] == [
        ("keep", 12, 7),
        ("keep", 10, 4),
    ]


def test_without_training_texts_nothing_is_checked(local: dict[tuple[str, str], Path]) -> None:
    dev = build_dev_set(DevSets.model_validate(_dev(local)))
    assert dev.size == 22 and [entry["training_overlap"] for entry in dev.report] == [None, None]


def test_a_dev_set_left_empty_is_an_error_naming_it(local: dict[tuple[str, str], Path]) -> None:
    training = _training(local)
    source = str(local["sts", "train"])
    config = DevSets.model_validate({"kind": "sts", "source": source, "columns": STS})
    with pytest.raises(TrainingDataError) as error:
        build_dev_sets(config, training=training)
    message = str(error.value)
    assert message.startswith(
        f"dev set {source}: every one of its 12 examples shares a text with the fine-tuning"
    )
    assert "use another split" in message and "training_overlap: keep" in message
    kept = build_dev_sets(config.model_copy(update={"training_overlap": "keep"}), training=training)
    assert kept[0].size == 12


def _recipe(tmp_path: Path, model: Path, sources: dict[tuple[str, str], Any], **sections: Any) -> Path:
    data = {
        "name": "shared",
        "language": "slk",
        "base_model": str(model),
        "output_dir": str(tmp_path / "run"),
        "finetune": {
            "datasets": _datasets(sources),
            "dev": _dev(sources, steps=2),
            "batch_size": 4,
            "max_steps": 2,
            "max_seq_length": 64,
            "save_steps": 2,
        },
        **sections,
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def test_the_preflight_prints_the_counts_read_through_the_hub(
    hub_client: HubClient, hub: LocalHub, tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    sources = {(c, s): shared.spec(c, s) for c in shared.CONFIGS for s in shared.SPLITS}
    path = _recipe(tmp_path, tiny_models["unigram"], sources)
    result = hub_client.run(
        f"""
from typer.testing import CliRunner
from skadapt.cli import app
result = CliRunner().invoke(app, ["train", {str(path)!r}, "--check"], env={{"COLUMNS": "300"}})
emit("exit", result.exit_code)
emit("output", result.output)
"""
    )
    assert result["exit"] == 0, result["output"]
    lines = [line for line in result["output"].splitlines() if line.startswith("dev set ")]
    assert lines == [
        "dev set finetune.dev.sets.0 retrieval: 7 of 12 examples share a text with training set skquad "
        "(by role: query 3, positive 7): dropped",
        "dev set finetune.dev.sets.1 sts: 4 of 10 examples share a text with training set sts "
        "(by role: sentence1 3, sentence2 1): dropped",
    ]


def test_the_run_reports_them_in_finetune_and_renorm_and_reads_the_training_data_once(
    local: dict[tuple[str, str], Path],
    tiny_models: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import skadapt.train.stage as train_stage
    from skadapt.pipeline import run_recipe
    from skadapt.recipe import load_recipe
    from skadapt.results import RenormReport, TrainingReport

    made: list[int] = []
    original = train_stage.training_texts

    def counted(config: FinetuneConfig) -> TrainingTexts:
        made.append(1)
        return original(config)

    monkeypatch.setattr(train_stage, "training_texts", counted)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(shared.STS_TRAIN[i][0] for i in range(10)) + "\n", encoding="utf-8")
    renorm = {"corpus": str(corpus), "samples": 10, "min_chars": 10}
    recipe = load_recipe(_recipe(tmp_path, tiny_models["unigram"], local, renorm=renorm))
    run_recipe(recipe)
    assert made == []  # fine-tuning handed its datasets' texts over to renormalization
    tuned = TrainingReport.read(tmp_path / "run" / "finetune")
    chosen = RenormReport.read(tmp_path / "run" / "renorm")
    assert tuned is not None and tuned.dev is not None and chosen is not None and chosen.selection is not None
    expected = [("drop", 12, 7, {"skquad": 7}), ("drop", 10, 4, {"sts": 4})]

    def counts(sets: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        found = [entry["training_overlap"] for entry in sets]
        return [(r["action"], r["checked"], r["overlapping"], r["by_dataset"]) for r in found]

    assert counts(tuned.dev.sets) == counts(chosen.selection.sets) == expected
    assert tuned.dev.size == 5 + 6
    manifest = json.loads((tmp_path / "run" / "finetune" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["result"]["dev_overlap"]["dev-retrieval-0"].startswith("7 of 12 examples share a text")
    run_recipe(recipe, from_stage="renorm")  # fine-tuning is done: renormalization reads the sources
    assert made == [1]
    again = RenormReport.read(tmp_path / "run" / "renorm")
    assert again is not None and again.selection is not None and counts(again.selection.sets) == expected
