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
"""

from __future__ import annotations

import glob
import itertools
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skadapt.errors import SkadaptError

TEXT_SUFFIXES = (".txt", ".jsonl", ".json", ".csv", ".parquet")
ROW_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")
"""File types with columns (a ``.txt`` file has texts only)."""
LabelNames = dict[str, list[str]]
Rows = Iterator[tuple[str, dict[str, Any]]]
"""``(position, row)`` pairs; the position names the row in messages (``data.jsonl:3``)."""
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

    Raises:
        SourceError: An empty spec, a ``wordfreq:`` spec without a language, or a malformed ``hub:`` spec
            (no dataset, more than three parts, an empty revision, ``@`` twice).
    """
    spec = spec.strip()
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


def _is_saved_dataset(path: Path) -> bool:
    """Whether ``path`` is a directory written by ``Dataset.save_to_disk``."""
    return (path / "state.json").is_file() and (path / "dataset_info.json").is_file()


def _saved_dataset(path: Path) -> Path | None:
    """The saved ``Dataset`` directory a directory names (itself, or a saved ``DatasetDict``'s ``train``)."""
    if _is_saved_dataset(path):
        return path
    if not (path / "dataset_dict.json").is_file():
        return None
    if _is_saved_dataset(path / "train"):
        return path / "train"
    splits = sorted(p.name for p in path.iterdir() if _is_saved_dataset(p))
    raise SourceError(
        f"{path}: a saved DatasetDict without a train split; name a split's directory "
        f"({', '.join(str(path / s) for s in splits) or 'it has none'})"
    )


def resolve_files(pattern: str) -> list[Path]:
    """Local files matched by a path or glob, sorted; a saved dataset is one entry, its directory.

    Raises:
        SourceError: Nothing matches, a match has an unsupported suffix, or a directory holds a saved
            dataset below its top (name that directory instead).
    """
    if glob.has_magic(pattern):
        matches = sorted(Path(p) for p in glob.glob(pattern, recursive=True))
    else:
        path = Path(pattern)
        if not path.exists():
            raise SourceError(f"{pattern}: no such file (sources: {SOURCE_FORMS})")
        if path.is_dir() and (saved := _saved_dataset(path)) is not None:
            return [saved]
        if path.is_dir():
            below = sorted(path.rglob("*"))
            nested = [
                p.parent
                for p in below
                if p.name == "dataset_dict.json" or (p.name == "state.json" and _is_saved_dataset(p.parent))
            ]
            if nested:
                raise SourceError(f"{pattern}: holds a saved dataset at {nested[0]}; name that directory")
            matches = [p for p in below if p.suffix in TEXT_SUFFIXES]
        else:
            matches = [path]
    files = [p for p in matches if p.is_file()]
    if not files:
        raise SourceError(f"{pattern}: matches no files")
    for file in files:
        if file.suffix not in TEXT_SUFFIXES:
            raise SourceError(
                f"{file}: unsupported file type {file.suffix!r}; use one of {', '.join(TEXT_SUFFIXES)} "
                "or a directory written by save_to_disk"
            )
    return files


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
    """

    spec: str
    rows: Rows
    label_names: dict[str, list[str]] = field(default_factory=dict)
    columns: list[str] | None = None
    read: int = 0
    stream: Any = None

    def state(self) -> dict[str, Any]:
        """Where the read stands: ``read_rows(spec, resume_state=...)`` continues after the last row read."""
        return {
            "spec": str(parse_source(self.spec)),
            "rows": self.read,
            "datasets": self.stream.state_dict() if self.stream is not None else None,
        }


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
    start = _check_resume(resume_state, parsed, "rows") if resume_state else 0
    if parsed.kind == "hub":
        return _hub_source(spec, parsed, resume_state)
    files = resolve_files(parsed.name)
    for file in files:
        if file.is_file() and file.suffix not in ROW_SUFFIXES:
            raise SourceError(
                f"{file}: unsupported file type {file.suffix!r} for rows; "
                f"use one of {', '.join(ROW_SUFFIXES)} or a directory written by save_to_disk"
            )
    source = RowSource(spec, iter(()))
    rows = itertools.islice(_files_rows(files, source), start, None)
    source.rows = _counted(rows, source, start)
    return source


def _check_resume(state: dict[str, Any], parsed: SourceSpec, key: str) -> int:
    if not isinstance(state, dict) or not isinstance(state.get(key), int):
        raise SourceError(f"{parsed}: resume_state is not a read state (expected one from this source)")
    if state.get("spec") != str(parsed):
        raise SourceError(f"{parsed}: resume_state belongs to another source ({state.get('spec')})")
    return state[key]


def _counted(rows: Rows, source: RowSource, start: int) -> Rows:
    source.read = start
    for item in rows:
        source.read += 1
        yield item


def _files_rows(files: list[Path], source: RowSource) -> Rows:
    """Rows of local files in turn, gathering their ClassLabel names into ``source.label_names``."""
    for file in files:
        names, rows = _file_rows(file)
        for column, labels in names.items():
            known = source.label_names.setdefault(column, labels)
            if known != labels:
                raise SourceError(
                    f"{file}: column {column!r} has ClassLabel names {labels}, the files before it {known}; "
                    "integer labels would mean different things"
                )
        yield from rows


def _file_rows(file: Path) -> tuple[LabelNames, Rows]:
    """ClassLabel names and rows of one local file or saved dataset directory."""
    if file.is_dir():
        return _saved_rows(file)
    if file.suffix == ".jsonl":
        return {}, ((f"{file}:{number}", row) for number, row in iter_jsonl(file))
    return _table_rows(file)


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-empty line of a JSONL file.

    Raises:
        SourceError: A line that is not valid JSON or not an object, naming ``file:line``.
    """
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise SourceError(f"{path}:{number}: malformed JSON line ({error.msg})") from None
            if not isinstance(row, dict):
                raise SourceError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
            yield number, row


