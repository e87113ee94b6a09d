"""Batched generation vs one request at a time, same prompts, same per-request seeds.

Made for the in-process vLLM backend on a GPU (one batched ``LLM.chat`` over all prompts vs one ``chat``
call per prompt); runs with any backend (``openai``: concurrent requests vs one at a time against a
server; ``transformers`` generates one request at a time either way, so its ratio is ~1). Prompts: the
synthetic-STS prompt over Slovak sentences of tests/data/sk_corpus.txt. No cache is used. Prints both
times, the ratio one-at-a-time / batched, and how many answers are identical across the two ways (with
per-request seeds they should all be).

    python benchmark/llm_batching.py --backend vllm --model Qwen/Qwen3-8B --prompts 256
    python benchmark/llm_batching.py --backend openai --base-url http://127.0.0.1:8000/v1 --model M
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from skadapt.api import LLMConfig
from skadapt.blocks import llm_backend, sts_requests

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "sk_corpus.txt"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", default="vllm", choices=["vllm", "openai", "transformers"])
    parser.add_argument("--model", required=True)
    parser.add_argument("--base-url", action="append")
    parser.add_argument("--prompts", type=int, default=128)
    parser.add_argument("--max-tokens", type=int, default=768)
    args = parser.parse_args()
    requests = sts_requests(str(CORPUS), "slk", args.prompts, seed=1, max_tokens=args.max_tokens)
    config = LLMConfig(backend=args.backend, model=args.model, base_url=args.base_url)
    backend = llm_backend(config)
    backend.chat(requests[:2])  # warm-up (compilation, connection)
    start = time.perf_counter()
    batched = backend.chat(requests)
    batched_s = time.perf_counter() - start
    start = time.perf_counter()
    single = [backend.chat([request])[0] for request in requests]
    single_s = time.perf_counter() - start
    same = sum(a.text == b.text for a, b in zip(batched, single, strict=True))
    print(f"{len(requests)} prompts, backend {args.backend}, model {args.model}")
    print(f"batched       : {batched_s:8.2f} s")
    print(f"one at a time : {single_s:8.2f} s")
    print(f"ratio one-at-a-time / batched: {single_s / batched_s:.2f}x")
    print(f"identical answers: {same}/{len(requests)}")


if __name__ == "__main__":
    main()
