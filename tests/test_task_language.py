"""mteb task names are restricted to the run's language: a multilingual task scores only its subsets in it.

Benchmarks are taken as defined; a task named on its own (``SIB200Classification.v3`` for a language without
a registered benchmark) keeps only its subsets in the language, and a task with none is a clear error. The
local multilingual tasks here are real mteb task classes registered under a name, so they go through the
same code path as built-in mteb task names (``mteb.get_task``) without downloading anything.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from skadapt.tasks.selection import TaskSelectionError, select_tasks
from tests.support.suite_fixtures import SENTENCES

ENGLISH = [
    ("The cat sleeps on the sofa.", "The cat lies on the couch.", 4.5),
    ("The dog barks at the postman.", "The dog loudly barks at the courier.", 4.0),
    ("It rains all day long.", "Rain pours the whole day.", 4.8),
    ("The train is fifteen minutes late.", "Fruit is sold at the market.", 0.2),
    ("Students are writing an exam.", "Pupils are taking a test.", 3.5),
    ("Bratislava lies on the Danube.", "The Danube flows through Bratislava.", 4.2),
    ("I am eating an apple.", "The football match ended in a draw.", 0.0),
    ("The doctor examined the patient.", "The patient was seen by a physician.", 4.6),
    ("The library is closed.", "The shop is open.", 1.0),
    ("The sun is shining.", "It is sunny.", 3.9),
]
ROWS = {"sk": SENTENCES, "en": ENGLISH}
LANGS = {"sk": ["slk-Latn"], "en": ["eng-Latn"]}
SPLITS = ("test", "dev")


def dev_text(subset: str, index: int) -> str:
    """A text that only the ``dev`` split of a subset holds (never an evaluation text)."""
    return f"{subset} development split sentence number {index}"


def _metadata(name: str, task_type: str, main_score: str) -> Any:
    from mteb.abstasks.task_metadata import TaskMetadata

    return TaskMetadata(
        name=name,
        type=task_type,
        description=f"Local multilingual {task_type} task of the skadapt tests.",
        reference=None,
        dataset={"path": "skadapt-tests/local-multilingual", "revision": "1"},
        category="t2t",
        eval_splits=["test"],
        eval_langs=LANGS,
        main_score=main_score,
        date=None,
        domains=None,
        task_subtypes=None,
        license=None,
        annotations_creators=None,
        dialect=None,
        modalities=["text"],
        sample_creation=None,
        bibtex_citation="",
    )


def _sts_split(subset: str, split: str) -> Any:
    from datasets import Dataset

    rows = ROWS[subset] if split == "test" else [(dev_text(subset, i), "x" * 12, 1.0) for i in range(3)]
    return Dataset.from_dict(
        {"sentence1": [r[0] for r in rows], "sentence2": [r[1] for r in rows], "score": [r[2] for r in rows]}
    )


def _retrieval_split(subset: str, split: str) -> dict[str, Any]:
    from datasets import Dataset

    if split == "test":
        queries, documents = [r[0] for r in ROWS[subset]], [r[1] for r in ROWS[subset]]
    else:
        queries, documents = [dev_text(subset, 0)], [dev_text(subset, 1)]
    return {
        "corpus": Dataset.from_dict(
            {
                "id": [f"{subset}-d{i}" for i in range(len(documents))],
                "text": documents,
                "title": [""] * len(documents),
            }
        ),
        "queries": Dataset.from_dict(
            {"id": [f"{subset}-q{i}" for i in range(len(queries))], "text": queries}
        ),
        "relevant_docs": {f"{subset}-q{i}": {f"{subset}-d{i}": 1} for i in range(len(queries))},
        "top_ranked": None,
    }


def multilingual_task(task_type: str, name: str) -> type:
    """A local mteb task class with subsets ``sk`` and ``en`` and splits ``test`` (evaluated) and ``dev``.

    Its ``load_data`` loads every subset and split, whatever the task is filtered to, so whoever reads the
    data must keep to ``task.hf_subsets`` and ``task.eval_splits`` itself.
    """
    from datasets import DatasetDict
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.abstasks.sts import AbsTaskSTS

    def load_data(self: Any, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        if task_type == "STS":
            self.dataset = {s: DatasetDict({p: _sts_split(s, p) for p in SPLITS}) for s in LANGS}
        else:
            self.dataset = {s: {p: _retrieval_split(s, p) for p in SPLITS} for s in LANGS}
        self.data_loaded = True

    base, score = (AbsTaskSTS, "cosine_spearman") if task_type == "STS" else (AbsTaskRetrieval, "ndcg_at_10")
    attributes: dict[str, Any] = {
        "metadata": _metadata(name, task_type, score),
        "load_data": load_data,
        "__module__": __name__,
    }
    if task_type == "STS":
        attributes["min_score"], attributes["max_score"] = 0, 5
    return type(name, (base,), attributes)


def register(monkeypatch: pytest.MonkeyPatch, name: str, cls: type) -> None:
    """Make ``mteb.get_task(name)`` build ``cls`` for the duration of a test."""
    registry = importlib.import_module("mteb.get_tasks")._TASKS_REGISTRY
    monkeypatch.setitem(registry, name, cls)


def test_named_multilingual_task_keeps_only_the_language_subsets() -> None:
    """Metadata only (no data is loaded): mteb's own MASSIVE and SIB-200 tasks, as a new recipe names them."""
    tasks = select_tasks(["MassiveIntentClassification", "SIB200Classification.v3"], language="slv")
    assert [t.hf_subsets for t in tasks] == [["sl"], ["slv_Latn"]]
    assert select_tasks(["SIB200Classification.v3"], language="slk-Latn")[0].hf_subsets == ["slk_Latn"]


