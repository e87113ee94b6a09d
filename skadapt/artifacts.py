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
import uuid
from collections.abc import Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from skadapt.errors import SkadaptError

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


def path_fingerprint(path: Path) -> str:
    """Cheap fingerprint of a file or directory tree: relative names, sizes and mtimes."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    entries = []
    for file in files:
        stat = file.stat()
        entries.append(
            [str(file.relative_to(path)) if file != path else file.name, stat.st_size, stat.st_mtime_ns]
        )
    return hash_json(entries)


GLOB_CHARS = frozenset("*?[")


def glob_matches(pattern: str) -> list[Path]:
    """Files a glob pattern matches (sorted), or [] for a string without glob characters."""
    if not GLOB_CHARS & set(pattern):
        return []
    return sorted(Path(p) for p in glob.glob(pattern, recursive=True) if Path(p).is_file())


def input_fingerprint(spec: str) -> str | None:
    """Fingerprint of a local file, directory or glob's matched files (their contents' sizes and mtimes)."""
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
