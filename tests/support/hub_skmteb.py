"""Fixture repositories of the datasets of mteb's ``MTEB(slk, v1)`` benchmark, for the local Hub.

Each repository of :func:`skmteb_repos` is written (``python -m tests.support.hub_skmteb``) under
``tests/data/hub/datasets/OWNER/NAME/<revision mteb pins>/`` in the layout mteb's loaders read from the real
Hub: a README whose YAML ``configs:`` map configs and splits to ``data_files`` (auto-converted parquet
layouts) or the files ``datasets`` finds by name (CSV/JSON lines repositories), with the columns the tasks
read. Rows are a few hand-written Slovak (and English/Czech) texts per split. How each layout was derived
is in ``tests/data/hub/SKMTEB.md``.

``SlovakRTE`` reads ``slovak-nlp/sklep`` (config ``rte``), a repository of :mod:`tests.support.hub_fixtures`.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.support.hub_fixtures import HUB_DATA, SKLEP_ID, SKLEP_REVISION, sklep_rows

BENCHMARK = "MTEB(slk, v1)"

Row = dict[str, Any]
Rows = list[Row]
Feature = dict[str, Any]
"""A feature in README form: ``{"name": ..., "dtype": ...}`` (see :func:`features`)."""

STRING = "string"


@dataclass
class FixtureRepo:
    """A dataset repository at one commit: parquet tables, text files and a README card."""

    repo_id: str
    revision: str
    card: dict[str, Any] = field(default_factory=dict)
    body: str = ""
    tables: dict[str, tuple[Rows, list[Feature]]] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    gated: str | bool = False
    """The Hub's gating mode (``"auto"``), written to the repository's ``settings.json``."""

    def parquet(self, config: str, folder: str, splits: dict[str, Rows], columns: list[Feature]) -> None:
        """Add a config of auto-converted parquet files ``{folder}/{split}-00000-of-00001.parquet``."""
        for split, rows in splits.items():
            self.tables[f"{folder}/{split}-00000-of-00001.parquet"] = (rows, columns)
        self.config(config, {split: f"{folder}/{split}-*" for split in splits})
        self.info(config, columns, {split: len(rows) for split, rows in splits.items()})

    def config(self, config: str, data_files: dict[str, str]) -> None:
        """Add a ``configs:`` entry (split -> path pattern)."""
        entry = {
            "config_name": config,
            "data_files": [{"split": s, "path": p} for s, p in data_files.items()],
        }
        self.card.setdefault("configs", []).append(entry)

    def info(self, config: str, columns: list[Feature], splits: dict[str, int]) -> None:
        """Add a ``dataset_info:`` entry (features and split sizes)."""
        entry = {
            "config_name": config,
            "features": columns,
            "splits": [{"name": name, "num_examples": count} for name, count in splits.items()],
        }
        self.card.setdefault("dataset_info", []).append(entry)

    def readme(self) -> str:
        """The README: YAML front matter (when there is a card) and a body."""
        body = (
            self.body
            or f"# {self.repo_id} (local Hub fixture)\n\nA few hand-written rows in the layout mteb reads.\n"
        )
        if not self.card:
            return body
        return "---\n" + yaml.safe_dump(self.card, sort_keys=False, allow_unicode=True) + "---\n\n" + body


def features(**columns: Any) -> list[Feature]:
    """README features from ``name=dtype`` (``"string"``, ``{"translation": ...}``; ``[dtype]``: a list)."""
    return [
        {"name": name, "list": dtype[0]} if isinstance(dtype, list) else {"name": name, "dtype": dtype}
        for name, dtype in columns.items()
    ]


CORPUS = features(_id=STRING, text=STRING, title=STRING)
QUERIES = features(_id=STRING, text=STRING)
QRELS = features(**{"query-id": STRING, "corpus-id": STRING, "score": "int64"})
TOP_RANKED = features(**{"query-id": STRING, "corpus-ids": [STRING]})
CORPUS_V2 = features(id=STRING, text=STRING, title=STRING)
QUERIES_V2 = features(id=STRING, text=STRING)
TEXT_LABEL = features(text=STRING, label="int64")


# -- retrieval -----------------------------------------------------------------------------------------------

BELEBELE_PASSAGES = [  # (link, {language: passage}, [(question per language, answers per language, correct)])
    (
        "https://en.wikivoyage.org/wiki/Old_town_walks",
        {
            "eng_Latn": "The old town is small enough to explore on foot in a single afternoon. Most museums "
            "close "
            "on Mondays, so plan your visit for later in the week. Trams run until midnight and tickets must "
            "be "
            "validated on board.",
            "slk_Latn": "Staré mesto je dosť malé na to, aby ste ho za jedno popoludnie prešli pešo. Väčšina "
            "múzeí je v pondelok zatvorená, preto si návštevu naplánujte na neskôr v týždni. Električky "
            "premávajú do polnoci a lístky treba označiť vo vozidle.",
        },
        [
            (
                {"eng_Latn": "When are most museums closed?", "slk_Latn": "Kedy je väčšina múzeí zatvorená?"},
                {
                    "eng_Latn": ["On Mondays", "On Sundays", "In the afternoon", "After midnight"],
                    "slk_Latn": ["V pondelok", "V nedeľu", "Popoludní", "Po polnoci"],
                },
                1,
            ),
            (
                {
                    "eng_Latn": "What must passengers do with their tram tickets?",
                    "slk_Latn": "Čo musia cestujúci urobiť s lístkami na električku?",
                },
                {
                    "eng_Latn": [
                        "Buy them at midnight",
                        "Validate them on board",
                        "Show them at the museum",
                        "Return them to the driver",
                    ],
                    "slk_Latn": [
                        "Kúpiť ich o polnoci",
                        "Označiť ich vo vozidle",
                        "Ukázať ich v múzeu",
                        "Vrátiť ich vodičovi",
                    ],
                },
                2,
            ),
        ],
    ),
    (
        "https://en.wikinews.org/wiki/Bees_prefer_short_flights",
        {
            "eng_Latn": "Scientists found that the bees returned to the hive faster when the flowers were "
            "planted "
            "close together. The researchers believe that shorter flights save energy during hot summer "
            "days.",
            "slk_Latn": "Vedci zistili, že včely sa vracali do úľa rýchlejšie, keď boli kvety vysadené "
            "blízko "
            "seba. Výskumníci sa domnievajú, že kratšie lety šetria energiu počas horúcich letných dní.",
        },
        [
            (
                {
                    "eng_Latn": "Why did the bees return faster?",
                    "slk_Latn": "Prečo sa včely vracali rýchlejšie?",
                },
                {
                    "eng_Latn": [
                        "The hive was larger",
                        "The flowers were planted close together",
                        "The days were colder",
                        "The researchers fed them",
                    ],
                    "slk_Latn": [
                        "Úľ bol väčší",
                        "Kvety boli vysadené blízko seba",
                        "Dni boli chladnejšie",
                        "Výskumníci ich kŕmili",
                    ],
                },
                2,
            ),
            (
                {
                    "eng_Latn": "What do shorter flights save, according to the researchers?",
                    "slk_Latn": "Čo podľa výskumníkov šetria kratšie lety?",
                },
                {
                    "eng_Latn": ["Time", "Water", "Energy", "Flowers"],
                    "slk_Latn": ["Čas", "Vodu", "Energiu", "Kvety"],
                },
                3,
            ),
        ],
    ),
    (
        "https://en.wikinews.org/wiki/Storm_cuts_power_on_the_coast",
        {
            "eng_Latn": "The storm knocked out power to thousands of homes along the coast. Repair crews "
            "worked "
            "through the night, and by morning electricity had been restored in most villages. Schools "
            "remained "
            "closed for another day.",
            "slk_Latn": "Búrka odstavila elektrinu tisícom domácností pozdĺž pobrežia. Opravári pracovali "
            "celú "
            "noc a do rána bola elektrina vo väčšine dedín obnovená. Školy zostali zatvorené ešte jeden deň.",
        },
        [
            (
                {"eng_Latn": "What did the storm cause?", "slk_Latn": "Čo spôsobila búrka?"},
                {
                    "eng_Latn": [
                        "A fire in the school",
                        "A power outage",
                        "A flood in the city",
                        "A closed airport",
                    ],
                    "slk_Latn": [
                        "Požiar v škole",
                        "Výpadok elektriny",
                        "Povodeň v meste",
                        "Zatvorené letisko",
                    ],
                },
                2,
            ),
            (
                {"eng_Latn": "What happened to the schools?", "slk_Latn": "Čo sa stalo so školami?"},
                {
                    "eng_Latn": [
                        "They opened early",
                        "They stayed closed for another day",
                        "They lost their roofs",
                        "They were used as shelters",
                    ],
                    "slk_Latn": [
                        "Otvorili skôr",
                        "Zostali zatvorené ešte jeden deň",
                        "Prišli o strechy",
                        "Slúžili ako prístrešky",
                    ],
                },
                2,
            ),
        ],
    ),
]


def belebele_rows(language: str, passages_data: list[Any] | None = None) -> Rows:
    """Belebele's columns for one language (the questions of each FLORES passage)."""
    rows = []
    for link, passages, questions in BELEBELE_PASSAGES if passages_data is None else passages_data:
        for number, (question, answers, correct) in enumerate(questions, 1):
            row: Row = {"link": link, "question_number": number, "flores_passage": passages[language]}
            row["question"] = question[language]
            row |= {f"mc_answer{i}": answer for i, answer in enumerate(answers[language], 1)}
            row |= {"correct_answer_num": str(correct), "dialect": language}
            rows.append(row)
    return rows


BELEBELE_COLUMNS = features(
    link=STRING,
    question_number="int64",
    flores_passage=STRING,
    question=STRING,
    mc_answer1=STRING,
    mc_answer2=STRING,
    mc_answer3=STRING,
    mc_answer4=STRING,
    correct_answer_num=STRING,
    dialect=STRING,
)

