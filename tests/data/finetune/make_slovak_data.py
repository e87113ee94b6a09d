"""Generate the Slovak fine-tuning fixtures (run from the repo root; output is committed).

Sentences are built from hand-written Slovak phrases with gender agreement and clitic placement done by
hand, so every sentence is grammatical Slovak. Training and dev use disjoint subjects and time phrases, so
no dev sentence occurs in the training data; the dev set uses the training actions plus five actions never
seen in training.

    python tests/data/finetune/make_slovak_data.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).parent

# (subject, gender, is a name)
TRAIN_SUBJECTS = [
    ("Peter", "m", True),
    ("Mária", "f", True),
    ("Môj brat", "m", False),
    ("Naša susedka", "f", False),
    ("Starý učiteľ", "m", False),
    ("Mladá lekárka", "f", False),
    ("Jana", "f", True),
    ("Tomáš", "m", True),
    ("Otcov kolega", "m", False),
    ("Moja sestra", "f", False),
    ("Martin", "m", True),
    ("Zuzana", "f", True),
]
DEV_SUBJECTS = [
    ("Juraj", "m", True),
    ("Eva", "f", True),
    ("Náš sused", "m", False),
    ("Mamina kamarátka", "f", False),
    ("Miestny farár", "m", False),
    ("Lucia", "f", True),
]
TRAIN_TIMES = ["včera", "minulý týždeň", "v sobotu", "dnes ráno", "v lete", "pred mesiacom"]
DEV_TIMES = ["v piatok večer", "predvčerom", "na jar", "minulú nedeľu"]

# action: (clitic, masculine, feminine) for the statement, its paraphrase, and its contradiction
TRAIN_ACTIONS = [
    (
        ("", "kúpil nové auto", "kúpila nové auto"),
        ("si", "zaobstaral nový automobil", "zaobstarala nový automobil"),
        ("", "predal svoje jediné auto", "predala svoje jediné auto"),
    ),
    (
        ("", "išiel na dovolenku k moru", "išla na dovolenku k moru"),
        ("", "odcestoval na prázdniny k moru", "odcestovala na prázdniny k moru"),
        ("", "zostal celý čas doma", "zostala celý čas doma"),
    ),
    (
        ("", "prečítal celú knihu za jeden večer", "prečítala celú knihu za jeden večer"),
        ("", "dočítal knihu ešte v ten istý večer", "dočítala knihu ešte v ten istý večer"),
        ("", "tú knihu vôbec neotvoril", "tú knihu vôbec neotvorila"),
    ),
    (
        ("", "vyhral preteky v behu", "vyhrala preteky v behu"),
        ("", "zvíťazil v bežeckých pretekoch", "zvíťazila v bežeckých pretekoch"),
        ("", "prehral preteky v behu", "prehrala preteky v behu"),
    ),
    (
        ("", "zmeškal ranný vlak do práce", "zmeškala ranný vlak do práce"),
        ("", "nestihol ranný vlak do práce", "nestihla ranný vlak do práce"),
        ("", "prišiel na ranný vlak načas", "prišla na ranný vlak načas"),
    ),
    (
        ("", "opravil pokazený bicykel", "opravila pokazený bicykel"),
        ("", "dal do poriadku pokazený bicykel", "dala do poriadku pokazený bicykel"),
        ("", "úplne zničil svoj bicykel", "úplne zničila svoj bicykel"),
    ),
    (
        ("sa", "začal učiť po nemecky", "začala učiť po nemecky"),
        ("sa", "pustil do štúdia nemčiny", "pustila do štúdia nemčiny"),
        ("sa", "prestal učiť po nemecky", "prestala učiť po nemecky"),
    ),
    (
        ("", "zasadil v záhrade jabloň", "zasadila v záhrade jabloň"),
        ("", "vysadil v záhrade jabloňový strom", "vysadila v záhrade jabloňový strom"),
        ("", "vyrúbal v záhrade jabloň", "vyrúbala v záhrade jabloň"),
    ),
    (
        ("", "upiekol jablkový koláč", "upiekla jablkový koláč"),
        ("", "napiekol koláč s jablkami", "napiekla koláč s jablkami"),
        ("", "nič neupiekol", "nič neupiekla"),
    ),
    (
        ("sa", "presťahoval do Košíc", "presťahovala do Košíc"),
        ("sa", "odsťahoval bývať do Košíc", "odsťahovala bývať do Košíc"),
        ("", "vôbec neodišiel z Bratislavy", "vôbec neodišla z Bratislavy"),
    ),
    (
        ("", "dostal novú prácu v banke", "dostala novú prácu v banke"),
        ("", "získal nové zamestnanie v banke", "získala nové zamestnanie v banke"),
        ("", "prišiel o prácu v banke", "prišla o prácu v banke"),
    ),
    (
        ("", "namaľoval obraz zasnežených hôr", "namaľovala obraz zasnežených hôr"),
        ("", "vytvoril maľbu so zasneženými horami", "vytvorila maľbu so zasneženými horami"),
        ("", "roztrhal svoj obraz zasnežených hôr", "roztrhala svoj obraz zasnežených hôr"),
    ),
]
DEV_ACTIONS = [
    (
        ("", "stratil kľúče od bytu", "stratila kľúče od bytu"),
        ("", "prišiel o kľúče od bytu", "prišla o kľúče od bytu"),
        ("", "našiel stratené kľúče od bytu", "našla stratené kľúče od bytu"),
    ),
    (
        ("", "napísal dlhý list starej mame", "napísala dlhý list starej mame"),
        ("", "poslal starej mame dlhý písaný list", "poslala starej mame dlhý písaný list"),
        ("", "na starú mamu celkom zabudol", "na starú mamu celkom zabudla"),
    ),
    (
        ("", "bol chorý a ležal v posteli", "bola chorá a ležala v posteli"),
        ("", "ochorel a zostal ležať v posteli", "ochorela a zostala ležať v posteli"),
        ("", "bol úplne zdravý a športoval", "bola úplne zdravá a športovala"),
    ),
    (
        ("", "uvaril večeru pre celú rodinu", "uvarila večeru pre celú rodinu"),
        ("", "pripravil večeru pre všetkých v rodine", "pripravila večeru pre všetkých v rodine"),
        ("", "pre rodinu vôbec nevaril", "pre rodinu vôbec nevarila"),
    ),
    (
        ("", "vystúpil na vrchol Kriváňa", "vystúpila na vrchol Kriváňa"),
        ("", "zdolal štít Kriváňa", "zdolala štít Kriváňa"),
        ("sa", "na Kriváň nakoniec nevybral", "na Kriváň nakoniec nevybrala"),
    ),
]


def sentence(
    subject: tuple[str, str, bool], time: str, phrase: tuple[str, str, str], front_time: bool
) -> str:
    """One grammatical sentence; the clitic (si/sa) stays in the second position."""
    name, gender, is_name = subject
    clitic, masculine, feminine = phrase
    verb = masculine if gender == "m" else feminine
    if front_time:
        who = name if is_name else name[0].lower() + name[1:]
        words = [time[0].upper() + time[1:], clitic, who, verb]
    else:
        words = [name, clitic, time, verb]
    return " ".join(w for w in words if w) + "."


def sts_pairs(subjects, times, actions, rng: random.Random, count: int) -> list[dict]:
    """Scored pairs on 0-5: paraphrase 5, same event at another time 4, same action by someone else 2.8,
    contradicting action 1.8, same person doing something unrelated 1, unrelated 0."""
    rows = []
    while len(rows) < count:
        s, t, a = rng.choice(subjects), rng.choice(times), rng.randrange(len(actions))
        base = sentence(s, t, actions[a][0], False)
        kind = rng.randrange(6)
        if kind == 0:
            other, score = sentence(s, t, actions[a][1], True), 5.0
        elif kind == 1:
            t2 = rng.choice([x for x in times if x != t])
            other, score = sentence(s, t2, actions[a][rng.randrange(2)], rng.random() < 0.5), 4.0
        elif kind == 2:
            s2 = rng.choice([x for x in subjects if x != s])
            other, score = sentence(s2, t, actions[a][0], rng.random() < 0.5), 2.8
        elif kind == 3:
            other, score = sentence(s, t, actions[a][2], rng.random() < 0.5), 1.8
        elif kind == 4:
            a2 = rng.choice([x for x in range(len(actions)) if x != a])
            other, score = sentence(s, t, actions[a2][0], rng.random() < 0.5), 1.0
        else:
            s2 = rng.choice([x for x in subjects if x != s])
            a2 = rng.choice([x for x in range(len(actions)) if x != a])
            other, score = sentence(s2, rng.choice(times), actions[a2][1], rng.random() < 0.5), 0.0
        rows.append({"sentence1": base, "sentence2": other, "score": score})
    return rows


def nli_rows(subjects, times, actions, rng: random.Random) -> list[dict]:
    """Premise/hypothesis/label rows: paraphrase = entailment, opposite = contradiction, other = neutral."""
    rows = []
    for s in subjects:
        for a in range(len(actions)):
            t = rng.choice(times)
            premise = sentence(s, t, actions[a][0], False)
            rows.append(
                {"premise": premise, "hypothesis": sentence(s, t, actions[a][1], True), "label": "entailment"}
            )
            rows.append(
                {
                    "premise": premise,
                    "hypothesis": sentence(s, t, actions[a][2], True),
                    "label": "contradiction",
                }
            )
            a2 = (a + 1) % len(actions)
            rows.append(
                {"premise": premise, "hypothesis": sentence(s, t, actions[a2][0], True), "label": "neutral"}
            )
    return rows


def write(name: str, rows: list[dict]) -> None:
    with (HERE / name).open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> None:
    rng = random.Random(7)
    write("sk_train_sts.jsonl", sts_pairs(TRAIN_SUBJECTS, TRAIN_TIMES, TRAIN_ACTIONS, rng, 480))
    write("sk_train_nli.jsonl", nli_rows(TRAIN_SUBJECTS, TRAIN_TIMES, TRAIN_ACTIONS, rng))
    write("sk_dev_sts.jsonl", sts_pairs(DEV_SUBJECTS, DEV_TIMES, TRAIN_ACTIONS + DEV_ACTIONS, rng, 240))


if __name__ == "__main__":
    main()
