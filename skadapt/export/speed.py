"""Encode throughput, load time and peak memory of models, each in one process of its own that loads once.

One process per model, so that its peak resident memory (the kernel's high-water mark ``VmHWM`` of the
process: the model, its runtime and the encoding) is its own, not the sum of everything loaded before it.
(``ru_maxrss`` would not do: Linux carries the parent's value into a forked child across ``exec``.) The
processes are forked from one fork server that has imported torch, sentence-transformers and onnxruntime
once: a process starts in milliseconds instead of repeating those imports (7-8 s of CPU each on a 2-core
machine), and the server, a fresh interpreter, carries nothing of the caller's memory. Each process runs
with the caller's environment and working directory of the moment. The processes load their models one at
a time (load time is timed alone), each warming up over the first batch and timing one untimed pass that
sets how often a pass repeats the texts (at least ``SKADAPT_SPEED_MIN_PASS_S``, default 2 s: a static model
encodes 1,000 texts in a tenth of a second). Then the models take turns: ``repeats`` rounds, in each every
model times one pass, so that a slow stretch of a shared machine falls on every model alike; each model's
fastest pass counts. The caller may stop the rounds early: when the figures already decide what they are
measured for (:func:`ratios_clear_of`), or at a time budget.
"""

from __future__ import annotations

import atexit
import importlib
import json
import math
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import IO, Any

from skadapt.export.onnx import ExportError

PRELOAD = ("torch", "sentence_transformers", "onnxruntime", "skadapt.tasks.backends")
"""What the fork server imports once, before it forks a process per model."""


def min_pass_seconds() -> float:
    """How long a timed pass lasts at least: ``SKADAPT_SPEED_MIN_PASS_S``, default 2 s (the test suite
    sets a tenth of a second: it checks how the rounds are run and recorded, not the figures)."""
    return float(os.environ.get("SKADAPT_SPEED_MIN_PASS_S") or 2.0)


def speed_budget_seconds() -> float:
    """How long the timed rounds of one measurement may last once the fewest are run:
    ``SKADAPT_SPEED_BUDGET_S``, default 60 s."""
    return float(os.environ.get("SKADAPT_SPEED_BUDGET_S") or 60.0)


class _ForkServer:
    """A fresh interpreter (``python -m skadapt.export.speed FD``) that imports :data:`PRELOAD` once and
    forks one measuring process per request, each with its end of a socket pair passed along.

    One per calling process, started on first use and kept (a later export forks from it at once); it ends
    when its control socket closes (this process ended) or :meth:`close`. Its stderr (a failed import) is a
    file whose last lines a failure names.
    """

    def __init__(self) -> None:
        # SOCK_SEQPACKET: each request is one message, read whole by the server's recv_fds
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.stderr: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (closed by close)
        command = [sys.executable, "-m", "skadapt.export.speed", str(theirs.fileno())]
        self.process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stderr=self.stderr, pass_fds=[theirs.fileno()]
        )
        theirs.close()
        atexit.register(self.close)

    def fork(self, settings: dict[str, Any]) -> Connection:
        """A new measuring process for ``settings`` (see :func:`_serve`), and the connection to it.

        Raises:
            ExportError: The server has ended (its stderr's last lines are in the message).
        """
        ours, theirs = socket.socketpair()
        try:
            socket.send_fds(self.control, [json.dumps(settings).encode()], [theirs.fileno()])
        except OSError:
            ours.close()
            raise self.failure() from None
        finally:
            theirs.close()
        return Connection(ours.detach())

    def failure(self) -> ExportError:
        """The error of a server that ended, with its stderr's last lines."""
        self.process.wait()
        self.stderr.seek(0)
        tail = "\n".join(self.stderr.read().strip().splitlines()[-5:])
        code = self.process.returncode
        return ExportError(f"the speed measurement's fork server ended (exit code {code}):\n{tail}")

    def close(self) -> None:
        """End the server."""
        self.control.close()
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.stderr.close()


_SERVER: _ForkServer | None = None


def _server() -> _ForkServer:
    """This process's fork server, started (again) when there is none running."""
    global _SERVER
    if _SERVER is None or _SERVER.process.poll() is not None:
        if _SERVER is not None:
            _SERVER.close()
        _SERVER = _ForkServer()
    return _SERVER


