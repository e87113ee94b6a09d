"""The one row reader: :func:`read_rows` opens a Hub dataset, saved dataset or table file(s), resumable."""

from __future__ import annotations

import itertools
from typing import Any

from skadapt.sources.files import ROW_SUFFIXES, resolve_files
from skadapt.sources.hub import hub_source
from skadapt.sources.local import files_rows
from skadapt.sources.rowsource import Rows, RowSource, check_resume
from skadapt.sources.spec import SourceError, parse_source


def read_rows(spec: str, *, resume_state: dict[str, Any] | None = None) -> RowSource:
    """Open a source for row iteration: Hub dataset, saved dataset directory, or .jsonl/.json/.csv/.parquet
    file(s).

    Args:
        spec: The source spec.
        resume_state: A :meth:`RowSource.state` / :attr:`SourceInterrupted.resume_state` of the same
            source: rows continue after the last row read then (a Hub stream resumes without re-reading;
            local files are re-read and the rows before skipped).

    Raises:
        SourceError: The source is missing, unreadable, a word list or text-only (``.txt``); while reading,
            malformed rows (naming file and line) and :class:`SourceInterrupted`.
    """
    parsed = parse_source(spec)
    if parsed.kind == "wordfreq":
        raise SourceError(f"{spec} is a word list, not a table of rows")
    start = check_resume(resume_state, parsed, "rows") if resume_state else 0
    if parsed.kind == "hub":
        return hub_source(spec, parsed, resume_state)
    files = resolve_files(parsed.name)
    for file in files:
        if file.is_file() and file.suffix not in ROW_SUFFIXES:
            raise SourceError(
                f"{file}: unsupported file type {file.suffix!r} for rows; "
                f"use one of {', '.join(ROW_SUFFIXES)} or a directory written by save_to_disk"
            )
    source = RowSource(spec, iter(()))
    rows = itertools.islice(files_rows(files, source), start, None)
    source.rows = _counted(rows, source, start)
    return source


def _counted(rows: Rows, source: RowSource, start: int) -> Rows:
    source.read = start
    for item in rows:
        source.read += 1
        yield item
