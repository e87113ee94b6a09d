"""Seeded subsets of evaluation tasks at HUME's sizes, saved as a local suite so that models are scored on
exactly the items people annotate.

Per task type (HUME's sizes; ``--size TYPE=N`` changes them): STS 40 pairs spread over the score range
(equal-width bins); classification 48 test items balanced by label (the training split stays whole, the
classifier is trained as usual); clustering 30 items across the clusters; pair classification 40 pairs
balanced by label; reranking 30 queries with all their candidates; retrieval 20 queries, each with its
relevant passages and seeded random other passages up to 10 candidates, annotated and scored as reranking
(binary relevance, nDCG@10). Bitext mining is not annotated (it needs bilingual annotators and HUME left
it out).
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from mteb.abstasks.abstask import AbsTask

SIZES: dict[str, int] = {
    "STS": 40,
    "Classification": 48,
    "Clustering": 30,
    "PairClassification": 40,
    "Reranking": 30,
    "Retrieval": 20,
}
"""Items (STS, classification, clustering, pairs) or queries (reranking, retrieval) per task."""
RETRIEVAL_CANDIDATES = 10
SUBSET_SUFFIX = ".human"


@dataclass
class Item:
    """One thing an annotator answers: what they see, and the gold answer (kept out of the sheets)."""

    item_id: str
    shown: dict[str, str]
    gold: Any
    group: str = ""


@dataclass
class Subset:
    """The drawn items of one task.

    Attributes:
        task: The subset task's name (the original's name + ``.human``).
        source_task: The original task's name.
        type: Task type as annotated (retrieval is annotated as reranking).
        items: The items, in a seeded order.
        labels: Allowed answers for classification (label names) and their examples.
        language: ISO 639-3 code of the task's texts.
        metric: The metric people and models are scored with.
    """

    task: str
    source_task: str
    type: str
    items: list[Item]
    language: str
    metric: str
    labels: dict[str, list[str]] = field(default_factory=dict)
    train: list[dict[str, Any]] = field(default_factory=list)


METRICS = {
    "STS": "cosine_spearman",
    "Classification": "accuracy",
    "Clustering": "v_measure",
    "PairClassification": "max_ap",
    "Reranking": "map_at_1000",
    "Retrieval": "ndcg_at_10",
}


def _first_split(task: AbsTask) -> Any:
    dataset = task.dataset
    subsets = list(task.hf_subsets or []) or list(dataset.keys())
    holder = dataset.get(subsets[0], dataset)
    return holder, holder[task.eval_splits[0]]


def _spread(rows: list[Any], key: Any, size: int, rng: random.Random) -> list[Any]:
    """Round-robin over groups (``key(row)``), a seeded shuffle within each: balanced where possible."""
    groups: dict[Any, list[Any]] = defaultdict(list)
    for row in rows:
        groups[key(row)].append(row)
    for members in groups.values():
        rng.shuffle(members)
    order = sorted(groups, key=str)
    chosen: list[Any] = []
    while len(chosen) < size and any(groups.values()):
        for group in order:
            if groups[group] and len(chosen) < size:
                chosen.append(groups[group].pop())
    rng.shuffle(chosen)
    return chosen


def draw_subset(task: AbsTask, size: int | None, seed: int, language: str) -> Subset | None:
    """The subset of one loaded task, or None for a type people are not asked to do (bitext mining)."""
    kind = str(task.metadata.type)
    if kind not in SIZES:
        return None
    size = size or SIZES[kind]
    rng = random.Random(f"{seed}|{task.metadata.name}")
    name = task.metadata.name + SUBSET_SUFFIX
    holder, split = _first_split(task)
    make = {
        "STS": _sts,
        "PairClassification": _pairs,
        "Classification": _classification,
        "Clustering": _clustering,
        "Reranking": _reranking,
        "Retrieval": _reranking,
    }[kind]
    items, extra = make(task, holder, split, size, rng)
    annotated = "Reranking" if kind == "Retrieval" else kind
    return Subset(name, task.metadata.name, annotated, items, language, METRICS[kind], **extra)


def _sts(task: AbsTask, holder: Any, split: Any, size: int, rng: random.Random) -> tuple[list[Item], dict]:
    rows = [
        dict(zip(("s1", "s2", "score"), r, strict=True))
        for r in zip(split["sentence1"], split["sentence2"], split["score"], strict=True)
    ]
    low, high = min(r["score"] for r in rows), max(r["score"] for r in rows)
    width = (high - low) / 5 or 1.0
    chosen = _spread(rows, lambda r: min(int((r["score"] - low) / width), 4), size, rng)
    return [
        Item(f"p{i}", {"sentence1": r["s1"], "sentence2": r["s2"]}, float(r["score"]))
        for i, r in enumerate(chosen)
    ], {}


def _pairs(task: AbsTask, holder: Any, split: Any, size: int, rng: random.Random) -> tuple[list[Item], dict]:
    labels = split["labels"]
    labels = labels[0] if labels and isinstance(labels[0], list) else labels  # mteb's nested layout
    s1 = split["sentence1"][0] if isinstance(split["sentence1"][0], list) else split["sentence1"]
    s2 = split["sentence2"][0] if isinstance(split["sentence2"][0], list) else split["sentence2"]
    rows = list(zip(s1, s2, labels, strict=True))
    chosen = _spread(rows, lambda r: int(r[2]), size, rng)
    return [
        Item(f"p{i}", {"sentence1": a, "sentence2": b}, int(label)) for i, (a, b, label) in enumerate(chosen)
    ], {}


def label_names(split: Any) -> list[str] | None:
    """Label names of a classification split (a ``ClassLabel`` column), else None."""
    feature = split.features.get("label") if hasattr(split, "features") else None
    return list(feature.names) if getattr(feature, "names", None) else None


def _classification(
    task: AbsTask, holder: Any, split: Any, size: int, rng: random.Random
) -> tuple[list[Item], dict]:
    names = label_names(split)

    def name(label: Any) -> str:
        return names[label] if names else str(label)

    rows = list(zip(split["text"], split["label"], strict=True))
    chosen = _spread(rows, lambda r: r[1], size, rng)
    train = holder.get("train", split)
    examples: dict[str, list[str]] = defaultdict(list)
    for text, label in zip(train["text"], train["label"], strict=True):
        if len(examples[name(label)]) < 2:
            examples[name(label)].append(text)
    items = [Item(f"t{i}", {"text": text}, name(label)) for i, (text, label) in enumerate(chosen)]
    train_rows = [
        {"text": t, "label": name(label)} for t, label in zip(train["text"], train["label"], strict=True)
    ]
    return items, {"labels": {k: examples[k] for k in sorted(examples)}, "train": train_rows}


def _clustering(
    task: AbsTask, holder: Any, split: Any, size: int, rng: random.Random
) -> tuple[list[Item], dict]:
    sentences, labels = split["sentences"], split["labels"]
    if sentences and isinstance(sentences[0], list):  # one row holding a whole clustering set
        sentences, labels = sentences[0], labels[0]
    chosen = _spread(list(zip(sentences, labels, strict=True)), lambda r: r[1], size, rng)
    return [Item(f"t{i}", {"text": text}, str(label)) for i, (text, label) in enumerate(chosen)], {}


def _reranking(
    task: AbsTask, holder: Any, split: Any, size: int, rng: random.Random
) -> tuple[list[Item], dict]:
    corpus = dict(zip(split["corpus"]["id"], split["corpus"]["text"], strict=True))
    queries = dict(zip(split["queries"]["id"], split["queries"]["text"], strict=True))
    relevant = split["relevant_docs"]
    top_ranked = split.get("top_ranked")
    query_ids = [q for q in queries if q in relevant]
    rng.shuffle(query_ids)
    items = []
    for q_index, qid in enumerate(sorted(query_ids[:size], key=query_ids.index)):
        if top_ranked:
            candidates = list(top_ranked[qid])
        else:
            positives = [d for d, score in relevant[qid].items() if score > 0]
            others = [d for d in corpus if d not in relevant[qid]]
            candidates = positives + rng.sample(
                others, min(len(others), RETRIEVAL_CANDIDATES - len(positives))
            )
        rng.shuffle(candidates)
        for c_index, doc in enumerate(candidates):
            gold = int(relevant[qid].get(doc, 0) > 0)
            items.append(
                Item(
                    f"q{q_index}-c{c_index}",
                    {"query": queries[qid], "candidate": corpus[doc]},
                    gold,
                    f"q{q_index}",
                )
            )
    return items, {}


def write_subset_suite(subsets: list[Subset], directory: Path) -> Path:
    """The subsets as a local suite (``suite.yaml`` + JSONL) that ``skadapt evaluate`` scores models on."""
    directory.mkdir(parents=True, exist_ok=True)
    tasks = []
    for subset in subsets:
        stem = subset.task.replace("/", "_")
        rows: list[dict[str, Any]]
        if subset.type == "STS":
            rows = [{**i.shown, "score": i.gold} for i in subset.items]
            tasks.append({"name": subset.task, "type": "STS", "data": f"{stem}.jsonl"})
        elif subset.type == "PairClassification":
            rows = [{**i.shown, "label": i.gold} for i in subset.items]
            tasks.append({"name": subset.task, "type": "PairClassification", "data": f"{stem}.jsonl"})
        elif subset.type == "Classification":
            rows = [{"text": i.shown["text"], "label": i.gold} for i in subset.items]
            _write_jsonl(directory / f"{stem}.train.jsonl", subset.train)
            tasks.append(
                {
                    "name": subset.task,
                    "type": "Classification",
                    "train": f"{stem}.train.jsonl",
                    "test": f"{stem}.jsonl",
                }
            )
        elif subset.type == "Clustering":
            rows = [{"text": i.shown["text"], "label": i.gold} for i in subset.items]
            tasks.append({"name": subset.task, "type": "Clustering", "data": f"{stem}.jsonl"})
        else:
            rows = _rerank_rows(subset.items)
            spec = {"name": subset.task, "type": "Reranking", "data": f"{stem}.jsonl"}
            if subset.metric == "ndcg_at_10":
                spec["main_score"] = "ndcg_at_10"
            tasks.append(spec)
        _write_jsonl(directory / f"{stem}.jsonl", rows)
    path = directory / "suite.yaml"
    language = subsets[0].language if subsets else None
    path.write_text(
        yaml.safe_dump({"language": language, "tasks": tasks}, sort_keys=False, allow_unicode=True),
        encoding="utf-8",
    )
    return path


def _rerank_rows(items: list[Item]) -> list[dict[str, Any]]:
    by_query: dict[str, dict[str, Any]] = {}
    for item in items:
        row = by_query.setdefault(item.group, {"query": item.shown["query"], "positive": [], "negative": []})
        row["positive" if item.gold else "negative"].append(item.shown["candidate"])
    return [row for row in by_query.values() if row["positive"]]


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
