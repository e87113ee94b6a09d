"""A local-Hub fixture imitating how skLEP's validation splits share text with its training splits.

``datasets/skadapt-fixtures/sklep-shared-paragraphs`` at :data:`REVISION`, in skLEP's layout
(``{config}/{train,validation}.json``, JSON lines, and a README whose ``configs:`` map them):

- ``question-answering``: SQuAD-style, several questions per paragraph. Training holds eight paragraphs with
  four questions each. Its validation split was, as skLEP's card says of its own, "created by sampling from
  the training data": three rows are training rows (question and paragraph), four ask a new question about
  a training paragraph (one of them with the paragraph's whitespace and final period changed: the same text
  folded), and five ask about four paragraphs training never saw. So 7 of its 12 rows share a passage with
  training, 3 of them a question too.
- ``sts``: STS-benchmark-style sentences recurring across splits: of ten validation pairs, three reuse a
  training sentence with a new partner, one reuses one written in other case and punctuation, one reuses
  the training sentence "Prší." (too short to count: under the contamination check's ``MIN_CHARS``) and
  five are new. So 4 of its 10 rows share a sentence with training.

The texts are hand-written Slovak (the paragraphs and their first questions are passages of the demo's
``data/demo_sk/train/qa.jsonl``; the other questions, answers and sentences are written for this fixture).
Regenerate the files with ``python -m tests.support.hub_shared_paragraphs``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.hub_fixtures import HUB_DATA, REPO_ROOT, _card, _json_lines, _write_text

REPO_ID = "skadapt-fixtures/sklep-shared-paragraphs"
REVISION = "5d1e0c6a2b7f4e9d8c3b1a0f6e5d4c3b2a19f8e7"
SPLITS = ("train", "validation")

TOTH = (
    "Atlét Matej Tóth z Nitry sa stal olympijským víťazom v chôdzi na 50 kilometrov na hrách v Riu de "
    "Janeiro v roku 2016. O rok skôr vyhral v Pekingu aj titul majstra sveta v tej istej disciplíne. Je "
    "prvým olympijským víťazom v atletike v histórii samostatného Slovenska."
)
MARATHON = (
    "Medzinárodný maratón mieru v Košiciach sa prvýkrát bežal v roku 1924 a je najstarším maratónom v "
    "Európe. Na svete je starší len Bostonský maratón. Preteky sa konajú každoročne prvú októbrovú "
    "nedeľu a okrem klasickej trate 42,195 km ponúkajú aj polmaratón, štafety a detské behy. Víťazom "
    "prvého ročníka bol domáci bežec Karol Halla."
)
BLOOD = (
    "Prvodarcom sa môže stať zdravý človek vo veku od 18 do 60 rokov s hmotnosťou nad 50 kilogramov. "
    "Muži môžu plnú krv darovať raz za tri mesiace, ženy raz za štyri mesiace. Pred odberom je vhodné "
    "dobre sa vyspať, ľahko sa naraňajkovať bez tučných jedál a vypiť dostatok tekutín. Bezpríspevkový "
    "darca má nárok na pracovné voľno v deň odberu."
)
SHOOTING = (
    "Športová strelkyňa Zuzana Rehák-Štefečeková vybojovala na olympijských hrách v Tokiu zlatú medailu "
    "v trape a vytvorila olympijský rekord. Bola to jej tretia olympijská medaila, predtým získala "
    "striebro v Pekingu v roku 2008 a v Londýne v roku 2012. Hry v Tokiu sa pre pandémiu covidu konali "
    "až v lete 2021, o rok neskôr, než bolo pôvodne plánované."
)
NEPELA = (
    "Krasokorčuliar Ondrej Nepela z Bratislavy sa stal olympijským víťazom v roku 1972 na hrách v "
    "japonskom Sappore. V rokoch 1971 až 1973 vyhral tri tituly majstra sveta za sebou a päťkrát bol "
    "majstrom Európy. Po skončení amatérskej kariéry vystupoval v revue Holiday on Ice a neskôr pôsobil "
    "ako tréner. Jeho meno nesie hlavná hokejová aréna v Bratislave."
)
NEPELA_REFORMATTED = NEPELA.replace(". ", ".  ").rstrip(".")
"""The Nepela paragraph as a validation row holds it: double spaces, no final period (the same folded)."""
ESET = (
    "Spoločnosť ESET patrí k najznámejším slovenským technologickým firmám. Jej základy položili v roku "
    "1987 Miroslav Trnka a Peter Paško, keď napísali program na odstránenie jedného z prvých "
    "počítačových vírusov. Z neho vznikol antivírus NOD, neskôr známy ako NOD32. Firma so sídlom v "
    "Bratislave dnes chráni zariadenia používateľov vo viac ako 200 krajinách."
)
FUJARA = (
    "Fujara je slovenský ľudový dychový nástroj pastierskeho pôvodu, ktorý môže merať vyše 170 "
    "centimetrov. Má iba tri hmatové otvory, no hráč dokáže prefukovaním vyludzovať bohatú škálu tónov. "
    "Najviac sa na nej hrá na Podpoľaní v okolí Detvy. Fujara a hudba na nej hraná patrí od roku 2005 "
    "medzi majstrovské diela ústneho a nehmotného dedičstva ľudstva UNESCO."
)
EGGS = (
    "Vajce uvarené namäkko s tekutým žĺtkom potrebuje od zovretia vody zhruba štyri minúty, na hniličku "
    "asi šesť a natvrdo deväť až desať minút. Vajcia je dobré vybrať z chladničky vopred, aby pri "
    "vložení do horúcej vody nepraskli. Po uvarení ich hneď prelejte studenou vodou, ľahšie sa olúpu. "
    "Pri príliš dlhom varení sa na povrchu žĺtka vytvorí sivozelený povlak."
)
HOCKEY = (
    "Slovenskí hokejisti získali titul majstrov sveta v roku 2002 vo švédskom Göteborgu. Vo finále "
    "porazili Rusko 4:3 a rozhodujúci gól strelil Peter Bondra necelé dve minúty pred koncom tretej "
    "tretiny. Po návrate ich v Bratislave vítali desaťtisíce fanúšikov. Okrem zlata má Slovensko z "
    "majstrovstiev sveta dve strieborné medaily z rokov 2000 a 2012 a bronz z roku 2003."
)
VLHOVA = (
    "Lyžiarka Petra Vlhová z Liptovského Mikuláša vyhrala v sezóne 2020/2021 celkové hodnotenie "
    "Svetového pohára a ako prvá Slovenka získala veľký krištáľový glóbus. Na zimných olympijských "
    "hrách v Pekingu v roku 2022 sa stala olympijskou víťazkou v slalome. Je aj majsterkou sveta v "
    "obrovskom slalome z roku 2019. Jej kariéru v roku 2024 pribrzdilo vážne zranenie kolena."
)
TWO_FACTOR = (
    "Dvojfaktorové overenie pridáva k heslu druhý, nezávislý dôkaz totožnosti. Po zadaní hesla musí "
    "používateľ potvrdiť prihlásenie napríklad kódom z aplikácie v mobile, SMS správou alebo "
    "hardvérovým kľúčom. Aj keď útočník heslo získa, bez druhého faktora sa do účtu nedostane. "
    "Odborníci odporúčajú zapnúť ho najmä pri e-maile, internetovom bankovníctve a sociálnych sieťach."
)
BEER = (
    "Na Slovensku platí pre vodičov nulová tolerancia alkoholu. Za volant nesmie sadnúť nikto, kto má v "
    "krvi alkohol, a to ani po jednom malom pive. Ak polícia nameria nízku hladinu, ide o priestupok s "
    "pokutou a zákazom činnosti, pri vyššej hladine už o trestný čin. Odbúravanie alkoholu sa pritom "
    "nedá urýchliť kávou ani spánkom a u niektorých ľudí trvá aj celú noc."
)

QA_TRAIN: list[tuple[str, str, str, str]] = [  # (title, paragraph, question, answer)
    ("Matej Tóth", TOTH, "v čom vyhral Matej Tóth olympiádu", "v chôdzi na 50 kilometrov"),
    ("Matej Tóth", TOTH, "Odkiaľ pochádza atlét Matej Tóth?", "z Nitry"),
    ("Matej Tóth", TOTH, "Kde sa konali olympijské hry, na ktorých Tóth zvíťazil?", "v Riu de Janeiro"),
    ("Matej Tóth", TOTH, "Kedy sa Matej Tóth stal majstrom sveta?", "O rok skôr"),
    (
        "Maratón mieru",
        MARATHON,
        "Ktorý maratón v Európe má najdlhšiu tradíciu?",
        "Medzinárodný maratón mieru",
    ),
    ("Maratón mieru", MARATHON, "V ktorom roku sa prvýkrát bežal košický maratón?", "v roku 1924"),
    ("Maratón mieru", MARATHON, "Ktorý maratón na svete je starší ako košický?", "Bostonský maratón"),
    ("Maratón mieru", MARATHON, "kto vyhral úplne prvý maratón v Košiciach", "Karol Halla"),
    ("Darovanie krvi", BLOOD, "ako často môžem chodiť darovať krv", "raz za tri mesiace"),
    ("Darovanie krvi", BLOOD, "Od koľkých rokov sa dá darovať krv?", "od 18 do 60 rokov"),
    ("Darovanie krvi", BLOOD, "Čo mám zjesť pred darovaním krvi?", "ľahko sa naraňajkovať bez tučných jedál"),
    ("Darovanie krvi", BLOOD, "mám nárok na voľno v práci keď idem darovať krv", "nárok na pracovné voľno"),
    (
        "Zuzana Rehák-Štefečeková",
        SHOOTING,
        "kto vyhral pre Slovensko zlato v streľbe na olympiáde v Tokiu",
        "Zuzana Rehák-Štefečeková",
    ),
    ("Zuzana Rehák-Štefečeková", SHOOTING, "V ktorej disciplíne súťaží Zuzana Rehák-Štefečeková?", "v trape"),
    (
        "Zuzana Rehák-Štefečeková",
        SHOOTING,
        "Prečo sa olympiáda v Tokiu konala až v roku 2021?",
        "pre pandémiu",
    ),
    ("Zuzana Rehák-Štefečeková", SHOOTING, "Koľko olympijských medailí má Štefečeková?", "tretia"),
    ("Ondrej Nepela", NEPELA, "Čím sa preslávil Ondrej Nepela?", "olympijským víťazom"),
    ("Ondrej Nepela", NEPELA, "Kde vyhral Ondrej Nepela olympiádu?", "v japonskom Sappore"),
    ("Ondrej Nepela", NEPELA, "koľkokrát bol Nepela majstrom sveta", "tri tituly"),
    ("Ondrej Nepela", NEPELA, "Podľa koho je pomenovaná hokejová aréna v Bratislave?", "Jeho meno"),
    ("ESET", ESET, "Ktorá známa antivírusová firma je zo Slovenska?", "ESET"),
    ("ESET", ESET, "Kto založil spoločnosť ESET?", "Miroslav Trnka a Peter Paško"),
    ("ESET", ESET, "ako sa volal prvý antivírus od ESETu", "NOD"),
    ("ESET", ESET, "V koľkých krajinách chráni ESET zariadenia?", "vo viac ako 200 krajinách"),
    ("Fujara", FUJARA, "fujara aký je to nástroj a odkiaľ pochádza", "ľudový dychový nástroj"),
    ("Fujara", FUJARA, "Koľko otvorov má fujara?", "tri hmatové otvory"),
    ("Fujara", FUJARA, "Kde sa na Slovensku najviac hrá na fujare?", "na Podpoľaní"),
    ("Fujara", FUJARA, "Od kedy je fujara zapísaná v zozname UNESCO?", "od roku 2005"),
    ("Varenie vajec", EGGS, "koľko minút variť vajíčko natvrdo", "deväť až desať minút"),
    ("Varenie vajec", EGGS, "Ako dlho sa varí vajce namäkko?", "zhruba štyri minúty"),
    ("Varenie vajec", EGGS, "prečo vajíčka pri varení praskajú", "vybrať z chladničky vopred"),
    ("Varenie vajec", EGGS, "Prečo má žĺtok po uvarení sivý povlak?", "Pri príliš dlhom varení"),
]
QA_VALIDATION: list[tuple[str, str, str, str]] = [
    QA_TRAIN[3],  # sampled from training: the same question about the same paragraph
    QA_TRAIN[21],
    QA_TRAIN[25],
    (
        "Maratón mieru",
        MARATHON,
        "Ktorý deň v roku sa beží Medzinárodný maratón mieru?",
        "prvú októbrovú nedeľu",
    ),
    ("Darovanie krvi", BLOOD, "Koľko musím vážiť, aby som mohol darovať krv?", "nad 50 kilogramov"),
    ("Ondrej Nepela", NEPELA_REFORMATTED, "Čomu sa venoval Ondrej Nepela po skončení kariéry?", "ako tréner"),
    ("Varenie vajec", EGGS, "Ako ľahšie olúpať uvarené vajíčka?", "prelejte studenou vodou"),
    ("Hokej", HOCKEY, "v ktorom roku vyhrali naši hokejisti zlato na MS", "v roku 2002"),
    ("Hokej", HOCKEY, "Kto strelil víťazný gól vo finále MS 2002?", "Peter Bondra"),
    ("Petra Vlhová", VLHOVA, "akú medailu má Vlhová z olympiády", "olympijskou víťazkou v slalome"),
    ("Dvojfaktorové overenie", TWO_FACTOR, "načo je dobré zapnúť si overenie v dvoch krokoch", "druhý"),
    ("Alkohol za volantom", BEER, "môžem si dať jedno malé pivo a potom šoférovať?", "nulová tolerancia"),
]
QA_OVERLAP = {"rows": 7, "positive": 7, "query": 3}
"""What the validation split shares with training: rows, and rows by the text role that matches."""

STS_TRAIN: list[tuple[str, str, float]] = [
    (
        "Mestské zastupiteľstvo v Trnave schválilo rozpočet na budúci rok až po šiestich hodinách rokovania.",
        "Trnavskí poslanci po šesťhodinovej debate odsúhlasili mestský rozpočet na nasledujúci rok.",
        4.8,
    ),
    (
        "Hokejisti Popradu vyhrali doma nad Zvolenom 4:2 a posunuli sa na tretie miesto tabuľky.",
        "Poprad zdolal na domácom ľade Zvolen 4:2.",
        3.6,
    ),
    (
        "Polícia zadržala muža, ktorý za jeden víkend vykradol tri trafiky v Martine.",
        "V Martine niekto vykradol trafiku, polícia páchateľa zatiaľ hľadá.",
        2.4,
    ),
    ("Mačka spí na okennom parapete.", "Pes leží na gauči a spí.", 1.8),
    (
        "Očkovanie proti chrípke je pre seniorov nad 65 rokov bezplatné.",
        "Tohtoročná chrípková epidémia zatvorila školy v troch okresoch.",
        1.6,
    ),
    ("Bratislavská zoo privítala mláďa žirafy.", "Ochranári vypustili do prírody tri vyliečené sovy.", 1.2),
    (
        "Prvého mája sa v centre mesta nebude dať parkovať, pretože tam bude jarmok.",
        "Pre jarmok bude 1. mája parkovanie v centre zakázané.",
        4.6,
    ),
    (
        "Nemocnica obmedzila návštevy pacientov pre zvýšený výskyt chrípky.",
        "Kvôli chrípkovej epidémii sú návštevy v nemocnici obmedzené.",
        4.6,
    ),
    (
        "Pri nákupe lieku na predpis zaplatí pacient len doplatok.",
        "Za liek predpísaný lekárom platí pacient iba doplatok.",
        4.8,
    ),
    (
        "Deti sa bez sprievodu dospelej osoby nesmú kúpať v bazéne.",
        "Do bazéna smú deti ísť len v sprievode dospelého.",
        4.6,
    ),
    ("Prší.", "Vonku leje ako z krhly.", 4.0),
    ("Mám pocit, že sa mi pokazila práčka.", "Víťazom Tour de France sa stal slovinský cyklista.", 0.0),
]
STS_VALIDATION: list[tuple[str, str, float]] = [
    ("Mačka spí na okennom parapete.", "Na parapete si zdriemla mačka.", 4.4),  # a training sentence
    (
        "Nemocnica obmedzila návštevy pacientov pre zvýšený výskyt chrípky.",
        "Nemocnica zrušila všetky plánované operácie.",
        1.8,
    ),
    (
        "Deti sa bez sprievodu dospelej osoby nesmú kúpať v bazéne.",
        "Plaváreň je pre deti zatvorená celé leto.",
        1.4,
    ),
    (
        "V centre mesta sa počas jarmoku nebude dať zaparkovať.",
        "PRE JARMOK bude 1. mája parkovanie v centre zakázané!",
        4.2,
    ),  # the same folded
    ("Prší.", "Svieti slnko a je teplo.", 0.4),  # "Prší." is too short to count
    (
        "Vodiči musia na zimné pneumatiky prezuť do 15. novembra.",
        "Povinnosť mať zimné pneumatiky platí pri snehu a poľadovici.",
        2.6,
    ),
    (
        "Knižnica predĺžila otváracie hodiny počas skúškového obdobia.",
        "Počas skúšok je knižnica otvorená dlhšie.",
        4.6,
    ),
    (
        "Vo Vysokých Tatrách napadlo pol metra nového snehu.",
        "V Tatrách cez noc nasnežilo vyše päťdesiat centimetrov.",
        4.2,
    ),
    ("Obchodné centrum bude v nedeľu zatvorené.", "Futbalisti Slovana vyhrali v Trnave.", 0.0),
    (
        "Učiteľka pochválila žiakov za projekt o ochrane prírody.",
        "Žiaci dostali od učiteľky pochvalu za ekologický projekt.",
        4.4,
    ),
]
STS_OVERLAP = {"rows": 4, "sentence1": 3, "sentence2": 1}
"""What the validation split shares with training: rows, and rows by the text role that matches."""

CONFIGS = ("question-answering", "sts")


def rows(config: str, split: str) -> list[dict[str, Any]]:
    """The rows of ``{config}/{split}.json`` in skLEP's columns."""
    if config == "question-answering":
        data = QA_TRAIN if split == "train" else QA_VALIDATION
        return [
            {
                "id": f"shared-{split}-{number:04d}",
                "title": title,
                "context": context,
                "question": question,
                "answers": {"text": [answer], "answer_start": [context.index(answer)]},
            }
            for number, (title, context, question, answer) in enumerate(data, 1)
        ]
    if config == "sts":
        data_sts = STS_TRAIN if split == "train" else STS_VALIDATION
        return [{"sentence1": s1, "sentence2": s2, "similarity_score": score} for s1, s2, score in data_sts]
    raise KeyError(config)