SLOVAKSUM = {  # split -> (title, summary, text)
    "test": [
        (
            "Tatranská električka bude premávať častejšie",
            "Železnice zavedú od decembra na trati zo Starého Smokovca na Štrbské Pleso spoje každých "
            "tridsať "
            "minút.",
            "Železničná spoločnosť Slovensko oznámila, že v novom cestovnom poriadku pridá na tatranské "
            "elektrické železnice dvanásť párov vlakov. Dôvodom je rastúci počet turistov v zime aj v lete. "
            "Nové "
            "súpravy, ktoré dopravca kúpil minulý rok, majú viac miest na lyže a bicykle.",
        ),
        (
            "Nemocnica v Poprade otvorila nový pavilón",
            "Pacienti urgentného príjmu budú ošetrení v moderných priestoroch, čakanie sa má skrátiť na "
            "polovicu.",
            "Nový pavilón stál takmer štyridsať miliónov eur a postavili ho za dva roky. Okrem urgentného "
            "príjmu "
            "sú v ňom štyri operačné sály a jednotka intenzívnej starostlivosti. Riaditeľ nemocnice povedal, "
            "že "
            "do konca roka prijmú ďalších tridsať sestier.",
        ),
        (
            "Obec pri Trenčíne postaví nájomné byty pre mladé rodiny",
            "V bytovke bude dvadsaťštyri bytov s nájomným nižším, ako je bežné v okolí.",
            "Starosta obce získal na stavbu úver zo Štátneho fondu rozvoja bývania. Byty budú mať jednu až "
            "tri "
            "izby a k domu patrí aj detské ihrisko. Záujemcovia musia mať v obci trvalý pobyt alebo v nej "
            "pracovať.",
        ),
        (
            "Hubári v lesoch hlásia úrodu dubákov",
            "Po teplých dažďoch sa v lesoch na strednom Slovensku objavilo veľa hríbov, mykológovia však "
            "varujú pred otravami.",
            "Toxikologické informačné centrum zaznamenalo za posledný týždeň pätnásť prípadov otravy hubami. "
            "Najnebezpečnejšia je muchotrávka zelená, ktorú si neskúsení hubári mýlia s plávkou. Odborníci "
            "radia "
            "nezbierať huby, ktoré človek s istotou nepozná.",
        ),
        (
            "Dunajská Streda bude mať novú plaváreň",
            "Mesto začne stavať krytý bazén s dĺžkou dvadsaťpäť metrov, otvoriť ho chce o dva roky.",
            "Projekt počíta s plaveckým bazénom, detským bazénom a saunou. Plaváreň budú môcť cez deň "
            "využívať "
            "školy na povinný plavecký výcvik. Mesto na stavbu dostalo dotáciu z ministerstva, zvyšok "
            "zaplatí z "
            "vlastného rozpočtu.",
        ),
        (
            "Policajti zadržali podvodníkov, ktorí volali seniorom",
            "Skupina sa vydávala za bankových úradníkov a od dôchodcov vylákala desaťtisíce eur.",
            "Podvodníci seniorom tvrdili, že ich účet napadli hackeri a peniaze treba previesť na bezpečný "
            "účet. "
            "Vyšetrovateľ obvinil štyroch mužov z trestného činu podvodu. Polícia pripomína, že banka nikdy "
            "nežiada heslá ani prevod peňazí cez telefón.",
        ),
    ],
    "train": [
        (
            "Žilinská knižnica predĺži otváracie hodiny",
            "Čitatelia si budú môcť požičiavať knihy aj v sobotu popoludní.",
            "Knižnica reaguje na prieskum medzi čitateľmi, ktorí chceli chodiť aj cez víkend. V sobotu bude "
            "otvorená do šiestej večer. Pribudne aj samoobslužný automat na vracanie kníh.",
        ),
        (
            "Vinári z Malokarpatskej oblasti očakávajú dobrý ročník",
            "Hrozno dozrieva skôr ako zvyčajne a má vysoký obsah cukru.",
            "Vinobranie sa pre teplé leto začne už koncom augusta. Vinári odhadujú, že úroda bude o pätinu "
            "vyššia ako vlani. Najviac sa tešia z frankovky a rizlingu vlašského.",
        ),
    ],
    "valid": [
        (
            "Na Orave otvorili novú cyklotrasu",
            "Cesta pre cyklistov spája Tvrdošín s Trstenou a vedie popri rieke.",
            "Trasa je dlhá osemnásť kilometrov a má asfaltový povrch. Pozdĺž nej sú odpočívadlá a informačné "
            "tabule o prírode. Financovala sa z cezhraničného programu s Poľskom.",
        ),
        (
            "Zoo v Bojniciach má prírastok",
            "Samica žirafy porodila mláďa, ktoré už po hodine stálo na nohách.",
            "Mláďa meria takmer dva metre a návštevníci ho môžu vidieť vo vonkajšom výbehu. Chovatelia mu "
            "ešte "
            "vyberajú meno. Bojnická zoo chová žirafy od roku 2008.",
        ),
    ],
}

SMESUM_RETRIEVAL = [  # (title, introduction: the query, text)
    (
        "Snehové pole na Lomnickom štíte sa zmenšuje",
        "Klimatológovia merajú, že snehové pole pod vrcholom sa za desať rokov zmenšilo o tretinu.",
        "Meteorologická stanica na Lomnickom štíte patrí k najvyššie položeným v strednej Európe. Merania "
        "ukazujú, že priemerná teplota tu stúpla o jeden a pol stupňa. Vedci upozorňujú, že kratšia zima "
        "ovplyvní aj rastliny a zvieratá vo vysokých horách.",
    ),
    (
        "Mesto Nitra vysadí tisíc stromov",
        "Radnica chce ochladiť sídliská a zlepšiť ovzdušie, stromy budú sadiť aj dobrovoľníci.",
        "Prvé lipy a javory pribudnú na Klokočine a Chrenovej. Mesto vyberalo druhy, ktoré lepšie znášajú "
        "sucho. O stromy sa budú prvé tri roky starať záhradníci z mestskej firmy.",
    ),
    (
        "Ceny pohonných látok klesli pod hranicu 1,60 eura",
        "Benzín na čerpadlách zlacnel tretí týždeň po sebe, nafta je najlacnejšia od jari.",
        "Podľa štatistického úradu stál liter benzínu v priemere 1,58 eura. Analytici pokles pripisujú "
        "lacnejšej rope na svetových trhoch. Pred letnou sezónou však ceny môžu opäť mierne stúpnuť.",
    ),
    (
        "Slovenská basketbalistka podpísala zmluvu v Španielsku",
        "Dvadsaťročná pivotka bude hrať za klub z Valencie, ktorý patrí k najlepším v Európe.",
        "Hráčka začínala v Ružomberku a posledné dve sezóny pôsobila v univerzitnej lige v Spojených "
        "štátoch. "
        "Zmluvu podpísala na tri roky. Tréner reprezentácie verí, že skúsenosti zo Španielska pomôžu celému "
        "tímu.",
    ),
    (
        "Univerzita v Bratislave otvára štúdium dátovej vedy",
        "Nový magisterský program spája štatistiku, programovanie a etiku práce s údajmi.",
        "Prvých štyridsať študentov prijme fakulta matematiky, fyziky a informatiky už v septembri. Výučba "
        "bude "
        "prebiehať v angličtine aj v slovenčine. Na programe spolupracujú aj firmy, ktoré študentom ponúknu "
        "stáže.",
    ),
    (
        "V Banskej Štiavnici pokračuje obnova kalvárie",
        "Reštaurátori opravia poslednú z kaplniek a sochy krížovej cesty.",
        "Kalvária patrí k najvýznamnejším barokovým pamiatkam na Slovensku. Obnova trvá už pätnásť rokov a "
        "platí sa najmä zo zbierok a grantov. Po dokončení prác bude areál prístupný aj večer s novým "
        "osvetlením.",
    ),
]

SKQUAD_CORPUS = [  # (id, title, text)
    (
        "c-dunaj",
        "Dunaj",
        "Dunaj je po Volge druhá najdlhšia rieka v Európe. Pramení v nemeckom Schwarzwalde a vlieva sa do "
        "Čierneho mora. Na Slovensku tvorí časť hranice s Rakúskom a Maďarskom.",
    ),
    (
        "c-gerlach",
        "Gerlachovský štít",
        "Gerlachovský štít je s výškou 2655 metrov najvyšší vrch Vysokých Tatier aj celých Karpát. Prvý "
        "doložený výstup na vrchol sa uskutočnil v roku 1834.",
    ),
    (
        "c-stur",
        "Ľudovít Štúr",
        "Ľudovít Štúr bol vodcom slovenského národného hnutia v 19. storočí. V roku 1843 sa spolu s Hurbanom "
        "a "
        "Hodžom dohodol na spisovnej slovenčine založenej na stredoslovenskom nárečí.",
    ),
    (
        "c-spis",
        "Spišský hrad",
        "Spišský hrad patrí k najväčším hradným komplexom v strednej Európe. Od roku 1993 je zapísaný do "
        "zoznamu svetového dedičstva UNESCO spolu s neďalekou Spišskou Kapitulou.",
    ),
    (
        "c-bojnice",
        "Bojnický zámok",
        "Bojnický zámok dostal dnešnú romantickú podobu na prelome 19. a 20. storočia, keď ho dal prestavať "
        "gróf Ján Pálffy. Každú jar sa v ňom koná medzinárodný festival duchov a strašidiel.",
    ),
    (
        "c-demanovska",
        "Demänovská jaskyňa slobody",
        "Demänovská jaskyňa slobody leží v Nízkych Tatrách a je najnavštevovanejšou jaskyňou na Slovensku. "
        "Objavili ju v roku 1921 a je známa bohatou kvapľovou výzdobou a podzemnými jazierkami.",
    ),
]
SKQUAD_QUERIES = [  # (id, question, relevant corpus ids)
    ("q-1", "Kde pramení Dunaj?", ["c-dunaj"]),
    ("q-2", "Aký vysoký je Gerlachovský štít?", ["c-gerlach"]),
    ("q-3", "Kedy sa štúrovci dohodli na spisovnej slovenčine?", ["c-stur"]),
    ("q-4", "Od ktorého roku je Spišský hrad na zozname UNESCO?", ["c-spis"]),
    ("q-5", "Kto dal prestavať Bojnický zámok?", ["c-bojnice"]),
]

RERANKING: dict[str, tuple[list[tuple[str, str, str]], list[tuple[str, str, list[str], str]]]] = {
    # repo -> (corpus (id, title, text), queries (id, text, candidates, relevant id))
    "TUKE-KEMT/reranking-skquad": (
        [
            (
                "d1",
                "Tatranský národný park",
                "Tatranský národný park bol vyhlásený v roku 1949 ako prvý národný park na Slovensku.",
            ),
            (
                "d2",
                "Slovenský raj",
                "Národný park Slovenský raj je známy tiesňavami, rebríkmi a reťazami, po "
                "ktorých turisti prechádzajú popri vodopádoch.",
            ),
            (
                "d3",
                "Pieniny",
                "Pltníci splavujú Dunajec v Pieninách na drevených pltiach už niekoľko storočí.",
            ),
            (
                "d4",
                "Kremnica",
                "Mincovňa v Kremnici razí mince nepretržite od roku 1328 a patrí k najstarším "
                "fungujúcim podnikom na svete.",
            ),
            (
                "d5",
                "Banská Štiavnica",
                "Banská akadémia v Banskej Štiavnici, založená v roku 1762, bola jednou z "
                "prvých technických vysokých škôl v Európe.",
            ),
            (
                "d6",
                "Bardejov",
                "Historické jadro Bardejova s gotickou radnicou a meštianskymi domami je pamiatkou UNESCO.",
            ),
            (
                "d7",
                "Jozef Murgaš",
                "Jozef Murgaš bol kňaz a vynálezca, ktorý získal americké patenty v oblasti "
                "bezdrôtovej telegrafie.",
            ),
            (
                "d8",
                "Štefan Banič",
                "Štefan Banič si v roku 1914 dal patentovať padák, ktorý predtým vyskúšal "
                "skokom z budovy vo Washingtone.",
            ),
            (
                "d9",
                "Aurel Stodola",
                "Aurel Stodola, rodák z Liptovského Mikuláša, bol priekopníkom konštrukcie "
                "parných a plynových turbín.",
            ),
        ],
        [
            ("r1", "Ktorý národný park je na Slovensku najstarší?", ["d1", "d2", "d3"], "d1"),
            ("r2", "Odkedy sa razia mince v Kremnici?", ["d4", "d5", "d6"], "d4"),
            ("r3", "Kto si dal patentovať padák?", ["d7", "d8", "d9"], "d8"),
            ("r4", "Kde sa narodil Aurel Stodola?", ["d9", "d7", "d5"], "d9"),
        ],
    ),
    "slovak-nlp/slovak-pharmacy-drmax-reranking": (
        [
            (
                "p1",
                "",
                "Ibuprofén sa neodporúča užívať nalačno, pretože môže dráždiť žalúdok. Najlepšie je "
                "zapiť tabletu pohárom vody počas jedla alebo po ňom.",
            ),
            (
                "p2",
                "",
                "Paracetamol môžete podať aj deťom, dávku však treba vypočítať podľa hmotnosti dieťaťa, "
                "nie podľa veku.",
            ),
            (
                "p3",
                "",
                "Pri nádche pomáha výplach nosa morskou vodou. Nosové kvapky s xylometazolínom "
                "nepoužívajte dlhšie ako sedem dní.",
            ),
            (
                "p4",
                "",
                "Probiotiká je vhodné užívať počas liečby antibiotikami aj týždeň po nej, ale s odstupom "
                "aspoň dvoch hodín od antibiotika.",
            ),
            (
                "p5",
                "",
                "Vitamín D sa lepšie vstrebáva s jedlom, ktoré obsahuje tuk. V zime ho odporúčame "
                "užívať aj dospelým.",
            ),
            (
                "p6",
                "",
                "Pri bolesti hrdla môžete cmúľať pastilky s dezinfekčnou látkou. Ak máte vysokú horúčku "
                "dlhšie ako tri dni, navštívte lekára.",
            ),
            ("p7", "", "Krém s hydrokortizónom bez predpisu používajte na malé plochy kože najviac týždeň."),
            (
                "p8",
                "",
                "Železo sa najlepšie vstrebáva s vitamínom C, preto ho môžete zapiť pomarančovým "
                "džúsom. Nezapíjajte ho čajom ani kávou.",
            ),
        ],
        [
            ("m1", "Môžem užiť ibuprofén na prázdny žalúdok?", ["p1", "p2", "p6", "p7"], "p1"),
            ("m2", "Ako dlho môžem používať kvapky do nosa?", ["p3", "p6", "p1", "p5"], "p3"),
            ("m3", "Kedy mám brať probiotiká, keď beriem antibiotiká?", ["p4", "p5", "p8", "p2"], "p4"),
            ("m4", "S čím zapiť tabletky so železom?", ["p8", "p5", "p4", "p1"], "p8"),
        ],
    ),
    "slovak-nlp/slovak-pharmacy-mojalekaren-reranking": (
        [
            (
                "l1",
                "",
                "Magnézium je vhodné užívať večer, pretože pomáha uvoľniť svaly a môže zlepšiť spánok.",
            ),
            (
                "l2",
                "",
                "Očné kvapky po otvorení spotrebujte do štyroch týždňov, potom ich vyhoďte aj vtedy, ak "
                "vo fľaštičke ešte zostali.",
            ),
            (
                "l3",
                "",
                "Antihistaminiká novej generácie zvyčajne nespôsobujú ospalosť, napriek tomu odporúčame "
                "pri prvom užití nešoférovať.",
            ),
            (
                "l4",
                "",
                "Náplasť s kapsaicínom nalepte len na neporušenú kožu a po jej odstránení si dôkladne "
                "umyte ruky.",
            ),
            (
                "l5",
                "",
                "Tehotné ženy by mali užívať kyselinu listovú už niekoľko mesiacov pred počatím a počas "
                "prvého trimestra.",
            ),
            ("l6", "", "Opaľovací krém naneste pol hodiny pred pobytom na slnku a po kúpaní ho obnovte."),
            (
                "l7",
                "",
                "Sirup proti kašľu s ambroxolom neužívajte večer pred spaním, pretože uvoľňuje hlieny a "
                "podporuje vykašliavanie.",
            ),
            (
                "l8",
                "",
                "Omega-3 mastné kyseliny z rybieho oleja užívajte s jedlom, aby ste predišli rybacej "
                "pachuti v ústach.",
            ),
        ],
        [
            ("k1", "Kedy je najlepšie brať horčík?", ["l1", "l8", "l5", "l3"], "l1"),
            ("k2", "Ako dlho vydržia otvorené očné kvapky?", ["l2", "l6", "l4", "l7"], "l2"),
            ("k3", "Môžem po tabletke na alergiu šoférovať?", ["l3", "l1", "l7", "l5"], "l3"),
            ("k4", "Prečo nemám piť sirup na kašeľ večer?", ["l7", "l3", "l8", "l2"], "l7"),
        ],
    ),
}

