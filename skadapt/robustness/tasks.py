"""Which texts of a task are transformed, and transformed copies of loaded mteb tasks.

Rule per task type: retrieval and reranking transform their queries only (the corpus stays); STS and pair
classification both sentences of every pair; classification the texts of the evaluated split (the
training split stays); clustering its sentences; bitext mining its first column (the target language),
and not at all under language transformations. Items whose transformation failed are dropped from the copy
and counted; :func:`transformed_copy` with ``keep_text=True`` gives the original restricted to the same
surviving items, so that every delta is paired.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skadapt import artifacts

if TYPE_CHECKING:
    from mteb.abstasks.abstask import AbsTask

PAIR_TYPES = frozenset({"STS", "PairClassification"})
QUERY_TYPES = frozenset({"Retrieval", "Reranking", "InstructionRetrieval", "InstructionReranking"})
SUPPORTED_TYPES = PAIR_TYPES | QUERY_TYPES | {"Classification", "Clustering", "BitextMining"}

Mapping_ = Mapping[str, str | None]
"""original text -> transformed text, or None where the transformation failed."""


@dataclass
class CopyCounts:
    """Items of the evaluated splits before and after dropping failed transformations; ``emptied``: the
    evaluated splits (of any subset) left without an item, which mteb cannot score."""

    items: int = 0
    excluded: int = 0
    emptied: int = 0


def task_type(task: AbsTask) -> str:
    """The mteb task type."""
    return str(task.metadata.type)


def transforms_task(task: AbsTask, transform: str, language_transforms: frozenset[str]) -> bool:
    """Whether ``transform`` applies to ``task`` (bitext mining skips language transformations)."""
    kind = task_type(task)
    if kind not in SUPPORTED_TYPES:
        return False
    return not (kind == "BitextMining" and transform in language_transforms)


def _holders(task: AbsTask) -> Iterator[tuple[Any, str]]:
    """(container, split) for every evaluated split: ``container[split]`` is the split's data."""
    dataset = task.dataset
    subsets = list(task.hf_subsets or []) or list(dataset.keys())
    seen: set[int] = set()
    for subset in subsets:
        holder = dataset.get(subset, dataset)  # a task without subsets keeps its splits at the top
        if id(holder) in seen:
            continue
        seen.add(id(holder))
        for split in task.eval_splits:
            if split in holder:
                yield holder, split


def _columns(task: AbsTask) -> tuple[str, ...]:
    """The text columns a transformation rewrites, as the task names them (mteb's attributes: e.g.
    UkrSedUASmallSTSv1 compares ``query``/``passage``)."""
    kind = task_type(task)
    if kind == "STS":
        return tuple(getattr(task, "column_names", ("sentence1", "sentence2")))
    if kind == "PairClassification":
        return (
            getattr(task, "input1_column_name", "sentence1"),
            getattr(task, "input2_column_name", "sentence2"),
        )
    if kind == "BitextMining":
        return ("sentence1",)
    if kind == "Classification":
        return (getattr(task, "input_column_name", "text"),)
    if kind == "Clustering":
        return (getattr(task, "input_column_name", "sentences"),)
    return ()


def as_v2(task: AbsTask) -> None:
    """Bring a loaded retrieval task still in mteb's v1 layout (``task.queries``/``corpus``/``relevant_docs``,
    e.g. BelebeleRetrieval) into the v2 ``task.dataset`` the copies are made from, and drop the v1 fields:
    mteb's ``evaluate`` rebuilds ``dataset`` from them, which would score a copy on the original queries."""
    convert = getattr(task, "convert_v1_dataset_format_to_v2", None)
    if not callable(convert) or not all(hasattr(task, a) for a in ("queries", "corpus", "relevant_docs")):
        return
    convert(num_proc=None)
    for attribute in ("queries", "corpus", "relevant_docs", "top_ranked", "instructions"):
        if attribute in vars(task):
            delattr(task, attribute)


def texts_to_transform(task: AbsTask) -> list[str]:
    """The unique texts of a loaded task that a transformation rewrites, in order of appearance."""
    kind = task_type(task)
    found: dict[str, None] = {}
    for holder, split in _holders(task):
        data = holder[split]
        if kind in QUERY_TYPES:
            found.update(dict.fromkeys(t for t in data["queries"]["text"] if isinstance(t, str)))
            continue
        for column in _columns(task):
            found.update(dict.fromkeys(t for t in data[column] if isinstance(t, str)))
    return list(found)


def transformed_copy(
    task: AbsTask, mapping: Mapping_, name: str, *, keep_text: bool = False
) -> tuple[AbsTask, CopyCounts]:
    """A copy of a loaded task named ``name``, its texts replaced through ``mapping`` (or kept, with
    ``keep_text``), without the items whose transformation failed."""
    kind = task_type(task)
    new = copy.deepcopy(task)
    counts = CopyCounts()
    for holder, split in _holders(new):
        if kind in QUERY_TYPES:
            holder[split] = _retrieval_split(holder[split], mapping, keep_text, counts)
        else:
            holder[split] = _rows_split(holder[split], _columns(task), mapping, keep_text, counts)
        if kind == "Clustering" and hasattr(new, "max_documents_per_cluster"):
            new.max_documents_per_cluster = max(new.max_documents_per_cluster or 0, len(holder[split]))
    content = artifacts.hash_json(sorted((k, v) for k, v in mapping.items()))
    revision = artifacts.hash_json([task.metadata.revision, name, keep_text, content])[:16]
    dataset = {**task.metadata.dataset, "revision": revision}
    new.metadata = task.metadata.model_copy(update={"name": name, "dataset": dataset})
    new.data_loaded = True
    return new, counts


def _survives(texts: list[Any], mapping: Mapping_) -> bool:
    return all(not isinstance(t, str) or t not in mapping or mapping[t] is not None for t in texts)


def _rows_split(
    data: Any, columns: tuple[str, ...], mapping: Mapping_, keep: bool, counts: CopyCounts
) -> Any:
    keep_rows = [
        i
        for i, row in enumerate(zip(*(data[c] for c in columns), strict=True))
        if _survives(list(row), mapping)
    ]
    counts.items += len(data)
    counts.excluded += len(data) - len(keep_rows)
    counts.emptied += bool(len(data)) and not keep_rows
    data = data.select(keep_rows)
    if keep:
        return data

    def replace(batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        return {c: [mapping.get(t, t) if isinstance(t, str) else t for t in batch[c]] for c in columns}

    return data.map(replace, batched=True, load_from_cache_file=False, keep_in_memory=True)


def _retrieval_split(split: Any, mapping: Mapping_, keep: bool, counts: CopyCounts) -> Any:
    queries = split["queries"]
    keep_rows = [i for i, text in enumerate(queries["text"]) if _survives([text], mapping)]
    counts.items += len(queries)
    counts.excluded += len(queries) - len(keep_rows)
    counts.emptied += bool(len(queries)) and not keep_rows
    queries = queries.select(keep_rows)
    kept_ids = set(queries["id"])
    if not keep:
        queries = queries.map(
            lambda batch: {"text": [mapping.get(t, t) for t in batch["text"]]},
            batched=True,
            load_from_cache_file=False,
            keep_in_memory=True,
        )
    new = dict(split)
    new["queries"] = queries
    new["relevant_docs"] = {q: d for q, d in split["relevant_docs"].items() if q in kept_ids}
    if split.get("top_ranked"):
        new["top_ranked"] = {q: d for q, d in split["top_ranked"].items() if q in kept_ids}
    return new