class _Worker:
    """One measuring process (see the module doc) and its commands."""

    def __init__(self, ref: str, texts_file: Path, batch_size: int, threads: int) -> None:
        self.ref = ref
        env = {**os.environ, "OMP_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "false"}
        settings = {
            "ref": ref,
            "texts_file": str(texts_file),
            "batch_size": batch_size,
            "threads": threads,
            "min_pass": min_pass_seconds(),
            "env": env,
            "cwd": os.getcwd(),
        }
        self.connection = _server().fork(settings)

    def ask(self, command: str) -> dict[str, Any]:
        """Send ``command`` and read its answer.

        Raises:
            ExportError: The process failed (its error's last lines are in the message) or ended without
                answering.
        """
        try:
            self.connection.send(command)
            answer: dict[str, Any] = self.connection.recv()
        except (EOFError, OSError):
            raise ExportError(
                f"speed measurement of {self.ref} failed: its process ended without answering {command!r}"
            ) from None
        if "error" in answer:
            raise ExportError(f"speed measurement of {self.ref} failed:\n{answer['error']}")
        return answer

    def close(self) -> None:
        """End the process: it returns when its connection closes."""
        self.connection.close()


def measure_models(
    models: dict[str, str],
    texts_file: Path,
    batch_size: int,
    repeats: int,
    threads: int,
    *,
    min_repeats: int | None = None,
    budget_s: float | None = None,
    decided: Callable[[dict[str, list[float]]], bool] | None = None,
    stopped: dict[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Measure every model (label -> reference) in one process of its own (see the module doc).

    ``repeats`` rounds at most; after ``min_repeats`` (default: all of them) the rounds stop as soon as
    ``decided`` (label -> the seconds of its passes so far) says the figures decide what they are for, or
    the timed rounds have lasted ``budget_s`` seconds. ``stopped``, when given, receives ``rounds`` (run),
    ``max_rounds``, ``budget_s``, ``seconds`` (of the timed rounds) and ``why`` (``decided``, ``budget`` or
    ``rounds``).

    Returns:
        Label -> ``{texts_per_s, seconds, passes, rounds, load_s, peak_rss_mb, texts, threads, pid}``:
        texts/s and seconds of the fastest pass, ``passes`` the seconds of each round's pass, ``rounds`` the
        repetitions of the texts in a pass, ``pid`` the measuring process.

    Raises:
        ExportError: A measuring process failed.
    """
    texts = len(json.loads(texts_file.read_text(encoding="utf-8")))
    least = repeats if min_repeats is None else max(1, min(min_repeats, repeats))
    workers: dict[str, _Worker] = {}
    why = "rounds"
    try:
        for label, ref in models.items():
            workers[label] = _Worker(ref, texts_file, batch_size, threads)
        loaded = {label: worker.ask("load") for label, worker in workers.items()}
        passes: dict[str, list[float]] = {label: [] for label in workers}
        start = time.perf_counter()
        for done in range(1, repeats + 1):
            for label, worker in workers.items():
                passes[label].append(worker.ask("pass")["seconds"])
            if done >= least and done < repeats:
                if decided is not None and decided(passes):
                    why = "decided"
                    break
                if budget_s is not None and time.perf_counter() - start >= budget_s:
                    why = "budget"
                    break
        ended = {label: worker.ask("end") for label, worker in workers.items()}
        if stopped is not None:
            stopped.update(
                rounds=done,
                max_rounds=repeats,
                budget_s=budget_s,
                seconds=round(time.perf_counter() - start, 1),
                why=why,
            )
    finally:
        for worker in workers.values():
            worker.close()
    rows = {}
    for label in workers:
        rounds = loaded[label]["rounds"]  # repetitions of the texts in one pass
        best = min(passes[label])
        rows[label] = {
            "texts_per_s": round(rounds * texts / best, 2),
            "seconds": round(best / rounds, 4),
            "passes": [round(p / rounds, 4) for p in passes[label]],
            "rounds": rounds,
            "load_s": loaded[label]["load_s"],
            "peak_rss_mb": ended[label]["peak_rss_mb"],
            "texts": texts,
            "threads": threads,
            "pid": ended[label]["pid"],
        }
    return rows


def measure(ref: str, texts_file: Path, batch_size: int, repeats: int, threads: int) -> dict[str, Any]:
    """Measure one model in a process of its own (:func:`measure_models`).

    Raises:
        ExportError: The measuring process failed.
    """
    return measure_models({ref: ref}, texts_file, batch_size, repeats, threads)[ref]


def ratios_clear_of(passes: list[float], reference: list[float], threshold: float = 1.0) -> bool:
    """Whether a model's speed ratio to ``reference`` lies on one side of ``threshold`` in every round (at
    least two): its interval over the rounds, min to max, excludes it."""
    ratios = [ref / own for own, ref in zip(passes, reference, strict=True)]
    return len(ratios) >= 2 and (min(ratios) > threshold or max(ratios) < threshold)


def round_ratios(passes: list[float], reference: list[float]) -> dict[str, float | int]:
    """The spread of a model's speed ratio to ``reference`` over the rounds (round ``i`` of each, timed
    back to back; per-text seconds of each pass): ``{min, median, max, rounds}`` of the ratio of texts/s."""
    ratios = [ref / own for own, ref in zip(passes, reference, strict=True)]
    return {
        "min": round(min(ratios), 2),
        "median": round(statistics.median(ratios), 2),
        "max": round(max(ratios), 2),
        "rounds": len(ratios),
    }


def _peak_rss_mb() -> float:
    """This process's peak resident memory in MB: ``VmHWM`` where /proc has it, else ``ru_maxrss``."""
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _serve(connection: Connection, settings: dict[str, Any]) -> None:
    """A measuring process: answer ``load``, ``pass`` and ``end`` (see the module doc) until its connection
    closes; an error is answered with its traceback's last lines."""
    os.environ.clear()
    os.environ.update(settings["env"])
    os.chdir(settings["cwd"])
    try:
        import torch

        from skadapt.tasks.backends import load_sentence_model

        torch.set_num_threads(settings["threads"])
        ref, batch_size = settings["ref"], settings["batch_size"]
        texts = json.loads(Path(settings["texts_file"]).read_text(encoding="utf-8"))
        model: Any = None
        rounds = 1
        while True:
            command = connection.recv()
            if command == "load":
                start = time.perf_counter()
                model = load_sentence_model(ref)
                load_s = time.perf_counter() - start
                model.encode(texts[:batch_size], batch_size=batch_size)
                start = time.perf_counter()
                model.encode(texts, batch_size=batch_size)
                rounds = max(1, math.ceil(settings["min_pass"] / (time.perf_counter() - start)))
                connection.send({"load_s": round(load_s, 3), "rounds": rounds})
            elif command == "pass":
                start = time.perf_counter()
                for _ in range(rounds):
                    model.encode(texts, batch_size=batch_size)
                connection.send({"seconds": time.perf_counter() - start})
            elif command == "end":
                connection.send({"peak_rss_mb": _peak_rss_mb(), "pid": os.getpid()})
    except EOFError:
        return  # the caller closed the connection: the measurement is over
    except Exception:  # every failure is answered, named, to the caller
        tail = "\n".join(traceback.format_exc().strip().splitlines()[-5:])
        connection.send({"error": tail})


def _fork_server(fd: int) -> None:
    """The fork server's loop (``python -m skadapt.export.speed FD``): import :data:`PRELOAD` once, then
    fork a measuring process per request on the control socket ``fd``; end when it closes."""
    for module in PRELOAD:
        importlib.import_module(module)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the children
    control = socket.socket(fileno=fd)
    while True:
        message, fds, _, _ = socket.recv_fds(control, 1 << 20, 1)
        if not message:
            return
        if os.fork() == 0:
            code = 0
            try:
                control.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                with Connection(fds[0]) as connection:
                    _serve(connection, json.loads(message))
            except BaseException:  # a child never returns into the server's loop
                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)
        os.close(fds[0])


if __name__ == "__main__":
    _fork_server(int(sys.argv[1]))
