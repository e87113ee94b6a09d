"""Encode throughput, load time and peak memory of a model reference, each measured in its own process.

One fresh Python process per model, so that its peak resident memory (the kernel's high-water mark
``VmHWM`` of the process: the model, its runtime and the encoding) is its own, not the sum of everything
loaded before it. (``ru_maxrss`` would not do: Linux carries the parent's value into a forked child
across ``exec``.) Every process encodes
the same texts with the same batch size and thread count: a warm-up over the first batch and one untimed
pass over all texts, then ``repeats`` timed passes; the fastest is reported (the one least disturbed by
other work on the machine). A pass encodes the texts as many times as it takes to last at least
``MIN_PASS_SECONDS`` (a static model encodes 1,000 texts in a tenth of a second: too short to time).

Run as ``python -m skadapt.export.speed REF TEXTS.json BATCH REPEATS``: prints one JSON line.
"""

from __future__ import annotations

import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from skadapt.export.onnx import ExportError

MIN_PASS_SECONDS = 2.0


def measure(ref: str, texts_file: Path, batch_size: int, repeats: int, threads: int) -> dict[str, Any]:
    """Measure ``ref`` in a fresh process (see the module doc): ``{texts_per_s, seconds, load_s,
    peak_rss_mb, texts, threads}``.

    Raises:
        ExportError: The measuring process failed (its stderr's last lines are in the message).
    """
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "TOKENIZERS_PARALLELISM": "false"}
    command = [
        sys.executable,
        "-m",
        "skadapt.export.speed",
        ref,
        str(texts_file),
        str(batch_size),
        str(repeats),
    ]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise ExportError(f"speed measurement of {ref} failed:\n{tail}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def round_ratios(runs: list[dict[str, Any]], reference: list[dict[str, Any]]) -> dict[str, float | int]:
    """The spread of a model's speed ratio to ``reference`` over the rounds (round ``i`` of each, timed
    back to back): ``{min, median, max, rounds}`` of texts/s over the reference's texts/s."""
    ratios = [run["texts_per_s"] / ref["texts_per_s"] for run, ref in zip(runs, reference, strict=True)]
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


def _run(ref: str, texts_file: Path, batch_size: int, repeats: int) -> dict[str, Any]:
    import torch

    from skadapt.tasks.backends import load_sentence_model

    threads = int(os.environ.get("OMP_NUM_THREADS") or torch.get_num_threads())
    torch.set_num_threads(threads)
    texts = json.loads(texts_file.read_text(encoding="utf-8"))
    start = time.perf_counter()
    model = load_sentence_model(ref)
    load_s = time.perf_counter() - start
    model.encode(texts[:batch_size], batch_size=batch_size)
    start = time.perf_counter()
    model.encode(texts, batch_size=batch_size)
    rounds = max(1, math.ceil(MIN_PASS_SECONDS / (time.perf_counter() - start)))
    passes = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(rounds):
            model.encode(texts, batch_size=batch_size)
        passes.append(time.perf_counter() - start)
    best = min(passes)
    return {
        "texts_per_s": round(rounds * len(texts) / best, 2),
        "seconds": round(best / rounds, 4),
        "passes": [round(p / rounds, 4) for p in passes],
        "rounds": rounds,
        "load_s": round(load_s, 3),
        "peak_rss_mb": _peak_rss_mb(),
        "texts": len(texts),
        "threads": threads,
    }


if __name__ == "__main__":
    ref_arg, file_arg, batch_arg, repeats_arg = sys.argv[1:5]
    print(json.dumps(_run(ref_arg, Path(file_arg), int(batch_arg), int(repeats_arg))))
