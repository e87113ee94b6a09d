"""The one spelling of a corpus in every recipe section: :class:`CorpusSource`, and :func:`corpus_texts`,
its texts.

Every field that names texts to read (``trim.corpus``, ``renorm.corpus``, ``synth_sts.corpus``,
``export.corpus.sources``, ...) is a ``CorpusSource``: ``{source: SPEC, columns: [text], max_documents: N}``.
A plain string is its short form, ``{source: <string>}``: ``corpus: wordfreq:sk``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any, ClassVar

from pydantic import BaseModel, Field, model_validator

from skadapt.config import PositiveInt, Section
from skadapt.sources.spec import SourceError
from skadapt.sources.texts import TextStream, iter_texts

FLAT_FIELDS = {
    "source": "source",
    "text_column": "columns",
    "corpus_column": "columns",
    "max_documents": "max_documents",
    "corpus_max_texts": "max_documents",
}
"""Flat fields a section once had beside (or instead of: ``synth_sts.source``) its corpus string -> the
corpus field that holds them now (an unknown-field message names the new spelling)."""


class CorpusSource(Section):
    """Texts to read: a source and the columns of its rows (a plain string is ``{source: <string>}``)."""

    SHORT_FORM: ClassVar[str] = "source"
    """The field a plain string fills (a command's ``--corpus X`` is ``corpus.source``)."""

    source: str = Field(
        description="file/glob (.txt .jsonl .json .csv .parquet), saved dataset, "
        "hub:DATASET[:CONFIG[:SPLIT]][@REVISION] or wordfreq:LANG (where a stage counts words)"
    )
    columns: list[str] = Field(
        default_factory=lambda: ["text"],
        min_length=1,
        description="Text columns of its rows, read one after the other (a .txt file's lines are its texts)",
    )
    max_documents: PositiveInt | None = Field(None, description="Texts read per column at most (null: all)")

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, data: Any) -> Any:
        return {cls.SHORT_FORM: data} if isinstance(data, str) else data

    def __str__(self) -> str:
        return self.source


class ParallelSource(CorpusSource):
    """Parallel text: each row a text and its translations (dims tiers' basis, the cross-lingual anchor)."""

    columns: list[str] = Field(
        min_length=2,
        description="Its columns holding the sides of each pair, the text in the run's language first",
    )


def corpus_texts(
    corpus: CorpusSource,
    *,
    max_documents: int | None = None,
    max_bytes: int | None = None,
    resume_state: dict[str, Any] | None = None,
) -> Iterator[str]:
    """The texts of a corpus: each column's texts in turn (:func:`skadapt.sources.iter_texts`), at most
    ``corpus.max_documents`` per column.

    Args:
        corpus: The corpus.
        max_documents: A cap of the caller's on top of the corpus's own (the smaller holds).
        max_bytes: Stop before the text that would exceed this many UTF-8 bytes (one column only).
        resume_state: A :meth:`TextStream.state` to continue from (one column only).

    Returns:
        A :class:`TextStream` for a one-column corpus (it can say where it stands), else an iterator.

    Raises:
        SourceError: As :func:`iter_texts`; ``max_bytes`` or ``resume_state`` given for several columns.
    """
    limits = [n for n in (corpus.max_documents, max_documents) if n is not None]
    cap = min(limits) if limits else None
    if len(corpus.columns) == 1:
        column = corpus.columns[0]
        stream: TextStream = iter_texts(
            corpus.source, column, max_documents=cap, max_bytes=max_bytes, resume_state=resume_state
        )
        return stream
    if max_bytes is not None or resume_state is not None:
        raise SourceError(
            f"{corpus.source}: a byte limit or a resumed read takes one column, not {corpus.columns}"
        )
    return itertools.chain.from_iterable(
        iter_texts(corpus.source, column, max_documents=cap) for column in corpus.columns
    )


def is_corpus_field(annotation: Any) -> bool:
    """Whether a field's type holds a :class:`CorpusSource` or a kind of one (``CorpusSource | None``, a list
    of them, parallel text)."""
    if isinstance(annotation, type) and issubclass(annotation, CorpusSource):
        return True
    return any(is_corpus_field(arg) for arg in getattr(annotation, "__args__", ()) or ())


def corpus_field_hint(section: type[BaseModel] | None, name: str) -> str | None:
    """The new spelling of a flat field ``name`` a section had beside its corpus field (``text_column`` ->
    ``'corpus.columns'``), or None."""
    moved = FLAT_FIELDS.get(name)
    if section is None or moved is None:
        return None
    corpora = [field for field, info in section.model_fields.items() if is_corpus_field(info.annotation)]
    return " or ".join(f"{field}.{moved}" for field in corpora) or None
