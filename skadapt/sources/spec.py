"""Source spec strings: parsing (once per string), the canonical form, and the errors of reading sources."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from skadapt.errors import SkadaptError

HUB_FORM = "hub:DATASET[:CONFIG[:SPLIT]][@REVISION]"
SOURCE_FORMS = f"a file/glob, a saved dataset directory, {HUB_FORM} or wordfreq:LANG"


class SourceError(SkadaptError, ValueError):
    """A source that cannot be read: missing, empty, malformed or without the asked column."""


class SourceInterrupted(SourceError):
    """Reading a streamed source stopped half-way (dropped connection); the read can be resumed.

    Attributes:
        source: The source spec as given.
        rows: Rows read before the interruption.
        resume_state: Pass it as ``resume_state`` to :func:`iter_texts` (when it came from there) or
            :func:`read_rows` to continue after the last row read: JSON-serializable, it holds the
            ``datasets.IterableDataset.state_dict()`` of the stream.
    """

    def __init__(self, message: str, *, source: str, rows: int, resume_state: dict[str, Any]) -> None:
        super().__init__(message)
        self.source = source
        self.rows = rows
        self.resume_state = resume_state


@dataclass(frozen=True)
class SourceSpec:
    """A parsed source spec; ``str()`` gives its canonical form (the identity used in cache keys).

    Attributes:
        kind: ``hub``, ``wordfreq`` or ``files``.
        name: Dataset id, wordfreq language code, or the path/glob.
        config: Hub dataset config, if any.
        split: Hub split (default ``train``).
        revision: Hub revision (branch, tag or commit), if pinned.
    """

    kind: str
    name: str
    config: str | None = None
    split: str = "train"
    revision: str | None = None

    def __str__(self) -> str:
        if self.kind == "hub":
            pinned = f"@{self.revision}" if self.revision else ""
            return f"hub:{self.name}:{self.config or ''}:{self.split}{pinned}"
        if self.kind == "wordfreq":
            return f"wordfreq:{self.name}"
        return self.name


def parse_source(spec: str) -> SourceSpec:
    """Parse a source spec string.

    Parsing is pure and :class:`SourceSpec` frozen, so each distinct string is parsed once per process
    and the same instance returned after (a trim run asks for the same spec from several places).

    Raises:
        SourceError: An empty spec, a ``wordfreq:`` spec without a language, or a malformed ``hub:`` spec
            (no dataset, more than three parts, an empty revision, ``@`` twice).
    """
    return _parse(spec.strip())


@functools.lru_cache(maxsize=256)
def _parse(spec: str) -> SourceSpec:
    """Parse a stripped spec string (cached; errors are raised anew each time, never cached)."""
    if not spec:
        raise SourceError(f"empty source spec; use {SOURCE_FORMS}")
    if spec.startswith("hub:"):
        return _parse_hub(spec)
    if spec.startswith("wordfreq:"):
        lang = spec[len("wordfreq:") :]
        if not lang:
            raise SourceError(f"{spec!r}: expected wordfreq:LANG, e.g. wordfreq:sk")
        return SourceSpec("wordfreq", lang)
    return SourceSpec("files", spec)


def _parse_hub(spec: str) -> SourceSpec:
    body, at, revision = spec[len("hub:") :].partition("@")
    parts = body.split(":")
    problem = None
    if not parts[0]:
        problem = "no dataset id"
    elif len(parts) > 3:
        problem = "more than DATASET:CONFIG:SPLIT"
    elif at and not revision:
        problem = "an empty revision after '@'"
    elif "@" in revision:
        problem = "'@' more than once"
    elif ":" in revision:
        problem = "the @REVISION must come last"
    if problem:
        example = "hub:slovak-nlp/sklep:sts:train@main"
        raise SourceError(f"{spec!r}: expected {HUB_FORM}, e.g. {example} ({problem})")
    config = parts[1] if len(parts) > 1 and parts[1] else None
    split = parts[2] if len(parts) > 2 and parts[2] else "train"
    return SourceSpec("hub", parts[0], config, split, revision or None)