WEBFAQ_RETRIEVAL = [  # (corpus id, answer, query id, question); f6 is a distractor without a question
    (
        "f1",
        "Objednávku môžete zrušiť bezplatne do 24 hodín od jej odoslania v sekcii Moje objednávky.",
        "w1",
        "Dokedy môžem zrušiť objednávku?",
    ),
    (
        "f2",
        "Tovar doručujeme kuriérom do dvoch pracovných dní, pri platbe vopred je doprava nad 50 eur zadarmo.",
        "w2",
        "Ako dlho trvá doručenie?",
    ),
    (
        "f3",
        "Vrátenie tovaru je možné do 14 dní od prevzatia bez udania dôvodu, tovar však musí byť nepoškodený.",
        "w3",
        "Môžem tovar vrátiť bez udania dôvodu?",
    ),
    (
        "f4",
        "Reklamáciu vybavíme najneskôr do 30 dní. Stav reklamácie sledujete v zákazníckom účte.",
        "w4",
        "Za koľko dní vybavíte reklamáciu?",
    ),
    (
        "f5",
        "Darčekovú poukážku môžete uplatniť na celý sortiment okrem tovaru v akcii, platí jeden rok.",
        "w5",
        "Na čo sa dá použiť darčeková poukážka?",
    ),
    ("f6", "Parkovanie pre hostí hotela je v podzemnej garáži za poplatok 10 eur za noc.", None, None),
]


# -- STS and pair classification -----------------------------------------------------------------------------

SLOVAK_STS = [
    ("Žena hrá na klavíri.", "Žena hrá na hudobnom nástroji.", 3.8),
    ("Muž krája chlieb v kuchyni.", "Muž krája chlieb.", 4.6),
    ("Dve deti sa hrajú na pieskovisku.", "Mačka leží na okennom parapete.", 0.2),
    ("Vláda zvýšila dane z nehnuteľností.", "Dane z nehnuteľností sa zvýšia.", 4.0),
    ("Pes preskakuje plot.", "Pes beží po lúke.", 1.8),
    ("Lietadlo pristálo na letisku v Košiciach.", "V Košiciach pristálo lietadlo.", 5.0),
]
SLOVAK_STS_SYNTHETIC = {
    "train": [
        ("Vlak meškal pre poruchu na trati.", "Pre poruchu trate mal vlak meškanie.", 5),
        ("Cena chleba stúpla o desať centov.", "Chlieb zdražel.", 4),
        ("Zoo privítala mláďa tigra.", "V zoo sa narodili mláďatá.", 3),
        ("Poslanci schválili rozpočet.", "Na horách napadol prvý sneh.", 0),
    ],
    "test": [
        (
            "Minister financií predstavil návrh rozpočtu na budúci rok.",
            "Návrh rozpočtu na budúci rok predstavil minister financií.",
            5,
        ),
        ("Hasiči zasahovali pri požiari skladu v Prešove.", "V Prešove horel sklad a zasahovali hasiči.", 4),
        ("Na diaľnici D1 sa zrazili tri autá.", "Na D1 sa stala nehoda, doprava je obmedzená.", 3),
        ("Mesto Martin opraví námestie.", "V Martine sa bude opravovať škola.", 2),
        ("Futbalisti Trnavy vyhrali doma.", "Trnavský futbalový klub predal štadión.", 1),
        ("Meteorológovia varujú pred búrkami.", "Knižnica rozšírila otváracie hodiny.", 0),
    ],
}

NLI_SK = {  # (Source, Premise, Hypothesis, Label, Gold)
    "train": [
        (
            "Pixabay",
            "Chlapec v žltej bunde kŕmi kačice pri jazere.",
            "Chlapec je vonku.",
            "Entailment",
            "Yes",
        ),
        (
            "Pixabay",
            "Chlapec v žltej bunde kŕmi kačice pri jazere.",
            "Chlapec sedí v triede.",
            "Contradiction",
            "Yes",
        ),
        (
            "Slovensko",
            "Vysoké Tatry sú najvyššie pohorie Slovenska.",
            "Tatry navštevujú lyžiari.",
            "Neutral",
            "Yes",
        ),
    ],
    "test": [
        (
            "Slovensko",
            "Na Štrbskom Plese sa v sobotu konali preteky psích záprahov.",
            "V sobotu boli na Štrbskom Plese preteky.",
            "Entailment",
            "Yes",
        ),
        (
            "Slovensko",
            "Na Štrbskom Plese sa v sobotu konali preteky psích záprahov.",
            "Preteky psích záprahov zrušili pre nedostatok snehu.",
            "Contradiction",
            "Yes",
        ),
        (
            "Pixabay",
            "Dievča s červeným dáždnikom čaká na zastávke.",
            "Dievča čaká na autobus.",
            "Neutral",
            "Yes",
        ),
        (
            "Pixabay",
            "Dievča s červeným dáždnikom čaká na zastávke.",
            "Dievča drží dáždnik.",
            "Entailment",
            "Yes",
        ),
        (
            "Pixabay",
            "Starý rybár sedí na móle a opravuje sieť.",
            "Rybár spí v posteli.",
            "Contradiction",
            "Yes",
        ),
        (
            "SlovakSum",
            "Mestské zastupiteľstvo v Trnave schválilo výstavbu novej plavárne.",
            "Trnava bude mať novú plaváreň.",
            "Entailment",
            "Yes",
        ),
        (
            "SlovakSum",
            "Mestské zastupiteľstvo v Trnave schválilo výstavbu novej plavárne.",
            "Zastupiteľstvo výstavbu plavárne zamietlo.",
            "Contradiction",
            "No",
        ),
        (
            "SlovakSum",
            "Mestské zastupiteľstvo v Trnave schválilo výstavbu novej plavárne.",
            "Vo Viedni otvorili nové múzeum.",
            "Other",
            "Yes",
        ),
    ],
}

DEMAGOG = {  # (speaker, statement, verdict, analysis)
    "train": [
        (
            "Peter Novák",
            "Slovensko vyrobí viac áut na obyvateľa ako ktorákoľvek iná krajina.",
            "Pravda",
            "Podľa údajov Zväzu automobilového priemyslu vyrába Slovensko dlhodobo najviac áut na tisíc "
            "obyvateľov "
            "na svete. Výrok je pravdivý.",
        ),
        (
            "Jana Kováčová",
            "Minimálna mzda sa za posledné tri roky nezvýšila.",
            "Nepravda",
            "Minimálna mzda rástla každý rok, naposledy o štyridsať eur. Tvrdenie, že sa nezvýšila, je "
            "nepravdivé.",
        ),
    ],
    "validation": [
        (
            "Martin Horváth",
            "Na Slovensku je viac ako dvetisíc obcí.",
            "Pravda",
            "Podľa Štatistického úradu má Slovensko 2890 obcí vrátane miest. Výrok je pravdivý.",
        ),
        (
            "Eva Šimková",
            "Všetky nemocnice už majú nové sanitky.",
            "Neoveriteľné",
            "Ministerstvo nezverejnilo úplný zoznam vozidiel, výrok preto nie je možné overiť.",
        ),
    ],
    "test": [
        (
            "Peter Novák",
            "Slovensko má najnižšiu nezamestnanosť vo svojej histórii.",
            "Pravda",
            "Podľa údajov Ústredia práce, sociálnych vecí a rodiny bola miera evidovanej nezamestnanosti v "
            "apríli "
            "najnižšia od roku 1993. Výrok preto hodnotíme ako pravdivý.",
        ),
        (
            "Jana Kováčová",
            "Do diaľnic sme za štyri roky dali viac peňazí ako ktorákoľvek vláda predtým.",
            "Nepravda",
            "Z údajov štátneho rozpočtu vyplýva, že najviac sa do diaľnic investovalo v rokoch 2008 až "
            "2010. Výdavky za posledné štyri roky boli nižšie, výrok je nepravdivý.",
        ),
        (
            "Martin Horváth",
            "Priemerná mzda na Slovensku prekročila 1400 eur.",
            "Pravda",
            "Štatistický úrad zverejnil, že priemerná nominálna mesačná mzda za minulý rok dosiahla 1430 "
            "eur. "
            "Politik teda uviedol správny údaj.",
        ),
        (
            "Eva Šimková",
            "Slovensko je jediná krajina v regióne, ktorá nemá zákon o klíme.",
            "Nepravda",
            "Podobný zákon nemá ani Česko, ani Maďarsko. Tvrdenie, že Slovensko je v tomto výnimkou, je "
            "nepravdivé.",
        ),
        (
            "Peter Novák",
            "Počet lekárov v nemocniciach sa za päť rokov zvýšil.",
            "Pravda",
            "Údaje Národného centra zdravotníckych informácií ukazujú mierny nárast počtu lekárov v ústavnej "
            "starostlivosti. Výrok je pravdivý.",
        ),
        (
            "Jana Kováčová",
            "Vláda znížila dane všetkým ľuďom.",
            "Zavádzajúce",
            "Zníženie sa týkalo iba dane z príjmu rodín s deťmi, ostatní poplatníci zmenu takmer nepocítili. "
            "Výrok "
            "je zavádzajúci.",
        ),
    ],
}


# -- classification ------------------------------------------------------------------------------------------

