"""The rows of an open source (:class:`RowSource`), its read state, and the ClassLabel names it declares."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from skadapt.sources.spec import SourceError, SourceSpec, parse_source

LabelNames = dict[str, list[str]]
Rows = Iterator[tuple[str, dict[str, Any]]]
"""``(position, row)`` pairs; the position names the row in messages (``data.jsonl:3``)."""


@dataclass
class RowSource:
    """Rows of one source plus what is known about its columns.

    Attributes:
        spec: The source spec as given.
        rows: ``(position, row)`` pairs, position like ``"data.jsonl:3"`` or ``"data.parquet row 3"``.
        label_names: Column -> ClassLabel names, for sources that declare them (Hub datasets, saved
            datasets, Parquet written by ``datasets``); for several local files it is complete once their
            rows were read.
        columns: The columns, when known before reading (Hub datasets).
        read: Rows read so far.
        stream: The ``datasets.IterableDataset`` behind a Hub source.
        commit: The commit a Hub source is read at (None when unknown, and for other sources).
    """

    spec: str
    rows: Rows
    label_names: dict[str, list[str]] = field(default_factory=dict)
    columns: list[str] | None = None
    read: int = 0
    stream: Any = None
    commit: str | None = None

    def state(self) -> dict[str, Any]:
        """Where the read stands: ``read_rows(spec, resume_state=...)`` continues after the last row read."""
        return {
            "spec": str(parse_source(self.spec)),
            "rows": self.read,
            "datasets": self.stream.state_dict() if self.stream is not None else None,
            "commit": self.commit,
        }


def check_resume(state: dict[str, Any], parsed: SourceSpec, key: str) -> int:
    """How many items (``key``: ``rows`` or ``documents``) a resume state of ``parsed`` has read.

    Raises:
        SourceError: The state is not a read state, or belongs to another source.
    """
    if not isinstance(state, dict) or not isinstance(state.get(key), int):
        raise SourceError(f"{parsed}: resume_state is not a read state (expected one from this source)")
    if state.get("spec") != str(parsed):
        raise SourceError(f"{parsed}: resume_state belongs to another source ({state.get('spec')})")
    return state[key]


def label_names(features: Mapping[str, Any] | None) -> LabelNames:
    """Column -> ClassLabel names of ``datasets`` features (none when there are no features)."""
    import datasets

    return {
        column: list(feature.names)
        for column, feature in (features or {}).items()
        if isinstance(feature, datasets.ClassLabel)
    }
