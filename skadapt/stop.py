"""Stopping on a signal: Ctrl-C (SIGINT) and SIGTERM (``timeout``, Slurm, ``docker stop``) end a command the
same way: it says where it stopped (on the console and in ``run.log``), keeps what it finished and exits
128 + the signal's number (130, 143).

The CLI runs every command inside :func:`on_signals`, the one owner of both signals. The first signal is
recorded and raised where the main thread is, as :class:`Stopped` (a ``KeyboardInterrupt``: code that
cleans up on Ctrl-C cleans up on it, and ``except Exception`` does not catch it). A library can swallow it
-- a finaliser, where Python can only print "Exception ignored", or an ``except BaseException`` -- so the
pipeline also calls :func:`check` between stages and after each stage returns: the run stops there at the
latest. A second signal while stopping exits at once.

Python runs a signal's handler only once the main thread is back in Python code: a long call in C (a
tokenizer's batch, a collective waiting for a rank that is gone) holds it back. So a watchdog thread
learns of every signal from C (``signal.set_wakeup_fd``) and ends the process :func:`grace` seconds after
a stop signal if it is still there. The ``skadapt`` program itself (:func:`program`; not a caller running a
command in its own process) keeps the watchdog through the interpreter's exit, which a library thread the
stop cut short can hold for good, and exits at once on a signal while exiting.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any, NoReturn

from skadapt.errors import LOG_ONLY

log = logging.getLogger("skadapt")

SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a command."""
GRACE_S = 8.0
"""How long a stopped process may take to exit before the watchdog ends it (``docker stop`` kills after
10 s). Measured: rank 0 of a torchrun launch waited in a collective for a rank already gone; a thread
pool's worker started just before the stop, never told to end, held the interpreter's exit for good."""
GRACE_ENV = "SKADAPT_STOP_GRACE_S"
"""Seconds that replace :data:`GRACE_S` (e.g. more than its cleanup needs, less than a scheduler's wait
before it kills)."""


def grace() -> float:
    """``$SKADAPT_STOP_GRACE_S`` when it is a positive number of seconds, else :data:`GRACE_S`."""
    with contextlib.suppress(ValueError):
        seconds = float(os.environ.get(GRACE_ENV, ""))
        if seconds > 0:
            return seconds
    return GRACE_S


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
    program = False  # the process is the skadapt program (see program())


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


def _exit_now(signum: int, why: str) -> NoReturn:
    """Say why the process exits at once (console, run.log) and exit with the signal's code."""
    message = (
        f"interrupted by {signal.Signals(signum).name}: {why}, exiting at once; finished stages are kept: "
        "run the same command again to resume"
    )
    log.warning(message, extra=LOG_ONLY)
    os.write(2, f"\n{message}\n".encode())
    os._exit(128 + signum)


def _forked() -> None:
    """A child forked while a command runs (a data loader's worker) owns neither its signals nor its
    watchdog: a signal does in it what it did before (it would otherwise wake the parent's watchdog)."""
    if _Command.pid is not None:
        signal.set_wakeup_fd(-1)
        for signum, handler in _Command.previous.items():
            signal.signal(signum, handler)


os.register_at_fork(after_in_child=_forked)


def _on_signal(signum: int, frame: FrameType | None) -> None:
    if os.getpid() != _Command.pid:  # a child forked outside Python: the signal does what it did
        signal.signal(signum, _Command.previous[signum])
        signal.raise_signal(signum)
        return
    if _Command.signum is not None:
        _exit_now(signum, "again while stopping")
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


def _watch(wakeups: int, cancelled: threading.Event) -> None:
    """The watchdog (a daemon thread): the C signal handler writes each signal's number to ``wakeups``
    even while the main thread cannot run the Python one; :func:`grace` seconds after a stop signal,
    unless the command ended first (``cancelled``), the process exits with the signal's code."""
    stops: list[int] = []
    with open(wakeups, "rb", buffering=0) as pipe:  # open while counting: a second signal is written too
        while not stops:
            received = pipe.read(64)
            if not received:  # the command ended: its end closed the pipe
                return
            stops = [signum for signum in received if signum in SIGNALS]
        seconds = grace()
        if not cancelled.wait(seconds):
            _exit_now(stops[0], f"still running {seconds:g} s after it (held outside Python, or by a thread)")


@contextlib.contextmanager
def on_signals() -> Iterator[None]:
    """Own SIGINT and SIGTERM while a command runs (see the module); the previous handlers come back after,
    and the watchdog stands down (except in the skadapt program, where it guards the exit). Nothing outside
    the main thread (signals reach only it) or inside a running command (it owns them)."""
    if threading.current_thread() is not threading.main_thread() or _Command.pid is not None:
        yield
        return
    _Command.signum, _Command.pid = None, os.getpid()
    _Command.previous = {signum: signal.getsignal(signum) or signal.SIG_DFL for signum in SIGNALS}
    _Command.unraisable_hook = sys.unraisablehook
    wakeups, wakeup = os.pipe()
    os.set_blocking(wakeup, False)
    cancelled = threading.Event()
    threading.Thread(target=_watch, args=(wakeups, cancelled), name="skadapt-stop", daemon=True).start()
    previous_wakeup = signal.set_wakeup_fd(wakeup, warn_on_full_buffer=False)
    for signum in SIGNALS:
        signal.signal(signum, _on_signal)
    sys.unraisablehook = _on_unraisable
    try:
        yield
    finally:
        for signum, handler in _Command.previous.items():
            signal.signal(signum, handler)
        sys.unraisablehook = _Command.unraisable_hook
        signal.set_wakeup_fd(previous_wakeup)
        os.close(wakeup)
        if not _Command.program:
            cancelled.set()
        _Command.signum = _Command.pid = None


def _exit_at_once(signum: int, frame: FrameType | None) -> NoReturn:
    os.write(2, f"\ninterrupted by {signal.Signals(signum).name} while exiting\n".encode())
    os._exit(128 + signum)


@contextlib.contextmanager
def program() -> Iterator[None]:
    """The ``skadapt`` program runs its command (its console script, ``python -m skadapt``): a stopped
    command's watchdog keeps guarding the interpreter's exit, and a signal while exiting exits at once."""
    _Command.program = True
    try:
        yield
    finally:
        _Command.program = False
        if threading.current_thread() is threading.main_thread():
            for signum in SIGNALS:
                signal.signal(signum, _exit_at_once)
