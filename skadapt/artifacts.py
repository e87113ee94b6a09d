"""Artifact directories: atomic writes, fingerprints, manifests."""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import logging
import os
import platform
import shutil
import sqlite3
import time
import uuid
from collections.abc import Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from skadapt.errors import SkadaptError
from skadapt.paths import cache_path

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
TRACKED_LIBRARIES = (
    "skadapt",
    "torch",
    "transformers",
    "tokenizers",
    "sentence-transformers",
    "datasets",
    "mteb",
    "huggingface-hub",
)


class OutputExistsError(SkadaptError, FileExistsError):
    """The output directory exists and overwriting was not asked for."""


def _sibling(path: Path, tag: str) -> Path:
    return path.parent / f".{path.name}.{tag}-{uuid.uuid4().hex[:8]}"


def clean_stale(parent: Path, names: Iterable[str]) -> list[Path]:
    """Remove leftovers of interrupted writes of ``names`` in ``parent``: their ``.NAME.tmp-*`` /
    ``.NAME.old-*`` directories and ``.failed-NAME-*`` markers of failed distributed stages.

    Only the named targets are touched: temporary directories of other outputs (another run writing into
    the same parent) are left alone. Each removal is a warning line.
    """
    removed = []
    prefixes = tuple(
        prefix for name in names for prefix in (f".{name}.tmp-", f".{name}.old-", f".failed-{name}-")
    )
    if parent.is_dir() and prefixes:
        for child in parent.iterdir():
            if not child.name.startswith(prefixes):
                continue
            if child.is_dir():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
            log.warning("removed %s: left over by an earlier run that stopped before it finished", child)
            removed.append(child)
    return removed


