"""Rows of a training or dev dataset, read by :func:`skadapt.sources.read_rows` (the one reader).

Sources: ``hub:DATASET[:CONFIG[:SPLIT]][@REVISION]``, a directory written by ``save_to_disk``, or local
.jsonl/.json/.csv/.parquet files. Each row comes with a position (``data.jsonl:12`` / ``row 12``) so that
errors can name it. Sources that declare ``ClassLabel`` columns (Hub and saved datasets, Parquet written
by ``datasets``) keep their names so that integer labels can be read as names (``0`` -> ``entailment``).
Every problem is a :class:`TrainingDataError` naming the dataset.
"""

from __future__ import annotations

from skadapt.errors import SkadaptError
from skadapt.sources import ROW_SUFFIXES, Rows, RowSource, SourceError, read_rows

__all__ = ["ROW_SUFFIXES", "RowSource", "TrainingDataError", "label_key", "open_rows"]


class TrainingDataError(SkadaptError, ValueError):
    """Training or dev data that cannot be used; the message names the dataset, the row and the field."""


def label_key(name: str) -> str:
    """A label name as labels are compared: ``"Not Entailment"`` -> ``not_entailment``."""
    return name.strip().lower().replace(" ", "_").replace("-", "_")


def open_rows(spec: str, dataset: str) -> RowSource:
    """Open a source for row iteration.

    Args:
        spec: ``hub:DATASET[:CONFIG[:SPLIT]][@REVISION]``, a saved dataset directory, or a local
            .jsonl/.json/.csv/.parquet file or glob.
        dataset: The recipe name of the dataset (used in error messages).

    Raises:
        TrainingDataError: The source is missing, unreadable or of an unsupported type; while reading,
            malformed rows and a dropped connection (naming the rows read).
    """
    try:
        source = read_rows(spec)
    except SourceError as error:
        raise TrainingDataError(f"dataset {dataset!r}: {error}") from None
    source.rows = _named(source.rows, dataset)
    return source


def _named(rows: Rows, dataset: str) -> Rows:
    """The rows, with reading errors raised as :class:`TrainingDataError` naming the dataset."""
    try:
        yield from rows
    except SourceError as error:
        raise TrainingDataError(f"dataset {dataset!r}: {error}") from None