TABLE_BUILDERS = {".json": "json", ".csv": "csv", ".parquet": "parquet"}
"""File suffix -> ``datasets`` builder of the tabular local formats."""


def _label_names(features: Mapping[str, Any] | None) -> LabelNames:
    import datasets

    return {
        column: list(feature.names)
        for column, feature in (features or {}).items()
        if isinstance(feature, datasets.ClassLabel)
    }


def _table_rows(path: Path) -> tuple[LabelNames, Rows]:
    """A ``.json``/``.csv``/``.parquet`` file streamed with ``datasets`` (Parquet keeps its ClassLabels)."""
    import datasets

    builder = TABLE_BUILDERS[path.suffix]
    try:
        stream = datasets.load_dataset(builder, data_files=str(path), split="train", streaming=True)
        names = _label_names(stream.features)
    except Exception as error:  # datasets raises many types for unreadable files
        raise SourceError(f"{path}: cannot read as {builder}: {error}") from None

    def rows() -> Rows:
        try:
            for number, row in enumerate(stream, 1):
                yield f"{path} row {number}", dict(row)
        except Exception as error:
            raise SourceError(f"{path}: cannot read as {builder}: {error}") from None

    return names, rows()


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
    return _label_names(data.features), rows


def _hub_source(spec: str, parsed: SourceSpec, resume_state: dict[str, Any] | None) -> RowSource:
    import datasets

    try:
        stream = datasets.load_dataset(
            parsed.name, parsed.config, split=parsed.split, streaming=True, revision=parsed.revision
        )
    except Exception as error:  # connection, auth, unknown config/split/revision: all end here
        raise SourceError(
            f"cannot open {spec} ({type(error).__name__}: {error}); check the dataset id, config, split "
            "and revision, your network/HF_TOKEN, or use a local file"
        ) from None
    if resume_state and resume_state.get("rows"):
        if not isinstance(resume_state.get("datasets"), dict):
            raise SourceError(f"{spec}: resume_state holds no stream state (it is not from a Hub read)")
        stream.load_state_dict(resume_state["datasets"])
    features = getattr(stream, "features", None)
    source = RowSource(spec, iter(()), _label_names(features), list(features) if features else None)
    source.stream = stream
    source.read = resume_state["rows"] if resume_state else 0
    source.rows = _stream_rows(source)
    return source


NETWORK_ERRORS = {("httpx", "HTTPError"), ("httpx2", "HTTPError"), ("aiohttp", "ClientError")}
"""(top-level package, class) of the network errors that are not ``OSError`` (requests' errors are)."""


def is_network_error(error: BaseException) -> bool:
    """Whether an error raised while streaming means the connection failed (worth resuming)."""
    if isinstance(error, OSError):  # ConnectionError, TimeoutError, requests/fsspec/hub errors
        return True
    return any((cls.__module__.split(".")[0], cls.__name__) in NETWORK_ERRORS for cls in type(error).__mro__)


def _stream_rows(source: RowSource) -> Rows:
    """Rows of a Hub stream; a dropped connection ends them with one :class:`SourceInterrupted`."""
    iterator = iter(source.stream)
    while True:
        try:
            row = next(iterator)
        except StopIteration:
            return
        except Exception as error:
            if not is_network_error(error):
                raise
            raise SourceInterrupted(
                f"{source.spec}: the stream broke off after {source.read:,} rows "
                f"({type(error).__name__}: {error}); check your network and run again "
                f"(the read can resume at row {source.read + 1:,})",
                source=source.spec,
                rows=source.read,
                resume_state=source.state(),
            ) from error
        source.read += 1
        yield f"{source.spec} row {source.read}", dict(row)


def iter_wordfreq(lang: str, max_words: int | None = None) -> Iterator[tuple[str, int]]:
    """``(word, pseudo_count)`` pairs from wordfreq, most frequent first.

    Counts are frequencies scaled to occurrences per billion words, so they mix with corpus counts.

    Raises:
        SourceError: wordfreq does not know the language.
    """
    import wordfreq

    if lang not in wordfreq.available_languages():
        known = ", ".join(sorted(wordfreq.available_languages()))
        raise SourceError(f"wordfreq:{lang}: wordfreq has no list for {lang!r} (it has: {known})")
    for rank, word in enumerate(wordfreq.iter_wordlist(lang, "best")):
        if max_words is not None and rank >= max_words:
            return
        count = round(wordfreq.word_frequency(word, lang, "best") * 1e9)
        if count <= 0:
            return
        yield word, count


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
            skip = _check_resume(self._resume, parsed, "documents")
            if self._resume.get("column") != column:
                raise SourceError(f"{spec}: resume_state is for column {self._resume.get('column')!r}")
            self.documents, self.bytes = skip, self._resume.get("bytes")
            if self.max_bytes is not None and not isinstance(self.bytes, int):
                raise SourceError(f"{spec}: resume_state was taken without max_bytes; resume with its limits")
        if parsed.kind == "hub":
            self._rows = _hub_source(spec, parsed, self._resume)
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
                with file.open(encoding="utf-8") as handle:
                    for line in handle:
                        text = line.rstrip("\n")
                        if text.strip():
                            yield text
            else:
                _, rows = _file_rows(file)
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
