"""The output directory a run owns: one run at a time, a directory it can write, apart from its inputs.

A recipe run holds ``<output_dir>/.skadapt.lock`` while it runs, a stage command ``.<out>.lock`` beside its
``--out`` (whose directory is replaced when it is written): a second run on the same directory is refused at
once, naming the holder, whose pid, host, start and command are in ``<lock>.json`` beside the lock. The lock
is the kernel's (``flock``, through :mod:`filelock`): a run killed without cleaning up holds nothing, and
the next run takes its directory over and says so. Read-only commands (``--check``, ``--plan``) take none.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import socket
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from skadapt import artifacts
from skadapt.errors import SkadaptError, describe_error

log = logging.getLogger("skadapt")

RUN_LOCK = ".skadapt.lock"
"""A recipe run's lock, in its run directory."""
HOLDER_WAIT_S = 1.0
"""How long a refused run waits for the holder's details (written just after it took the lock)."""


class OutputPathError(SkadaptError):
    """An output directory that cannot be written (a file, under a file, read-only) or that is, lies inside
    or contains one of the run's own inputs."""


class DirectoryInUseError(SkadaptError):
    """Another run holds the output directory's lock."""


def out_lock(out_dir: Path) -> Path:
    """The lock of a stage command's ``--out``: beside it, since ``out_dir`` itself is replaced."""
    return out_dir.parent / f".{out_dir.name}.lock"


def _holder_file(lock: Path) -> Path:
    return lock.with_name(f"{lock.name}.json")


def _command() -> str:
    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    program = "skadapt" if program in ("skadapt", "__main__.py") else program
    return shlex.join([program, *sys.argv[1:]])


def _read_holder(path: Path) -> dict[str, Any] | None:
    holder = artifacts.read_json(path)
    return holder if isinstance(holder, dict) and isinstance(holder.get("pid"), int) else None


def _alive(holder: dict[str, Any]) -> bool:
    """Whether the holder's pid runs (on another host: assumed)."""
    if holder.get("host") != socket.gethostname():
        return True
    try:
        os.kill(holder["pid"], 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def _who(holder: dict[str, Any]) -> str:
    started, command = holder.get("started"), holder.get("command")
    return f"pid {holder['pid']} on {holder.get('host')}, started {started}: {command}"


def _in_use(lock: Path, directory: Path, option: str) -> str:
    """The refusal: who holds ``lock`` (waiting briefly for a holder that has just taken it to say so)."""
    deadline = time.monotonic() + HOLDER_WAIT_S
    holder = _read_holder(_holder_file(lock))
    while (holder is None or not _alive(holder)) and time.monotonic() < deadline:
        time.sleep(0.05)
        holder = _read_holder(_holder_file(lock))
    who = f"({_who(holder)})" if holder is not None else f"(its details in {_holder_file(lock)} are missing)"
    return (
        f"{option} {directory} is in use by another skadapt run {who}; wait for it to finish or point "
        f"{option} elsewhere"
    )


@contextlib.contextmanager
def owned(lock: Path, directory: Path, option: str) -> Iterator[None]:
    """Hold ``lock``, the lock of the output ``directory`` (chosen by ``option``: ``output_dir``,
    ``--out``), while the block runs; a lock left by a run that ended without releasing it is taken over
    with a warning naming that run. The lock and its details are removed on exit.

    Raises:
        DirectoryInUseError: Another process holds it (the message names its pid, host, start, command).
    """
    from filelock import FileLock, Timeout

    held = FileLock(str(lock), timeout=0)
    try:
        held.acquire()
    except Timeout:
        raise DirectoryInUseError(_in_use(lock, directory, option)) from None
    holder = _holder_file(lock)
    try:
        left = _read_holder(holder)
        if left is not None:
            log.warning(
                "%s %s: taking over the lock of a run that is no longer running (%s)",
                option,
                directory,
                _who(left),
            )
        started = datetime.now().astimezone().isoformat(timespec="seconds")
        mine = {"pid": os.getpid(), "host": socket.gethostname(), "started": started, "command": _command()}
        artifacts.write_json(holder, mine)
        yield
    finally:
        with contextlib.suppress(OSError):  # e.g. a full disk: the run's own error matters more
            holder.unlink(missing_ok=True)
            lock.unlink(missing_ok=True)  # while held: a run that opened it finds a removed file, not a lock
        held.release()


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
