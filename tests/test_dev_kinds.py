"""Dev sets of kind clustering and classification (skadapt.tasks.cluster_dev, skadapt.tasks.class_dev) and a
retrieval set's distractor corpus: each evaluator's score equals its recomputation from embeddings
(skadapt.tasks.dev_scores) and an independent oracle; bad inputs are clear errors."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from skadapt.plan.dev import dev_size
from skadapt.plan.model import StagePlan
from skadapt.tasks.config import DevSets
from skadapt.tasks.dev import build_dev_set, check_first_row, encoded_texts, overlap_with_test_texts
from skadapt.tasks.dev_scores import encode_dev_set, example_values, replicate_metrics, set_metric
from skadapt.tasks.rows import TrainingDataError
from tests.test_dev_sets import _rows, _write
from tests.test_finetune_train import DATA

SUITE = Path(__file__).parent / "data" / "suite_sk"
NLI = DATA / "sk_train_nli.jsonl"


@pytest.fixture(scope="module")
def model(tiny_models: dict[str, Path]) -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(tiny_models["unigram"]), device="cpu")


def _labelled(path: Path, rows: list[dict[str, Any]]) -> str:
    return str(_write(path, rows))


def test_clustering_scores_mtebs_v_measure(model: Any, tmp_path: Path) -> None:
    """The evaluator's score is mteb's own clustering score of the same embeddings (its bootstrapped k-means,
    seed 42), and the dev scores recompute it exactly; a resample is scored with sklearn's V-measure of each
    experiment's draw of it, the clusterings held fixed."""
    from mteb.abstasks.clustering import _evaluate_clustering_bootstrapped
    from sklearn.metrics import v_measure_score

    from skadapt.tasks.cluster_dev import EXPERIMENTS

    rows = [{"sentence": r["text"], "topic": r["label"]} for r in _rows(SUITE / "clusters.jsonl")]
    config = DevSets(
        kind="clustering",
        source=_labelled(tmp_path / "clusters.jsonl", rows),
        columns={"text": "sentence", "label": "topic"},
    )
    assert check_first_row(config.sets[0]) == "columns sentence, topic; labels written as values"
    dev = build_dev_set(config, prompts=dict(model.prompts))
    assert dev.metric == "dev_v_measure" and dev.size == len(rows) == 24
    assert dev.report[0]["labels"] == {"doprava": 6, "kultúra": 6, "príroda": 6, "veda": 6}
    assert all(text.startswith("query: ") for text in dev.evaluator.texts)
    score = dev.evaluator(model)[dev.metric]

    encoded = encode_dev_set(model, dev)
    values = example_values(encoded)
    assert encoded.kind == "clustering" and values.shape == (24, EXPERIMENTS)
    assert set_metric(encoded, values) == score
    identity = np.arange(24)[None, :]
    assert replicate_metrics(encoded, values, identity)[0] == pytest.approx(score, abs=1e-12)

    labels = [[row["topic"]] for row in rows]
    mteb_scores, _ = _evaluate_clustering_bootstrapped(
        encoded.embeddings["text"],
        labels,
        n_clusters=EXPERIMENTS,
        cluster_size=len(rows),
        kmean_batch_size=512,
        max_depth=None,
        rng_state=random.Random(42),
        seed=42,
    )
    assert 0.0 <= score <= 1.0
    assert float(np.mean(mteb_scores["v_measure"]["Level 0"])) == pytest.approx(score, abs=1e-12)

    assert encoded.gold is not None and encoded.draws is not None
    samples = np.random.default_rng(0).integers(0, 24, size=(4, 24))
    expected = [
        np.mean([v_measure_score(encoded.gold[s[d]], values[s[d], e]) for e, d in enumerate(encoded.draws)])
        for s in samples
    ]
    assert replicate_metrics(encoded, values, samples) == pytest.approx(expected, abs=1e-12)