HATE_SPEECH = {  # (text, label: 1 = hate speech)
    "train": [
        ("Ďakujem za článok, konečne niekto napísal, ako to v nemocniciach naozaj funguje.", 0),
        ("Včera sme boli na koncerte v Košiciach a atmosféra bola úžasná.", 0),
        ("Nesúhlasím s ministrom, ale aspoň vysvetlil, prečo ten zákon navrhuje.", 0),
        ("Kto vie, kedy otvoria opravenú cestu cez Čertovicu?", 0),
        ("Takých ako ty by bolo treba vyhodiť z krajiny, nemáte tu čo robiť.", 1),
        ("Všetci z tej dediny sú zlodeji a flákači, nič iné nevedia.", 1),
        ("Ty hlupák, zavri si tú papuľu, lebo ťa niekto naučí slušnosti.", 1),
        ("Tá sekta by mala skončiť za mrežami, sú to odpad spoločnosti.", 1),
    ],
    "test": [
        ("Pekná fotka, ten výhľad z Kriváňa sa oplatí.", 0),
        ("Podľa mňa by mesto malo radšej opraviť chodníky ako stavať fontánu.", 0),
        ("Gratulujem hokejistom, zaslúžené víťazstvo.", 0),
        ("Ľudia ako vy sú rakovina tejto krajiny, zmiznite.", 1),
        ("Nech sa všetci cudzinci zbalia a vypadnú, nikto ich tu nechce.", 1),
        ("Si úplný idiot a celá tvoja rodina tiež.", 1),
    ],
}
MOVIE_REVIEWS = {  # (text, label: 1 = positive)
    "train": [
        ("Výborný film, herci hrali prirodzene a príbeh ma držal v napätí až do konca.", 1),
        ("Krásne nakrútené zábery hôr a hudba, ktorá sa mi ešte dlho ozývala v hlave.", 1),
        ("Konečne komédia, pri ktorej sa celá rodina nahlas smiala.", 1),
        ("Režisér zvládol náročnú tému citlivo a bez zbytočného pátosu.", 1),
        ("Nuda, dej sa vlečie a po hodine som mal chuť odísť z kina.", 0),
        ("Dialógy znejú umelo a hlavná postava je úplne nevierohodná.", 0),
        ("Pokračovanie je slabým odvarom prvého dielu, škoda peňazí za lístok.", 0),
        ("Efekty pekné, ale príbeh nemá hlavu ani pätu.", 0),
    ],
    "test": [
        ("Silný príbeh o priateľstve, ktorý ma dojal k slzám.", 1),
        ("Animácia je nápaditá a deti aj dospelí si prídu na svoje.", 1),
        ("Jeden z najlepších slovenských filmov posledných rokov.", 1),
        ("Predvídateľný koniec a herci, ktorí akoby nevedeli, čo hrajú.", 0),
        ("Dve a pol hodiny zbytočných scén, strih by filmu veľmi pomohol.", 0),
        ("Nevtipné vtipy a lacné efekty, neodporúčam.", 0),
    ],
}
SIB200 = {  # category -> (train, train, validation, test)
    "science/technology": (
        "Vedci vyvinuli batériu, ktorá sa nabije za menej ako päť minút.",
        "Nový teleskop dokáže pozorovať galaxie vzdialené miliardy svetelných rokov.",
        "Výskumníci naučili počítač rozpoznávať vtáky podľa ich spevu.",
        "Kozmická sonda poslala na Zem prvé fotografie povrchu Marsu.",
    ),
    "travel": (
        "Ak cestujete v lete, rezervujte si ubytovanie niekoľko mesiacov vopred.",
        "Na niektorých hraničných prechodoch sa stále kontrolujú pasy.",
        "Vlakom sa z Viedne do Budapešti dostanete za necelé tri hodiny.",
        "Pred cestou do tropických krajín sa poraďte s lekárom o očkovaní.",
    ),
    "politics": (
        "Parlament vyslovil vláde nedôveru po dlhej nočnej rozprave.",
        "Prezidentka vymenovala nového ministra zahraničných vecí.",
        "Opozičné strany sa dohodli na spoločnom kandidátovi.",
        "Voliči rozhodnú v referende o zmene ústavy.",
    ),
    "sports": (
        "Brankár chytil v zápase tri pokutové kopy.",
        "Maratónec prekonal národný rekord o dve minúty.",
        "Tím sa po prehre v semifinále lúčil s turnajom.",
        "Lyžiarka vyhrala zjazd napriek silnému vetru.",
    ),
    "health": (
        "Pravidelný pohyb znižuje riziko ochorení srdca.",
        "Lekári odporúčajú piť cez deň dostatok vody.",
        "Očkovanie proti chrípke je najúčinnejšie na jeseň.",
        "Nedostatok spánku oslabuje imunitný systém.",
    ),
    "entertainment": (
        "Film získal na festivale cenu divákov.",
        "Speváčka vydala po piatich rokoch nový album.",
        "Divadelné predstavenie bolo vypredané už týždeň vopred.",
        "Seriál sa stal najsledovanejším programom roka.",
    ),
    "geography": (
        "Najvyšším vrchom Afriky je Kilimandžáro.",
        "Rieka Amazonka preteká niekoľkými štátmi Južnej Ameriky.",
        "Sahara je najväčšia horúca púšť na svete.",
        "Island leží na rozhraní dvoch tektonických dosiek.",
    ),
}
MULTILINGUAL_SENTIMENT = {  # slk rows: (text, label: 1 = positive)
    "train": [
        ("Obsluha bola milá a jedlo prišlo rýchlo.", 1),
        ("Telefón funguje bez problémov, batéria vydrží dva dni.", 1),
        ("Hotel bol čistý a personál ochotný, určite sa vrátime.", 1),
        ("Balík prišiel poškodený a nikto mi neodpisuje.", 0),
        ("Polievka bola studená a čašník nepríjemný.", 0),
        ("Slúchadlá sa pokazili po týždni používania.", 0),
    ],
    "validation": [("Skvelá kaviareň s výbornými koláčmi.", 1), ("Aplikácia neustále padá, neodporúčam.", 0)],
    "test": [
        ("Kúpil som si tieto topánky a sú veľmi pohodlné.", 1),
        ("Rýchle doručenie a tovar presne podľa popisu.", 1),
        ("Izba smrdela dymom a klimatizácia nefungovala.", 0),
        ("Za takú cenu veľké sklamanie, kvalita je slabá.", 0),
    ],
}
PARLASENT_SK = {
    "Negative": [
        "Tento návrh zákona je nekoncepčný a poškodí tisíce živnostníkov.",
        "Pán minister, vaša arogancia voči opozícii je neprijateľná.",
        "Vláda opäť zlyhala a ľudia to zaplatia z vlastných peňazí.",
        "Je hanbou tohto parlamentu, že o tom rokujeme v noci.",
        "Nemocnice sú v katastrofálnom stave a vy sa tvárite, že je všetko v poriadku.",
        "Tento rozpočet je postavený na nereálnych číslach.",
    ],
    "Neutral": [
        "Navrhujem, aby sme o pozmeňujúcom návrhu hlasovali v druhom čítaní.",
        "Zákon nadobúda účinnosť prvým januárom budúceho roka.",
        "Výbor pre financie prerokoval návrh na svojej schôdzi v utorok.",
        "Prosím pána spravodajcu, aby uviedol správu výboru.",
        "Ide o transpozíciu smernice Európskej únie do nášho právneho poriadku.",
        "Hlasovanie sa uskutoční o jedenástej hodine.",
    ],
    "Positive": [
        "Som rád, že sa nám podarilo nájsť zhodu naprieč politickým spektrom.",
        "Ďakujem všetkým kolegom, ktorí tento dôležitý zákon podporili.",
        "Tento návrh konečne pomôže rodinám s malými deťmi.",
        "Oceňujem, že ministerstvo zapracovalo pripomienky samospráv.",
        "Je to dobrá správa pre všetkých dôchodcov na Slovensku.",
        "Vďaka tejto novele sa skrátia čakacie lehoty v nemocniciach.",
    ],
}
MULTIEUP_PARTY = [  # per political group (label 0..4): (train, train, test)
    (
        "Vážená pani predsedajúca, jednotný trh je najväčším úspechom Európskej únie a musíme ho chrániť "
        "pred "
        "novými prekážkami. Malé a stredné podniky potrebujú menej byrokracie, nie viac.",
        "Podpora poľnohospodárov v nových členských štátoch musí byť spravodlivá. Naši farmári nemôžu "
        "dostávať nižšie priame platby ako ich kolegovia na západe.",
        "Bezpečnosť Európy sa začína na jej vonkajších hraniciach. Potrebujeme silnejšiu agentúru Frontex a "
        "rýchlejšie konania o azyle.",
    ),
    (
        "Európa musí byť sociálna, inak stratí dôveru občanov. Minimálne mzdy musia ľuďom umožniť dôstojný "
        "život.",
        "Pracovníci platforiem si zaslúžia rovnakú ochranu ako zamestnanci. Nemôžeme dovoliť, aby o ich "
        "práci "
        "rozhodoval algoritmus bez pravidiel.",
        "Dostupné bývanie je dnes jednou z najväčších starostí mladých rodín. Európske fondy musia viac "
        "podporovať nájomné byty.",
    ),
    (
        "Právny štát nie je predmetom vyjednávania. Peniaze z európskeho rozpočtu musia byť viazané na "
        "nezávislé súdy a slobodné médiá.",
        "Digitálna transformácia je príležitosťou pre celý kontinent. Potrebujeme investovať do vzdelávania "
        "a "
        "do rýchleho internetu aj na vidieku.",
        "Európska únia musí byť pripravená prijať krajiny západného Balkánu, ak splnia všetky podmienky.",
    ),
    (
        "Brusel by sa nemal miešať do otázok, ktoré patria národným parlamentom. Rodinná politika je vecou "
        "členských štátov.",
        "Zelená dohoda v súčasnej podobe zdraží energie pre domácnosti a ohrozí priemysel v strednej Európe.",
        "Rešpektujme zásadu subsidiarity a nechajme rozhodovať tých, ktorí sú ľuďom najbližšie.",
    ),
    (
        "Sankcie poškodzujú predovšetkým našu ekonomiku, nie tých, proti ktorým sú namierené.",
        "Občania majú právo rozhodnúť o migračnej politike v referende, nie úradníci v Bruseli.",
        "Táto snemovňa sa vzďaľuje od reality bežných ľudí, ktorí riešia ceny potravín a energií.",
    ),
]
MULTIEUP_GENDER = {  # (text, label: 1 = female speaker)
    "train": [
        ("Hlasovala som za túto správu, pretože chráni spotrebiteľov pred nekalými praktikami.", 1),
        (
            "Minulý týždeň som navštívila hraničný priechod vo Vyšnom Nemeckom a videla som, ako dlho "
            "kamióny "
            "čakajú.",
            1,
        ),
        ("Ako spravodajkyňa tohto stanoviska som sa snažila nájsť kompromis medzi všetkými skupinami.", 1),
        ("Hlasoval som proti, lebo návrh nerieši skutočné príčiny problému.", 0),
        ("Ako bývalý starosta som zažil, aké zložité je čerpať eurofondy.", 0),
        ("Pred rokom som upozornil Komisiu na podvody s dotáciami, odpoveď som nedostal.", 0),
    ],
    "test": [
        ("Rozhodla som sa podporiť tento návrh, aj keď nie je dokonalý.", 1),
        ("Ako lekárka viem, že prevencia je lacnejšia ako liečba.", 1),
        ("Bol som jedným z tých, ktorí žiadali prísnejšiu kontrolu.", 0),
        ("Ako podnikateľ som pochopil, že neistota je horšia ako vysoké dane.", 0),
    ],
}


# -- clustering ----------------------------------------------------------------------------------------------

