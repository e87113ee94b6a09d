"""The optional dev evaluation used during training for best-checkpoint selection.

- ``kind: sts`` - rows with sentence1, sentence2, score (on ``score_range``) -> EmbeddingSimilarityEvaluator,
  selected on Spearman of cosine similarities; both sentences get the model's query prompt.
- ``kind: retrieval`` - rows with query, positive -> InformationRetrievalEvaluator over the corpus of all
  positives, selected on nDCG@10; queries get the query prompt, passages the document prompt.
- ``kind: triplets`` - rows with anchor, positive, negative (NLI-style) -> TripletEvaluator, selected on
  cosine accuracy; the query prompt on all three.

Several dev sets run in sequence and the dev score is the mean of their main scores.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skadapt.prompts import role_prompt
from skadapt.sources import column_text, column_value
from skadapt.tasks.rows import TrainingDataError, open_rows

if TYPE_CHECKING:
    from skadapt.tasks.config import DevSetConfig, DevSets

DEV_NAME = "dev"


@dataclass
class DevSet:
    """A built dev evaluator and the metric the trainer selects the best checkpoint on.

    Attributes:
        evaluator: The sentence-transformers evaluator (named ``dev``).
        metric: Key of the main score in the evaluator's results, e.g. ``dev_spearman_cosine``.
        size: Pairs (sts) or queries (retrieval).
    """

    evaluator: Any
    metric: str
    size: int


ROLES = {
    "sts": ("sentence1", "sentence2", "score"),
    "retrieval": ("query", "positive"),
    "triplets": ("anchor", "positive", "negative"),
}
"""Dev set kind -> the roles (default column names) its rows need."""


def _column(config: DevSetConfig, role: str) -> str:
    return config.columns.get(role, role)


def check_first_row(config: DevSetConfig) -> None:
    """Open a dev set and check its first row has every column its kind needs (the preflight check).

    Raises:
        TrainingDataError: The source cannot be opened, is empty or lacks a column.
    """
    _, row = next(iter(open_rows(config.source, "dev").rows), (None, None))
    if row is None:
        raise TrainingDataError(f"dev set: {config.source} is empty (no rows)")
    missing = [_column(config, role) for role in ROLES[config.kind] if _column(config, role) not in row]
    if missing:
        raise TrainingDataError(
            f"dev set {config.source}: no column {', '.join(missing)} (columns: {', '.join(row)}); "
            "map them with columns"
        )


def _value(row: dict[str, Any], column: str, role: str, where: str) -> Any:
    read = column_value if role == "score" else column_text
    return read(row, column, f"dev set: {where}", role, error=TrainingDataError)


def build_dev_sets(
    config: DevSets, batch_size: int = 32, prompts: dict[str, str] | None = None
) -> list[DevSet]:
    """One evaluator per dev set (named ``<kind>-<n>``), for callers that report each set's score.

    Raises:
        TrainingDataError: Missing/empty column, bad score, or an empty dev set.
    """
    return [
        _build_one(entry, f"{entry.kind}-{index}", batch_size, prompts or {})
        for index, entry in enumerate(config.sets)
    ]


def build_dev_set(config: DevSets, batch_size: int = 32, prompts: dict[str, str] | None = None) -> DevSet:
    """Read the dev sets and build their evaluator, with the model's prompts (see skadapt.prompts).

    One set is evaluated alone (named ``dev``); several run in sequence (``dev-<kind>-<n>``) and the dev
    score is the mean of their main scores.

    Raises:
        TrainingDataError: Missing/empty column, bad score, or an empty dev set.
    """
    if len(config.sets) == 1:
        return _build_one(config.sets[0], DEV_NAME, batch_size, prompts or {})
    from sentence_transformers.sentence_transformer.evaluation import SequentialEvaluator

    parts = [
        _build_one(entry, f"{DEV_NAME}-{entry.kind}-{index}", batch_size, prompts or {})
        for index, entry in enumerate(config.sets)
    ]
    evaluator = SequentialEvaluator(
        [part.evaluator for part in parts], main_score_function=lambda scores: sum(scores) / len(scores)
    )
    return DevSet(evaluator, "sequential_score", sum(part.size for part in parts))


def _build_one(config: DevSetConfig, name: str, batch_size: int, prompts: dict[str, str]) -> DevSet:
    """One dev set's evaluator, named ``name``."""
    from sentence_transformers.sentence_transformer.evaluation import (
        EmbeddingSimilarityEvaluator,
        InformationRetrievalEvaluator,
        TripletEvaluator,
    )

    query, document = role_prompt(prompts, "query"), role_prompt(prompts, "document")
    rows = list(open_rows(config.source, "dev").rows)
    if not rows:
        raise TrainingDataError(f"dev set: {config.source} is empty (no rows)")
    if config.kind == "sts":
        low, high = config.score_range
        first, second, scores = [], [], []
        for where, row in rows:
            first.append(query + _value(row, _column(config, "sentence1"), "sentence1", where))
            second.append(query + _value(row, _column(config, "sentence2"), "sentence2", where))
            raw = _value(row, _column(config, "score"), "score", where)
            try:
                score = float(raw)
            except (TypeError, ValueError):
                raise TrainingDataError(f"dev set: {where}: score {raw!r} is not a number") from None
            if not low <= score <= high:
                raise TrainingDataError(
                    f"dev set: {where}: score {raw!r} is outside score_range [{low:g}, {high:g}]"
                )
            scores.append((score - low) / (high - low))
        evaluator = EmbeddingSimilarityEvaluator(
            first, second, scores, batch_size=batch_size, name=name, similarity_fn_names=["cosine"]
        )
        return DevSet(evaluator, f"{name}_spearman_cosine", len(scores))
    if config.kind == "triplets":
        columns = {role: [] for role in ("anchor", "positive", "negative")}
        for where, row in rows:
            for role, values in columns.items():  # NLI-style triplets are symmetric: query prompt on all
                values.append(query + _value(row, _column(config, role), role, where))
        evaluator = TripletEvaluator(
            columns["anchor"], columns["positive"], columns["negative"], name=name, batch_size=batch_size
        )
        return DevSet(evaluator, f"{name}_cosine_accuracy", len(rows))
    queries: dict[str, str] = {}
    corpus: dict[str, str] = {}
    passage_ids: dict[str, str] = {}
    relevant: dict[str, set[str]] = {}
    for where, row in rows:
        text = _value(row, _column(config, "query"), "query", where)
        positive = _value(row, _column(config, "positive"), "positive", where)
        doc_id = passage_ids.setdefault(positive, f"d{len(passage_ids)}")
        corpus[doc_id] = positive
        query_id = f"q{len(queries)}"
        queries[query_id] = text
        relevant[query_id] = {doc_id}
    evaluator = InformationRetrievalEvaluator(
        queries,
        corpus,
        relevant,
        batch_size=batch_size,
        name=name,
        query_prompt=query or None,
        corpus_prompt=document or None,
        score_functions=None,
        write_csv=False,
    )
    return DevSet(evaluator, f"{name}_cosine_ndcg@10", len(queries))