def replace_dir(source: Path, target: Path) -> None:
    """Move a finished ``source`` directory to ``target``, replacing any previous ``target``."""
    old = None
    if target.exists():
        old = _sibling(target, "old")
        target.rename(old)
    source.rename(target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def atomic_dir(target: Path, *, overwrite: bool = True) -> Iterator[Path]:
    """Yield a temporary sibling of ``target``; on success it replaces ``target``, on error it is removed.

    A killed process leaves only a hidden ``.NAME.tmp-*`` directory, never a half-written ``target``.

    Raises:
        OutputExistsError: ``target`` exists (and is not empty) and ``overwrite`` is False.
    """
    target = Path(target)
    if not overwrite:
        refuse_nonempty(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _sibling(target, "tmp")
    tmp.mkdir()
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    replace_dir(tmp, target)


def not_a_directory(path: Path) -> str:
    """Why ``path`` is no directory, for a message: ``a file, not a directory`` or ``no such directory``."""
    return "a file, not a directory" if path.exists() else "no such directory"


def refuse_nonempty(target: Path) -> None:
    """Refuse an output directory that already holds something (the commands' rule without --overwrite).

    Raises:
        OutputExistsError: ``target`` exists and is not empty.
    """
    if target.exists() and any(target.iterdir()):
        raise OutputExistsError(
            f"{target} already exists and is not empty; choose another --out or pass --overwrite"
        )


def link_or_copy(source: Path, target: Path) -> None:
    """Hard-link ``source`` to ``target`` (no copy of large weights), else copy it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (temp file + rename)."""
    tmp = path.with_name(f".{path.name}.tmp-{uuid.uuid4().hex[:8]}")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_json(path: Path) -> Any | None:
    """Read a JSON file, or None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_manifest(stage_dir: Path) -> dict[str, Any] | None:
    """The manifest of a finished stage directory (``status: complete``), or None."""
    manifest = read_json(stage_dir / MANIFEST)
    if isinstance(manifest, dict) and manifest.get("status") == "complete":
        return manifest
    return None


def hash_json(data: Any) -> str:
    """Stable sha256 of JSON-serialisable data."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


DIGESTS = "fingerprints.sqlite"
"""The file digest cache, under the cache root (:func:`skadapt.paths.cache_path`)."""
DIGEST_ROWS = 200_000
"""Above this many rows the cache forgets files that no longer exist."""
DIGEST_TIMEOUT_S = 30.0
"""How long a process waits for another's write to the cache before it goes without."""
RACY_S = 2.0
"""A file modified less than this long before it is read could change again within the same mtime tick
(git's "racy" files; 2 s: the coarsest file system clocks): its digest is not kept."""
"""How long a process waits for another's write to the cache before it goes without."""
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS digests "
    "(path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, inode INTEGER, digest TEXT NOT NULL)"
)


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def file_digests(files: list[Path]) -> list[str]:
    """sha256 of each file's bytes, read only when its state is not the one a digest was kept for.

    The digests are kept in ``$SKADAPT_CACHE/fingerprints.sqlite`` by real path with the file's size,
    mtime and inode (DVC's rule): a copy, a clone or a restored cache is read once, then trusted while
    those are unchanged; a file modified in the last :data:`RACY_S` seconds (or in the future) is read
    every time. What the cache cannot see: bytes rewritten in place at the same size whose mtime is then
    set back (a replaced file has a new inode and is read again). Several processes may share the
    file (sqlite, WAL); a locked or unwritable cache is passed over and a damaged one replaced: the digests
    are then read from the files, never an error.
    """
    path = cache_path(DIGESTS)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # the cache root is a file, or read-only
        log.debug("file digests not cached in %s: %s", path, error)
        return [file_sha256(file) for file in files]
    for _attempt in range(2):
        try:
            return _cached_digests(path, files)
        except sqlite3.OperationalError as error:  # locked too long, read-only, not openable
            log.debug("file digests not cached in %s: %s", path, error)
            break
        except sqlite3.DatabaseError as error:  # not a database: replaced by an empty one
            log.warning("the fingerprint cache %s is damaged (%s); it is made again", path, error)
            for name in (path, path.with_name(f"{path.name}-wal"), path.with_name(f"{path.name}-shm")):
                name.unlink(missing_ok=True)
    return [file_sha256(file) for file in files]


def _cached_digests(path: Path, files: list[Path]) -> list[str]:
    """:func:`file_digests` through the cache at ``path`` (sqlite errors propagate)."""
    with contextlib.closing(sqlite3.connect(path, timeout=DIGEST_TIMEOUT_S)) as db:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(_SCHEMA)
        digests, fresh = [], []
        settled = time.time_ns() - int(RACY_S * 1e9)  # older files' next change moves their mtime
        for file in files:
            real = os.path.realpath(file)
            stat = os.stat(real)  # before reading: a file changed while read is read again next time
            state = (stat.st_size, stat.st_mtime_ns, stat.st_ino)
            row = db.execute("SELECT size, mtime_ns, inode, digest FROM digests WHERE path = ?", (real,))
            found = row.fetchone()
            if found is not None and tuple(found[:3]) == state:
                digests.append(found[3])
                continue
            digests.append(file_sha256(Path(real)))
            if stat.st_mtime_ns < settled:
                fresh.append((real, *state, digests[-1]))
        if fresh:
            try:
                _keep(db, fresh)
            except sqlite3.OperationalError as error:  # locked too long: the digests are still right
                log.debug("file digests not kept in %s: %s", path, error)
        return digests


def _keep(db: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Store digest rows in one transaction; above :data:`DIGEST_ROWS` forget files that are gone."""
    with db:
        db.executemany("INSERT OR REPLACE INTO digests VALUES (?, ?, ?, ?, ?)", rows)
        if db.execute("SELECT COUNT(*) FROM digests").fetchone()[0] > DIGEST_ROWS:
            gone = [
                (p,) for (p,) in db.execute("SELECT path FROM digests").fetchall() if not os.path.exists(p)
            ]
            db.executemany("DELETE FROM digests WHERE path = ?", gone)


def path_fingerprint(path: Path) -> str:
    """Content fingerprint of a file or directory tree: its files' names relative to ``path`` and the
    sha256 of their bytes (:func:`file_digests`). The same bytes elsewhere or at other times give the
    same fingerprint; a renamed or changed file inside a directory gives another."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    digests = file_digests(files)
    return hash_json([[f.relative_to(path).as_posix(), d] for f, d in zip(files, digests, strict=True)])


GLOB_CHARS = frozenset("*?[")


def glob_matches(pattern: str) -> list[Path]:
    """Files a glob pattern matches (sorted), or [] for a string without glob characters."""
    if not GLOB_CHARS & set(pattern):
        return []
    return sorted(Path(p) for p in glob.glob(pattern, recursive=True) if Path(p).is_file())


def input_fingerprint(spec: str) -> str | None:
    """What a stage key holds for a local file, directory or glob (its matched files): a sha256 over the
    files' contents and their names inside a directory (:func:`path_fingerprint`), the same for a copy
    elsewhere or with other mtimes. Each file is read once per change (:func:`file_digests`).

    Returns:
        The fingerprint, or None when ``spec`` names no local file and matches none.
    """
    path = Path(spec)
    if path.exists():
        return path_fingerprint(path)
    matches = glob_matches(spec)
    return hash_json([[str(m), path_fingerprint(m)] for m in matches]) if matches else None


def local_paths_in(data: Any) -> list[str]:
    """Strings inside nested config data that name existing local files, directories or matching globs."""
    found: list[str] = []
    if isinstance(data, dict):
        for value in data.values():
            found.extend(local_paths_in(value))
    elif isinstance(data, list | tuple):
        for value in data:
            found.extend(local_paths_in(value))
    elif isinstance(data, str) and data and len(data) < 4096 and "\n" not in data:
        with contextlib.suppress(OSError):
            if Path(data).exists() or glob_matches(data):
                found.append(data)
    return found


def recorded_path(ref: str, anchor: Path) -> str:
    """How a run records a model reference or local path, so that the run can move: relative to ``anchor``
    (the run directory) when inside it (posix), absolute when it is another local path, else unchanged (a
    Hub id)."""
    if not ref or not Path(ref).exists():
        return ref
    given, real = Path(os.path.abspath(ref)), Path(ref).resolve()
    for path, base in ((given, Path(os.path.abspath(anchor))), (real, Path(anchor).resolve())):
        if path.is_relative_to(base):
            return path.relative_to(base).as_posix()
    return os.path.abspath(ref)


def resolved_path(ref: str, anchor: Path) -> str:
    """A reference a run recorded (:func:`recorded_path`) as a usable path: a relative one found under
    ``anchor`` (the run directory) is joined to it; anything else is returned as recorded (an absolute path,
    a Hub id, or a path relative to the working directory, as older runs recorded them)."""
    if not ref or Path(ref).is_absolute():
        return ref
    anchored = Path(anchor) / ref
    return str(anchored) if anchored.exists() else ref


def library_versions() -> dict[str, str]:
    """Versions of Python and the libraries that shape artifacts."""
    versions = {"python": platform.python_version()}
    for name in TRACKED_LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def list_outputs(directory: Path) -> list[dict[str, Any]]:
    """Files of an artifact directory with their sizes."""
    return [
        {"path": str(p.relative_to(directory)), "bytes": p.stat().st_size}
        for p in sorted(directory.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    ]