NEWS = [  # (title, lead, SlovakSum URL category, SME category)
    (
        "Japonsko zasiahlo silné zemetrasenie",
        "Otrasy s magnitúdou 6,8 poškodili prístav na severe ostrova Hokkaido, obete zatiaľ úrady nehlásia.",
        "world",
        "svet",
    ),
    (
        "Francúzski farmári blokovali diaľnice traktormi",
        "Poľnohospodári protestujú proti nízkym výkupným cenám a novým ekologickým nariadeniam Európskej "
        "únie.",
        "world",
        "svet",
    ),
    (
        "V Brazílii vyhlásili stav núdze pre záplavy",
        "Rieky na juhu krajiny sa po týždni neprestajných dažďov vyliali z korýt a tisíce ľudí opustili "
        "domovy.",
        "world",
        "svet",
    ),
    (
        "Nemecká vláda schválila zvýšenie minimálnej mzdy",
        "Od januára dostanú zamestnanci v Nemecku najmenej dvanásť eur a osemdesiat centov za hodinu.",
        "world",
        "svet",
    ),
    (
        "Lesné požiare v Kanade sa šíria k mestám",
        "Hasiči v provincii Alberta bojujú s ohňom už tretí týždeň, dym zhoršuje ovzdušie aj v Spojených "
        "štátoch.",
        "world",
        "svet",
    ),
    (
        "Taliansko otvorilo nový železničný tunel v Alpách",
        "Nový úsek skráti cestu vlakom z Milána do Zürichu takmer o hodinu.",
        "world",
        "svet",
    ),
    (
        "Voľby v Holandsku vyhrala opozícia",
        "Strana, ktorá v kampani sľubovala lacnejšie bývanie, získala najviac kresiel v dolnej komore "
        "parlamentu.",
        "world",
        "svet",
    ),
    (
        "Grécke ostrovy bojujú s nedostatkom vody",
        "Na Kykladách dovážajú pitnú vodu loďami, pretože nádrže po suchej zime takmer vyschli.",
        "world",
        "svet",
    ),
    (
        "Poľsko posilní ochranu východnej hranice",
        "Varšava vyčlení ďalšie peniaze na plot, kamery a nové hliadky pohraničnej stráže.",
        "world",
        "svet",
    ),
    (
        "Parlament schválil novelu zákona o sociálnom poistení",
        "Poslanci odsúhlasili, že materská dávka sa bude každý rok zvyšovať spolu s dôchodkami.",
        "politics",
        "domov",
    ),
    (
        "Vláda chce zrušiť poplatky za výpis z registra trestov",
        "Ministerstvo spravodlivosti tvrdí, že elektronický výpis bude po novom pre občanov zadarmo.",
        "politics",
        "domov",
    ),
    (
        "Opozícia iniciuje odvolávanie ministra zdravotníctva",
        "Podpisy pod návrh odovzdali predsedovi parlamentu pre dlhé čakacie lehoty na operácie.",
        "politics",
        "domov",
    ),
    (
        "Prezident vrátil zákon o verejnom obstarávaní",
        "Hlava štátu namieta, že novela by oslabila kontrolu pri zákazkách do sto tisíc eur.",
        "politics",
        "domov",
    ),
    (
        "Košický kraj dostane peniaze na opravu ciest druhej triedy",
        "Župa zrekonštruuje z eurofondov takmer osemdesiat kilometrov ciest a tri mosty.",
        "politics",
        "domov",
    ),
    (
        "Ministerstvo školstva predstavilo reformu prijímačiek",
        "Žiaci deviatych ročníkov si budú môcť po novom podať prihlášky až na päť stredných škôl.",
        "politics",
        "domov",
    ),
    (
        "Bratislava zavedie nové parkovacie zóny v Petržalke",
        "Rezidenti zaplatia za prvé auto ročne tridsať eur, návštevníci budú platiť cez aplikáciu.",
        "politics",
        "domov",
    ),
    (
        "Samosprávy žiadajú viac peňazí na sociálne služby",
        "Združenie miest a obcí upozorňuje, že príspevok štátu na opatrovateľky sa nemenil päť rokov.",
        "politics",
        "domov",
    ),
    (
        "Do volieb do europarlamentu sa prihlásilo dvadsaťtri strán",
        "Štátna komisia skontroluje kandidátne listiny a vyžrebuje poradie na hlasovacích lístkoch.",
        "politics",
        "domov",
    ),
    (
        "Inflácia na Slovensku v marci spomalila",
        "Ceny tovarov a služieb medziročne vzrástli o tri percentá, najviac zdraželi služby v reštauráciách.",
        "economy",
        "ekonomika",
    ),
    (
        "Automobilka v Nitre prijme ďalších tisíc ľudí",
        "Závod spúšťa výrobu nového elektrického modelu a hľadá najmä technikov a operátorov linky.",
        "economy",
        "ekonomika",
    ),
    (
        "Hypotéky opäť zlacňujú",
        "Banky znížili úrokové sadzby pri trojročnej fixácii v priemere pod štyri percentá.",
        "economy",
        "ekonomika",
    ),
    (
        "Ceny elektriny pre domácnosti zostanú aj budúci rok regulované",
        "Regulačný úrad potvrdil, že cenový strop pre domácnosti platí do konca budúceho roka.",
        "economy",
        "ekonomika",
    ),
    (
        "Slovenský startup získal investíciu päť miliónov eur",
        "Firma vyvíja softvér na plánovanie rozvozu tovaru a chce expandovať do Rakúska a Česka.",
        "economy",
        "ekonomika",
    ),
    (
        "Nezamestnanosť klesla na historické minimum",
        "Úrady práce evidovali v apríli najmenej uchádzačov o zamestnanie od vzniku samostatnej republiky.",
        "economy",
        "ekonomika",
    ),
    (
        "Obchodné reťazce zdražujú maslo",
        "Za pol roka stúpla cena masla o štvrtinu, dôvodom je menej mlieka od domácich chovateľov.",
        "economy",
        "ekonomika",
    ),
    (
        "Štát predal dlhopisy za miliardu eur",
        "Záujem investorov prevýšil ponuku takmer trojnásobne, výnos dosiahol tri a pol percenta.",
        "economy",
        "ekonomika",
    ),
    (
        "Slovenskí hokejisti zdolali Fínov po predĺžení",
        "Víťazný gól strelil v tretej minúte predĺženia útočník, ktorý v zámorí hrá za Montreal.",
        "sport",
        "sport",
    ),
    (
        "Slalomárka sa po zranení vrátila na svahy",
        "Lyžiarka po operácii kolena absolvovala prvý tréning na snehu v rakúskom Söldene.",
        "sport",
        "sport",
    ),
    (
        "Slovan Bratislava postúpil do skupinovej fázy",
        "Belasí vyradili v play-off cyperský tím a na jeseň si zahrajú proti známym európskym súperom.",
        "sport",
        "sport",
    ),
    (
        "Maratón v Košiciach prilákal rekordný počet bežcov",
        "Na štart najstaršieho európskeho maratónu sa postavilo viac ako štrnásťtisíc pretekárov.",
        "sport",
        "sport",
    ),
    (
        "Tenistka zo Žiliny vyhrala turnaj v Prahe",
        "Vo finále zdolala favorizovanú Češku v troch setoch a v rebríčku sa posunie do prvej stovky.",
        "sport",
        "sport",
    ),
    (
        "Cyklista ukončil profesionálnu kariéru",
        "Trojnásobný majster sveta sa rozlúčil so športom posledným pretekom na horských bicykloch.",
        "sport",
        "sport",
    ),
    (
        "Vodní slalomári priviezli z Európy tri medaily",
        "Najviac sa darilo deblu kanoistov, ktorý získal zlato na trati v Ľubľane.",
        "sport",
        "sport",
    ),
    (
        "Futbalová reprezentácia pozná súperov v kvalifikácii",
        "Žreb v Zürichu priradil Slovensku do skupiny Chorvátsko, Írsko a Lotyšsko.",
        "sport",
        "sport",
    ),
    (
        "Slovenský satelit odoslal prvé snímky z obežnej dráhy",
        "Malá družica postavená študentmi z Bratislavy fotografuje Zem a meria teplotu atmosféry.",
        "tech",
        "tech",
    ),
    (
        "Mobilní operátori vypnú sieť tretej generácie",
        "Zákazníci so starými telefónmi budú môcť od jesene volať už len cez siete 4G alebo 2G.",
        "tech",
        "tech",
    ),
    (
        "Vedci z Košíc vyvinuli senzor na meranie kvality vody",
        "Zariadenie odhalí znečistenie dusičnanmi do niekoľkých minút a stojí zlomok ceny laboratórneho "
        "rozboru.",
        "tech",
        "tech",
    ),
    (
        "Banky spúšťajú platby mobilom bez internetu",
        "Nová funkcia umožní zaplatiť v obchode aj vtedy, keď telefón nemá dátové pripojenie.",
        "tech",
        "tech",
    ),
    (
        "Štát spustil novú verziu portálu slovensko.sk",
        "Občania si po prihlásení občianskym preukazom vybavia žiadosti rýchlejšie a prehľadnejšie.",
        "tech",
        "tech",
    ),
    (
        "Umelá inteligencia pomáha lekárom čítať röntgenové snímky",
        "Nemocnica v Martine testuje program, ktorý upozorní rádiológa na podozrivé miesto v pľúcach.",
        "tech",
        "tech",
    ),
    (
        "Elektrické kolobežky musia mať po novom poistenie",
        "Zmena zákona o cestnej premávke sa týka kolobežiek s výkonom nad dvestopäťdesiat wattov.",
        "tech",
        "tech",
    ),
    (
        "Výrobca čipov otvorí pri Trnave vývojové centrum",
        "Firma bude v Trnave navrhovať obvody pre automobily a zamestná dvesto inžinierov.",
        "tech",
        "tech",
    ),
    (
        "Slovenský film získal cenu v Karlových Varoch",
        "Dráma o rodine z východného Slovenska si odniesla cenu poroty za najlepšiu réžiu.",
        "culture",
        "kultura",
    ),
    (
        "Národné divadlo uvedie novú operu",
        "Premiéra diela mladého skladateľa o Márii Terézii sa uskutoční v novej budove divadla.",
        "culture",
        "kultura",
    ),
    (
        "Vo Východnej sa začína folklórny festival",
        "Na amfiteátri vystúpi počas troch dní viac ako tisíc tanečníkov, spevákov a muzikantov.",
        "culture",
        "kultura",
    ),
    (
        "Spisovateľka z Prešova vydala nový román",
        "Kniha sleduje osudy troch generácií žien v malom meste počas dvadsiateho storočia.",
        "culture",
        "kultura",
    ),
    (
        "Slovenská národná galéria otvorila výstavu Dominika Skuteckého",
        "Návštevníci uvidia viac ako sto obrazov vrátane známych scén z banskobystrického trhu.",
        "culture",
        "kultura",
    ),
    (
        "Bratislavské jazzové dni oslavujú päťdesiat rokov",
        "Jubilejný ročník festivalu ponúkne koncerty svetových hviezd aj domácich kapiel.",
        "culture",
        "kultura",
    ),
    (
        "Hrad Krásna Hôrka sa po požiari otvorí návštevníkom",
        "Obnova strechy a veže trvala vyše desať rokov, prvé prehliadky budú v lete.",
        "culture",
        "kultura",
    ),
    (
        "Rozhlas pripravil seriál o slovenských vynálezcoch",
        "Nové diely budú vysielať každú nedeľu večer, prvý je venovaný Jozefovi Murgašovi.",
        "culture",
        "kultura",
    ),
]
"""50 news items: mteb embeds 4 % of SlovakSumURLClustering and SMESumCategoryClustering (at least 25 rows
for one document, 50 for two)."""
SME_UNCATEGORIZED = [
    ("Krížovka na víkend", "Vylúštite tajničku a vyhrajte predplatné novín na celý rok."),
    ("Horoskop na budúci týždeň", "Čo vám prinesú hviezdy v práci, v láske aj v zdraví."),
]
PRAVDA_TAGS = {  # assigned_label -> (title, summary)
    "#zdravotníctvo": [
        (
            "Sestry žiadajú vyššie platy",
            "Odborári hrozia štrajkom, ak ministerstvo nezvýši tarify od januára.",
        ),
        (
            "Nemocnice dostanú nové sanitky",
            "Záchranky budú mať modernejšie vybavenie vrátane defibrilátorov.",
        ),
        (
            "Čakacie lehoty na operácie kolena sa predĺžili",
            "Pacienti čakajú na náhradu kĺbu v priemere vyše roka.",
        ),
    ],
    "#Ukrajina": [
        (
            "Kyjev hlási útoky dronov na energetiku",
            "Po nočnom útoku zostali bez elektriny desaťtisíce domácností.",
        ),
        (
            "Ukrajinskí žiaci začali školský rok na Slovensku",
            "Do slovenských škôl nastúpilo vyše tritisíc detí z Ukrajiny.",
        ),
        (
            "Obilie z Ukrajiny opäť rozdeľuje susedov",
            "Poľnohospodári z Poľska a Slovenska žiadajú predĺženie zákazu dovozu.",
        ),
    ],
    "#koronavírus": [
        (
            "Počet hospitalizovaných s covidom klesá",
            "Lekári napriek tomu odporúčajú rizikovým skupinám posilňujúcu dávku.",
        ),
        (
            "Testovanie na hraniciach končí",
            "Od pondelka nebudú cestujúci pri návrate zo zahraničia potrebovať negatívny test.",
        ),
        (
            "Rúška v obchodoch už nie sú povinné",
            "Vláda zrušila povinnosť nosiť prekrytie dýchacích ciest v interiéri.",
        ),
    ],
    "#USA": [
        (
            "Americký Kongres schválil rozpočet na poslednú chvíľu",
            "Dohoda zabránila zastaveniu činnosti federálnej vlády.",
        ),
        ("Ohio zasiahli ničivé tornáda", "Búrky zničili desiatky domov a poškodili elektrické vedenia."),
        ("Washington a Brusel rokujú o clách na oceľ", "Obe strany chcú zabrániť obchodnej vojne."),
    ],
}
PRAVDA_URLS = {  # url_category -> (title, summary)
    "sportweb/tenis": [
        (
            "Slovenský tenista postúpil do druhého kola Wimbledonu",
            "Na tráve zdolal domáceho Brita v štyroch setoch.",
        ),
        ("Daviscupový tím pozná súpera", "Slováci odcestujú na zápas do Čile, hrať sa bude na antuke."),
        (
            "Juniorka vyhrala turnaj v Piešťanoch",
            "Šestnásťročná hráčka počas turnaja nestratila ani jeden set.",
        ),
    ],
    "cestovanie/hory": [
        (
            "Chata pod Rysmi otvára sezónu",
            "Turisti môžu od pätnásteho júna opäť prespať na najvyššie položenej chate v Tatrách.",
        ),
        (
            "Horská služba varuje pred búrkami vo Fatre",
            "Popoludní hrozia na hrebeňoch blesky a silný vietor.",
        ),
        (
            "Túry v Slovenskom raji pre rodiny",
            "Vybrali sme trasy bez rebríkov, ktoré zvládnu aj menšie deti.",
        ),
    ],
    "zdravie/zdrava-vyziva": [
        (
            "Koľko cukru zjedia deti za deň",
            "Odborníci upozorňujú, že najviac cukru je skryté v sladených nápojoch.",
        ),
        (
            "Strukoviny by mali byť na tanieri aspoň dvakrát týždenne",
            "Šošovica a fazuľa sú lacným zdrojom bielkovín a vlákniny.",
        ),
        ("Raňajky nemusia byť sladké", "Výživová poradkyňa odporúča vajíčka, tvaroh alebo celozrnné pečivo."),
    ],
    "ekonomika/firmy-a-trhy": [
        ("Oceliarne v Košiciach obmedzia výrobu", "Firma pre nízky dopyt odstaví jednu z vysokých pecí."),
        (
            "Akcie európskych bánk rástli",
            "Investori reagovali na lepšie hospodárske výsledky za prvý štvrťrok.",
        ),
        (
            "Výrobca nábytku z Banskej Bystrice expanduje do Nemecka",
            "Spoločnosť otvorí v Mníchove prvú predajňu mimo Slovenska.",
        ),
    ],
}


