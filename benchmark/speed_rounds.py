"""The export's speed-round processes started two ways, the same work each: N models, each in a process of
its own that imports torch, sentence-transformers and onnxruntime, loads its model and encodes one text
(the timed passes that follow are the same either way, so they are left out: ``--texts`` adds them back).

- fork server (what the export does, :func:`skadapt.blocks.measure_speed`): one fresh interpreter imports
  the libraries once and forks a process per model (cold: the server started by this call; warm: a second
  call, as a later export in the same process).
- fresh processes (the reference, what the export did before): N interpreters started together, each
  importing the libraries itself.

    OMP_NUM_THREADS=1 .venv/bin/python benchmark/speed_rounds.py runs/demo_sk/finetune --models 7
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from skadapt.blocks import measure_speed

PASSAGES = Path(__file__).resolve().parents[1] / "data" / "demo_sk" / "train" / "qa.jsonl"
"""The texts: the demo's hand-written passages."""

FRESH = """
import json, sys
import torch, sentence_transformers, onnxruntime
from sentence_transformers import SentenceTransformer
torch.set_num_threads(1)
model = SentenceTransformer(sys.argv[1], device="cpu")
texts = json.load(open(sys.argv[2], encoding="utf-8"))
model.encode(texts, batch_size=32)
"""


def fresh_processes(model: str, texts: list[str], count: int) -> float:
    """Wall seconds until ``count`` fresh interpreters, started together, each imported, loaded and
    encoded the texts once."""
    with tempfile.TemporaryDirectory() as scratch:
        file = Path(scratch) / "texts.json"
        file.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
        start = time.perf_counter()
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        running = [
            subprocess.Popen([sys.executable, "-c", FRESH, model, str(file)], env=env) for _ in range(count)
        ]
        for process in running:
            if process.wait() != 0:
                raise SystemExit("a fresh process failed")
        return time.perf_counter() - start


def fork_server(model: str, texts: list[str], count: int) -> float:
    """Wall seconds of the export's measurement of ``count`` models, one round (passes of 0.1 s)."""
    os.environ["SKADAPT_SPEED_MIN_PASS_S"] = "0.1"
    start = time.perf_counter()
    measure_speed({str(i): model for i in range(count)}, texts, repeats=1, threads=1)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model", help="a sentence-transformers directory")
    parser.add_argument("--models", type=int, default=7, help="models measured (the demo's export: 7)")
    parser.add_argument("--texts", type=int, default=1, help="texts encoded per model")
    parser.add_argument(
        "--from", dest="source", type=Path, default=PASSAGES, help="JSONL with a passage column"
    )
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.source.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts = [row["passage"] for row in rows][: args.texts]
    cold = fork_server(args.model, texts, args.models)
    warm = fork_server(args.model, texts, args.models)
    fresh = fresh_processes(args.model, texts, args.models)
    print(f"{args.models} models, {args.texts} texts each, {os.cpu_count()} cores")
    print(f"{'way':<28} {'wall s':>8} {'vs fresh':>9}")
    for name, seconds in (
        ("fresh processes", fresh),
        ("fork server, cold", cold),
        ("fork server, warm", warm),
    ):
        print(f"{name:<28} {seconds:8.1f} {fresh / seconds:8.2f}x")


if __name__ == "__main__":
    main()
