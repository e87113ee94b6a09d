"""Encode throughput, load time and peak memory of models, each in one process of its own that loads once.

One Python process per model, so that its peak resident memory (the kernel's high-water mark ``VmHWM`` of
the process: the model, its runtime and the encoding) is its own, not the sum of everything loaded before
it. (``ru_maxrss`` would not do: Linux carries the parent's value into a forked child across ``exec``.)
The processes start together (their imports overlap), then load their models one at a time (load time is
timed alone), each warming up over the first batch and timing one untimed pass that sets how often a pass
repeats the texts (at least ``MIN_PASS_SECONDS``: a static model encodes 1,000 texts in a tenth of a
second). Then the models take turns: ``repeats`` rounds, in each every model times one pass, so that a slow
stretch of a shared machine falls on every model alike; each model's fastest pass counts.

Run as ``python -m skadapt.export.speed REF TEXTS.json BATCH``: a worker that answers the commands
``load``, ``pass`` and ``end`` on stdin with one JSON line each (prefixed ``speed: ``) on stdout.
"""

from __future__ import annotations

import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from skadapt.export.onnx import ExportError

MIN_PASS_SECONDS = float(os.environ.get("SKADAPT_SPEED_MIN_PASS_S") or 2.0)
"""A timed pass repeats the texts until it takes this long (SKADAPT_SPEED_MIN_PASS_S: the test suite sets a
tenth of a second, since it checks how the rounds are run and recorded, not the figures)."""
PREFIX = "speed: "


class _Worker:
    """One measuring process (see the module doc) and its commands."""

    def __init__(self, ref: str, texts_file: Path, batch_size: int, threads: int) -> None:
        env = {**os.environ, "OMP_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "false"}
        self.ref = ref
        self.stderr: IO[str] = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (closed by close)
        command = [sys.executable, "-m", "skadapt.export.speed", ref, str(texts_file), str(batch_size)]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True, env=env
        )

    def ask(self, command: str) -> dict[str, Any]:
        """Send ``command`` (``""``: none, wait for the ready line) and read its answer.

        Raises:
            ExportError: The process ended without answering (its stderr's last lines are in the message).
        """
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            if command:
                self.process.stdin.write(command + "\n")
                self.process.stdin.flush()
            for line in self.process.stdout:
                if line.startswith(PREFIX):
                    return json.loads(line[len(PREFIX) :])
        except (BrokenPipeError, OSError):
            pass
        self.process.wait()
        self.stderr.seek(0)
        tail = "\n".join(self.stderr.read().strip().splitlines()[-5:])
        raise ExportError(f"speed measurement of {self.ref} failed:\n{tail}")

    def close(self) -> None:
        """End the process (if it still runs) and drop its stderr."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.stderr.close()


def measure_models(
    models: dict[str, str], texts_file: Path, batch_size: int, repeats: int, threads: int
) -> dict[str, dict[str, Any]]:
    """Measure every model (label -> reference) in one process of its own (see the module doc).

    Returns:
        Label -> ``{texts_per_s, seconds, passes, rounds, load_s, peak_rss_mb, texts, threads}``: texts/s
        and seconds of the fastest pass, ``passes`` the seconds of each round's pass, ``rounds`` the
        repetitions of the texts in a pass.

    Raises:
        ExportError: A measuring process failed.
    """
    texts = len(json.loads(texts_file.read_text(encoding="utf-8")))
    workers = {label: _Worker(ref, texts_file, batch_size, threads) for label, ref in models.items()}
    try:
        for worker in workers.values():
            worker.ask("")  # imported
        loaded = {label: worker.ask("load") for label, worker in workers.items()}
        passes: dict[str, list[float]] = {label: [] for label in workers}
        for _ in range(repeats):
            for label, worker in workers.items():
                passes[label].append(worker.ask("pass")["seconds"])
        ended = {label: worker.ask("end") for label, worker in workers.items()}
    finally:
        for worker in workers.values():
            worker.close()
    rows = {}
    for label in workers:
        rounds = loaded[label]["rounds"]
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
        }
    return rows


def measure(ref: str, texts_file: Path, batch_size: int, repeats: int, threads: int) -> dict[str, Any]:
    """Measure one model in a process of its own (:func:`measure_models`).

    Raises:
        ExportError: The measuring process failed.
    """
    return measure_models({ref: ref}, texts_file, batch_size, repeats, threads)[ref]


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


def _say(answer: dict[str, Any]) -> None:
    print(PREFIX + json.dumps(answer), flush=True)


def _serve(ref: str, texts_file: Path, batch_size: int) -> None:
    """The worker: answer ``load``, ``pass`` and ``end`` (see the module doc)."""
    import torch

    from skadapt.tasks.backends import load_sentence_model

    threads = int(os.environ.get("OMP_NUM_THREADS") or torch.get_num_threads())
    torch.set_num_threads(threads)
    texts = json.loads(texts_file.read_text(encoding="utf-8"))
    model: Any = None
    rounds = 1
    _say({"ready": True})
    for line in sys.stdin:
        command = line.strip()
        if command == "load":
            start = time.perf_counter()
            model = load_sentence_model(ref)
            load_s = time.perf_counter() - start
            model.encode(texts[:batch_size], batch_size=batch_size)
            start = time.perf_counter()
            model.encode(texts, batch_size=batch_size)
            rounds = max(1, math.ceil(MIN_PASS_SECONDS / (time.perf_counter() - start)))
            _say({"load_s": round(load_s, 3), "rounds": rounds})
        elif command == "pass":
            start = time.perf_counter()
            for _ in range(rounds):
                model.encode(texts, batch_size=batch_size)
            _say({"seconds": time.perf_counter() - start})
        elif command == "end":
            _say({"peak_rss_mb": _peak_rss_mb()})
            return


if __name__ == "__main__":
    ref_arg, file_arg, batch_arg = sys.argv[1:4]
    _serve(ref_arg, Path(file_arg), int(batch_arg))