# -- bitext mining -------------------------------------------------------------------------------------------

OPUS_EN_SK = {  # (en, sk)
    "test": [
        ("I'll call you when I get home.", "Zavolám ti, keď prídem domov."),
        ("The meeting has been postponed until Friday.", "Stretnutie bolo presunuté na piatok."),
        ("Do you know where the nearest pharmacy is?", "Nevieš, kde je najbližšia lekáreň?"),
        (
            "Please turn off your phones during the performance.",
            "Počas predstavenia si, prosím, vypnite telefóny.",
        ),
        ("He has been working here for ten years.", "Pracuje tu už desať rokov."),
        ("Thank you for your patience.", "Ďakujeme za trpezlivosť."),
    ],
    "train": [("Where are my keys?", "Kde sú moje kľúče?"), ("It's raining again.", "Zase prší.")],
    "validation": [("I don't like coffee.", "Nemám rád kávu."), ("See you tomorrow.", "Uvidíme sa zajtra.")],
}
TATOEBA_SLK_ENG = [  # (slk, eng)
    ("Tom nevie plávať.", "Tom can't swim."),
    ("Môj brat býva v Nitre.", "My brother lives in Nitra."),
    ("Koľko stojí tento lístok?", "How much does this ticket cost?"),
    ("Včera som stratil peňaženku.", "I lost my wallet yesterday."),
    ("Mám rada zimu.", "I like winter."),
    ("Dvere sú zamknuté.", "The door is locked."),
]
FLORES = {  # split -> (eng_Latn, ces_Latn, slk_Latn)
    "dev": [
        (
            "The bridge was built more than two hundred years ago.",
            "Most byl postaven před více než dvěma sty lety.",
            "Most bol postavený pred viac ako dvesto rokmi.",
        ),
        (
            "Many birds fly south before the winter begins.",
            "Mnoho ptáků odlétá na jih ještě před začátkem zimy.",
            "Mnoho vtákov odlieta na juh ešte pred začiatkom zimy.",
        ),
        (
            "The company plans to open a new factory next year.",
            "Firma plánuje příští rok otevřít novou továrnu.",
            "Firma plánuje budúci rok otvoriť novú továreň.",
        ),
    ],
    "devtest": [
        (
            "The museum will be closed for renovation until the end of the year.",
            "Muzeum bude až do konce roku zavřené kvůli rekonstrukci.",
            "Múzeum bude až do konca roka zatvorené pre rekonštrukciu.",
        ),
        (
            "Scientists say the new vaccine could be available next spring.",
            "Vědci tvrdí, že nová vakcína by mohla být dostupná příští jaro.",
            "Vedci tvrdia, že nová vakcína by mohla byť dostupná budúcu jar.",
        ),
        (
            "Heavy rain caused flooding in several villages in the north.",
            "Silný déšť způsobil záplavy v několika vesnicích na severu.",
            "Silný dážď spôsobil záplavy v niekoľkých dedinách na severe.",
        ),
        (
            "The team scored twice in the last ten minutes of the match.",
            "Tým skóroval dvakrát v posledních deseti minutách zápasu.",
            "Tím skóroval dvakrát v posledných desiatich minútach zápasu.",
        ),
        (
            "Tourists are advised to carry water when hiking in the desert.",
            "Turistům se doporučuje nosit s sebou při túrách v poušti vodu.",
            "Turistom sa odporúča nosiť so sebou pri túrach v púšti vodu.",
        ),
        (
            "The president met with farmers to discuss the drought.",
            "Prezident se setkal se zemědělci, aby s nimi probral sucho.",
            "Prezident sa stretol s poľnohospodármi, aby s nimi prebral sucho.",
        ),
    ],
}
NTREX = [  # (eng_Latn, ces_Latn, slk_Latn)
    (
        "The government announced new measures to support small businesses.",
        "Vláda oznámila nová opatření na podporu malých podniků.",
        "Vláda oznámila nové opatrenia na podporu malých podnikov.",
    ),
    (
        "Police are searching for witnesses of the accident.",
        "Policie hledá svědky nehody.",
        "Polícia hľadá svedkov nehody.",
    ),
    (
        "The airline cancelled dozens of flights because of the strike.",
        "Letecká společnost kvůli stávce zrušila desítky letů.",
        "Letecká spoločnosť pre štrajk zrušila desiatky letov.",
    ),
    (
        "Prices of vegetables rose sharply after the cold spring.",
        "Ceny zeleniny po chladném jaru prudce vzrostly.",
        "Ceny zeleniny po chladnej jari prudko vzrástli.",
    ),
    (
        "The new law will take effect in January.",
        "Nový zákon vstoupí v platnost v lednu.",
        "Nový zákon nadobudne účinnosť v januári.",
    ),
    (
        "Thousands of people attended the concert in the city centre.",
        "Koncertu v centru města se zúčastnily tisíce lidí.",
        "Koncertu v centre mesta sa zúčastnili tisíce ľudí.",
    ),
]
WEBFAQ_BITEXTS = {  # pair -> (question1, answer1, question2, answer2)
    "ces-slk": [
        (
            "Jak dlouho trvá doručení?",
            "Zásilky doručujeme obvykle do dvou pracovních dnů.",
            "Ako dlho trvá doručenie zásielky?",
            "Zásielky doručujeme zvyčajne do dvoch pracovných dní.",
        ),
        (
            "Mohu zboží vrátit?",
            "Ano, zboží můžete vrátit do 14 dnů od převzetí.",
            "Môžem tovar vrátiť?",
            "Áno, tovar môžete vrátiť do 14 dní od prevzatia.",
        ),
        (
            "Je v hotelu parkoviště?",
            "Hotel má vlastní parkoviště pro hosty zdarma.",
            "Má hotel parkovisko?",
            "Hotel má vlastné parkovisko pre hostí zadarmo.",
        ),
        (
            "Jak mohu zaplatit?",
            "Platit můžete kartou, převodem nebo na dobírku.",
            "Ako môžem zaplatiť?",
            "Platiť môžete kartou, prevodom alebo na dobierku.",
        ),
    ],
    "eng-slk": [
        (
            "What time is check-in?",
            "Check-in starts at 2 pm and check-out is until 11 am.",
            "Kedy je možné sa ubytovať?",
            "Ubytovanie je možné od 14.00, odhlásiť sa treba do 11.00.",
        ),
        (
            "Do you ship abroad?",
            "Yes, we ship to all EU countries.",
            "Posielate tovar aj do zahraničia?",
            "Áno, tovar posielame do všetkých krajín EÚ.",
        ),
        (
            "Are pets allowed?",
            "Small dogs are allowed for a fee of 10 euros per night.",
            "Sú povolené domáce zvieratá?",
            "Malé psy sú povolené za poplatok 10 eur za noc.",
        ),
        (
            "How can I reset my password?",
            "Click on Forgot password and follow the instructions in the email.",
            "Ako si môžem obnoviť heslo?",
            "Kliknite na Zabudnuté heslo a postupujte podľa pokynov v e-maile.",
        ),
    ],
}


# -- the repositories ----------------------------------------------------------------------------------------


def _retrieval_v1(repo: FixtureRepo, corpus: Rows, queries: Rows, qrels: Rows) -> None:
    """mteb's BEIR-style parquet layout: configs corpus/queries/qrels (``_id`` columns), split test."""
    repo.parquet("corpus", "corpus", {"test": corpus}, CORPUS)
    repo.parquet("qrels", "qrels", {"test": qrels}, QRELS)
    repo.parquet("queries", "queries", {"test": queries}, QUERIES)


def _qrels(pairs: list[tuple[str, str]]) -> Rows:
    return [{"query-id": query, "corpus-id": doc, "score": 1} for query, doc in pairs]


def _belebele(data: SkmtebData) -> FixtureRepo:
    repo = FixtureRepo("mteb/belebele", "979a211276faa22f671e69d096634193567cfd05")
    for language in ("eng_Latn", "slk_Latn"):
        repo.parquet(language, language, {"test": belebele_rows(language, data.belebele)}, BELEBELE_COLUMNS)
    return repo


def _slovaksum(data: SkmtebData) -> FixtureRepo:
    repo = FixtureRepo("NaiveNeuron/slovaksum", "85d6b32f2762313714618171b9d1a65eb7408835")
    repo.body = "---\nlicense: openrail\n---\n"
    for split, rows in data.slovaksum.items():
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["title", "sum", "text"])
        writer.writerows(rows)
        repo.texts[f"slovaksum-{split}.csv"] = buffer.getvalue()
    return repo


def _smesum_retrieval(data: SkmtebData) -> FixtureRepo:
    repo = FixtureRepo("mteb/SMESumRetrieval", "06a0b78f807ea6ab4c82cb729509416ac9b16469")
    corpus, queries = [], []
    for number, (title, introduction, text) in enumerate(data.smesum_retrieval, 1):
        corpus.append({"_id": f"d{number}", "text": text, "title": title})
        queries.append({"_id": f"q{number}", "text": introduction})
    _retrieval_v1(
        repo, corpus, queries, _qrels([(q["_id"], d["_id"]) for q, d in zip(queries, corpus, strict=True)])
    )
    return repo


