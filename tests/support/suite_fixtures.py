"""A small local task suite with every task type, written to a directory (tests and benchmarks)."""

from __future__ import annotations

import json
from pathlib import Path

SENTENCES = [
    ("Mačka spí na gauči.", "Mačka leží na pohovke.", 4.5),
    ("Pes šteká na poštára.", "Pes hlasno breše na doručovateľa.", 4.0),
    ("Prší celý deň.", "Celý deň leje dážď.", 4.8),
    ("Vlak mešká pätnásť minút.", "Na trhu predávajú ovocie.", 0.2),
    ("Študenti píšu skúšku.", "Žiaci robia test.", 3.5),
    ("Bratislava leží na Dunaji.", "Dunaj tečie cez Bratislavu.", 4.2),
    ("Jem jablko.", "Futbalový zápas skončil remízou.", 0.0),
    ("Lekár vyšetril pacienta.", "Pacienta prezrel doktor.", 4.6),
    ("Knižnica je zatvorená.", "Obchod je otvorený.", 1.0),
    ("Slnko svieti.", "Je slnečno.", 3.9),
]


def _write(path: Path, rows: list[dict]) -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path.name


def write_tiny_suite(root: Path) -> Path:
    """Write suite.yaml + JSONL files of all seven task types under ``root``; return the suite path."""
    root.mkdir(parents=True, exist_ok=True)
    sts = _write(root / "sts.jsonl", [{"sentence1": a, "sentence2": b, "score": s} for a, b, s in SENTENCES])
    pairs = _write(
        root / "pairs.jsonl",
        [{"sentence1": a, "sentence2": b, "label": int(s >= 2.5)} for a, b, s in SENTENCES],
    )
    topics = ["počasie", "šport", "mesto"]
    texts = {
        "počasie": ["Prší a fúka vietor.", "Zajtra bude slnečno.", "Sneží na horách.", "Je teplo."],
        "šport": ["Zápas skončil remízou.", "Hokejisti vyhrali.", "Bežec zabehol maratón.", "Gól padol."],
        "mesto": [
            "Električka ide do centra.",
            "Námestie je plné ľudí.",
            "Radnica je stará.",
            "Most je nový.",
        ],
    }
    labelled = [{"text": t, "label": label} for label in topics for t in texts[label]]
    train = _write(root / "train.jsonl", labelled)
    test = _write(root / "test.jsonl", [dict(r, text=r["text"] + " Naozaj.") for r in labelled])
    clusters = _write(root / "clusters.jsonl", labelled)
    corpus = _write(
        root / "corpus.jsonl",
        [{"id": f"d{i}", "text": b, "title": ""} for i, (_, b, _) in enumerate(SENTENCES)],
    )
    queries = _write(
        root / "queries.jsonl", [{"id": f"q{i}", "text": a} for i, (a, _, _) in enumerate(SENTENCES)]
    )
    qrels = _write(
        root / "qrels.jsonl",
        [{"query-id": f"q{i}", "corpus-id": f"d{i}", "score": 1} for i in range(len(SENTENCES))],
    )
    rerank = _write(
        root / "rerank.jsonl",
        [
            {"query": a, "positive": [b], "negative": [SENTENCES[(i + 3) % len(SENTENCES)][1]]}
            for i, (a, b, _) in enumerate(SENTENCES)
        ],
    )
    bitext = _write(root / "bitext.jsonl", [{"sentence1": a, "sentence2": b} for a, b, _ in SENTENCES])
    suite = root / "suite.yaml"
    suite.write_text(
        f"""language: slk
tasks:
  - {{name: TinySTS, type: STS, data: {sts}, score_range: [0, 5]}}
  - {{name: TinyRetrieval, type: Retrieval, corpus: {corpus}, queries: {queries}, qrels: {qrels}}}
  - {{name: TinyPairs, type: PairClassification, data: {pairs}}}
  - {{name: TinyTopics, type: Classification, train: {train}, test: {test}, samples_per_label: 4}}
  - {{name: TinyClusters, type: Clustering, data: {clusters}}}
  - {{name: TinyRerank, type: Reranking, data: {rerank}}}
  - {{name: TinyBitext, type: BitextMining, data: {bitext}}}
""",
        encoding="utf-8",
    )
    return suite
