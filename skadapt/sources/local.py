"""Rows of local files: JSONL read line by line, ``.json``/``.csv``/``.parquet`` and saved datasets through
``datasets`` (keeping their ClassLabel names)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from skadapt.sources.rowsource import LabelNames, Rows, RowSource, label_names
from skadapt.sources.spec import SourceError
from skadapt.userfiles import not_utf8, text_lines

TABLE_BUILDERS = {".json": "json", ".csv": "csv", ".parquet": "parquet"}
"""File suffix -> ``datasets`` builder of the tabular local formats."""


def files_rows(files: list[Path], source: RowSource) -> Rows:
    """Rows of local files in turn, gathering their ClassLabel names into ``source.label_names``."""
    for file in files:
        names, rows = file_rows(file)
        for column, labels in names.items():
            known = source.label_names.setdefault(column, labels)
            if known != labels:
                raise SourceError(
                    f"{file}: column {column!r} has ClassLabel names {labels}, the files before it {known}; "
                    "integer labels would mean different things"
                )
        yield from rows


def file_rows(file: Path) -> tuple[LabelNames, Rows]:
    """ClassLabel names and rows of one local file or saved dataset directory."""
    if file.is_dir():
        return _saved_rows(file)
    if file.suffix == ".jsonl":
        return {}, ((f"{file}:{number}", row) for number, row in iter_jsonl(file))
    return _table_rows(file)


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-empty line of a JSONL file.

    Raises:
        SourceError: A line that is not valid JSON or not an object, a file that is not UTF-8, naming
            ``file:line``.
    """
    for number, line in enumerate(text_lines(path, error=SourceError), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise SourceError(f"{path}:{number}: malformed JSON line ({error.msg})") from None
        if not isinstance(row, dict):
            raise SourceError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
        yield number, row


def _table_rows(path: Path) -> tuple[LabelNames, Rows]:
    """A ``.json``/``.csv``/``.parquet`` file streamed with ``datasets`` (Parquet keeps its ClassLabels)."""
    import datasets

    builder = TABLE_BUILDERS[path.suffix]
    try:
        stream = datasets.load_dataset(builder, data_files=str(path), split="train", streaming=True)
        names = label_names(stream.features)
    except Exception as error:  # datasets raises many types for unreadable files
        raise SourceError(_unreadable(path, builder, error)) from None

    def rows() -> Rows:
        try:
            for number, row in enumerate(stream, 1):
                yield f"{path} row {number}", dict(row)
        except Exception as error:
            raise SourceError(_unreadable(path, builder, error)) from None

    return names, rows()


def _unreadable(path: Path, builder: str, error: Exception) -> str:
    """Why ``datasets`` could not read a table file: not UTF-8 text (a text format, named as every reader
    names it: ``file:line`` and the fix), else its own error."""
    problem = not_utf8(path) if builder != "parquet" else None
    return problem or f"{path}: cannot read as {builder}: {error}"


def _load_saved(path: Path) -> Any:
    import datasets

    try:
        return datasets.load_from_disk(str(path))
    except Exception as error:  # a damaged or foreign directory
        raise SourceError(
            f"{path}: cannot read the saved dataset ({type(error).__name__}: {error})"
        ) from None


def _saved_rows(path: Path) -> tuple[LabelNames, Rows]:
    """A ``Dataset.save_to_disk`` directory (memory-mapped, read in order)."""
    data = _load_saved(path)
    rows = ((f"{path} row {number}", dict(row)) for number, row in enumerate(data, 1))
    return label_names(data.features), rows
