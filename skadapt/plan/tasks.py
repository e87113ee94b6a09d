"""The texts an evaluation (and a robustness run) encodes and rewrites per task, before any download.

mteb tasks: from the task's own ``metadata.descriptive_stats`` (shipped with mteb), for the splits it
evaluates and, for a multilingual task, only the subsets the selection keeps (``task.hf_subsets``); a
text group (queries, documents, ``text1``/``text2``, ...) counts its unique texts. Classification adds the
train texts mteb's undersampling draws (at most ``n_experiments x samples_per_label`` per label); clustering
embeds at most ``max_document_to_embed`` (or ``max_fraction_of_documents_to_embed``) of its texts.
Local suites: the texts of their data files, counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

QUERY_TYPES = frozenset({"Retrieval", "Reranking", "InstructionRetrieval", "InstructionReranking"})
REWRITTEN = {
    "STS": ("text1", "text2"),
    "PairClassification": ("text1", "text2"),
    "BitextMining": ("sentence1",),
}
"""Text groups of mteb's statistics a robustness transformation rewrites (by task type; queries for
retrieval/reranking, the texts for classification and clustering)."""


@dataclass(frozen=True)
class TaskWork:
    """What one evaluation task costs in texts.

    Attributes:
        name: Task name.
        type: mteb task type.
        texts: Texts one model encodes (unique per text group).
        chars: Their average length in characters.
        rewrites: Texts a robustness transformation rewrites (queries, sentences, ...).
        rewrite_chars: Their average length.
        how: Where the counts come from.
    """

    name: str
    type: str
    texts: int
    chars: float
    rewrites: int
    rewrite_chars: float
    how: str


def _group(stats: dict[str, Any]) -> tuple[int, float] | None:
    """(unique texts, total characters) of one text-statistics group."""
    total, average = stats.get("total_text_length"), stats.get("average_text_length")
    if not total or not average:
        return None
    count = int(stats.get("unique_texts") or round(total / average))
    return count, count * float(average)


def _split_stats(task: Any, split: str) -> list[dict[str, Any]]:
    """The statistics of a split: one per selected subset of a multilingual task, else the split's."""
    stats = (task.metadata.descriptive_stats or {}).get(split)
    if not stats:
        return []
    subsets = stats.get("hf_subset_descriptive_stats")
    if subsets and task.hf_subsets:
        return [subsets[s] for s in task.hf_subsets if s in subsets]
    return [stats]


def _groups(stats: dict[str, Any]) -> dict[str, tuple[int, float]]:
    found = {}
    for key, value in stats.items():
        if key.endswith("_statistics") and isinstance(value, dict) and (group := _group(value)) is not None:
            found[key.removesuffix("_statistics").removesuffix("_text")] = group
    return found


def mteb_task_work(task: Any) -> TaskWork | None:
    """A task's texts from mteb's descriptive statistics; None when mteb has none for its splits."""
    kind = str(task.metadata.type)
    texts = chars = rewrites = rewrite_chars = 0.0
    for split in task.metadata.eval_splits:
        for stats in _split_stats(task, split):
            groups = _groups(stats)
            limit = _clustering_limit(task, groups) if kind == "Clustering" else None
            for name, (count, total) in groups.items():
                kept = min(count, limit) if limit is not None else count
                texts += kept
                chars += total * kept / count
                if (kind in QUERY_TYPES and name == "queries") or name in REWRITTEN.get(kind, ("", "text")):
                    rewrites += count
                    rewrite_chars += total
            if kind == "Classification":
                extra, extra_chars = _classification_train(task, stats)
                texts += extra
                chars += extra_chars
    if not texts:
        return None
    return TaskWork(
        task.metadata.name,
        kind,
        int(texts),
        chars / texts,
        int(rewrites),
        rewrite_chars / rewrites if rewrites else 0.0,
        "mteb descriptive statistics",
    )


def _clustering_limit(task: Any, groups: dict[str, tuple[int, float]]) -> int | None:
    count = max((c for c, _ in groups.values()), default=0)
    if getattr(task, "max_document_to_embed", None):
        return int(task.max_document_to_embed)
    if getattr(task, "max_fraction_of_documents_to_embed", None):
        return int(task.max_fraction_of_documents_to_embed * count)
    return None


def _classification_train(task: Any, test: dict[str, Any]) -> tuple[int, float]:
    """(texts, characters) of the train texts mteb's undersampling encodes."""
    split = getattr(task, "train_split", "train")
    if split in task.metadata.eval_splits:
        return 0, 0.0
    labels = (test.get("label_statistics") or test.get("labels_statistics") or {}).get("unique_labels") or 0
    drawn = getattr(task, "n_experiments", 10) * getattr(task, "samples_per_label", 8) * int(labels)
    texts = chars = 0.0
    for stats in _split_stats(task, split):
        for count, total in _groups(stats).values():
            kept = min(count, drawn) if drawn else count
            texts += kept
            chars += total * kept / count
    return int(texts), chars


def suite_task_work(suite: Any) -> list[TaskWork]:
    """Every task of a local suite, its texts counted from its data files."""
    from skadapt.tasks.suite import jsonl_rows, task_texts

    out = []
    for task in suite.tasks:
        texts = list(dict.fromkeys(task_texts(suite)[task.name]))
        rewritten = texts
        if task.type == "Retrieval":
            rewritten = [str(r.get("text", "")) for _, r in jsonl_rows(suite.data_path(task.queries))]
        elif task.type == "Reranking":
            rewritten = [str(r.get("query", "")) for _, r in jsonl_rows(suite.data_path(task.data))]
        elif task.type == "BitextMining":
            rewritten = [str(r.get("sentence1", "")) for _, r in jsonl_rows(suite.data_path(task.data))]
        elif task.type == "Classification":
            rewritten = [str(r.get("text", "")) for _, r in jsonl_rows(suite.data_path(task.test))]
        rewritten = list(dict.fromkeys(rewritten))
        out.append(
            TaskWork(
                task.name,
                task.type,
                len(texts),
                sum(map(len, texts)) / max(1, len(texts)),
                len(rewritten),
                sum(map(len, rewritten)) / max(1, len(rewritten)),
                "suite files counted",
            )
        )
    return out


def task_work(
    specs: list[str], language: str, exclude: list[str] | tuple[str, ...] = ()
) -> tuple[list[TaskWork], list[str]]:
    """The texts of every selected task, and the tasks whose size is unknown (with the reason)."""
    from skadapt.tasks.selection import mteb_tasks
    from skadapt.tasks.suite import is_suite_spec, load_suite

    found: dict[str, TaskWork] = {}
    unknown: list[str] = []
    for spec in specs:
        if is_suite_spec(spec):
            works = suite_task_work(load_suite(spec))
        else:
            works = []
            for task in mteb_tasks(spec, language):
                work = mteb_task_work(task)
                if work is None:
                    unknown.append(f"{task.metadata.name}: mteb has no descriptive statistics for its splits")
                else:
                    works.append(work)
        for work in works:
            if work.name not in exclude:
                found.setdefault(work.name, work)
    return list(found.values()), unknown
