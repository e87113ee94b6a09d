"""The demo data: well-formed, balanced, and independent of training data (no shared text, no shared
word sequences that would betray a common template)."""

from __future__ import annotations

import json
import re
from collections import Counter
from itertools import combinations
from pathlib import Path

import pytest

from skadapt.tasks.suite import TASK_TYPES, load_suite, suite_texts

DEMO = Path(__file__).parent.parent / "data" / "demo_sk"
TRAIN_FILES = [
    "nli",
    "nli_dev",
    "sts",
    "sts_dev",
    "qa",
    "qa_dev",
    "faq",
    "parallel",
    "bitext_dev",
    "cls_dev",
    "clusters_dev",
    "qa_dev_corpus",
    "triplets_dev",
]
SHINGLE = 6  # words: a 6-word sequence in both sides would point at copied text or a shared template


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _training_texts() -> list[str]:
    return [
        value
        for name in TRAIN_FILES
        for row in _rows(DEMO / "train" / f"{name}.jsonl")
        for column, value in row.items()
        if isinstance(value, str) and column != "label"  # a class name is not a text (the suite has the same)
    ]


def _key(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = _key(text).split()
    return {tuple(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


@pytest.fixture(scope="module")
def eval_texts() -> list[str]:
    return sorted(suite_texts(load_suite(DEMO / "suite" / "suite.yaml")))


def test_suite_loads_with_all_seven_types() -> None:
    suite = load_suite(DEMO / "suite" / "suite.yaml")
    assert {task.type for task in suite.tasks} == set(TASK_TYPES)


def test_no_evaluation_text_is_in_the_training_data(eval_texts: list[str]) -> None:
    train = {_key(text) for text in _training_texts()}
    shared = [text for text in eval_texts if _key(text) in train]
    assert not shared, shared[:5]


def test_no_shared_word_sequences(eval_texts: list[str]) -> None:
    train = set().union(*(_shingles(text) for text in _training_texts()))
    hits = [text for text in eval_texts if _shingles(text) & train]
    assert len(hits) <= 0.01 * len(eval_texts), hits[:10]


def test_dev_sets_are_separate_from_training() -> None:
    for name in ("nli", "sts", "qa"):
        train = {
            _key(v) for r in _rows(DEMO / "train" / f"{name}.jsonl") for v in r.values() if isinstance(v, str)
        }
        dev = {
            _key(v)
            for r in _rows(DEMO / "train" / f"{name}_dev.jsonl")
            for v in r.values()
            if isinstance(v, str)
        }
        assert not train & dev, name


def test_training_data_is_varied_and_balanced() -> None:
    sts = [float(r["score"]) for r in _rows(DEMO / "train" / "sts.jsonl")]
    bands = Counter(min(int(s), 4) for s in sts)
    assert min(bands.values()) >= 0.15 * len(sts), bands  # spread over 0-5
    texts = _training_texts()
    assert len(set(texts)) >= 0.95 * len(texts)
    openings = Counter(" ".join(_key(t).split()[:2]) for t in texts)
    assert openings.most_common(1)[0][1] <= 0.02 * len(texts), openings.most_common(3)  # no template


def test_faq_set_is_well_formed_and_its_own() -> None:
    """The hand-written FAQ set (not in the demo recipe): question/answer rows, none repeated, none taken
    from the other training files."""
    rows = _rows(DEMO / "train" / "faq.jsonl")
    assert len(rows) >= 150 and all(set(r) == {"question", "answer"} for r in rows)
    assert all(r["question"].strip() and len(r["answer"]) >= 60 for r in rows)
    assert len({_key(r["question"]) for r in rows}) == len({_key(r["answer"]) for r in rows}) == len(rows)
    others = {
        _key(v)
        for name in TRAIN_FILES
        if name != "faq"
        for r in _rows(DEMO / "train" / f"{name}.jsonl")
        for v in r.values()
        if isinstance(v, str)
    }
    assert not others & {_key(v) for r in rows for v in r.values()}


def test_classification_dev_set_is_well_formed() -> None:
    """The hand-written sentiment dev set (social posts, comments, messages; not reviews): 240 rows, three
    labels x 80, no text twice."""
    rows = _rows(DEMO / "train" / "cls_dev.jsonl")
    assert len(rows) == 240 and all(set(r) == {"text", "label"} for r in rows)
    assert Counter(r["label"] for r in rows) == {"pozitívny": 80, "negatívny": 80, "neutrálny": 80}
    assert all(r["text"].strip() for r in rows)
    assert len({_key(r["text"]) for r in rows}) == len(rows)


def test_clustering_dev_set_is_well_formed() -> None:
    """The hand-written clustering dev set: 240 rows, 12 topics x 20 texts, none of them a topic of the
    suite's clustering task, no text twice."""
    rows = _rows(DEMO / "train" / "clusters_dev.jsonl")
    assert len(rows) == 240 and all(set(r) == {"text", "label"} for r in rows)
    assert all(r["text"].strip() and r["label"].strip() for r in rows)
    counts = Counter(r["label"] for r in rows)
    assert len(counts) == 12 and set(counts.values()) == {20}, counts
    suite_labels = {r["label"] for r in _rows(DEMO / "suite" / "clusters.jsonl")}
    assert not set(counts) & suite_labels, set(counts) & suite_labels
    assert len({_key(r["text"]) for r in rows}) == len(rows)


def _overlap(a: str, b: str) -> float:
    """Jaccard of the casefolded word sets."""
    x, y = set(_key(a).split()), set(_key(b).split())
    return len(x & y) / len(x | y)


def test_triplet_dev_set_and_retrieval_distractors_are_well_formed() -> None:
    """The hand-written triplet dev set: 150 anchor/positive/negative rows whose negatives share no more
    words with the anchor than the positives do (on average), so word overlap alone does not pick the
    negative; and the 120 same-topic distractor passages of the retrieval dev corpus, none of them a
    qa_dev passage."""
    rows = _rows(DEMO / "train" / "triplets_dev.jsonl")
    assert len(rows) == 150 and all(set(r) == {"anchor", "positive", "negative"} for r in rows)
    assert all(r[k].strip() for r in rows for k in r)
    assert all(len({_key(r["anchor"]), _key(r["positive"]), _key(r["negative"])}) == 3 for r in rows)
    assert len({_key(r["anchor"]) for r in rows}) == len(rows)
    positive = sum(_overlap(r["anchor"], r["positive"]) for r in rows) / len(rows)
    negative = sum(_overlap(r["anchor"], r["negative"]) for r in rows) / len(rows)
    assert negative <= positive, (negative, positive)
    corpus = _rows(DEMO / "train" / "qa_dev_corpus.jsonl")
    assert len(corpus) == 120 and all(set(r) == {"passage"} and r["passage"].strip() for r in corpus)
    assert len({_key(r["passage"]) for r in corpus}) == len(corpus)
    qa_dev = {_key(r["passage"]) for r in _rows(DEMO / "train" / "qa_dev.jsonl")}
    assert not qa_dev & {_key(r["passage"]) for r in corpus}


def test_bitext_dev_set_has_its_forty_groups_of_near_duplicates() -> None:
    """The bitext dev set: 60 pairs on different topics, then 40 groups of three consecutive pairs whose
    sentences differ in one detail (a number, a negation, a direction, who did what to whom, a place, a
    time, a unit, a comparative, a tense), so that only a model that reads the detail pairs them right.
    Inside a group the Slovak sentences share most words; across groups (and with the first 60) few."""
    rows = _rows(DEMO / "train" / "bitext_dev.jsonl")
    assert len(rows) == 180 and all(set(r) == {"sk", "en"} for r in rows)
    assert len({_key(r["sk"]) for r in rows}) == len({_key(r["en"]) for r in rows}) == len(rows)
    group = [None] * 60 + [i // 3 for i in range(120)]  # None: a pair of the first 60, a group of its own
    assert len(set(group[60:])) == 40
    for i, j in combinations(range(len(rows)), 2):
        overlap = _overlap(rows[i]["sk"], rows[j]["sk"])
        if group[i] is not None and group[i] == group[j]:
            assert overlap >= 0.4, (rows[i]["sk"], rows[j]["sk"], overlap)
        else:
            assert overlap < 0.4, (rows[i]["sk"], rows[j]["sk"], overlap)


def test_evaluation_labels_are_balanced() -> None:
    suite = DEMO / "suite"
    for name in ("cls_train", "cls_test", "clusters"):
        counts = Counter(r["label"] for r in _rows(suite / f"{name}.jsonl"))
        assert max(counts.values()) <= 1.2 * min(counts.values()), (name, counts)
    pairs = Counter(r["label"] for r in _rows(suite / "pairs.jsonl"))
    assert abs(pairs[0] - pairs[1]) <= 0.2 * sum(pairs.values())
    sts = [float(r["score"]) for r in _rows(suite / "sts.jsonl")]
    assert min(Counter(min(int(s), 4) for s in sts).values()) >= 0.15 * len(sts)
