"""Data-path rates for the cost plan: the work of a run that is not model throughput, measured on samples.

Each figure runs skadapt's own code on synthetic data of the recipes' shapes (sizes and shapes only: the
texts are never trained or evaluated on):

- ``trim_count``: documents/s of ``skadapt.blocks.count_source`` (reading a JSONL file, counting
  every token on all cores with mE5's tokenizer, drawing the parity sample) on FineWeb2-like ~3,000-char
  documents;
- ``renorm_sample``: documents/s of ``skadapt.blocks.sample_sentences`` (pysbd sentence splitting in
  worker processes, one per core, as renorm runs it; the 64-512-char window, the reservoir) on the same
  documents, and how many eligible sentences of which
  length a document yields;
- ``read_jsonl``: rows/s of ``skadapt.blocks.read_rows`` on QA-shaped rows (question ~60, passage
  ~1,200 chars) from JSONL;
- ``read_hub``: rows/s of ``skadapt.blocks.read_rows`` on a ``hub:`` source streamed over HTTP from the
  local Hub (``tests/support/hub_server.py``; the real ``datasets``/``huggingface_hub`` client in a child):
  FineWeb2's layout and its eleven columns, ~3,000-char documents - what a Hub stream costs beside the
  network;
- ``build_pairs`` / ``nli_grouping``: rows/s of ``skadapt.blocks.training_datasets`` for pairs
  (QA rows) and for nli (three labelled hypotheses per premise, grouped into triplets), reading included;
- ``contamination`` / ``contamination_index``: rows/s of ``skadapt.blocks.overlapping_rows``
  against an index of evaluation texts, and texts/s of building that index.

Each rate is marginal (timed at a tenth and at the whole sample: fixed costs such as parsing the tokenizer
or opening a ``datasets`` stream are ``fixed_s``), in wall seconds and in this process's CPU seconds.

Documents are built from the real Slovak sentences of data/demo_sk (concatenated to ~3,000 chars), so
that sentence splitting sees real sentence boundaries; rows from runs of their words.

    python benchmark/data_rates.py --tokenizer .gpu/tokenizer.json          # prints the JSON
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SENTENCE_FILES = [
    ROOT / "data" / "demo_sk" / "train" / "qa.jsonl",
    ROOT / "data" / "demo_sk" / "suite" / "corpus.jsonl",
]
DOCUMENT_CHARS = 3000
"""FineWeb2 slk_Latn documents average about 3,000 characters."""


class PeakRSS:
    """The largest resident set size of this process while a block runs (sampled every 20 ms)."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()

    @contextmanager
    def watch(self) -> Iterator[PeakRSS]:
        import psutil

        process = psutil.Process()
        self.peak = process.memory_info().rss
        self._stop.clear()

        def sample() -> None:
            while not self._stop.wait(0.02):
                self.peak = max(self.peak, process.memory_info().rss)

        thread = threading.Thread(target=sample, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()
            self.peak = max(self.peak, process.memory_info().rss)

    @property
    def gb(self) -> float:
        return round(self.peak / 2**30, 3)


def real_sentences() -> list[str]:
    """The passages of the demo data (real Slovak sentences), in file order."""
    out = []
    for path in SENTENCE_FILES:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            out.append(str(row.get("passage") or row.get("text") or ""))
    return [t for t in out if t]


def documents(n: int, rng: random.Random) -> list[str]:
    """``n`` web-like documents of about :data:`DOCUMENT_CHARS` characters: the rehearsal's synthetic
    Slovak (``benchmark/rehearsal_data.py``: words drawn by wordfreq's frequencies, 8% rarer pieces of the
    model's vocabulary), whose token statistics - and so the tokenizer's speed - are the language's; the
    demo's passages, repeated, made counting 1.9x too fast (the tokenizer caches repeated words)."""
    from rehearsal_data import Words

    source = Words("sk", rng.randrange(2**31), max(2_000_000, n * DOCUMENT_CHARS // 4))
    return [f"Dokument {i}. " + source.text(DOCUMENT_CHARS) for i in range(n)]


def words() -> list[str]:
    return [w for text in real_sentences() for w in text.split()]


def text(pool: list[str], chars: int, rng: random.Random, tag: int) -> str:
    """A run of the pool's words of about ``chars`` characters, starting with a distinct number."""
    start = rng.randrange(len(pool))
    out = [str(tag)]
    size = len(out[0])
    while size < chars:
        out.append(pool[(start + len(out)) % len(pool)])
        size += len(out[-1]) + 1
    return " ".join(out)


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def timed(run: Callable[[], Any]) -> tuple[float, float, float, Any]:
    """(wall seconds, CPU seconds of this process, peak RSS GB, result) of one call."""
    watch = PeakRSS()
    with watch.watch():
        cpu, start = time.process_time(), time.perf_counter()
        result = run()
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return seconds, cpu, watch.gb, result


@dataclass(frozen=True)
class Timing:
    """One timed run: the items it did, its wall seconds and, measured in this process, its CPU seconds
    and peak RSS GB (None for a child process)."""

    items: int
    wall: float
    cpu: float | None = None
    rss: float | None = None


def timings(run: Callable[[int], Any], small: int, large: int) -> tuple[Timing, Timing]:
    """``run(small)`` and ``run(large)`` timed in this process, in that order."""
    measured = []
    for n in (small, large):
        wall, cpu, rss, _ = timed(lambda n=n: run(n))
        measured.append(Timing(n, wall, cpu, rss))
    return measured[0], measured[1]


def marginal(timed_runs: tuple[Timing, Timing], unit: str) -> dict[str, Any]:
    """The rate per item beyond the fixed cost, from runs of a small and a large number of items.

    Returns ``{unit_per_s, unit_per_cpu_s, fixed_s, peak_rss_gb, unit}`` (the large run's items), the
    CPU-time rate and the peak RSS where the runs measured them; the CPU-time rate is what a quiet machine
    gives single-threaded work (this machine is shared: the wall rate includes waiting).
    """
    small, large = timed_runs
    items = large.items - small.items
    per_s = items / max(large.wall - small.wall, 1e-9)
    rate: dict[str, Any] = {f"{unit}_per_s": round(per_s, 1)}
    if small.cpu is not None and large.cpu is not None:
        rate[f"{unit}_per_cpu_s"] = round(items / max(large.cpu - small.cpu, 1e-9), 1)
    rate["fixed_s"] = round(max(0.0, small.wall - small.items / per_s), 3)
    if large.rss is not None:
        rate["peak_rss_gb"] = large.rss
    return rate | {unit: large.items}


def measure(tokenizer: Path, scale: float = 1.0) -> dict[str, Any]:
    """Every data-path rate (see the module docstring); ``scale`` multiplies the sample sizes."""

    from skadapt.api import FinetuneDataset
    from skadapt.blocks import (
        count_source,
        overlapping_rows,
        read_rows,
        sample_sentences,
        split_parallelism,
        training_datasets,
    )

    parallelism = split_parallelism()

    rng = random.Random(11)
    sizes = (6000, 3000, 20000, 30000, 50000, 20000)
    n_docs, n_sentenced, n_rows, n_nli, n_index, n_hub = (int(x * scale) for x in sizes)
    pool = words()
    rates: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        docs = documents(max(n_docs, parallelism.serial_texts + 2 * n_sentenced), rng)
        tokenizer_json = tokenizer.read_text(encoding="utf-8")

        def count(n: int) -> Any:
            corpus = write_jsonl(root / f"docs{n}.jsonl", [{"text": d} for d in docs[:n]])
            return count_source(tokenizer_json, str(corpus), parity_documents=1000, use_cache=False)

        rates["trim_count"] = marginal(timings(count, n_docs // 10, n_docs), "documents")
        rates["trim_count"]["chars"] = round(sum(map(len, docs[:n_docs])) / n_docs)

        def sentences(n: int) -> Any:
            return sample_sentences(iter(docs[:n]), 10**9, min_chars=64, max_chars=512, seed=1, language="sk")

        # past parallelism.serial_texts documents the stream is split in worker processes, as renorm runs
        # it: both points lie beyond it, so the workers' start-up cancels out and the rate is the parallel one
        first = parallelism.serial_texts + n_sentenced // 10
        rates["renorm_sample"] = marginal(timings(sentences, first, first + n_sentenced), "documents")
        rates["renorm_sample"]["workers"] = parallelism.workers
        sample = sentences(first + n_sentenced)
        rates["renorm_sample"] |= {
            "chars": rates["trim_count"]["chars"],
            "sentences_per_document": round(sample.eligible / (first + n_sentenced), 2),
            "sentence_chars": round(sum(map(len, sample.sentences)) / max(1, len(sample.sentences))),
            "note": "unique sentences of 64-512 chars, split in worker processes; synthetic Slovak (the "
            "rehearsal's generator)",
        }
        qa = [
            {"question": text(pool, 60, rng, i), "context": text(pool, 1200, rng, i)} for i in range(n_rows)
        ]

        def read(n: int) -> int:
            path = write_jsonl(root / f"qa{n}.jsonl", qa[:n])
            return sum(1 for _ in read_rows(str(path)).rows)

        rates["read_jsonl"] = marginal(timings(read, n_rows // 10, n_rows), "rows") | {"row_chars": 1260}
        rates["read_hub"] = hub_read_rate(root / "hub", n_hub)

        def pairs(n: int) -> Any:
            path = write_jsonl(root / f"pairs{n}.jsonl", qa[:n])
            columns = {"anchor": "question", "positive": "context"}
            return training_datasets(
                FinetuneDataset(name="qa", kind="pairs", source=str(path), columns=columns)
            )

        rates["build_pairs"] = marginal(timings(pairs, n_rows // 10, n_rows), "rows")
        nli_rows = []
        for i in range(n_nli // 3):
            premise = text(pool, 110, rng, i)
            for label in ("entailment", "neutral", "contradiction"):
                nli_rows.append({"premise": premise, "hypothesis": text(pool, 55, rng, i), "label": label})

        def nli(n: int) -> Any:
            path = write_jsonl(root / f"nli{n}.jsonl", nli_rows[:n])
            columns = {"premise": "premise", "hypothesis": "hypothesis", "label": "label"}
            return training_datasets(
                FinetuneDataset(name="nli", kind="nli", source=str(path), columns=columns)
            )

        rates["nli_grouping"] = marginal(timings(nli, len(nli_rows) // 10, len(nli_rows)), "rows")
        rates["nli_grouping"]["triplets_per_row"] = round(len(nli(len(nli_rows))[0]) / len(nli_rows), 4)
        tests = {"task": [text(pool, 120, rng, -i) for i in range(n_index)]}
        rows = pairs(n_rows)[0].rows() + nli(len(nli_rows))[0].rows()
        rates["contamination"] = marginal(
            timings(lambda n: overlapping_rows({"train": rows[:n]}, tests), len(rows) // 10, len(rows)),
            "rows",
        )
        rates["contamination_index"] = marginal(
            timings(lambda n: overlapping_rows({}, {"task": tests["task"][:n]}), n_index // 10, n_index),
            "texts",
        )
    return rates


HUB_READ = """
import sys, time
from skadapt.blocks import read_rows
n = int(sys.argv[1])
rows = read_rows("hub:HuggingFaceFW/fineweb-2:slk_Latn:train").rows
start = time.perf_counter()
count = sum(1 for _ in zip(range(n), rows))
print(count, time.perf_counter() - start)
"""


def hub_read_rate(root: Path, n: int) -> dict[str, Any]:
    """Rows/s of streaming FineWeb2-shaped Parquet from the local HTTP Hub in a child process (the client's
    own environment: the local Hub's endpoint, fresh caches), marginal between a tenth and ``n`` rows."""
    import subprocess
    import sys

    from rehearsal_data import FINEWEB_DOCUMENTS, Generator, write_fineweb

    from tests.support.hub_fixtures import HF_TOKEN, client_env
    from tests.support.hub_server import HubStore, LocalHub

    written = write_fineweb(root, Generator(5, 2_000_000), n / FINEWEB_DOCUMENTS)
    texts = [p for p in written if p.suffix == ".parquet" and "train" in p.parts]
    chars = _parquet_chars(texts)
    store = HubStore()
    store.load(root)
    runs = []
    with LocalHub(store) as hub:
        env = client_env(hub, root / "home", token=HF_TOKEN)
        for rows in (n // 10, n):
            done = subprocess.run(
                [sys.executable, "-c", HUB_READ, str(rows)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            count, seconds = done.stdout.split()
            runs.append(Timing(int(count), float(seconds)))
    return marginal((runs[0], runs[1]), "rows") | {"row_chars": chars, "columns": 11}


def _parquet_chars(paths: list[Path]) -> int:
    """Average characters of the ``text`` column of Parquet files."""
    import pyarrow.parquet as pq

    texts = [t for p in paths for t in pq.read_table(p, columns=["text"]).column("text").to_pylist()]
    return round(sum(map(len, texts)) / max(1, len(texts)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer", type=Path, required=True, help="mE5's tokenizer.json")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the sample sizes")
    args = parser.parse_args()
    print(json.dumps(measure(args.tokenizer, args.scale), indent=2))


if __name__ == "__main__":
    main()