def test_classification_scores_cross_validated_accuracy(model: Any, tmp_path: Path) -> None:
    """The evaluator's score is the accuracy of sklearn's cross_val_predict with mteb's classifier over
    5 stratified seeded folds; the dev scores keep each text's correctness and recompute it."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    rows = _rows(SUITE / "cls_train.jsonl") + _rows(SUITE / "cls_test.jsonl")
    config = DevSets(kind="classification", source=_labelled(tmp_path / "cls.jsonl", rows), seed=7)
    dev = build_dev_set(config, prompts=dict(model.prompts))
    assert dev.metric == "dev_accuracy" and dev.size == 48
    assert dev.report[0]["labels"] == {"ekonomika": 12, "počasie": 12, "zdravie": 12, "šport": 12}
    score = dev.evaluator(model)[dev.metric]

    encoded = encode_dev_set(model, dev)
    values = example_values(encoded)
    assert encoded.kind == "classification" and set(np.unique(values)) <= {0.0, 1.0}
    assert set_metric(encoded, values) == pytest.approx(score, abs=1e-12)
    assert replicate_metrics(encoded, values, np.arange(48)[None, :])[0] == pytest.approx(score, abs=1e-12)

    assert encoded.gold is not None
    predicted = cross_val_predict(
        LogisticRegression(max_iter=100, random_state=7),
        encoded.embeddings["text"],
        encoded.gold,
        cv=StratifiedKFold(n_splits=5, shuffle=True, random_state=7),
    )
    assert float(np.mean(predicted == encoded.gold)) == pytest.approx(score, abs=1e-12)
    assert np.array_equal(values, (predicted == encoded.gold).astype(float))


def test_label_sets_a_kind_cannot_score_are_errors_naming_the_file(tmp_path: Path) -> None:
    texts = [f"Veta číslo {i} o niečom celkom inom." for i in range(12)]
    one_label = _labelled(tmp_path / "one.jsonl", [{"text": t, "label": "a"} for t in texts])
    with pytest.raises(TrainingDataError, match=r"one\.jsonl: every text has the label 'a'.*2 labels"):
        build_dev_set(DevSets(kind="clustering", source=one_label))
    merged = DevSets(kind="classification", source=one_label, label_map={"a": "b"})
    with pytest.raises(TrainingDataError, match="label 'b'"):
        build_dev_set(merged)

    rows = [{"text": t, "label": "rare" if i < 3 else "common"} for i, t in enumerate(texts)]
    rare = _labelled(tmp_path / "rare.jsonl", rows)
    with pytest.raises(
        TrainingDataError, match=r"rare\.jsonl: 1 label\(s\) with fewer than 5 texts \(rare 3\)"
    ):
        build_dev_set(DevSets(kind="classification", source=rare))
    build_dev_set(DevSets(kind="clustering", source=rare))  # clustering has no folds to fill

    five = [{"text": t, "label": "rare" if i < 5 else "common"} for i, t in enumerate(texts)]
    enough = DevSets(kind="classification", source=_labelled(tmp_path / "five.jsonl", five))
    build_dev_set(enough)
    with pytest.raises(TrainingDataError, match=r"\(of the 11 left after the drops\) \(rare 4\)"):
        build_dev_set(enough, test_texts={"Task": [texts[0]]})  # the drop leaves 4 rare texts

    no_label = _labelled(tmp_path / "nolabel.jsonl", [{"text": "Jedna veta.", "label": None}])
    with pytest.raises(TrainingDataError, match=r"nolabel\.jsonl: .*label None is no label"):
        check_first_row(DevSets(kind="classification", source=no_label).sets[0])

    with pytest.raises(ValidationError, match=r"corpus .*belongs to a retrieval dev set.*kind sts"):
        DevSets(kind="sts", source="sts.jsonl", corpus={"source": "passages.jsonl", "columns": ["passage"]})


def test_distractor_passages_join_the_corpus_without_evaluation_test_texts(
    model: Any, tmp_path: Path
) -> None:
    """Same-topic distractors (the premises' other hypotheses) lower the score a corpus of positives alone
    gives; one that is an evaluation test text, one that is a positive and a repeat are dropped and counted;
    the dev scores still recompute the evaluator's score."""
    nli = _rows(NLI)[:150]
    qa = [{"query": r["premise"], "positive": r["hypothesis"]} for r in nli if r["label"] == "entailment"]
    positives = {row["positive"] for row in qa}
    others = list(dict.fromkeys(r["hypothesis"] for r in nli if r["hypothesis"] not in positives))
    passages = [{"passage": text} for text in [*others, others[1], qa[0]["positive"]]]
    source = _labelled(tmp_path / "qa.jsonl", qa)
    corpus = {"source": _labelled(tmp_path / "distractors.jsonl", passages), "columns": ["passage"]}
    plain = build_dev_set(DevSets(kind="retrieval", source=source), prompts=dict(model.prompts))
    config = DevSets(kind="retrieval", source=source, corpus=corpus)
    test_texts = {"SomeTask": [others[0].upper()]}
    dev = build_dev_set(config, prompts=dict(model.prompts), test_texts=test_texts)

    report = dev.report[0]["corpus"]
    assert report["read"] == len(others) + 2 and report["passages"] == len(others) - 1
    assert report["repeats"] == 1 and report["positives"] == 1
    assert report["contamination"]["rows"] == 1 and report["contamination"]["by_task"] == {"SomeTask": 1}
    assert others[0] not in dev.evaluator.corpus and set(others[1:]) <= set(dev.evaluator.corpus)
    assert len(dev.evaluator.corpus) == len(plain.evaluator.corpus) + len(others) - 1
    assert overlap_with_test_texts(config.sets[0], test_texts)["corpus"]["dropped"] == 1
    assert set(others) <= set(encoded_texts(config.sets[0]))
    plan = StagePlan(stage="renorm")
    with_distractors = dev_size(config, plan, 1000.0)[0]
    # the plan counts the distinct distractors that are no positive (the repeat and the positive left out)
    assert with_distractors == dev_size(DevSets(kind="retrieval", source=source), plan, 1000.0)[0] + len(
        others
    )

    alone = plain.evaluator(model)[plain.metric]
    among = dev.evaluator(model)[dev.metric]
    assert among < alone
    encoded = encode_dev_set(model, dev)
    assert set_metric(encoded, example_values(encoded)) == pytest.approx(among, abs=1e-3)