def _skquad_retrieval(data: SkmtebData) -> FixtureRepo:
    repo = FixtureRepo("TUKE-KEMT/retrieval-skquad", "09f81f51dd5b8497da16d02c69c98d5cb5993ef2")
    corpus = [{"_id": i, "title": title, "text": text} for i, title, text in data.skquad_corpus]
    queries = [{"_id": i, "text": text} for i, text, _ in data.skquad_queries]
    qrels = _qrels([(i, doc) for i, _, docs in data.skquad_queries for doc in docs])
    repo.texts |= {"corpus.jsonl": _json_lines(corpus), "queries.jsonl": _json_lines(queries)}
    repo.texts["qrels/test.jsonl"] = _json_lines(qrels)
    repo.config("default", {"test": "qrels/test.jsonl"})
    repo.config("corpus", {"corpus": "corpus.jsonl"})
    repo.config("queries", {"queries": "queries.jsonl"})
    return repo


def _webfaq_retrieval(data: SkmtebData) -> FixtureRepo:
    repo = FixtureRepo("mteb/WebFAQRetrieval", "f64f483ad0f31d2e78209d524c14a4a867965959")
    corpus = [{"id": d, "text": answer, "title": ""} for d, answer, _, _ in data.webfaq_retrieval]
    queries = [{"id": q, "text": question} for _, _, q, question in data.webfaq_retrieval if q]
    qrels = _qrels([(q, d) for d, _, q, _ in data.webfaq_retrieval if q])
    repo.parquet("slk-corpus", "slk-corpus", {"test": corpus}, CORPUS_V2)
    repo.parquet("slk-qrels", "slk-qrels", {"test": qrels}, QRELS)
    repo.parquet("slk-queries", "slk-queries", {"test": queries}, QUERIES_V2)
    return repo


def _reranking(data: SkmtebData, repo_id: str, revision: str) -> FixtureRepo:
    repo = FixtureRepo(repo_id, revision)
    corpus_rows, query_rows = data.reranking[repo_id]
    corpus = [{"id": i, "text": text, "title": title} for i, title, text in corpus_rows]
    queries = [{"id": i, "text": text} for i, text, _, _ in query_rows]
    qrels = _qrels([(i, relevant) for i, _, _, relevant in query_rows])
    top_ranked = [{"query-id": i, "corpus-ids": candidates} for i, _, candidates, _ in query_rows]
    repo.parquet("corpus", "corpus", {"test": corpus}, CORPUS_V2)
    repo.parquet("qrels", "qrels", {"test": qrels}, QRELS)
    repo.parquet("queries", "queries", {"test": queries}, QUERIES_V2)
    repo.parquet("top_ranked", "top_ranked", {"test": top_ranked}, TOP_RANKED)
    return repo


def _sts(
    repo_id: str, revision: str, splits: dict[str, list[tuple[str, str, float]]], score: str
) -> FixtureRepo:
    repo = FixtureRepo(repo_id, revision)
    dtype = "float64" if score == "score" else "int64"
    columns = features(sentence1=STRING, sentence2=STRING, **{score: dtype})
    rows = {
        split: [{"sentence1": a, "sentence2": b, score: s} for a, b, s in pairs]
        for split, pairs in splits.items()
    }
    repo.parquet("default", "data", rows, columns)
    return repo


def _nli_sk(data: SkmtebData) -> FixtureRepo:
    repo = FixtureRepo(
        "natalia-nk/NLI-SK-annotated", "79914f425b59d8b9fabb6d38c37f6d81f9723f46", gated="auto"
    )  # gated on the Hub: its files need a token that accepted the terms
    names = ("Source", "Premise", "Hypothesis", "Label", "Gold")
    columns = features(**dict.fromkeys(names, STRING))
    splits = {
        split: [dict(zip(names, row, strict=True)) for row in rows] for split, rows in data.nli_sk.items()
    }
    repo.parquet("default", "data", splits, columns)
    return repo


def demagog_rows(split: str, demagog: dict[str, list[tuple[str, str, str, str]]] | None = None) -> Rows:
    """DemagogSK's records (a subset of its fields) of one split."""
    rows = []
    for number, (speaker, statement, verdict, analysis) in enumerate((demagog or DEMAGOG)[split], 1):
        slug = f"{split}-{number}"
        rows.append(
            {
                "id": slug,
                "url": f"https://demagog.sk/vyrok/{slug}",
                "statement": statement,
                "speaker": speaker,
                "verdict": verdict,
                "analysis_text": analysis,
                "analysis_date": f"2025-{(number - 1) % 12 + 1:02d}-{11 + (number - 1) % 18}",
            }
        )
    return rows


def _demagog(data: SkmtebData) -> FixtureRepo:
    repo = FixtureRepo("NaiveNeuron/DemagogSK", "0f9e0f902da3aca1fd6c940cd852e95c9ef5327f")
    repo.card = {"language": ["sk"], "license": "other", "pretty_name": "Demagog.sk Vyroky"}
    for split in data.demagog:
        repo.texts[f"data/{split}.jsonl"] = _json_lines(demagog_rows(split, data.demagog))
    return repo


def _text_label(repo_id: str, revision: str, splits: dict[str, list[tuple[str, int]]]) -> FixtureRepo:
    repo = FixtureRepo(repo_id, revision)
    rows = {
        split: [{"text": text, "label": label} for text, label in pairs] for split, pairs in splits.items()
    }
    repo.parquet("default", "data", rows, TEXT_LABEL)
    return repo


def sib200_rows(split: str, sib200: dict[str, dict[str, list[str]]] | None = None) -> Rows:
    """SIB-200's ``slk_Latn`` rows of a split: ``index_id``, ``category``, ``text`` (categories
    interleaved)."""
    per_category = {c: texts[split] for c, texts in (sib200 or sib200_splits(SIB200)).items()}
    depth = max(map(len, per_category.values()))
    texts = [(c, t[i]) for i in range(depth) for c, t in per_category.items() if i < len(t)]
    offset = {"train": 0, "validation": 700, "test": 800}[split]
    return [{"index_id": offset + n, "category": c, "text": t} for n, (c, t) in enumerate(texts)]


def sib200_splits(sib200: dict[str, tuple[str, str, str, str]]) -> dict[str, dict[str, list[str]]]:
    """:data:`SIB200`'s texts per category and split (two train texts, one validation, one test)."""
    return {c: {"train": [a, b], "validation": [v], "test": [t]} for c, (a, b, v, t) in sib200.items()}


def _sib200(data: SkmtebData) -> FixtureRepo:
    repo = FixtureRepo("mteb/sib200", "a74d7350ea12af010cfb1c21e34f1f81fd2e615b")
    columns = features(index_id="int64", category=STRING, text=STRING)
    splits = ("train", "validation", "test")
    for split in splits:
        repo.tables[f"{split}/slk_Latn.parquet"] = (sib200_rows(split, data.sib200), columns)
    repo.config("slk_Latn", {split: f"{split}/slk_Latn.parquet" for split in splits})
    return repo


def _multilingual_sentiment(data: SkmtebData) -> FixtureRepo:
    repo = FixtureRepo(
        "mteb/multilingual-sentiment-classification", "2b9b4d10fc589af67794141fe8cbd3739de1eb33"
    )
    columns = features(text=STRING, label="int64", lang=STRING)
    for split, pairs in data.multilingual_sentiment.items():
        rows = [{"text": text, "label": label, "lang": "slk"} for text, label in pairs]
        repo.tables[f"{split}/slk.parquet"] = (rows, columns)
    repo.config("default", {split: f"{split}/*.parquet" for split in data.multilingual_sentiment})
    repo.config("slk", {split: f"{split}/slk.parquet" for split in data.multilingual_sentiment})
    return repo


def parlasent_rows(parlasent: dict[str, list[str]] | None = None) -> Rows:
    """ParlaSent's ``SK`` records: id, country, sentence, label (interleaved by label)."""
    by_label = [[(label, text) for text in texts] for label, texts in (parlasent or PARLASENT_SK).items()]
    ordered = [pair for trio in zip(*by_label, strict=True) for pair in trio]
    return [
        {"id": f"ParlaMint-SK_{2019 + n % 4}-{n:03d}", "country": "SK", "sentence": text, "label": label}
        for n, (label, text) in enumerate(ordered)
    ]


def _parlasent(data: SkmtebData) -> FixtureRepo:
    repo = FixtureRepo("classla/ParlaSent", "0587c2b6499fbc68a7623439c2af2b24748968dc")
    repo.texts["ParlaSent_SK.jsonl"] = _json_lines(parlasent_rows(data.parlasent))
    configs = [{"config_name": "SK", "data_files": "ParlaSent_SK.jsonl"}]
    repo.card = {"language": ["sk"], "license": "cc-by-sa-4.0", "configs": configs}
    return repo


def multieup_party_splits(party: list[tuple[str, str, str]]) -> dict[str, list[tuple[str, int]]]:
    """:data:`MULTIEUP_PARTY` as ``(text, label)`` per split (two train texts and one test per group)."""
    splits: dict[str, list[tuple[str, int]]] = {"train": [], "test": []}
    for label, (first, second, test) in enumerate(party):
        splits["train"] += [(first, label), (second, label)]
        splits["test"].append((test, label))
    return splits


def _multieup_party(data: SkmtebData) -> FixtureRepo:
    return _text_label(
        "mteb/MultiEupSlovakPartyClassification", "3758b0758c1ac4af8e36d27858bef579db5d2eee", data.party
    )


def _clustering(repo_id: str, revision: str, rows: Rows, columns: list[Feature]) -> FixtureRepo:
    repo = FixtureRepo(repo_id, revision)
    repo.parquet("default", "data", {"test": rows}, columns)
    return repo


def _opus(data: SkmtebData) -> FixtureRepo:
    repo = FixtureRepo("Helsinki-NLP/opus-100", "805090dc28bf78897da9641cdf08b61287580df9")
    columns = features(translation={"translation": {"languages": ["en", "sk"]}})
    rows = {
        split: [{"translation": {"en": en, "sk": sk}} for en, sk in pairs]
        for split, pairs in data.opus.items()
    }
    repo.parquet("en-sk", "en-sk", rows, columns)
    return repo


def _tatoeba(data: SkmtebData) -> FixtureRepo:
    repo = FixtureRepo("mteb/tatoeba-bitext-mining", "69e8f12da6e31d59addadda9a9c8a2e601a0e282")
    columns = features(sentence1=STRING, sentence2=STRING, lang=STRING)
    rows = [{"sentence1": slk, "sentence2": eng, "lang": "slk-eng"} for slk, eng in data.tatoeba]
    repo.tables["test/slk-eng.parquet"] = (rows, columns)
    repo.config("default", {"test": "test/*.parquet"})
    repo.config("slk-eng", {"test": "test/slk-eng.parquet"})
    return repo


LANGUAGE_COLUMNS = ("eng_Latn", "ces_Latn", "slk_Latn")


def _parallel(repo_id: str, revision: str, splits: dict[str, list[tuple[str, str, str]]]) -> FixtureRepo:
    repo = FixtureRepo(repo_id, revision)
    columns = features(**dict.fromkeys(LANGUAGE_COLUMNS, STRING))
    rows = {
        split: [dict(zip(LANGUAGE_COLUMNS, triple, strict=True)) for triple in triples]
        for split, triples in splits.items()
    }
    repo.parquet("default", "data", rows, columns)
    return repo


def _webfaq_bitexts(data: SkmtebData) -> FixtureRepo:
    repo = FixtureRepo("PaDaS-Lab/webfaq-bitexts", "a1bc0e8fd36c3d5015bd64c14ca098596774784a")
    names = ("question1", "answer1", "question2", "answer2")
    columns = features(**dict.fromkeys(names, STRING))
    for pair, rows in data.webfaq_bitexts.items():
        repo.parquet(pair, pair, {"default": [dict(zip(names, row, strict=True)) for row in rows]}, columns)
    return repo


