"""How many rows a source has, read cheaply, without downloading its data.

- local files: JSONL/text lines are counted, Parquet row counts read from the file footers, saved datasets
  from their Arrow metadata, other tables read through (they are small); the text length of the named
  columns from the first rows;
- Hub datasets (``hub:``): the dataset card's ``dataset_info`` (``num_examples`` and ``num_bytes`` of the
  split, what the Hub shows on a dataset's page), else the split's Parquet files named by the card's
  ``configs`` ``data_files`` patterns: their footers, read with HTTP range requests, until ``enough`` rows
  are counted (FineWeb2's slk_Latn has far more rows than a recipe reads);
- ``wordfreq:`` lists: the word forms the trim stage counts.

The stages' plans read a source through :func:`read_count` (its read limits applied) and show it with
:func:`source_line`.

Nothing here raises for an unreadable source: the size is ``unknown`` with the reason (offline mode, an
unreachable Hub, no metadata), and the plan says it is partial.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skadapt.plan.model import StagePlan
from skadapt.sources import SourceError, parse_source, resolve_files
from skadapt.sources.files import saved_dataset
from skadapt.sources.spec import SourceSpec
from skadapt.userfiles import text_lines

SAMPLE_ROWS = 2000
"""Rows of a local file read for the average text length."""
HUB_TIMEOUT_S = 10.0
GLOB = "*?["


@dataclass(frozen=True)
class SourceSize:
    """Rows of a source (None: unknown, with ``reason``).

    Attributes:
        rows: Rows (or word forms) the source has; a lower bound when ``at_least``.
        chars: Average characters of text per row in the columns asked for (None: not known).
        how: Where the count comes from.
        reason: Why the rows are unknown.
        at_least: ``rows`` counts only the files read until ``enough`` rows were found.
        download_bytes: Bytes of the source's files (Hub), when listed.
        bytes_per_row: Bytes of the files read per row counted in them (what reading a row downloads).
    """

    rows: int | None
    chars: float | None = None
    how: str = ""
    reason: str | None = None
    at_least: bool = False
    download_bytes: int | None = None
    bytes_per_row: float | None = None

    @property
    def known(self) -> bool:
        return self.rows is not None

    def describe(self) -> str:
        """``"71,999 rows (dataset card)"`` or ``"unknown (offline mode)"``."""
        if self.rows is None:
            return f"unknown ({self.reason})"
        return f"{'at least ' if self.at_least else ''}{self.rows:,} rows ({self.how})"


def unknown(reason: str) -> SourceSize:
    return SourceSize(None, reason=reason)


def source_size(spec: str, columns: list[str] | None = None, enough: int | None = None) -> SourceSize:
    """The size of a source spec; never raises (see the module docstring).

    Args:
        spec: A source spec (file/glob, saved dataset, ``hub:``, ``wordfreq:``).
        columns: The text columns whose average length is wanted.
        enough: Stop counting Parquet footers past this many rows.
    """
    try:
        parsed = parse_source(spec)
        if parsed.kind == "wordfreq":
            return _wordfreq_size(parsed.name, enough)
        if parsed.kind == "hub":
            return _hub_size(parsed, columns or [], enough)
        return _local_size(spec, columns or [])
    except Exception as error:  # the plan reports any unreadable source, never stops on it
        first = str(error).splitlines()[0][:200] if str(error) else ""
        return unknown(f"{type(error).__name__}: {first}".rstrip(": "))


# -- local ------------------------------------------------------------------------------------------------


def _local_size(spec: str, columns: list[str]) -> SourceSize:
    rows, texts = 0, []
    how = set()
    for file in resolve_files(spec):
        if file.is_dir():
            import datasets

            data = datasets.load_from_disk(str(saved_dataset(file) or file))
            rows += len(data)
            texts += _row_texts(data.select(range(min(SAMPLE_ROWS, len(data)))), columns)
            how.add("saved dataset")
        elif file.suffix in (".jsonl", ".txt"):
            count, sample = _lines(file, columns)
            rows += count
            texts += sample
            how.add("lines counted")
        elif file.suffix == ".parquet":
            import pyarrow.parquet as pq

            parquet = pq.ParquetFile(file)
            rows += parquet.metadata.num_rows
            first = (
                parquet.read_row_group(0).slice(0, SAMPLE_ROWS).to_pylist() if parquet.num_row_groups else []
            )
            texts += _row_texts(first, columns)
            how.add("Parquet footer")
        else:
            from skadapt.sources.local import file_rows

            read = [row for _, row in file_rows(file)[1]]
            rows += len(read)
            texts += _row_texts(read[:SAMPLE_ROWS], columns)
            how.add("rows read")
    chars = sum(texts) / len(texts) if texts else None
    return SourceSize(rows, chars, ", ".join(sorted(how)))


def _lines(path: Path, columns: list[str]) -> tuple[int, list[int]]:
    """(non-empty lines, text lengths of the first lines' columns) of a JSONL/text file."""
    count, sample = 0, []
    for line in text_lines(path, error=SourceError):
        if not line.strip():
            continue
        count += 1
        if count <= SAMPLE_ROWS:
            if path.suffix == ".txt":
                sample.append(len(line.strip()))
            else:
                sample += _row_texts([json.loads(line)], columns)
    return count, sample


def _row_texts(rows: Any, columns: list[str]) -> list[int]:
    """Characters per row in ``columns`` (strings and lists of strings)."""
    out = []
    for row in rows:
        size = 0
        for column in columns:
            value = row.get(column) if isinstance(row, dict) else None
            values = value if isinstance(value, list) else [value]
            size += sum(len(v) for v in values if isinstance(v, str))
        out.append(size)
    return out


def _wordfreq_size(lang: str, enough: int | None) -> SourceSize:
    from skadapt.sources.wordfreq import iter_word_forms

    forms = list(itertools.islice(iter_word_forms(lang, enough), enough))
    chars = sum(map(len, forms)) / len(forms) if forms else None
    return SourceSize(len(forms), chars, "wordfreq word forms")


# -- Hub --------------------------------------------------------------------------------------------------


def _hub_size(parsed: SourceSpec, columns: list[str], enough: int | None) -> SourceSize:
    from huggingface_hub import HfApi

    from skadapt.hub import offline, unreachable_reason

    if offline():
        return unknown("offline mode (HF_HUB_OFFLINE): the Hub is not asked")
    down = unreachable_reason()
    if down is not None:
        return unknown(down)
    api = HfApi()
    info = api.dataset_info(parsed.name, revision=parsed.revision, timeout=HUB_TIMEOUT_S)
    card = info.card_data.to_dict() if info.card_data is not None else {}
    split = _card_split(card, parsed.config, parsed.split)
    if split is not None and split.get("num_examples"):
        rows = int(split["num_examples"])
        chars = int(split["num_bytes"]) / rows if split.get("num_bytes") else None
        return SourceSize(rows, chars, "dataset card: dataset_info")
    patterns = _data_files(card, parsed.config, parsed.split)
    if not patterns:
        return unknown(
            f"the dataset card names no row count and no data files for {parsed.config}/{parsed.split}"
        )
    files = _matching_files(api, parsed, patterns)
    parquet = [f for f in files if f[0].endswith(".parquet")]
    if not parquet:
        return unknown(f"no row count in the dataset card, and its {parsed.split} files are not Parquet")
    return _footers(parsed, parquet, columns, enough)


def _card_split(card: dict[str, Any], config: str | None, split: str) -> dict[str, Any] | None:
    """The ``dataset_info`` split entry of a config, None when the card has none."""
    infos = card.get("dataset_info")
    entries = infos if isinstance(infos, list) else [infos] if isinstance(infos, dict) else []
    wanted = config or "default"
    entry = next((e for e in entries if e.get("config_name", "default") == wanted), None)
    if entry is None and config is None and len(entries) == 1:
        entry = entries[0]
    if entry is None:
        return None
    return next((s for s in entry.get("splits") or [] if s.get("name") == split), None)


def _data_files(card: dict[str, Any], config: str | None, split: str) -> list[str]:
    """The ``data_files`` patterns of a config's split in the card's ``configs``."""
    wanted = config or "default"
    for entry in card.get("configs") or []:
        if entry.get("config_name", "default") != wanted:
            continue
        files = entry.get("data_files")
        if isinstance(files, dict):  # {split: pattern(s)}
            files = [{"split": name, "path": path} for name, path in files.items()]
        if isinstance(files, str):
            files = [files]
        if files and all(isinstance(f, str) for f in files):  # patterns without splits: all train
            return list(files) if split == "train" else []
        for item in files or []:
            if item.get("split") == split:
                path = item.get("path")
                return [path] if isinstance(path, str) else list(path or [])
    return []


def _matching_files(api: Any, parsed: SourceSpec, patterns: list[str]) -> list[tuple[str, int]]:
    """(path, size) of the repository files the patterns match, listed below each pattern's fixed prefix."""
    from huggingface_hub.hf_api import RepoFile

    found: dict[str, int] = {}
    for pattern in patterns:
        prefix = pattern.split("/")
        fixed = "/".join(itertools.takewhile(lambda part: not any(c in part for c in GLOB), prefix[:-1]))
        entries = api.list_repo_tree(
            parsed.name,
            path_in_repo=fixed or None,
            repo_type="dataset",
            revision=parsed.revision,
            recursive=True,
        )
        for entry in entries:
            if isinstance(entry, RepoFile) and fnmatch.fnmatch(entry.path, pattern):
                found[entry.path] = entry.size
    return sorted(found.items())


def _footers(
    parsed: SourceSpec, files: list[tuple[str, int]], columns: list[str], enough: int | None
) -> SourceSize:
    """Rows from the Parquet footers (range reads), stopping once ``enough`` rows are counted."""
    import pyarrow.parquet as pq
    from huggingface_hub import HfFileSystem

    fs = HfFileSystem()
    revision = f"@{parsed.revision}" if parsed.revision else ""
    rows = text_bytes = read_bytes = 0
    read = 0
    for path, file_bytes in files:
        with fs.open(f"datasets/{parsed.name}{revision}/{path}", "rb", block_size=64 * 1024) as handle:
            metadata = pq.ParquetFile(handle).metadata
        rows += metadata.num_rows
        read += 1
        read_bytes += file_bytes
        text_bytes += _column_bytes(metadata, columns)
        if enough is not None and rows >= enough:
            break
    total = sum(size for _, size in files)
    chars = text_bytes / rows if rows and text_bytes else None
    how = f"Parquet footers of {read} of {len(files)} files"
    per_row = read_bytes / rows if rows else None
    return SourceSize(
        rows, chars, how, at_least=read < len(files), download_bytes=total, bytes_per_row=per_row
    )


def _column_bytes(metadata: Any, columns: list[str]) -> int:
    """Uncompressed bytes of ``columns`` in a Parquet file (its row groups' column chunks)."""
    total = 0
    for group in range(metadata.num_row_groups):
        row_group = metadata.row_group(group)
        for index in range(row_group.num_columns):
            chunk = row_group.column(index)
            if chunk.path_in_schema in columns:
                total += chunk.total_uncompressed_size
    return total


def read_count(
    size: SourceSize, limit: int | None, max_bytes: int | None, field: str, plan: StagePlan, columns: int = 1
) -> int | None:
    """The documents a stage reads from a source with read limits (``limit`` per column, of ``columns``
    columns); an unknown size falls back on the limit (and the plan records the unknown)."""
    if size.rows is None:
        plan.unknown.append(
            f"{field}: size {size.describe()}" + ("; counted as its read limit" if limit else "")
        )
        return limit * columns if limit else limit
    count = min(size.rows, limit) if limit else size.rows
    if size.at_least and not limit:
        plan.unknown.append(f"{field}: {size.describe()}")
    if max_bytes and size.chars:
        count = min(count, int(max_bytes / size.chars))
    return count * columns


def size_text(n_bytes: float) -> str:
    """``"3.2 GB"`` or ``"11 MB"``."""
    return f"{n_bytes / 1e9:.1f} GB" if n_bytes >= 1e9 else f"{max(n_bytes / 1e6, 0.01):.2g} MB"


def source_line(field: str, spec: str, size: SourceSize, read: int | None, what: str = "documents") -> str:
    shown = f"{read:,}" if read is not None else "unknown"
    return f"{field} {spec}: {shown} {what} read (source: {size.describe()})"