def readme() -> str:
    """The card: skLEP's ``configs:`` layout for the two configs served."""
    card = {
        "language": ["sk"],
        "license": ["cc-by-sa-4.0"],
        "pretty_name": "skLEP-like splits sharing paragraphs and sentences (local Hub fixture)",
        "configs": [
            {
                "config_name": config,
                "data_files": [{"split": s, "path": f"{config}/{s}.json"} for s in SPLITS],
            }
            for config in CONFIGS
        ],
    }
    body = (
        "# skLEP-like shared splits (local Hub fixture)\n\nValidation rows sampled from the training "
        "paragraphs, and STS sentences recurring across splits.\n"
    )
    return _card(card, body)


def write_repo(root: Path) -> list[Path]:
    """Write the repository under ``root`` (``datasets/OWNER/NAME/REVISION/...``); the files written."""
    target = root / "datasets" / REPO_ID / REVISION
    written = [
        _write_text(target / config / f"{split}.json", _json_lines(rows(config, split)))
        for config in CONFIGS
        for split in SPLITS
    ]
    written.append(_write_text(target / "README.md", readme()))
    return written


def spec(config: str, split: str) -> str:
    """The ``hub:`` source spec of a config and split, pinned to :data:`REVISION`."""
    return f"hub:{REPO_ID}:{config}:{split}@{REVISION}"


def write_local(folder: Path) -> dict[tuple[str, str], Path]:
    """The same rows as local JSON-lines files (tests that need no Hub): (config, split) -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for config in CONFIGS:
        for split in SPLITS:
            path = folder / f"{config}-{split}.jsonl"
            path.write_text(
                "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows(config, split)),
                encoding="utf-8",
            )
            paths[config, split] = path
    return paths


if __name__ == "__main__":
    for path in write_repo(HUB_DATA):
        print(path.relative_to(REPO_ROOT))
