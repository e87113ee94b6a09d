"""What the preflight reads of a data source before any stage runs: its first text, and the commit a
``hub:`` source is at (resolved as the stages resolve it, :func:`skadapt.sources.resolve_commit`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from skadapt.errors import SkadaptError
from skadapt.sources.commits import reading

if TYPE_CHECKING:
    from skadapt.sources.config import CorpusSource


def commit_note(spec: str) -> str:
    """For a ``hub:`` source: the commit it is read at, and a hint to pin it when it is not pinned; ''
    for any other source."""
    from skadapt.sources import parse_source, resolve_commit

    if parse_source(spec).kind != "hub":
        return ""
    found = resolve_commit(spec)
    if found.pinned:
        return f"; commit {found.revision[:12]}"
    if found.commit is None:
        return f"; the commit {found.revision} is at is {found.resolved_by}"
    if found.resolved_by != "hub":
        return f"; {found.revision} was commit {found.commit} per the {found.resolved_by}"
    return f"; {found.revision} is commit {found.commit}: pin it with @{found.commit} for a reproducible run"


@reading()  # the commit shown is the commit read
def probe_corpus(corpus: CorpusSource) -> str:
    """Read the first text of each column of a corpus (a wordfreq list's first word).

    Raises:
        SkadaptError: The source holds no text in a column (the readers raise for a source that does not
            open).
    """
    from skadapt.sources import iter_texts, iter_wordfreq, parse_source

    spec = corpus.source
    parsed = parse_source(spec)
    if parsed.kind == "wordfreq":
        if next(iter(iter_wordfreq(parsed.name, max_words=1)), None) is None:
            raise SkadaptError(f"{spec}: wordfreq has no words for {parsed.name!r}")
        return "wordfreq list"
    for column in corpus.columns:
        if next(iter(iter_texts(spec, column, max_documents=1)), None) is None:
            raise SkadaptError(f"{spec}: no text in column {column!r}")
    return "first text read" + commit_note(spec)
