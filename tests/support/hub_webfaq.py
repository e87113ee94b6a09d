"""Imitations of the Slovak web-FAQ repositories, for the local Hub (:mod:`tests.support.hub_server`).

What was verified and from where is in ``docs/web_faq_sources.md``; in short:

- ``PaDaS-Lab/webfaq`` (WebFAQ v1, CC BY 4.0): one config per ISO 639-3 language, split ``default``,
  columns ``id``, ``origin``, ``url``, ``question``, ``answer``, ``semantic_similarity_score``; files as
  the authors' upload script writes them (``data/{language}.parquet``, mapped by the README's
  ``configs:``). Its commit could not be looked up: the commit below is the fixture's own.
- ``clips/mqa`` (MQA, CC0 1.0: the MFAQ authors' corpus that has Slovak; ``clips/mfaq`` has none): a
  loading script ``mqa.py`` on ``main``, which ``datasets`` 4+ refuses to run, and the Hub's Parquet
  conversion (branch ``refs/convert/parquet``): one folder per config ``{language}-{scope}-{level}``
  holding ``mqa-train-0000K-of-0000N.parquet``. Question-level rows: ``id``, ``text``, ``name``,
  ``domain``, ``bucket``, ``answers`` (a list of ``text``, ``name``, ``is_accepted``). Both commits below
  are the fixture's own.

Rows are a few hand-written Slovak FAQ pairs; one WebFAQ question is a question of the WebFAQRetrieval
fixture (:data:`tests.support.hub_skmteb.WEBFAQ_RETRIEVAL`), so that the contamination drop has a row.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from tests.support.hub_skmteb import WEBFAQ_RETRIEVAL, FixtureRepo, features

WEBFAQ_ID = "PaDaS-Lab/webfaq"
WEBFAQ_REVISION = hashlib.sha1(b"local fixture of PaDaS-Lab/webfaq").hexdigest()
MQA_ID = "clips/mqa"
MQA_MAIN = hashlib.sha1(b"local fixture of clips/mqa main").hexdigest()
MQA_PARQUET = hashlib.sha1(b"local fixture of clips/mqa refs/convert/parquet").hexdigest()
PARQUET_EXPORT = "refs/convert/parquet"

WEBFAQ_FEATURES = features(
    id="string",
    origin="string",
    url="string",
    question="string",
    answer="string",
    semantic_similarity_score="float32",
)
_WEBFAQ_SLK = [  # (origin, question, answer)
    (
        "https://www.kniznica-dolny-kubin.sk",
        "Ako si môžem predĺžiť výpožičku?",
        "Výpožičku predĺžite v on-line katalógu po prihlásení do čitateľského konta, telefonicky alebo "
        "osobne pri pulte, najviac dvakrát po sebe.",
    ),
    (
        "https://www.kniznica-dolny-kubin.sk",
        "Koľko stojí ročný čitateľský preukaz?",
        "Dospelí platia za preukaz 5 eur na rok, študenti a seniori nad 62 rokov 2 eurá, deti do 15 rokov ho "
        "majú zadarmo.",
    ),
    (
        "https://www.autoservis-hlohovec.sk",
        "Musím si na prezutie pneumatík dohodnúť termín?",
        "Áno, v sezóne prezúvame len na objednávku. Termín si rezervujete cez formulár na webe alebo na "
        "telefónnom čísle dielne.",
    ),
    (
        "https://www.autoservis-hlohovec.sk",
        "Uskladníte mi letné pneumatiky?",
        "Pneumatiky uskladníme v suchom sklade za 20 eur na sezónu, pred vrátením ich skontrolujeme a "
        "umyjeme.",
    ),
    (
        "https://www.penzion-pod-rozsutcom.sk",
        "Môžeme prísť aj so psom?",
        "Psov ubytujeme po dohode v izbách na prízemí za poplatok 8 eur za noc, do jedálne však nesmú.",
    ),
    (
        "https://www.eshop-ukazka.sk",
        WEBFAQ_RETRIEVAL[0][3],
        WEBFAQ_RETRIEVAL[0][1],
    ),  # an evaluation test text
]
_MQA_ANSWER = {"text": "", "name": "", "is_accepted": True}
_MQA = {  # config -> (question name, answer)
    "sk-faq-question": [
        (
            "Do kedy treba podať daňové priznanie?",
            "Daňové priznanie sa podáva do konca marca za predošlý rok.",
        ),
        (
            "Aké doklady potrebujem k prihláške?",
            "K prihláške priložte kópiu vysvedčenia a potvrdenie od lekára.",
        ),
        ("Dá sa platiť kartou?", "Áno, v predajni aj na webe prijímame platobné karty aj platbu mobilom."),
    ],
    "cs-faq-question": [
        ("Jak dlouho trvá doručení?", "Zboží doručujeme do tří pracovních dnů od objednání."),
    ],
}
MQA_FEATURES = [
    *features(id="string", text="string", name="string", domain="string", bucket="string"),
    {
        "name": "answers",
        "list": [
            {"name": "text", "dtype": "string"},
            {"name": "name", "dtype": "string"},
            {"name": "is_accepted", "dtype": "bool"},
        ],
    },
]


def webfaq_rows(language: str = "slk") -> list[dict[str, Any]]:
    """The rows of a WebFAQ config (``slk``)."""
    assert language == "slk"
    return [
        {
            "id": hashlib.md5(f"{origin} {question}".encode()).hexdigest(),
            "origin": origin,
            "url": f"{origin}/casto-kladene-otazky",
            "question": question,
            "answer": answer,
            "semantic_similarity_score": 0.8,
        }
        for origin, question, answer in _WEBFAQ_SLK
    ]


def mqa_rows(config: str) -> list[dict[str, Any]]:
    """The question-level rows of an MQA config (``sk-faq-question``, ``cs-faq-question``)."""
    return [
        {
            "id": hashlib.md5(name.encode()).hexdigest(),
            "text": "",
            "name": name,
            "domain": "example.sk",
            "bucket": "2021.04",
            "answers": [{**_MQA_ANSWER, "text": answer}],
        }
        for name, answer in _MQA[config]
    ]


def webfaq_repos() -> list[FixtureRepo]:
    """WebFAQ at its fixture commit: ``data/slk.parquet``, config ``slk`` -> split ``default``."""
    repo = FixtureRepo(WEBFAQ_ID, WEBFAQ_REVISION, body="# WebFAQ (local Hub fixture)\n")
    repo.tables["data/slk.parquet"] = (webfaq_rows(), WEBFAQ_FEATURES)
    repo.config("slk", {"default": "data/slk.parquet"})
    repo.info("slk", WEBFAQ_FEATURES, {"default": len(_WEBFAQ_SLK)})
    return [repo]


def write_webfaq_repos(root: Path) -> None:
    """Write WebFAQ and MQA (``main`` with its loading script, ``refs/convert/parquet``) under ``root`` in
    the layout :meth:`tests.support.hub_server.HubStore.load` reads."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    [webfaq] = webfaq_repos()
    base = root / "datasets" / WEBFAQ_ID / WEBFAQ_REVISION
    for path, (rows, _) in webfaq.tables.items():
        (base / path).parent.mkdir(parents=True, exist_ok=True)
        schema = pa.schema(
            [(f["name"], pa.float32() if f["dtype"] == "float32" else pa.string()) for f in WEBFAQ_FEATURES]
        )
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), base / path)
    (base / "README.md").write_text(webfaq.readme(), encoding="utf-8")
    mqa = root / "datasets" / MQA_ID
    main = mqa / MQA_MAIN
    main.mkdir(parents=True, exist_ok=True)
    (main / "README.md").write_text(
        "---\nlicense: cc0-1.0\n---\n# MQA (local Hub fixture)\n", encoding="utf-8"
    )
    (main / "mqa.py").write_text(
        '"""A dataset loading script (its presence is what counts)."""\n', encoding="utf-8"
    )
    for config in _MQA:
        rows = mqa_rows(config)
        folder = mqa / MQA_PARQUET / config
        folder.mkdir(parents=True, exist_ok=True)
        half = (len(rows) + 1) // 2
        shards = [rows[:half], rows[half:]] if len(rows) > 1 else [rows]
        for index, shard in enumerate(shards):
            name = f"mqa-train-{index:05d}-of-{len(shards):05d}.parquet"
            pq.write_table(pa.Table.from_pylist(shard), folder / name)
    (mqa / "refs.json").write_text(
        json.dumps({"main": MQA_MAIN, PARQUET_EXPORT: MQA_PARQUET}), encoding="utf-8"
    )
