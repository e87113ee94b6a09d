"""The plan's size of a recipe's dev sets, shared by the plans of the stages that score on them (finetune,
renorm, export)."""

from __future__ import annotations

from skadapt.errors import SkadaptError
from skadapt.plan.model import StagePlan
from skadapt.plan.sizes import source_size
from skadapt.tasks.config import DevSetConfig, DevSets
from skadapt.tasks.dev import encoded_texts, text_columns

DEV_TEXTS_PER_ROW = {
    "sts": 2,
    "retrieval": 2,
    "triplets": 3,
    "pairs": 2,
    "nli": 1,
    "rte": 2,
    "bitext": 2,
    "clustering": 1,
    "classification": 1,
}
"""Texts a dev evaluation encodes per source row when the rows cannot be read (nli: a premise and two of its
three hypotheses per three rows; clustering and classification: the row's text, encoded once however many
k-means runs or folds score it). A retrieval set's distractor corpus adds a text per row of its own."""
DEV_READ_ROWS = 100_000
"""Dev sets up to this many rows are read by the plan (a validation split: seconds); larger ones are
estimated from their metadata."""


def dev_size(dev: DevSets, plan: StagePlan, max_chars: float) -> tuple[int, float]:
    """(texts one dev evaluation encodes, their average characters, each cut at ``max_chars`` - the
    model's length) of a recipe's dev sets. A dev set is small: its text columns are read and counted as
    its evaluator encodes them (distinct passages of a retrieval corpus and its distractors, ...); a set that
    cannot be read is estimated from its row count (an upper bound for retrieval, whose passages repeat)."""
    texts, chars = 0, 0.0
    for entry in dev.sets:
        size = source_size(entry.source, text_columns(entry))
        small = size.rows is not None and size.rows <= DEV_READ_ROWS  # unknown (offline): not tried
        counted = _read_dev(entry, max_chars) if small else None
        if counted is not None:
            texts, chars = texts + counted[0], chars + counted[1]
            continue
        if size.rows is None:
            plan.unknown.append(f"dev set {entry.source}: {size.describe()}")
            continue
        plan.notes.append(f"dev set {entry.source}: not read; texts estimated from its {size.rows:,} rows")
        per_row = DEV_TEXTS_PER_ROW.get(entry.kind, 2)
        texts += size.rows * per_row
        chars += size.rows * min(size.chars or 100.0, per_row * max_chars)
        if entry.corpus is not None:
            found = _corpus_size(entry, plan, max_chars)
            texts, chars = texts + found[0], chars + found[1]
    return texts, chars / texts if texts else 100.0


def _corpus_size(entry: DevSetConfig, plan: StagePlan, max_chars: float) -> tuple[int, float]:
    """(texts, total characters) of a retrieval set's distractor corpus estimated from its metadata (a row
    per passage and column, at most ``max_documents``)."""
    assert entry.corpus is not None
    size = source_size(entry.corpus.source, list(entry.corpus.columns))
    if size.rows is None:
        plan.unknown.append(f"dev set {entry.source}: corpus {entry.corpus.source}: {size.describe()}")
        return 0, 0.0
    rows = size.rows if entry.corpus.max_documents is None else min(size.rows, entry.corpus.max_documents)
    columns = len(entry.corpus.columns)
    return rows * columns, rows * min(size.chars or 100.0 * columns, columns * max_chars)


def _read_dev(entry: DevSetConfig, max_chars: float) -> tuple[int, float] | None:
    """(texts, total characters) a dev set's evaluator encodes, from its rows (through the dev module's
    reader, :func:`skadapt.tasks.dev.encoded_texts`); None when unreadable."""
    try:
        texts = encoded_texts(entry)
    except (SkadaptError, OSError):
        return None
    return len(texts), sum((min(len(text), max_chars) for text in texts), 0.0)
