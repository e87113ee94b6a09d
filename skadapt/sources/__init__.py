"""Sources of texts and rows, shared by trimming, renormalization, training and dev data.

A source spec is one string:

- ``hub:DATASET[:CONFIG[:SPLIT]][@REVISION]`` - a Hugging Face dataset, streamed with ``datasets`` (default
  split ``train``; ``REVISION`` a branch, tag or commit, default the main branch), e.g.
  ``hub:HuggingFaceFW/fineweb-2:slk_Latn:train@v2.0.0``;
- ``wordfreq:LANG`` - a wordfreq frequency list (offline), as ``(word, count)`` pairs;
- anything else - a local file or glob: ``.txt`` (one text per line), ``.jsonl``, ``.json``, ``.csv``,
  ``.parquet``; or a directory: a dataset written by ``datasets``' ``save_to_disk`` (a ``DatasetDict``'s
  ``train`` split, or name the split's directory), else every such file under it.

One reader serves every caller: :func:`read_rows` gives ``(position, row)`` pairs plus the ``ClassLabel``
names a source declares (Hub datasets, saved datasets, Parquet files written by ``datasets``);
:func:`iter_texts` gives one column's texts. Missing columns are reported by one helper,
:func:`column_value`.

Reading a Hub dataset can stop half-way when the connection drops: that is one :class:`SourceInterrupted`
naming the source and how far it got, whose ``resume_state`` (``datasets``' own resumable-streaming
state, JSON-serializable) continues the read where it stopped: ``iter_texts(spec, resume_state=...)`` /
``read_rows(spec, resume_state=...)``. :meth:`TextStream.state` gives the same state at any point.

A Hub read reads one commit: :func:`resolve_commit` tells which when the read starts (a branch such as
``main`` moves), and :func:`reading` collects those commits for the stage manifest.

Modules (each single-purpose, ``datasets`` and ``wordfreq`` imported inside functions):

- ``spec`` - :class:`SourceSpec` and :func:`parse_source` (parsed once per string), the source errors;
- ``files`` - the local files a path/glob names, saved-dataset directories, the supported suffixes;
- ``columns`` - :func:`column_value`, :func:`column_text`, :func:`is_blank`;
- ``rowsource`` - :class:`RowSource` (rows plus what is known of their columns), resume-state checks;
- ``local`` - rows of local files: JSONL, ``.json``/``.csv``/``.parquet`` tables, saved datasets;
- ``commits`` - the commit a Hub source is read at (:func:`resolve_commit`), collected by :func:`reading`;
- ``hub`` - Hub datasets streamed and resumable, :func:`is_network_error`;
- ``rows`` - :func:`read_rows`, the one row reader;
- ``wordfreq`` - :func:`iter_wordfreq`;
- ``texts`` - :func:`iter_texts` and its :class:`TextStream`;
- ``config`` - :class:`CorpusSource`, the one spelling of a corpus in every recipe section (a plain string
  is its short form), and :func:`corpus_texts`, its texts.
"""

from __future__ import annotations

from skadapt.sources.columns import column_text, column_value, is_blank
from skadapt.sources.commits import (
    UNKNOWN_OFFLINE,
    HubCommit,
    SourceReads,
    model_commit,
    reading,
    resolve_commit,
)
from skadapt.sources.config import CorpusSource, corpus_texts
from skadapt.sources.files import ROW_SUFFIXES, resolve_files
from skadapt.sources.hub import is_network_error
from skadapt.sources.local import iter_jsonl
from skadapt.sources.rows import read_rows
from skadapt.sources.rowsource import Rows, RowSource
from skadapt.sources.spec import SourceError, SourceInterrupted, SourceSpec, parse_source
from skadapt.sources.texts import iter_texts
from skadapt.sources.wordfreq import iter_wordfreq

__all__ = [
    "ROW_SUFFIXES",
    "UNKNOWN_OFFLINE",
    "CorpusSource",
    "HubCommit",
    "RowSource",
    "Rows",
    "SourceError",
    "SourceInterrupted",
    "SourceReads",
    "SourceSpec",
    "column_text",
    "column_value",
    "corpus_texts",
    "is_blank",
    "is_network_error",
    "iter_jsonl",
    "iter_texts",
    "iter_wordfreq",
    "model_commit",
    "parse_source",
    "read_rows",
    "reading",
    "resolve_commit",
    "resolve_files",
]
