"""One synthetic-STS pilot per backend, same sources, same seed: wall time, tokens/s, accepted share and
the error-rate table per check.

Runs the public ``synthesize_sts`` (what ``skadapt synth-sts --pilot N`` runs: a one-stage run) with a
fresh generation cache, then reads its ``generation_report.json`` and every answer's ``completion_tokens``
back from the cache. tokens/s = completion tokens / wall time of the generation (model loading, the
endpoint probe and the one-stage run's directory handling included for honesty).

    python benchmark/llm_pilot.py --backend transformers --model path/to/model.gguf --pilot 4
    python benchmark/llm_pilot.py --backend openai --base-url http://127.0.0.1:8765/v1 --model m --pilot 4
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from skadapt.api import LLMConfig, SynthSTSConfig, synthesize_sts

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "sk_corpus.txt"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", required=True, choices=["openai", "transformers", "vllm"])
    parser.add_argument("--model", required=True)
    parser.add_argument("--base-url", action="append")
    parser.add_argument("--pilot", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=2500)
    parser.add_argument("--attempts", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="llm_pilot_"))
    cache = out / "cache.sqlite"
    cache.unlink(missing_ok=True)
    llm = LLMConfig(
        backend=args.backend,
        model=args.model,
        base_url=args.base_url,
        max_tokens=args.max_tokens,
        attempts=args.attempts,
        concurrency=args.concurrency,
        cache=str(cache),
    )
    start = time.perf_counter()
    synthesize_sts(
        SynthSTSConfig(source=str(CORPUS)), language="slk", out=out / "synth", llm=llm, seed=args.seed,
        pilot=args.pilot, overwrite=True,
    )  # fmt: skip
    wall = time.perf_counter() - start
    with sqlite3.connect(cache) as db:
        metas = [json.loads(m) for (m,) in db.execute("SELECT meta FROM generations")]
    tokens = sum(int(m.get("completion_tokens") or 0) for m in metas)
    report = json.loads((out / "synth" / "generation_report.json").read_text(encoding="utf-8"))
    generation = report["generation"]
    accepted = args.pilot - report["failed_sources"]
    summary = {
        "backend": args.backend,
        "structured": generation["endpoint"].get("structured"),
        "wall_s": round(wall, 1),
        "completion_tokens": tokens,
        "tokens_per_s": round(tokens / wall, 1),
        "sources_accepted": f"{accepted}/{args.pilot}",
        "outputs_accepted": f"{accepted}/{generation['outputs_checked']}",  # one accepted output per source
        "requests_sent": generation["requests_sent"],
        "probe_requests": generation["probe_requests"],
        "error_rates": {r["check"]: r["failed"] for r in generation["error_rates"]},
    }
    print(json.dumps(summary, indent=1))
    print((out / "synth" / "error_rates.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
