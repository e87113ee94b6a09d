"""Text sources shared by trimming, renormalization and data loading.

A source spec is one string:

- ``hub:DATASET[:CONFIG[:SPLIT]]`` - a Hugging Face dataset, streamed with ``datasets`` (default split
  ``train``), e.g. ``hub:HuggingFaceFW/fineweb-2:slk_Latn:train``;
- ``wordfreq:LANG`` - a wordfreq frequency list (offline), as ``(word, count)`` pairs;
- anything else - a local file or glob: ``.txt`` (one text per line), ``.jsonl``, ``.json``, ``.csv``,
  ``.parquet``.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skadapt.errors import SkadaptError

TEXT_SUFFIXES = (".txt", ".jsonl", ".json", ".csv", ".parquet")


class SourceError(SkadaptError, ValueError):
    """A source that cannot be read: missing, empty, malformed or without the asked column."""


@dataclass(frozen=True)
class SourceSpec:
    """A parsed source spec.

    Attributes:
        kind: ``hub``, ``wordfreq`` or ``files``.
        name: Dataset id, wordfreq language code, or the path/glob.
        config: Hub dataset config, if any.
        split: Hub split (default ``train``).
    """

    kind: str
    name: str
    config: str | None = None
    split: str = "train"

    def __str__(self) -> str:
        if self.kind == "hub":
            return f"hub:{self.name}:{self.config or ''}:{self.split}"
        if self.kind == "wordfreq":
            return f"wordfreq:{self.name}"
        return self.name


def parse_source(spec: str) -> SourceSpec:
    """Parse a source spec string.

    Raises:
        SourceError: An empty spec or a ``hub:``/``wordfreq:`` spec without a name.
    """
    spec = spec.strip()
    if not spec:
        raise SourceError("empty source spec; use a file/glob, hub:DATASET[:CONFIG[:SPLIT]] or wordfreq:LANG")
    if spec.startswith("hub:"):
        parts = spec[4:].split(":")
        if not parts[0] or len(parts) > 3:
            raise SourceError(f"{spec!r}: expected hub:DATASET[:CONFIG[:SPLIT]]")
        config = parts[1] if len(parts) > 1 and parts[1] else None
        split = parts[2] if len(parts) > 2 and parts[2] else "train"
        return SourceSpec("hub", parts[0], config, split)
    if spec.startswith("wordfreq:"):
        lang = spec[len("wordfreq:") :]
        if not lang:
            raise SourceError(f"{spec!r}: expected wordfreq:LANG, e.g. wordfreq:sk")
        return SourceSpec("wordfreq", lang)
    return SourceSpec("files", spec)


def resolve_files(pattern: str) -> list[Path]:
    """Local files matched by a path or glob, sorted.

    Raises:
        SourceError: Nothing matches, or a match has an unsupported suffix.
    """
    matches = sorted(Path(p) for p in glob.glob(pattern, recursive=True)) if glob.has_magic(pattern) else []
    if not glob.has_magic(pattern):
        path = Path(pattern)
        if not path.exists():
            raise SourceError(
                f"{pattern}: no such file (sources: file/glob, hub:DATASET[:CONFIG[:SPLIT]], wordfreq:LANG)"
            )
        matches = sorted(p for p in path.rglob("*") if p.suffix in TEXT_SUFFIXES) if path.is_dir() else [path]
    files = [p for p in matches if p.is_file()]
    if not files:
        raise SourceError(f"{pattern}: matches no files")
    for file in files:
        if file.suffix not in TEXT_SUFFIXES:
            raise SourceError(
                f"{file}: unsupported file type {file.suffix!r}; use one of {', '.join(TEXT_SUFFIXES)}"
            )
    return files


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


def _iter_file_texts(path: Path, column: str) -> Iterator[str]:
    if path.suffix == ".txt":
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                text = line.rstrip("\n")
                if text.strip():
                    yield text
    elif path.suffix == ".jsonl":
        for number, row in iter_jsonl(path):
            yield _column(row, column, f"{path}:{number}")
    else:
        for number, row in iter_table_rows(path):
            yield _column(row, column, f"{path}: row {number}")


TABLE_BUILDERS = {".json": "json", ".csv": "csv", ".parquet": "parquet"}
"""File suffix -> ``datasets`` builder of the tabular local formats."""


def iter_table_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(row number, row)`` of a ``.json``/``.csv``/``.parquet`` file, streamed with ``datasets``.

    Raises:
        SourceError: The file cannot be read in the format its suffix names.
    """
    import datasets

    builder = TABLE_BUILDERS[path.suffix]
    try:
        stream = datasets.load_dataset(builder, data_files=str(path), split="train", streaming=True)
        yield from enumerate((dict(row) for row in stream), 1)
    except Exception as error:  # datasets raises many types for unreadable files
        raise SourceError(f"{path}: cannot read as {builder}: {error}") from None


def _column(row: object, column: str, where: str) -> str:
    if not isinstance(row, dict):
        raise SourceError(f"{where}: expected an object with a {column!r} field")
    if column not in row:
        raise SourceError(f"{where}: no column {column!r} (columns: {', '.join(map(str, row))})")
    value = row[column]
    return "" if value is None else str(value)


def _iter_hub_texts(spec: SourceSpec, column: str) -> Iterator[str]:
    import datasets

    try:
        stream = datasets.load_dataset(spec.name, spec.config, split=spec.split, streaming=True)
    except Exception as error:  # connection, auth, unknown config: all end here
        raise SourceError(
            f"hub:{spec.name}: cannot open the dataset ({type(error).__name__}: {error})"
        ) from None
    features = getattr(stream, "features", None)
    if features is not None and column not in features:
        raise SourceError(f"hub:{spec.name}: no column {column!r} (columns: {', '.join(features)})")
    for row in stream:
        yield _column(row, column, f"hub:{spec.name}")


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


def iter_texts(
    spec: str,
    column: str = "text",
    *,
    max_documents: int | None = None,
    max_bytes: int | None = None,
) -> Iterator[str]:
    """Texts of a file/glob or Hub source, stopping at ``max_documents`` or ``max_bytes`` (UTF-8).

    Raises:
        SourceError: Unreadable/empty source, missing column, malformed line (naming file and line).
    """
    parsed = parse_source(spec)
    if parsed.kind == "wordfreq":
        raise SourceError(
            f"{spec}: wordfreq lists have words with counts, not texts; use it for trimming only"
        )
    if parsed.kind == "hub":
        texts = _iter_hub_texts(parsed, column)
    else:
        texts = (text for file in resolve_files(parsed.name) for text in _iter_file_texts(file, column))
    documents = size = 0
    for text in texts:
        if max_documents is not None and documents >= max_documents:
            break
        if max_bytes is not None:
            size += len(text.encode("utf-8"))
            if size > max_bytes and documents:
                break
        documents += 1
        yield text
    if documents == 0:
        raise SourceError(f"{spec}: the source is empty (no non-empty texts in column {column!r})")
