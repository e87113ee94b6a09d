"""Texts of a source, one column of its rows (or ``.txt`` lines): :func:`iter_texts` and its resumable
:class:`TextStream`."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from skadapt.sources.columns import column_value
from skadapt.sources.files import resolve_files
from skadapt.sources.hub import hub_source
from skadapt.sources.local import file_rows
from skadapt.sources.rowsource import Rows, RowSource, check_resume
from skadapt.sources.spec import SourceError, SourceInterrupted, parse_source
from skadapt.userfiles import text_lines


class TextStream(Iterator[str]):
    """The texts of a source (see :func:`iter_texts`): an iterator that can say where it stands.

    Attributes:
        spec: The source spec as given.
        documents: Texts yielded so far (including those before a resumed state).
        bytes: Their UTF-8 bytes, counted when there is a ``max_bytes`` (else None).
    """

    def __init__(
        self,
        spec: str,
        column: str,
        max_documents: int | None,
        max_bytes: int | None,
        resume_state: dict[str, Any] | None,
    ) -> None:
        self.spec = spec
        self.column = column
        self.max_documents = max_documents
        self.max_bytes = max_bytes
        self.documents = 0
        self.bytes: int | None = 0 if max_bytes is not None else None
        self._resume = resume_state
        self._rows: RowSource | None = None
        self._texts = self._generate()

    def __iter__(self) -> Iterator[str]:
        return self._texts  # loops run the generator itself; next(stream) goes through __next__

    def __next__(self) -> str:
        return next(self._texts)

    def state(self) -> dict[str, Any]:
        """Where the read stands, JSON-serializable: ``iter_texts(spec, column, resume_state=...)`` (same
        limits) yields the texts after those yielded so far - a Hub stream without re-reading them."""
        return {
            "spec": str(parse_source(self.spec)),
            "column": self.column,
            "documents": self.documents,
            "bytes": self.bytes,
            "rows": self.documents,
            "datasets": self._rows.state()["datasets"] if self._rows is not None else None,
            "commit": self._rows.commit if self._rows is not None else None,
        }

    def _generate(self) -> Iterator[str]:
        spec, column = self.spec, self.column
        parsed = parse_source(spec)
        if parsed.kind == "wordfreq":
            raise SourceError(
                f"{spec}: wordfreq lists have words with counts, not texts; use it for trimming only"
            )
        skip = 0
        if self._resume:
            skip = check_resume(self._resume, parsed, "documents")
            if self._resume.get("column") != column:
                raise SourceError(f"{spec}: resume_state is for column {self._resume.get('column')!r}")
            self.documents, self.bytes = skip, self._resume.get("bytes")
            if self.max_bytes is not None and not isinstance(self.bytes, int):
                raise SourceError(f"{spec}: resume_state was taken without max_bytes; resume with its limits")
        if parsed.kind == "hub":
            self._rows = hub_source(spec, parsed, self._resume)
            if self._rows.columns is not None:  # a missing column fails before any row is fetched
                column_value(dict.fromkeys(self._rows.columns), column, spec)
            texts = self._column_texts(self._rows.rows)
        else:
            texts = self._file_texts(resolve_files(parsed.name))
            if skip:
                texts = itertools.islice(texts, skip, None)
        max_documents = self.max_documents if self.max_documents is not None else math.inf
        try:
            if self.max_bytes is None:  # the common case: no byte counting
                for text in texts:
                    if self.documents >= max_documents:
                        break
                    self.documents += 1
                    yield text
            else:
                for text in texts:
                    size = self.bytes + len(text.encode("utf-8"))
                    if self.documents >= max_documents or (size > self.max_bytes and self.documents):
                        break
                    self.documents += 1
                    self.bytes = size
                    yield text
        except SourceInterrupted as error:
            error.resume_state = self.state()
            raise
        if self.documents == 0:
            raise SourceError(f"{spec}: the source is empty (no non-empty texts in column {column!r})")

    def _column_texts(self, rows: Rows) -> Iterator[str]:
        column = self.column
        for where, row in rows:
            value = row[column] if column in row else column_value(row, column, where)  # (raises)
            yield "" if value is None else str(value)

    def _file_texts(self, files: list[Path]) -> Iterator[str]:
        for file in files:
            if file.suffix == ".txt":
                for line in text_lines(file, error=SourceError):
                    text = line.rstrip("\n")
                    if text.strip():
                        yield text
            else:
                _, rows = file_rows(file)
                yield from self._column_texts(rows)


def iter_texts(
    spec: str,
    column: str = "text",
    *,
    max_documents: int | None = None,
    max_bytes: int | None = None,
    resume_state: dict[str, Any] | None = None,
) -> TextStream:
    """Texts of a file/glob, saved dataset or Hub source, stopping at ``max_documents`` or ``max_bytes``.

    Nothing is read before the first ``next()``. The returned :class:`TextStream` tells where it stands
    (:meth:`TextStream.state`); a dropped Hub connection raises :class:`SourceInterrupted` whose
    ``resume_state`` is that state.

    Args:
        spec: The source spec.
        column: Column of tabular, saved and Hub sources (``.txt`` lines are the texts).
        max_documents: Stop after this many texts (counted over resumed reads too).
        max_bytes: Stop before the text that would exceed this many UTF-8 bytes (ditto).
        resume_state: A state of the same source and column: continue after its texts.

    Raises:
        SourceError: Unreadable/empty source, missing column, malformed line (naming file and line), a
            resume state of another source; :class:`SourceInterrupted` when a stream's connection drops.
    """
    return TextStream(spec, column, max_documents, max_bytes, resume_state)