def test_benchmark_tasks_are_taken_as_the_benchmark_defines_them() -> None:
    import mteb

    defined = {t.metadata.name: t.hf_subsets for t in mteb.get_benchmark("MTEB(slk, v1)").tasks}
    selected = {t.metadata.name: t.hf_subsets for t in select_tasks(["MTEB(slk, v1)"], language="ces")}
    assert selected == defined


def test_named_task_without_the_language_is_a_clear_error() -> None:
    with pytest.raises(TaskSelectionError, match=r"MassiveIntentClassification: no subset in language 'ces'"):
        select_tasks(["MassiveIntentClassification"], language="ces")
    with pytest.raises(
        TaskSelectionError, match=r"SlovakSTS: no subset in language 'ces' \(its languages: slk\)"
    ):
        select_tasks(["SlovakSTS"], language="ces")


def test_local_multilingual_task_through_the_mteb_name_path(monkeypatch: pytest.MonkeyPatch) -> None:
    register(monkeypatch, "LocalMultiSTS", multilingual_task("STS", "LocalMultiSTS"))
    (task,) = select_tasks(["LocalMultiSTS"], language="slk")
    assert task.hf_subsets == ["sk"]
    with pytest.raises(TaskSelectionError, match="LocalMultiSTS: no subset in language 'ces'"):
        select_tasks(["LocalMultiSTS"], language="ces")


def test_multilingual_task_scores_only_its_language(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end through mteb: the result holds the language's subset alone, and the score is its score."""
    from skadapt.tasks.runner import evaluate_model

    register(monkeypatch, "LocalMultiSTS", multilingual_task("STS", "LocalMultiSTS"))
    model = str(tiny_models["unigram"])
    tasks = select_tasks(["LocalMultiSTS"], language="slk")
    (score,) = evaluate_model(model, "m", tasks, cache_dir=None, results_dir=tmp_path / "res")
    result = json.loads((tmp_path / "res" / "m" / "LocalMultiSTS.json").read_text())
    assert [s["hf_subset"] for s in result["scores"]["test"]] == ["sk"]
    assert score.score == pytest.approx(100 * result["scores"]["test"][0]["main_score"], abs=1e-3)

    import mteb

    every = mteb.get_task("LocalMultiSTS")  # unfiltered: both subsets, for comparison
    evaluate_model(model, "m", [every], cache_dir=None, results_dir=tmp_path / "all")
    result = json.loads((tmp_path / "all" / "m" / "LocalMultiSTS.json").read_text())
    assert sorted(s["hf_subset"] for s in result["scores"]["test"]) == ["en", "sk"]


def test_a_cached_unfiltered_result_is_scored_on_the_language_subset_only(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mteb

    from skadapt.tasks.runner import evaluate_model

    register(monkeypatch, "LocalMultiSTS", multilingual_task("STS", "LocalMultiSTS"))
    model, cache = str(tiny_models["unigram"]), tmp_path / "cache"
    evaluate_model(model, "m", [mteb.get_task("LocalMultiSTS")], cache_dir=cache)  # caches sk + en
    cached_files = [json.loads(p.read_text()) for p in cache.rglob("LocalMultiSTS.json")]
    assert any(len(f["scores"]["test"]) == 2 for f in cached_files)  # the cache holds both subsets
    (fresh,) = evaluate_model(model, "m", select_tasks(["LocalMultiSTS"], language="slk"), cache_dir=None)
    (cached,) = evaluate_model(model, "m", select_tasks(["LocalMultiSTS"], language="slk"), cache_dir=cache)
    assert cached.score == pytest.approx(fresh.score, abs=1e-3)  # scored on sk alone, like a fresh run
    sk_only = json.loads(next(p for p in cache.rglob("LocalMultiSTS.json")).read_text())
    sk_score = next(s["main_score"] for s in sk_only["scores"]["test"] if s["hf_subset"] == "sk")
    assert cached.score == pytest.approx(100 * sk_score, abs=1e-3)
