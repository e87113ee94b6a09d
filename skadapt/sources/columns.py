"""Reading one column of a row: the one check for a missing column, non-empty texts, blank values."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from skadapt.sources.spec import SourceError


def column_value(
    row: Mapping[str, Any], column: str, where: str, role: str | None = None, *, error: type = SourceError
) -> Any:
    """The value of ``column`` in ``row``; the one check for a missing column.

    Args:
        row: The row (or a mapping of the known columns).
        column: The column to read.
        where: What names the row in the message (``data.jsonl:3``, ``dataset 'qa': data.jsonl:3``).
        role: The role the column plays (``positive``, ``score``), named in the message.
        error: The error class to raise (:class:`SourceError`, or a caller's, e.g. training data errors).

    Raises:
        error: ``WHERE: no column 'C' (ROLE) (columns: ...)``.
    """
    if type(row) is not dict and not isinstance(row, Mapping):
        raise error(f"{where}: expected an object with a {column!r} field, got {type(row).__name__}")
    if column not in row:
        label = f" ({role})" if role else ""
        raise error(f"{where}: no column {column!r}{label} (columns: {', '.join(map(str, row))})")
    return row[column]


def column_text(
    row: Mapping[str, Any], column: str, where: str, role: str | None = None, *, error: type = SourceError
) -> str:
    """A column that must hold a non-empty text (see :func:`column_value` for the arguments).

    Raises:
        error: The column is missing, or its value is not a non-empty string.
    """
    value = column_value(row, column, where, role, error=error)
    if not isinstance(value, str) or not value.strip():
        label = f" ({role})" if role else ""
        raise error(f"{where}: field {column!r}{label} must be a non-empty text, got {value!r}")
    return value


def is_blank(value: Any) -> bool:
    """Whether a field holds nothing: None, NaN, a blank string, or a list/answer object of blanks.

    SQuAD-style answers ``{"text": [...], "answer_start": [...]}`` are blank when their texts are.
    """
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, Mapping):
        return is_blank(value["text"]) if "text" in value else all(is_blank(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(is_blank(v) for v in value)
    return False
