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

from skadapt import LLMConfig, get_language
from skadapt.llm.backends import make_backend
from skadapt.llm.seeds import request_seed
from skadapt.llm.types import ChatRequest, Sampling
from skadapt.synth.prompts import JSON_SCHEMA, load_template, render
from skadapt.synth.sources import select_sources

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
    language = get_language("slk")
    template = load_template(language)
    sources = select_sources(str(CORPUS), language, args.prompts, seed=1).sentences
    sampling = Sampling(temperature=1.0, top_p=1.0, max_tokens=args.max_tokens)
    requests = [
        ChatRequest(
            ({"role": "user", "content": render(template, s.text, language)},),
            sampling,
            request_seed(1, s.id, 0),
            JSON_SCHEMA,
        )
        for s in sources
    ]
    config = LLMConfig(backend=args.backend, model=args.model, base_url=args.base_url)
    backend = make_backend(config)
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
