"""Dev sets (skadapt.tasks.dev): the nli and rte kinds, labels, and the evaluation test texts they drop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skadapt.tasks.config import DevSets
from skadapt.tasks.dev import build_dev_set, build_dev_sets, check_first_row, overlap_with_test_texts
from skadapt.tasks.rows import TrainingDataError
from tests.test_finetune_train import DATA

NLI = DATA / "sk_train_nli.jsonl"
STS = DATA / "sk_dev_sts.jsonl"


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _model(path: Path) -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(path), device="cpu")


def test_nli_rows_group_into_triplets_on_the_premise(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    rows = _rows(NLI)[:30]
    rows.append(
        {"premise": "Iba jedna veta bez protikladu.", "hypothesis": "Jedna veta.", "label": "entailment"}
    )
    source = _write(tmp_path / "nli.jsonl", rows)
    expected = {}
    for row in rows:
        expected.setdefault(row["premise"], {}).setdefault(row["label"], []).append(row["hypothesis"])
    triplets = sum(
        len(h["entailment"]) for h in expected.values() if "entailment" in h and "contradiction" in h
    )
    (dev,) = build_dev_sets(DevSets(kind="nli", source=str(source)))
    report = dev.report[0]
    assert dev.size == triplets == report["examples"] and report["rows"] == 31
    assert report["dropped"]["neutral"] == sum(r["label"] == "neutral" for r in rows)
    assert report["dropped"]["entailment_without_contradiction"] == 1
    both = {p for p, h in expected.items() if "entailment" in h and "contradiction" in h}
    assert set(dev.evaluator.anchors) == both  # no prompts given: the texts as written
    for anchor, positive, negative in zip(
        dev.evaluator.anchors, dev.evaluator.positives, dev.evaluator.negatives, strict=True
    ):
        assert positive in expected[anchor]["entailment"] and negative in expected[anchor]["contradiction"]
    scores = dev.evaluator(_model(tiny_models["unigram"]))
    assert 0.0 <= scores[dev.metric] <= 1.0 and dev.metric == "nli-0_cosine_accuracy"


def test_rte_scores_average_precision_of_entailment(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    rows = [
        {
            "text1": r["premise"],
            "text2": r["hypothesis"],
            "label": r["label"].replace("neutral", "not_entailment"),
        }
        for r in _rows(NLI)[:24]
        if r["label"] != "contradiction"
    ]
    source = _write(tmp_path / "rte.jsonl", rows)
    config = DevSets(kind="rte", source=str(source), columns={"premise": "text1", "hypothesis": "text2"})
    assert check_first_row(config.sets[0]) == "columns text1, text2, label; labels written as values"
    dev = build_dev_set(config)
    assert dev.metric == "dev_cosine_ap" and dev.size == len(rows)
    assert dev.evaluator.labels == [int(r["label"] == "entailment") for r in rows]
    assert 0.0 <= dev.evaluator(_model(tiny_models["unigram"]))[dev.metric] <= 1.0
    one_class = _write(tmp_path / "entailed.jsonl", [r for r in rows if r["label"] == "entailment"])
    with pytest.raises(TrainingDataError, match="every example is entailed; average precision needs both"):
        build_dev_set(
            config.model_copy(update={"sets": [config.sets[0].model_copy(update={"source": str(one_class)})]})
        )


def test_a_label_outside_the_kinds_labels_is_named_with_label_map(tmp_path: Path) -> None:
    source = _write(tmp_path / "rte.jsonl", [{"premise": "Prší.", "hypothesis": "Je mokro.", "label": "yes"}])
    config = DevSets(kind="rte", source=str(source))
    with pytest.raises(
        TrainingDataError, match=r"label 'yes' is not one of entailment, .*map it with label_map"
    ):
        check_first_row(config.sets[0])
    mapped = config.sets[0].model_copy(update={"label_map": {"yes": "entailment"}})
    assert "labels written as values" in check_first_row(mapped)


def test_rows_holding_an_evaluation_test_text_are_dropped_and_counted(tmp_path: Path) -> None:
    rows = _rows(STS)[:12]
    test_texts = {"SomeSTS": [rows[2]["sentence2"].upper(), "Iný testovací text, ktorý nie je v dev sete."]}
    config = DevSets(kind="sts", source=str(STS))
    preview = overlap_with_test_texts(config.sets[0], test_texts)
    (dev,) = build_dev_sets(config, test_texts=test_texts)
    dropped = sum(test_texts["SomeSTS"][0].casefold() == r["sentence2"].casefold() for r in _rows(STS))
    assert dropped >= 1 and preview["dropped"] == dropped and preview["by_task"] == {"SomeSTS": dropped}
    assert dev.size == len(_rows(STS)) - dropped
    assert dev.report[0]["contamination"]["rows"] == dropped
    assert dev.report[0]["contamination"]["by_task"] == {"SomeSTS": dropped}
    everything = {"All": [r["sentence1"] for r in _rows(STS)]}
    with pytest.raises(TrainingDataError, match="every example holds an evaluation test text"):
        build_dev_sets(config, test_texts=everything)


def test_encoded_texts_count_what_the_evaluator_encodes(tmp_path: Path) -> None:
    """What a plan counts (skadapt.plan): the text columns as mapped, shared texts once where the
    evaluator encodes them once (a retrieval corpus, rte sentences, nli premises), other cells skipped."""
    from skadapt.tasks.dev import encoded_texts, text_columns

    rows = [{"q": "a", "p": "doc"}, {"q": "b", "p": "doc"}, {"q": None, "p": "other"}]
    (retrieval,) = DevSets(
        kind="retrieval",
        source=str(_write(tmp_path / "r.jsonl", rows)),
        columns={"query": "q", "positive": "p"},
    ).sets
    assert text_columns(retrieval) == ["q", "p"]
    assert encoded_texts(retrieval) == ["a", "doc", "b", "other"]
    pairs = [("x", "y", "entailment"), ("x", "z", "contradiction"), ("y", "x", "neutral")]
    rows = [{"premise": p, "hypothesis": h, "label": label} for p, h, label in pairs]
    source = str(_write(tmp_path / "pairs.jsonl", rows))
    assert encoded_texts(DevSets(kind="nli", source=source).sets[0]) == ["x", "y", "z", "y", "x"]
    assert encoded_texts(DevSets(kind="rte", source=source).sets[0]) == ["x", "y", "z"]
    with pytest.raises(TrainingDataError, match="missing"):
        encoded_texts(DevSets(kind="sts", source=str(tmp_path / "missing.jsonl")).sets[0])


def test_nli_triplets_are_encoded_once_with_the_query_prompt(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    """sentence-transformers 6's TripletEvaluator adds the query/document prompts itself; NLI dev triplets
    already carry the query prompt, so every text is encoded exactly once with it (not "query: query: ...",
    not "passage: query: ...")."""
    import numpy as np

    source = _write(tmp_path / "nli.jsonl", _rows(NLI)[:60])
    prompts = {"query": "query: ", "document": "passage: "}
    (dev,) = build_dev_sets(DevSets(kind="nli", source=str(source)), prompts=prompts)
    model = _model(tiny_models["unigram"])
    model.prompts = dict(prompts)
    seen: list[str] = []
    encode = model.encode

    def spy(sentences: Any, *args: Any, **kwargs: Any) -> Any:
        prompt = kwargs.get("prompt") or ""
        name = kwargs.get("prompt_name")
        seen.extend((prompts.get(name, "") if name else prompt) + s for s in sentences)
        return encode(sentences, *args, **kwargs)

    model.encode = spy
    score = dev.evaluator(model)[dev.metric]
    assert seen and all(text.startswith("query: ") and not text.startswith("query: query: ") for text in seen)
    plain = [
        encode(list(t), convert_to_numpy=True)
        for t in (dev.evaluator.anchors, dev.evaluator.positives, dev.evaluator.negatives)
    ]
    a, p, n = (x / np.linalg.norm(x, axis=1, keepdims=True) for x in plain)
    assert score == pytest.approx(float(np.mean((a * p).sum(1) > (a * n).sum(1))), abs=1e-6)