@dataclass
class SkmtebData:
    """The rows every builder of :func:`skmteb_repos` lays out, in the shapes of this module's constants
    (:data:`HANDWRITTEN`: the hand-written fixture; ``benchmark/rehearsal_data.py`` fills the same shapes at
    the real sizes for the cost rehearsal)."""

    belebele: list[Any]
    slovaksum: dict[str, list[tuple[str, str, str]]]
    smesum_retrieval: list[tuple[str, str, str]]
    skquad_corpus: list[tuple[str, str, str]]
    skquad_queries: list[tuple[str, str, list[str]]]
    webfaq_retrieval: list[tuple[str, str, str, str]]
    reranking: dict[str, tuple[list[tuple[str, str, str]], list[tuple[str, str, list[str], str]]]]
    slovak_sts: list[tuple[str, str, float]]
    slovak_sts_synthetic: dict[str, list[tuple[str, str, int]]]
    nli_sk: dict[str, list[tuple[str, str, str, str, str]]]
    demagog: dict[str, list[tuple[str, str, str, str]]]
    hate_speech: dict[str, list[tuple[str, int]]]
    movie_reviews: dict[str, list[tuple[str, int]]]
    sib200: dict[str, dict[str, list[str]]]
    multilingual_sentiment: dict[str, list[tuple[str, int]]]
    parlasent: dict[str, list[str]]
    party: dict[str, list[tuple[str, int]]]
    gender: dict[str, list[tuple[str, int]]]
    news: list[tuple[str, str, str, str]]
    sme_uncategorized: list[tuple[str, str]]
    pravda_tags: dict[str, list[tuple[str, str]]]
    pravda_urls: dict[str, list[tuple[str, str]]]
    opus: dict[str, list[tuple[str, str]]]
    tatoeba: list[tuple[str, str]]
    flores: dict[str, list[tuple[str, str, str]]]
    ntrex: list[tuple[str, str, str]]
    webfaq_bitexts: dict[str, list[tuple[str, str, str, str]]]


HANDWRITTEN = SkmtebData(
    belebele=BELEBELE_PASSAGES,
    slovaksum=SLOVAKSUM,
    smesum_retrieval=SMESUM_RETRIEVAL,
    skquad_corpus=SKQUAD_CORPUS,
    skquad_queries=SKQUAD_QUERIES,
    webfaq_retrieval=WEBFAQ_RETRIEVAL,
    reranking=RERANKING,
    slovak_sts=SLOVAK_STS,
    slovak_sts_synthetic=SLOVAK_STS_SYNTHETIC,
    nli_sk=NLI_SK,
    demagog=DEMAGOG,
    hate_speech=HATE_SPEECH,
    movie_reviews=MOVIE_REVIEWS,
    sib200=sib200_splits(SIB200),
    multilingual_sentiment=MULTILINGUAL_SENTIMENT,
    parlasent=PARLASENT_SK,
    party=multieup_party_splits(MULTIEUP_PARTY),
    gender=MULTIEUP_GENDER,
    news=NEWS,
    sme_uncategorized=SME_UNCATEGORIZED,
    pravda_tags=PRAVDA_TAGS,
    pravda_urls=PRAVDA_URLS,
    opus=OPUS_EN_SK,
    tatoeba=TATOEBA_SLK_ENG,
    flores=FLORES,
    ntrex=NTREX,
    webfaq_bitexts=WEBFAQ_BITEXTS,
)
"""The hand-written rows of the committed fixture (``tests/data/hub``)."""


def skmteb_repos(data: SkmtebData = HANDWRITTEN, *, shared: bool = True) -> list[FixtureRepo]:
    """Every fixture repository of the benchmark's tasks (``slovak-nlp/sklep`` aside: see the module doc),
    laid out from ``data``.

    ``mteb/sib200`` and ``mteb/belebele`` also hold the Czech and Ukrainian configs of
    :func:`tests.support.hub_ces_ukr.extend_shared` (the same commit serves both recipes' tasks) unless
    ``shared`` is false.
    """
    from tests.support.hub_ces_ukr import extend_shared

    def extended(repo: FixtureRepo) -> FixtureRepo:
        return extend_shared(repo) if shared else repo

    news = data.news
    slovaksum_url = [{"sentences": f"{title} {lead}", "labels": label} for title, lead, label, _ in news]
    sme = [{"title": t, "introduction": i, "category": c} for t, i, _, c in news]
    sme += [{"title": t, "introduction": i, "category": "none"} for t, i in data.sme_uncategorized]
    pravda_tag = [
        {"title": t, "summary": s, "assigned_label": tag}
        for tag, rows in data.pravda_tags.items()
        for t, s in rows
    ]
    pravda_url = [
        {"title": t, "summary": s, "url_category": cat}
        for cat, rows in data.pravda_urls.items()
        for t, s in rows
    ]
    return [
        extended(_belebele(data)),
        _slovaksum(data),
        _smesum_retrieval(data),
        _skquad_retrieval(data),
        _webfaq_retrieval(data),
        _sts(
            "mteb/SlovakSTS", "620c09a567e524c727d4dd20e4339fb4d3ed442f", {"test": data.slovak_sts}, "score"
        ),
        _sts(
            "slovak-nlp/slovak-sts-synthetic",
            "6286d808151adb399ef35b5bfaba1d7461ee6df3",
            data.slovak_sts_synthetic,
            "similarity_score",
        ),
        _nli_sk(data),
        _demagog(data),
        _text_label("mteb/slovak_hate_speech", "691fe861df0ffa25066cbf6da8e64ebd296af6ab", data.hate_speech),
        _text_label(
            "mteb/slovak_movie_review_sentiment",
            "29a7405aabcfd4860a51ae6f65a5650d63108f26",
            data.movie_reviews,
        ),
        extended(_sib200(data)),
        _multilingual_sentiment(data),
        _parlasent(data),
        _multieup_party(data),
        _text_label(
            "mteb/MultiEupSlovakGenderClassification",
            "5990c9386f75401ff518cbc213cdf8292bf123fe",
            data.gender,
        ),
        _reranking(data, "TUKE-KEMT/reranking-skquad", "3997eba1c60721e34f7b01db400f5b14a40218ea"),
        _reranking(
            data, "slovak-nlp/slovak-pharmacy-drmax-reranking", "b557bbc99cf4d410b32a5e25a22f34f08b540e06"
        ),
        _reranking(
            data,
            "slovak-nlp/slovak-pharmacy-mojalekaren-reranking",
            "e4ac8bb50c5252d154996df080d9901774556368",
        ),
        _clustering(
            "NaiveNeuron/pravda-sk-tag-clustering",
            "dd0a6c077151b8c8bc2fd6abcd746b34fde80bf8",
            pravda_tag,
            features(title=STRING, summary=STRING, assigned_label=STRING),
        ),
        _clustering(
            "NaiveNeuron/pravda-sk-url-clustering",
            "c5a24605e0fe5a23bc718a531570f353b377e3a3",
            pravda_url,
            features(title=STRING, summary=STRING, url_category=STRING),
        ),
        _clustering(
            "mteb/SlovakSumURLClustering",
            "3410778ab05bf1f002fa26eab148410191427dab",
            slovaksum_url,
            features(sentences=STRING, labels=STRING),
        ),
        _clustering(
            "NaiveNeuron/SMESum",
            "c5a6521a4ddce3450fb04ba218623681a9189c6d",
            sme,
            features(title=STRING, introduction=STRING, category=STRING),
        ),
        _opus(data),
        _tatoeba(data),
        _parallel("mteb/FloresBitextMining", "2144d16cc15edd22d4a9237d12bff5f31f5c07fc", data.flores),
        _parallel("mteb/NTREXBitextMining", "66b8b27efc99658903127730575e9fa0cb9f075c", {"test": data.ntrex}),
        _webfaq_bitexts(data),
    ]


SHARED_REPOS = {SKLEP_ID: SKLEP_REVISION}
"""Repositories of other fixtures that tasks of the benchmark read."""

TASK_SAMPLES: dict[str, str] = {
    "BelebeleRetrieval": "Čo podľa výskumníkov šetria kratšie lety?",
    "SlovakSumRetrieval": SLOVAKSUM["test"][3][1],
    "SMESumRetrieval": SMESUM_RETRIEVAL[5][2],
    "SKQuadRetrieval": SKQUAD_CORPUS[5][2],
    "WebFAQRetrieval": WEBFAQ_RETRIEVAL[5][1],
    "SlovakSTS": SLOVAK_STS[4][1],
    "SlovakSumSTS": SLOVAK_STS_SYNTHETIC["test"][5][0],
    "SlovakNLI": NLI_SK["test"][4][2],
    "SlovakRTE": sklep_rows("rte", "test")[0]["text1"],
    "DemagogSKNLI": DEMAGOG["test"][1][3],
    "SlovakHateSpeechClassification.v2": HATE_SPEECH["test"][0][0],
    "SlovakMovieReviewSentimentClassification.v2": MOVIE_REVIEWS["test"][2][0],
    "SIB200Classification": SIB200["geography"][3],
    "MultilingualSentimentClassification": MULTILINGUAL_SENTIMENT["test"][2][0],
    "SlovakParlaSentClassification": PARLASENT_SK["Negative"][1],  # in the test part of mteb's seeded split
    "MultiEupSlovakPartyClassification": MULTIEUP_PARTY[4][2],
    "MultiEupSlovakGenderClassification": MULTIEUP_GENDER["test"][3][0],
    "SkQuadReranking": RERANKING["TUKE-KEMT/reranking-skquad"][1][2][1],
    "SlovakPharmacyDrMaxReranking": RERANKING["slovak-nlp/slovak-pharmacy-drmax-reranking"][0][6][2],
    "SlovakPharmacyMojaLekarenReranking": RERANKING["slovak-nlp/slovak-pharmacy-mojalekaren-reranking"][1][3][
        1
    ],
    "SIB200ClusteringS2S": SIB200["travel"][0],
    "PravdaSKTagClustering": "Ohio zasiahli ničivé tornáda Búrky zničili desiatky domov a poškodili "
    "elektrické "
    "vedenia.",
    "PravdaSKURLClustering": "Raňajky nemusia byť sladké Výživová poradkyňa odporúča vajíčka, tvaroh alebo "
    "celozrnné pečivo.",
    "SlovakSumURLClustering": f"{NEWS[40][0]} {NEWS[40][1]}",
    "SMESumCategoryClustering": f"{NEWS[2][0]} {NEWS[2][1]}",
    "OpusSlovakEnglishBitextMining": OPUS_EN_SK["test"][3][1],
    "Tatoeba": TATOEBA_SLK_ENG[4][0],
    "FloresBitextMining": FLORES["devtest"][5][1],
    "NTREXBitextMining": NTREX[5][2],
    "WebFAQBitextMiningQuestions": WEBFAQ_BITEXTS["eng-slk"][2][0],
    "WebFAQBitextMiningQAs": f"{WEBFAQ_BITEXTS['ces-slk'][1][2]} {WEBFAQ_BITEXTS['ces-slk'][1][3]}",
}
"""Task -> one text of its evaluation splits (``task_test_texts`` must return it)."""


# -- writing the fixture folder ------------------------------------------------------------------------------


def _json_lines(rows: Rows) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def _hf_features(columns: list[Feature]) -> Any:
    from datasets import Features

    return Features._from_yaml_list(columns)


def repo_dir(root: Path, repo: FixtureRepo) -> Path:
    """Where a repository's commit lies under a fixture root."""
    return root / "datasets" / repo.repo_id / repo.revision


def write_repo(root: Path, repo: FixtureRepo) -> list[Path]:
    """Write one repository (parquet with ``datasets``' feature metadata, so ClassLabels survive)."""
    from datasets import Dataset

    target = repo_dir(root, repo)
    written = []
    for path, text in {"README.md": repo.readme(), **repo.texts}.items():
        file = target / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8", newline="\n")
        written.append(file)
    for path, (rows, columns) in repo.tables.items():
        file = target / path
        file.parent.mkdir(parents=True, exist_ok=True)
        Dataset.from_list(rows, features=_hf_features(columns)).to_parquet(str(file))
        written.append(file)
    if repo.gated:
        settings = target.parent / "settings.json"
        settings.write_text(json.dumps({"gated": repo.gated}) + "\n", encoding="utf-8", newline="\n")
        written.append(settings)
    return written


def write_skmteb_repos(root: Path) -> list[Path]:
    """Write every repository of :func:`skmteb_repos` under ``root``; the paths written."""
    import datasets

    datasets.disable_progress_bars()
    return [path for repo in skmteb_repos() for path in write_repo(root, repo)]


if __name__ == "__main__":
    for written in write_skmteb_repos(HUB_DATA):
        print(written.relative_to(HUB_DATA))
