"""The scripted LLM of the synthetic-STS tests: hand-written Slovak answers by the source's position in the
request order (:func:`script_for`), and a one-stage ``synth_sts`` recipe that asks it (:func:`synth_recipe`);
used by tests/test_synth_sts.py, tests/test_api.py and tests/test_choose.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.support.llm_server import Reply, user_message

CORPUS = Path(__file__).parents[1] / "data" / "sk_corpus.txt"
# Hand-written Slovak answers the scripted LLM returns (the machinery is tested, not the wording).
VARIANTS = [
    "Archeológovia pri Trnave našli zvyšky stredovekej kováčskej dielne aj s nástrojmi.",
    "Knižnica v Prešove rozšírila otváracie hodiny a pridala čitateľské kluby pre seniorov.",
    "Meteorológovia upozorňujú, že tohtoročná jeseň bola na východe krajiny mimoriadne suchá.",
    "Poslanci sa o návrhu budú znova rozprávať na najbližšom zasadnutí v decembri.",
    "Podľa starostu sa práce začnú na jar a mali by sa skončiť ešte pred letom.",
    "Na zasadnutí obecní poslanci jednomyseľne odsúhlasili, že sa budova opraví.",
]
CZECH = "Obecní zastupitelstvo na včerejším zasedání schválilo rekonstrukci místní základní školy."
ENGLISH = "The local council approved the renovation of the primary school at yesterday's meeting."


def answer(levels: dict[str, str]) -> str:
    return json.dumps({k: {"sentence": v, "explanation": "vysvetlenie"} for k, v in levels.items()})


GOOD = answer({str(level): text for level, text in enumerate(VARIANTS)})


def source_of(body: dict) -> str:
    return user_message(body).rsplit("Pôvodná veta: ", 1)[1]


def script_for(kinds: dict[int, str]):
    """Answers by the source's position in the request order: kind of the first answer, then good ones."""
    order: dict[str, int] = {}

    def script(body: dict, count: int) -> Reply:
        index = order.setdefault(source_of(body), len(order))
        kind = kinds.get(index, "good")
        if kind == "always_broken":
            return Reply('{"0": ')
        if count > 0:
            return Reply(GOOD)
        return {
            "good": Reply(GOOD),
            "broken": Reply('{"0": {"sentence": "Archeológovia'),
            "leak": Reply("Here is the JSON: " + GOOD),
            "missing": Reply(answer({str(level): VARIANTS[level] for level in range(4)})),
            "english": Reply(answer({**{str(i): v for i, v in enumerate(VARIANTS)}, "3": ENGLISH})),
            "czech": Reply(answer({**{str(i): v for i, v in enumerate(VARIANTS)}, "5": CZECH})),
            "error": Reply(status=500),
            "slow": Reply(GOOD, delay=0.3),
        }[kind]

    return script


def synth_recipe(
    directory: Path,
    base: Path,
    url: str,
    *,
    model: str,
    run: str = "run",
    file: str | None = None,
    **synth: Any,
) -> Path:
    """A recipe of one ``synth_sts`` stage (8 corpus sources, 2 annotation items per level) against the
    scripted LLM at ``url`` (LLM cache ``directory/c``), run into ``directory/run``, written to
    ``directory/<file or run>.yaml``; ``synth`` changes the stage's settings."""
    data = {
        "name": "synth",
        "language": "slk",
        "base_model": str(base),
        "output_dir": str(directory / run),
        "llm": {"backend": "openai", "model": model, "base_url": url, "cache": str(directory / "c")},
        "synth_sts": {
            "corpus": str(CORPUS),
            "n_sources": 8,
            "annotation_sample_per_level": 2,
            "contamination_tasks": [],
            **synth,
        },
    }
    path = directory / f"{file or run}.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path
