"""Rows of a training or dev dataset: Hub datasets (``hub:DATASET[:CONFIG[:SPLIT]]``) or local files.

Each row comes with a position (``data.jsonl:12`` / ``row 12``) so that errors can name it. Hub rows keep the
dataset's ``ClassLabel`` names so that integer labels can be read as names (``0`` -> ``entailment``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skadapt.errors import SkadaptError
from skadapt.sources import SourceError, iter_jsonl, iter_table_rows, parse_source, resolve_files

ROW_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")


class TrainingDataError(SkadaptError, ValueError):
    """Training or dev data that cannot be used; the message names the dataset, the row and the field."""


@dataclass
class RowSource:
    """Rows of one source plus what is known about its columns.

    Attributes:
        spec: The source spec as written in the recipe.
        rows: ``(position, row)`` pairs, position like ``"data.jsonl:3"`` or ``"data.parquet row 3"``.
        label_names: Column -> ClassLabel names, for sources that declare them (Hub datasets).
    """

    spec: str
    rows: Iterator[tuple[str, dict[str, Any]]]
    label_names: dict[str, list[str]] = field(default_factory=dict)


def open_rows(spec: str, dataset: str) -> RowSource:
    """Open a source for row iteration.

    Args:
        spec: ``hub:DATASET[:CONFIG[:SPLIT]]`` or a local .jsonl/.json/.csv/.parquet file or glob.
        dataset: The recipe name of the dataset (used in error messages).

    Raises:
        TrainingDataError: The source is missing, unreadable or of an unsupported type.
    """
    try:
        parsed = parse_source(spec)
        if parsed.kind == "wordfreq":
            raise TrainingDataError(f"dataset {dataset!r}: {spec} is a word list, not a table of rows")
        if parsed.kind == "hub":
            return _hub_rows(spec, parsed.name, parsed.config, parsed.split, dataset)
        files = resolve_files(parsed.name)
    except SourceError as error:
        raise TrainingDataError(f"dataset {dataset!r}: {error}") from None
    for file in files:
        if file.suffix not in ROW_SUFFIXES:
            raise TrainingDataError(
                f"dataset {dataset!r}: {file}: unsupported file type {file.suffix!r} for rows; "
                f"use one of {', '.join(ROW_SUFFIXES)}"
            )
    return RowSource(spec, (item for file in files for item in _file_rows(file, dataset)))


def _hub_rows(spec: str, name: str, config: str | None, split: str, dataset: str) -> RowSource:
    import datasets

    try:
        stream = datasets.load_dataset(name, config, split=split, streaming=True)
    except Exception as error:  # connection, auth, unknown config/split: all end here
        raise TrainingDataError(
            f"dataset {dataset!r}: cannot open {spec} ({type(error).__name__}: {error}); check the id, "
            "config and split, your network/HF_TOKEN, or use a local file"
        ) from None
    label_names: dict[str, list[str]] = {}
    for column, feature in (getattr(stream, "features", None) or {}).items():
        if isinstance(feature, datasets.ClassLabel):
            label_names[column] = list(feature.names)
    rows = ((f"{spec} row {number}", dict(row)) for number, row in enumerate(stream, 1))
    return RowSource(spec, rows, label_names)


def _file_rows(path: Path, dataset: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if path.suffix == ".jsonl":
        try:
            for number, row in iter_jsonl(path):
                yield f"{path}:{number}", row
        except SourceError as error:
            raise TrainingDataError(f"dataset {dataset!r}: {error}") from None
        return
    try:
        for number, row in iter_table_rows(path):
            yield f"{path} row {number}", row
    except SourceError as error:
        raise TrainingDataError(f"dataset {dataset!r}: {error}") from None
