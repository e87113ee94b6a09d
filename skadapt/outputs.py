"""The output directory a run writes: a directory it can write, apart from its inputs."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from skadapt.errors import SkadaptError, describe_error


class OutputPathError(SkadaptError):
    """An output directory that cannot be written (a file, under a file, read-only) or that is, lies inside
    or contains one of the run's own inputs."""


def writable_dir(path: Path, option: str, *, create: bool = True, replaced: bool = False) -> None:
    """Refuse an output directory this process cannot write, in one line naming it and ``option``: a file,
    a path under a file, or a directory where a test file cannot be written (read-only, no permission,
    full). The test is a real write (root writes where ``chmod`` says no: only trying tells).

    Args:
        path: The output directory.
        option: What chooses it (``output_dir``, ``--out``).
        create: Make the directory (and its parents) when missing; else (the preflight, which makes
            nothing) write the test file in its nearest existing ancestor.
        replaced: The directory is written by renaming a sibling into place (a stage command's ``--out``):
            its parent is made and tested.

    Raises:
        OutputPathError: It is not (or cannot be made) a writable directory.
    """
    path = Path(path)
    existing = next(p for p in (path, *path.absolute().parents) if p.exists())
    if not existing.is_dir():
        what = "is a file" if existing == path else f"cannot be made: {existing} is a file"
        raise OutputPathError(f"{option} {path} {what}, not a directory; point {option} elsewhere")
    target = path.parent if replaced else path
    probe = target if create else next(p for p in (target, *target.absolute().parents) if p.exists())
    try:
        if create:
            target.mkdir(parents=True, exist_ok=True)
        _write_test(probe)
    except OSError as error:
        explained = describe_error(error, output=target, output_option=option)
        raise OutputPathError(f"{option} {path} is not a writable directory: {explained}") from error


def _write_test(directory: Path) -> None:
    """Write and remove a test file in ``directory``; an OSError names the directory."""
    try:
        fd, name = tempfile.mkstemp(prefix=".skadapt-write-test-", dir=directory)
        try:
            os.write(fd, b"skadapt")
        finally:
            os.close(fd)
            os.unlink(name)
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(directory)) from error


def refuse_overlap(out: Path, inputs: Iterable[tuple[str, str]], option: str, what: str = "") -> None:
    """Refuse an output directory that is one of the run's inputs, lies inside one, or contains one.

    Args:
        out: The output directory (replaced when written).
        inputs: (what it is, path) of what the run reads (models, data files); those that are no local path
            (Hub ids, missing files) are skipped.
        option: What chooses ``out`` (``output_dir``, ``--out``).
        what: How the message names ``out`` (default: ``option`` and ``out``).

    Raises:
        OutputPathError: ``out`` overlaps an input.
    """
    target = Path(out).resolve()
    for name, ref in inputs:
        if not ref or not Path(ref).exists():
            continue
        source = Path(ref).resolve()
        if source == target:
            how, harm = "is", "writing it would replace"
        elif target.is_relative_to(source):
            how, harm = "lies inside", "writing it would change"
        elif source.is_relative_to(target):
            how, harm = "contains", "replacing it would delete"
        else:
            continue
        raise OutputPathError(
            f"{what or f'{option} {out}'} {how} its {name} {ref}: {harm} what the run reads; point {option} "
            "elsewhere"
        )
