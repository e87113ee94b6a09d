"""Stopping on a signal: Ctrl-C (SIGINT) and SIGTERM (``timeout``, Slurm, ``docker stop``) end a command the
same way: it says where it stopped (on the console and in ``run.log``), keeps what it finished and exits
128 + the signal's number (130, 143).

The CLI runs every command inside :func:`on_signals`, the one owner of both signals. The first signal is
recorded and raised where the main thread is, as :class:`Stopped` (a ``KeyboardInterrupt``: code that
cleans up on Ctrl-C cleans up on it, and ``except Exception`` does not catch it). A library can swallow it
-- a finaliser, where Python can only print "Exception ignored", or an ``except BaseException`` -- so the
pipeline also calls :func:`check` between stages and after each stage returns: the run stops there at the
latest. A second signal while stopping exits at once.

The ``skadapt`` program itself (not a caller running a command in its own process) ends with
:func:`end_of_process`: a signal while the interpreter exits ends it at once, and a stopped process exits
within :data:`GRACE_S` even when a library thread that the stop interrupted mid-way would hold the exit.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any, NoReturn

from skadapt.errors import LOG_ONLY

log = logging.getLogger("skadapt")

SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a command."""
GRACE_S = 10.0
"""How long a stopped process may take to exit before it exits at once (measured: a thread pool's worker
started just before the stop, never told to end, held the interpreter's exit for good)."""


class Stopped(KeyboardInterrupt):
    """A stop signal (``signum``) arrived; the command ends with :func:`exit_code`. Not an error: no
    ``SkadaptError``, so that no ``except Exception`` catches it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_name(stop: KeyboardInterrupt) -> str:
    """``SIGINT`` or ``SIGTERM``: the signal behind ``stop`` (a plain ``KeyboardInterrupt`` is Ctrl-C's)."""
    return signal.Signals(getattr(stop, "signum", signal.SIGINT)).name


def exit_code(stop: KeyboardInterrupt) -> int:
    """128 + the signal's number, as a shell reports a process the signal ended: 130 SIGINT, 143 SIGTERM."""
    return 128 + int(getattr(stop, "signum", signal.SIGINT))


def say_where(stop: KeyboardInterrupt, line: str) -> None:
    """Attach where the run stopped and what it kept (read by :func:`where`; a traceback shows it too)."""
    stop.add_note(line)


def where(stop: KeyboardInterrupt) -> str | None:
    """The line :func:`say_where` attached, if any."""
    notes = getattr(stop, "__notes__", None)
    return notes[-1] if notes else None


class _Command:
    """The running command's state: the first stop signal (None until one arrives), the process that owns
    the handlers (a forked child inherits them, not the command) and what they replaced."""

    signum: int | None = None
    pid: int | None = None
    previous: dict[int, Any] = {}  # noqa: RUF012  (state of the one running command)
    unraisable_hook: Any = None
    stopped: int | None = None  # the signal that stopped the process's last command


def requested() -> int | None:
    """The stop signal received while the command runs, if any."""
    return _Command.signum


def check() -> None:
    """Raise :class:`Stopped` if a stop signal arrived: where it was first raised, a library may have
    swallowed it."""
    if _Command.signum is not None:
        raise Stopped(_Command.signum)


def _again(signum: int) -> str:
    return "press Ctrl-C" if signum == signal.SIGINT else f"send {signal.Signals(signum).name}"


def _exit_now(signum: int) -> NoReturn:
    """A second signal while stopping: say so (console, run.log) and exit at once."""
    message = (
        f"interrupted: {signal.Signals(signum).name} again while stopping, exiting at once; finished stages "
        "are kept: run the same command again to resume"
    )
    log.warning(message, extra=LOG_ONLY)
    os.write(2, f"\n{message}\n".encode())
    os._exit(128 + signum)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if os.getpid() != _Command.pid:  # a forked child (a data loader's worker): the signal does what it did
        signal.signal(signum, _Command.previous[signum])
        signal.raise_signal(signum)
        return
    if _Command.signum is not None:
        _exit_now(signum)
    _Command.signum = signum
    raise Stopped(signum)


def _on_unraisable(unraisable: Any) -> None:
    """A finaliser took the stop (Python cannot raise it from there): say so instead of "Exception
    ignored"; the pipeline raises it again when the stage ends."""
    stop = unraisable.exc_value
    if not isinstance(stop, Stopped):
        _Command.unraisable_hook(unraisable)
        return
    culprit = unraisable.object
    name = getattr(culprit, "__qualname__", None)
    culprit = f"{culprit.__module__}.{name}" if name else repr(culprit)
    message = (
        f"{signal.Signals(stop.signum).name} reached {culprit}, a finaliser, which cannot pass it on: the "
        f"run stops when its current stage ends; {_again(stop.signum)} again to stop at once"
    )
    log.warning(message, extra=LOG_ONLY)
    print(f"\n{message}", file=sys.stderr, flush=True)  # a line of its own, even after a progress bar


@contextlib.contextmanager
def on_signals() -> Iterator[None]:
    """Own SIGINT and SIGTERM while a command runs (see the module); the previous handlers come back after.
    Nothing outside the main thread (signals reach only it) or inside a running command (it owns them)."""
    if threading.current_thread() is not threading.main_thread() or _Command.pid is not None:
        yield
        return
    _Command.signum, _Command.pid = None, os.getpid()
    _Command.previous = {signum: signal.getsignal(signum) or signal.SIG_DFL for signum in SIGNALS}
    _Command.unraisable_hook = sys.unraisablehook
    for signum in SIGNALS:
        signal.signal(signum, _on_signal)
    sys.unraisablehook = _on_unraisable
    try:
        yield
    finally:
        for signum, handler in _Command.previous.items():
            signal.signal(signum, handler)
        sys.unraisablehook = _Command.unraisable_hook
        _Command.stopped = _Command.signum if _Command.signum is not None else _Command.stopped
        _Command.signum = _Command.pid = None


def _exit_at_once(signum: int, frame: FrameType | None) -> NoReturn:
    os.write(2, f"\ninterrupted by {signal.Signals(signum).name} while exiting\n".encode())
    os._exit(128 + signum)


def _exit_after_grace(code: int) -> None:
    time.sleep(GRACE_S)
    message = f"still exiting {GRACE_S:g} s after the stop (a thread holds the exit): exiting now"
    os.write(2, f"{message}\n".encode())
    os._exit(code)


def end_of_process() -> None:
    """The ``skadapt`` program's command has run and the interpreter exits: from now on a stop signal
    exits at once with its code; after a stop, a daemon thread ends the process with the stop's code if
    the exit takes longer than :data:`GRACE_S`."""
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in SIGNALS:
        signal.signal(signum, _exit_at_once)
    if _Command.stopped is not None:
        code = 128 + _Command.stopped
        threading.Thread(target=_exit_after_grace, args=(code,), name="skadapt-exit", daemon=True).start()
