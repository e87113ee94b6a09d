"""Fixture repositories of the evaluation tasks of the Czech and Ukrainian recipes, for the local Hub.

``recipes/e5_cs_small.yaml`` and ``recipes/e5_uk_small.yaml`` evaluate on mteb tasks that are not part of
``MTEB(slk, v1)``. This module holds their rows (a few hand-written Czech and Ukrainian texts, English where a
task pairs languages) and builds each repository at the revision the installed mteb pins, in the layout its
loader reads, with the helpers of :mod:`tests.support.hub_skmteb`. ``python -m tests.support.hub_ces_ukr``
writes them under ``tests/data/hub/datasets/``; ``tests/data/hub/CES_UKR.md`` says how each layout was
derived.

Two repositories are shared with the Slovak benchmark: ``mteb/sib200`` (SIB200ClusteringS2S) and
``mteb/belebele`` (BelebeleRetrieval) get ``ces_Latn`` and ``ukr_Cyrl`` configs beside their Slovak ones
(:func:`extend_shared`, which :mod:`tests.support.hub_skmteb` applies when it builds them, so that its
generator check keeps covering every file of those repositories).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.hub_fixtures import HUB_DATA
from tests.support.hub_skmteb import (
    BELEBELE_COLUMNS,
    BELEBELE_PASSAGES,
    CORPUS_V2,
    QRELS,
    QUERIES_V2,
    STRING,
    TEXT_LABEL,
    TOP_RANKED,
    Feature,
    FixtureRepo,
    Rows,
    features,
    repo_dir,
    write_repo,
)

LANGUAGES = ("ces_Latn", "ukr_Cyrl")

RECIPE_TASKS: dict[str, list[str]] = {
    "e5_cs_small": [
        "CSFDCZMovieReviewSentimentClassification.v2",
        "CzechProductReviewSentimentClassification.v2",
        "SIB200Classification.v3",
        "SIB200ClusteringS2S",
        "CTKFactsNLI",
        "BelebeleRetrieval",
        "WikipediaRerankingMultilingual",
    ],
    "e5_uk_small": [
        "UkrSedUASmallSTSv1",
        "UkrFormalityClassification.v2",
        "UkrTweetToxicityBinaryClassification",
        "SIB200Classification.v3",
        "SIB200ClusteringS2S",
        "BelebeleRetrieval",
    ],
}
"""The evaluation tasks of each recipe (``evaluate.tasks``; the language registry's ``eval_tasks``)."""

# -- Belebele (mteb/belebele, shared) ----------------------------------------------------------------------

BELEBELE: dict[str, dict[str, tuple[str, list[tuple[str, list[str]]]]]] = {
    # language -> FLORES link -> (passage, [(question, four answers)]) in the order of BELEBELE_PASSAGES
    "ces_Latn": {
        "https://en.wikivoyage.org/wiki/Old_town_walks": (
            "Staré město je tak malé, že ho za jedno odpoledne projdete pěšky. Většina muzeí má v pondělí "
            "zavřeno, proto si návštěvu naplánujte na později v týdnu. Tramvaje jezdí do půlnoci a jízdenky "
            "je třeba označit ve voze.",
            [
                ("Kdy má většina muzeí zavřeno?", ["V pondělí", "V neděli", "Odpoledne", "Po půlnoci"]),
                (
                    "Co musí cestující udělat s jízdenkami na tramvaj?",
                    ["Koupit je o půlnoci", "Označit je ve voze", "Ukázat je v muzeu", "Vrátit je řidiči"],
                ),
            ],
        ),
        "https://en.wikinews.org/wiki/Bees_prefer_short_flights": (
            "Vědci zjistili, že se včely vracely do úlu rychleji, když byly květiny vysazené blízko sebe. "
            "Výzkumníci se domnívají, že kratší lety šetří energii během horkých letních dnů.",
            [
                (
                    "Proč se včely vracely rychleji?",
                    [
                        "Úl byl větší",
                        "Květiny byly vysazené blízko sebe",
                        "Dny byly chladnější",
                        "Výzkumníci je krmili",
                    ],
                ),
                ("Co podle výzkumníků šetří kratší lety?", ["Čas", "Vodu", "Energii", "Květiny"]),
            ],
        ),
        "https://en.wikinews.org/wiki/Storm_cuts_power_on_the_coast": (
            "Bouře přerušila dodávky elektřiny tisícům domácností podél pobřeží. Opraváři pracovali celou "
            "noc a do rána byla elektřina ve většině vesnic obnovena. Školy zůstaly zavřené ještě jeden den.",
            [
                (
                    "Co způsobila bouře?",
                    ["Požár ve škole", "Výpadek elektřiny", "Povodeň ve městě", "Uzavřené letiště"],
                ),
                (
                    "Co se stalo se školami?",
                    [
                        "Otevřely dříve",
                        "Zůstaly zavřené ještě jeden den",
                        "Přišly o střechy",
                        "Sloužily jako přístřeší",
                    ],
                ),
            ],
        ),
    },
    "ukr_Cyrl": {
        "https://en.wikivoyage.org/wiki/Old_town_walks": (
            "Старе місто настільки маленьке, що його можна обійти пішки за одне пообіддя. Більшість музеїв "
            "у понеділок зачинені, тож плануйте відвідини на кінець тижня. Трамваї курсують до опівночі, а "
            "квитки потрібно компостувати в салоні.",
            [
                (
                    "Коли більшість музеїв зачинені?",
                    ["У понеділок", "У неділю", "Після обіду", "Після опівночі"],
                ),
                (
                    "Що пасажири мають зробити з квитками на трамвай?",
                    [
                        "Купити їх опівночі",
                        "Закомпостувати їх у салоні",
                        "Показати їх у музеї",
                        "Повернути їх водієві",
                    ],
                ),
            ],
        ),
        "https://en.wikinews.org/wiki/Bees_prefer_short_flights": (
            "Науковці з'ясували, що бджоли поверталися до вулика швидше, коли квіти були висаджені близько "
            "одна до одної. Дослідники вважають, що коротші перельоти заощаджують енергію в спекотні літні "
            "дні.",
            [
                (
                    "Чому бджоли поверталися швидше?",
                    [
                        "Вулик був більшим",
                        "Квіти були висаджені близько одна до одної",
                        "Дні були прохолоднішими",
                        "Дослідники їх підгодовували",
                    ],
                ),
                (
                    "Що, на думку дослідників, заощаджують коротші перельоти?",
                    ["Час", "Воду", "Енергію", "Квіти"],
                ),
            ],
        ),
        "https://en.wikinews.org/wiki/Storm_cuts_power_on_the_coast": (
            "Буря залишила без світла тисячі осель уздовж узбережжя. Ремонтні бригади працювали всю ніч, і "
            "до ранку електропостачання відновили в більшості сіл. Школи залишалися зачиненими ще один день.",
            [
                (
                    "Що спричинила буря?",
                    ["Пожежу в школі", "Відключення електроенергії", "Повінь у місті", "Закриття аеропорту"],
                ),
                (
                    "Що сталося зі школами?",
                    [
                        "Відкрилися раніше",
                        "Залишалися зачиненими ще один день",
                        "Втратили дахи",
                        "Стали укриттями",
                    ],
                ),
            ],
        ),
    },
}


def belebele_rows(language: str) -> Rows:
    """Belebele's columns for ``ces_Latn``/``ukr_Cyrl``: the same passages, questions and correct answers
    as the ``eng_Latn`` rows (Belebele is parallel), in that language."""
    rows = []
    for link, _, questions in BELEBELE_PASSAGES:
        passage, translated = BELEBELE[language][link]
        for number, ((_, _, correct), (question, answers)) in enumerate(
            zip(questions, translated, strict=True), 1
        ):
            row = {"link": link, "question_number": number, "flores_passage": passage, "question": question}
            row |= {f"mc_answer{i}": answer for i, answer in enumerate(answers, 1)}
            row |= {"correct_answer_num": str(correct), "dialect": language}
            rows.append(row)
    return rows


# -- SIB-200 (mteb/sib200, shared; mteb/sib200.v3) ---------------------------------------------------------

SIB200: dict[str, dict[str, tuple[str, str, str, str]]] = {
    # language -> SIB-200 category -> (train, train, validation, test)
    "ces_Latn": {
        "science/technology": (
            "Inženýři postavili robota, který dokáže vyšplhat po svislé stěně.",
            "Nový mikroskop zobrazí jednotlivé atomy v krystalu soli.",
            "Astronomové objevili kometu, která se k Zemi vrátí až za tisíc let.",
            "Vědci vyvinuli plast, který se v půdě rozloží během několika týdnů.",
        ),
        "travel": (
            "Na cestu do hor si vždy přibalte teplou bundu a pláštěnku.",
            "Letenky bývají nejlevnější, když je koupíte několik týdnů předem.",
            "Do přímořských letovisek jezdí v létě z Prahy noční autobusy.",
            "Ověřte si, že váš pas platí ještě půl roku po návratu.",
        ),
        "politics": (
            "Sněmovna po dlouhé debatě schválila státní rozpočet na příští rok.",
            "Premiér odletěl na jednání do Bruselu, kde se bude mluvit o energetice.",
            "Koaliční strany se neshodly na kandidátovi na post ombudsmana.",
            "Senát vrátil poslancům stavební zákon s pozměňovacími návrhy.",
        ),
        "sports": (
            "Hokejisté otočili zápas v posledních pěti minutách a postoupili do finále.",
            "Oštěpařka hodila osobní rekord hned v první sérii.",
            "Cyklista dojel do cíle s náskokem dvou minut na celé pole.",
            "Fotbalový klub angažoval nového trenéra do konce sezóny.",
        ),
        "health": (
            "Odborníci radí jíst každý den alespoň pět porcí ovoce a zeleniny.",
            "Chůze do schodů je jednoduchý způsob, jak posílit srdce.",
            "Kuřáci mají výrazně vyšší riziko rakoviny plic.",
            "Dětská lékařka připomíná, že školáci potřebují aspoň devět hodin spánku.",
        ),
        "entertainment": (
            "Kapela ohlásila turné, na kterém zahraje i své nejstarší písně.",
            "Nový animovaný film bavil v kinech děti i jejich rodiče.",
            "Muzikál se v Praze hraje už desátou sezónu za sebou.",
            "Herečka převzala cenu za nejlepší ženský výkon v seriálu.",
        ),
        "geography": (
            "Nejdelší řekou Evropy je Volha, která se vlévá do Kaspického moře.",
            "Grónsko je největší ostrov na světě.",
            "Andy se táhnou podél celého západního pobřeží Jižní Ameriky.",
            "Bajkal je nejhlubší jezero na Zemi.",
        ),
    },
    "ukr_Cyrl": {
        "science/technology": (
            "Інженери створили дрон, який може літати під дощем понад годину.",
            "Новий телескоп сфотографував хмару пилу навколо молодої зірки.",
            "Учені навчили програму розпізнавати хвороби рослин за фото листя.",
            "Космічний апарат успішно приземлився на поверхню Місяця.",
        ),
        "travel": (
            "Перед подорожжю в гори обов'язково перевірте прогноз погоди.",
            "Квитки на потяг краще купувати заздалегідь, особливо влітку.",
            "У багатьох містах Європи громадський транспорт працює всю ніч.",
            "Туристам радять мати при собі копію паспорта та медичну страховку.",
        ),
        "politics": (
            "Парламент ухвалив закон про місцеві вибори в першому читанні.",
            "Прем'єр-міністр зустрівся з головами областей, щоб обговорити бюджет.",
            "Опозиційні депутати вимагають відставки міністра освіти.",
            "Президентка підписала указ про нові призначення в уряді.",
        ),
        "sports": (
            "Збірна з волейболу виграла матч у п'яти сетах і вийшла до півфіналу.",
            "Бігунка встановила національний рекорд на дистанції десять кілометрів.",
            "Футболісти поступилися суперникам в останні хвилини гри.",
            "Тенісист уперше в кар'єрі переміг на турнірі в Мадриді.",
        ),
        "health": (
            "Лікарі радять щодня гуляти на свіжому повітрі щонайменше пів години.",
            "Регулярне миття рук зменшує ризик застуди й грипу.",
            "Надмірне вживання цукру шкодить зубам і серцю.",
            "Щеплення від кору варто робити ще в дитинстві.",
        ),
        "entertainment": (
            "Співачка презентувала новий кліп на фестивалі у Львові.",
            "Серіал про життя маленького містечка став хітом року.",
            "Квитки на прем'єру вистави розкупили за кілька годин.",
            "Режисер зняв комедію, яку глядачі полюбили з першого показу.",
        ),
        "geography": (
            "Говерла є найвищою вершиною Українських Карпат.",
            "Дніпро впадає в Чорне море неподалік від Херсона.",
            "Австралія є водночас країною і континентом.",
            "Найбільшою пустелею Азії є Гобі.",
        ),
    },
}
SIB200_V3_TOPICS = {  # SIB-200 category -> id of the 14-topic version (mteb's _TOPICS order)
    "travel": 0,
    "politics": 1,
    "science/technology": 2,
    "sports": 3,
    "health": 5,
    "entertainment": 7,
    "geography": 8,
}
SIB200_V3_TECHNOLOGY = 4
"""The first science/technology text of each language (a robot, a drone) is technology in 14 topics."""


def sib200_rows(language: str, split: str) -> Rows:
    """SIB-200's rows of a split (``mteb/sib200``): ``index_id``, ``category``, ``text``."""
    picks = {"train": (0, 1), "validation": (2,), "test": (3,)}[split]
    texts = [(category, texts[i]) for i in picks for category, texts in SIB200[language].items()]
    offset = {"train": 0, "validation": 700, "test": 800}[split]
    return [{"index_id": offset + n, "category": c, "text": t} for n, (c, t) in enumerate(texts)]


def sib200_v3_rows(language: str, split: str) -> Rows:
    """The 14-topic rows (``mteb/sib200.v3``): ``text``, ``label``; the same FLORES sentences."""
    picks = {"train": (0, 1), "test": (2, 3)}[split]
    rows = []
    for i in picks:
        for category, texts in SIB200[language].items():
            technology = category == "science/technology" and i == 0
            label = SIB200_V3_TECHNOLOGY if technology else SIB200_V3_TOPICS[category]
            rows.append({"text": texts[i], "label": label})
    return rows


# -- Czech tasks --------------------------------------------------------------------------------------------

CSFD_REVIEWS = {  # rating (0 = worst, 5 = best) -> (train, train, test)
    0: (
        "Nejhorší film, jaký jsem letos viděl. Nuda od začátku do konce.",
        "Ztráta času, herci hrají jako ze dřeva a děj nedává smysl.",
        "Po dvaceti minutách jsem to vypnul, tohle se nedá vydržet.",
    ),
    1: (
        "Pár pěkných záběrů, ale jinak slabota.",
        "Hudba ušla, zbytek bych nejraději zapomněl.",
        "Slabý scénář a ještě slabší herecké výkony, jedna hvězda za kameru.",
    ),
    2: (
        "Průměrná komedie, zasmál jsem se jen dvakrát.",
        "Začátek sliboval víc, druhá polovina se hrozně táhne.",
        "Dá se na to koukat, ale podruhé už to pouštět nebudu.",
    ),
    3: (
        "Solidní detektivka s dobrým obsazením, jen konec byl předvídatelný.",
        "Příjemná oddechovka na nedělní odpoledne.",
        "Slušně natočené, i když některé scény byly zbytečně dlouhé.",
    ),
    4: (
        "Výborná atmosféra a skvělá kamera, škoda trochu uspěchaného konce.",
        "Velmi povedený film, hlavní představitel hraje skvěle.",
        "Moc hezký film o přátelství, rád se k němu vrátím.",
    ),
    5: (
        "Naprostá klasika, kterou můžu vidět pořád dokola.",
        "Mistrovské dílo, od první minuty mě to nepustilo.",
        "Nejlepší český film posledních let, v kině se tleskalo.",
    ),
}
PRODUCT_REVIEWS = {  # sentiment (0 negative, 1 neutral, 2 positive) -> (train x3, test x2)
    0: (
        "Vysavač se po týdnu rozbil a reklamace trvá už měsíc.",
        "Bota se rozlepila hned při prvním dešti.",
        "Kávovar teče a káva je vlažná.",
        "Tiskárna neustále hlásí chybu papíru, nedoporučuji.",
        "Zboží přišlo poškozené a bez návodu.",
    ),
    1: (
        "Telefon je v pořádku, nic zvláštního.",
        "Rychlovarná konvice funguje, jen je dost hlučná.",
        "Za tu cenu průměr, čekal jsem trochu víc.",
        "Batoh odpovídá popisu, kvalita je běžná.",
        "Sluchátka hrají slušně, ale tlačí do uší.",
    ),
    2: (
        "Skvělá pračka, tichá a úsporná, jsem moc spokojená.",
        "Doručení druhý den a vše funguje perfektně.",
        "Mixér zvládne i led, výborná koupě.",
        "Notebook je rychlý a baterie vydrží celý den.",
        "Kočárek se snadno skládá a dobře se s ním jezdí.",
    ),
}
CTK_FACTS = {  # split -> (evidence, [(claim, 1 = supported / 0 = refuted)])
    "validation": [
        (
            "Praha – Česká národní banka ve čtvrtek ponechala základní úrokovou sazbu beze změny na čtyřech "
            "procentech. Bankovní rada podle guvernéra očekává, že se inflace v příštím roce vrátí k "
            "dvouprocentnímu cíli.",
            [
                ("Česká národní banka ve čtvrtek nezměnila základní úrokovou sazbu.", 1),
                ("Česká národní banka zvýšila základní sazbu na pět procent.", 0),
            ],
        ),
        (
            "Brno – Do brněnské zoologické zahrady se po rekonstrukci vrátili lední medvědi. Nový výběh má "
            "bazén hluboký šest metrů a prosklenou stěnu, přes kterou mohou návštěvníci medvědy pozorovat "
            "pod vodou.",
            [
                ("Výběh ledních medvědů v brněnské zoo má bazén hluboký šest metrů.", 1),
                ("Lední medvědi z brněnské zoo byli natrvalo převezeni do Prahy.", 0),
            ],
        ),
    ],
    "test": [
        (
            "Ostrava – Dopravní podnik Ostrava od září rozšíří noční tramvajové linky. Spoje budou podle "
            "mluvčího podniku jezdit každých třicet minut, a to i o víkendech.",
            [
                ("Noční tramvaje v Ostravě budou o víkendech jezdit každých třicet minut.", 1),
                ("Dopravní podnik Ostrava od září zruší noční tramvajové linky.", 0),
            ],
        ),
        (
            "Plzeň – Plzeňský pivovar loni uvařil rekordní množství piva, přes dva miliony hektolitrů. Více "
            "než polovinu produkce vyvezl do zahraničí, nejvíce na Slovensko a do Německa.",
            [
                ("Plzeňský pivovar vyvezl většinu své produkce do zahraničí.", 1),
                ("Plzeňský pivovar loni omezil výrobu na polovinu.", 0),
            ],
        ),
        (
            "Liberec – Horská služba v Jizerských horách v neděli zasahovala u dvanácti zraněných lyžařů. "
            "Podle záchranářů byla příčinou většiny úrazů zledovatělá sjezdovka.",
            [
                ("Horská služba v neděli pomáhala zraněným lyžařům v Jizerských horách.", 1),
                ("V Jizerských horách se v neděli nikdo nezranil.", 0),
            ],
        ),
    ],
}
WIKIPEDIA_RERANKING_CS = [  # (query, relevant (title, passage), two other candidates)
    (
        "Kdy byla založena Univerzita Karlova?",
        (
            "Univerzita Karlova",
            "Univerzita Karlova byla založena roku 1348 českým králem Karlem IV. Je nejstarší univerzitou ve "
            "střední Evropě a dnes má sedmnáct fakult v Praze, Plzni a Hradci Králové.",
        ),
        [
            (
                "Masarykova univerzita",
                "Masarykova univerzita v Brně vznikla v roce 1919 jako druhá česká univerzita. Nese jméno "
                "prvního československého prezidenta Tomáše Garrigua Masaryka.",
            ),
            (
                "Karlův most",
                "Karlův most spojuje Staré Město a Malou Stranu. Jeho stavba začala v roce 1357 za vlády "
                "Karla IV. a trvala přes padesát let.",
            ),
        ],
    ),
    (
        "Jak vysoká je Sněžka?",
        (
            "Sněžka",
            "Sněžka je nejvyšší hora České republiky s nadmořskou výškou 1603 metrů. Leží v Krkonoších na "
            "hranici s Polskem a na vrchol vede lanová dráha z Pece pod Sněžkou.",
        ),
        [
            (
                "Lysá hora",
                "Lysá hora je nejvyšší vrchol Moravskoslezských Beskyd. Je známá velkým množstvím srážek a "
                "oblíbenými zimními výstupy turistů.",
            ),
            (
                "Krkonošský národní park",
                "Krkonošský národní park byl vyhlášen v roce 1963 jako první národní park v Československu. "
                "Chrání horské louky, rašeliniště a vzácné rostliny.",
            ),
        ],
    ),
    (
        "Kdo napsal Babičku?",
        (
            "Božena Němcová",
            "Božena Němcová byla česká spisovatelka 19. století. Její nejznámější dílo Babička vyšlo roku "
            "1855 a popisuje život na venkově v Ratibořicích.",
        ),
        [
            (
                "Karel Čapek",
                "Karel Čapek byl český spisovatel a novinář. Ve hře R.U.R. z roku 1920 poprvé použil slovo "
                "robot, které vymyslel jeho bratr Josef.",
            ),
            (
                "Jan Neruda",
                "Jan Neruda byl básník a prozaik, autor Povídek malostranských. Po něm je pojmenována "
                "Nerudova ulice, která vede k Pražskému hradu.",
            ),
        ],
    ),
    (
        "Kde pramení Vltava?",
        (
            "Vltava",
            "Vltava je nejdelší řeka v Česku. Pramení na Šumavě pod Černou horou a u Mělníka se vlévá do "
            "Labe, se kterým pokračuje až do Severního moře.",
        ),
        [
            (
                "Labe",
                "Labe pramení v Krkonoších a protéká Hradcem Králové, Pardubicemi a Ústím nad Labem. Do "
                "Německa odtéká u Hřenska a do Severního moře ústí u Hamburku.",
            ),
            (
                "Morava (řeka)",
                "Řeka Morava pramení pod Králickým Sněžníkem a teče k jihu. Na soutoku s Dyjí tvoří hranici "
                "mezi Českem, Slovenskem a Rakouskem.",
            ),
        ],
    ),
    (
        "Který skladatel napsal Prodanou nevěstu?",
        (
            "Bedřich Smetana",
            "Bedřich Smetana byl český skladatel 19. století. Jeho komická opera Prodaná nevěsta měla "
            "premiéru v roce 1866 a cyklus symfonických básní Má vlast patří k nejhranějším českým dílům.",
        ),
        [
            (
                "Antonín Dvořák",
                "Antonín Dvořák složil Symfonii Z Nového světa během pobytu ve Spojených státech. Mezi jeho "
                "nejznámější opery patří Rusalka.",
            ),
            (
                "Leoš Janáček",
                "Leoš Janáček působil většinu života v Brně. Proslavil se operami Její pastorkyňa a Příhody "
                "lišky Bystroušky, v nichž vycházel z melodie mluvené řeči.",
            ),
        ],
    ),
]

# -- Ukrainian tasks ---------------------------------------------------------------------------------------

SED_UA_STS = [  # (query, passage, score in [0, 1])
    (
        "Як доглядати за кімнатними орхідеями взимку?",
        "Орхідеї взимку потребують яскравого розсіяного світла й помірного поливу. Варто тримати їх "
        "подалі від батарей і раз на тиждень зволожувати повітря навколо рослини.",
        1.0,
    ),
    (
        "Як доглядати за кімнатними орхідеями взимку?",
        "Зимові шини слід встановлювати, коли середньодобова температура опускається нижче семи градусів. "
        "Протектор має бути глибоким, щоб авто добре трималося на снігу.",
        0.0,
    ),
    (
        "Скільки триває дорога потягом з Києва до Львова?",
        "Швидкісний потяг долає відстань між Києвом і Львовом приблизно за п'ять годин. Квитки можна "
        "придбати онлайн або в касах вокзалу.",
        1.0,
    ),
    (
        "Скільки триває дорога потягом з Києва до Львова?",
        "Львівський оперний театр збудували на початку двадцятого століття. Його фасад прикрашають "
        "скульптури, що символізують поезію, музику й комедію.",
        0.1,
    ),
    (
        "Що приготувати на сніданок без яєць?",
        "На сніданок без яєць можна зварити вівсянку з ягодами або спекти сирники на манці. Обидві страви "
        "ситні й готуються швидко.",
        0.9,
    ),
    (
        "Що приготувати на сніданок без яєць?",
        "Кури-несучки найкраще почуваються в теплому курнику з вільним виходом на подвір'я. Взимку їм "
        "варто додавати до корму крейду.",
        0.2,
    ),
]
FORMALITY = {  # split -> [(text, 1 = formal / 0 = informal)]
    "train": [
        ("Просимо надіслати документи до кінця робочого тижня.", 1),
        ("Слухай, скинь мені ті фотки, коли будеш вільний.", 0),
        ("Дякуємо за ваше звернення, ми розглянемо його найближчим часом.", 1),
        ("Ну ти й даєш, я вже півгодини тебе чекаю!", 0),
        ("Шановні колеги, нагадуємо про засідання кафедри у вівторок.", 1),
        ("Та забий, завтра розберемося.", 0),
        ("Прошу повідомити мене про ваше рішення письмово.", 1),
        ("Привіт, підемо на каву після пар?", 0),
    ],
    "test": [
        ("Повідомляємо, що прийом громадян переноситься на четвер.", 1),
        ("Блін, знову забув зарядку вдома.", 0),
        ("Будь ласка, ознайомтеся з умовами договору перед підписанням.", 1),
        ("Круто було вчора, треба ще так зібратися!", 0),
        ("Висловлюємо щиру вдячність усім учасникам конференції.", 1),
        ("Кинь посилання, бо я не можу знайти.", 0),
    ],
}
TOXICITY = {  # split -> [(tweet, toxic: 1 / 0)]
    "train": [
        ("Ти просто тупий, якщо віриш у цю маячню.", 1),
        ("Нарешті весна, сьогодні гуляли парком цілий день.", 0),
        ("Заткнися вже, ніхто не питав твоєї думки.", 1),
        ("Дякую всім за привітання з днем народження!", 0),
        ("Які ж ідіоти пишуть такі коментарі.", 1),
        ("Хтось знає, де в центрі можна смачно поснідати?", 0),
        ("Автор цього допису повна нікчема.", 1),
        ("Сьогодні дочитала чудову книжку, раджу всім.", 0),
    ],
    "test": [
        ("Ти нікчема, і твої жарти такі самі.", 1),
        ("Який гарний захід сонця сьогодні над Дніпром.", 0),
        ("Тільки дурні можуть голосувати за таке.", 1),
        ("Вітаю команду з перемогою, так тримати!", 0),
        ("Йди геть зі своїми порадами, клоуне.", 1),
        ("Записалася на курси англійської, трохи хвилююся.", 0),
    ],
}

# -- the repositories --------------------------------------------------------------------------------------

SIB200_ID, SIB200_REVISION = "mteb/sib200", "a74d7350ea12af010cfb1c21e34f1f81fd2e615b"
BELEBELE_ID, BELEBELE_REVISION = "mteb/belebele", "979a211276faa22f671e69d096634193567cfd05"
SHARED = {SIB200_ID: SIB200_REVISION, BELEBELE_ID: BELEBELE_REVISION}
"""Repositories of :mod:`tests.support.hub_skmteb` that get Czech and Ukrainian configs here."""


def extend_shared(repo: FixtureRepo) -> FixtureRepo:
    """Add the ``ces_Latn``/``ukr_Cyrl`` configs to a shared repository (others are returned unchanged)."""
    if (repo.repo_id, repo.revision) == (SIB200_ID, SIB200_REVISION):
        columns = features(index_id="int64", category=STRING, text=STRING)
        splits = ("train", "validation", "test")
        for language in LANGUAGES:
            for split in splits:
                repo.tables[f"{split}/{language}.parquet"] = (sib200_rows(language, split), columns)
            repo.config(language, {split: f"{split}/{language}.parquet" for split in splits})
    elif (repo.repo_id, repo.revision) == (BELEBELE_ID, BELEBELE_REVISION):
        for language in LANGUAGES:
            repo.parquet(language, language, {"test": belebele_rows(language)}, BELEBELE_COLUMNS)
    return repo


def _default(repo_id: str, revision: str, splits: dict[str, Rows], columns: list[Feature]) -> FixtureRepo:
    """A ``default`` config of ``data/{split}-00000-of-00001.parquet`` (what ``push_to_hub`` writes)."""
    repo = FixtureRepo(repo_id, revision)
    repo.parquet("default", "data", splits, columns)
    return repo


def _text_label(
    repo_id: str, revision: str, splits: dict[str, list[tuple[str, int]]], label: str = "label"
) -> FixtureRepo:
    """A ``default`` text classification repository (columns ``text`` and ``label``)."""
    rows = {split: [{"text": t, label: y} for t, y in pairs] for split, pairs in splits.items()}
    columns = TEXT_LABEL if label == "label" else features(text=STRING, **{label: "int64"})
    return _default(repo_id, revision, rows, columns)


def _csfd() -> FixtureRepo:
    splits: dict[str, list[tuple[str, int]]] = {"train": [], "test": []}
    for rating, (first, second, test) in CSFD_REVIEWS.items():
        splits["train"] += [(first, rating), (second, rating)]
        splits["test"].append((test, rating))
    return _text_label(
        "mteb/csfdcz_movie_review_sentiment", "bda232f79c949fd881572f7e1b9ad59fd04a6c7c", splits
    )


def _czech_products() -> FixtureRepo:
    splits: dict[str, list[tuple[str, int]]] = {"train": [], "test": []}
    for label, texts in PRODUCT_REVIEWS.items():
        splits["train"] += [(text, label) for text in texts[:3]]
        splits["test"] += [(text, label) for text in texts[3:]]
    return _text_label(
        "mteb/czech_product_review_sentiment", "1a3fb305bde30eec7067ab15ad2db9f61b115ca2", splits
    )


def _sib200_v3() -> FixtureRepo:
    repo = FixtureRepo("mteb/sib200.v3", "4b3a328cb8d7f78de58780c2194c9a1443786795")
    for language in LANGUAGES:
        splits = {split: sib200_v3_rows(language, split) for split in ("train", "test")}
        repo.parquet(language, language, splits, TEXT_LABEL)
    return repo


def _ctk_facts() -> FixtureRepo:
    rows = {
        split: [
            {"sentence1": evidence, "sentence2": claim, "labels": label}
            for evidence, claims in items
            for claim, label in claims
        ]
        for split, items in CTK_FACTS.items()
    }
    columns = features(sentence1=STRING, sentence2=STRING, labels="int64")
    return _default("mteb/CTKFactsNLI", "da834e176f18e4a4adc4cbc9ad9720c14168a4bb", rows, columns)


def _wikipedia_reranking() -> FixtureRepo:
    repo = FixtureRepo("mteb/WikipediaRerankingMultilingual", "803771c366038ed587b21e3d8fe25f8f73134fad")
    corpus, queries, qrels, top_ranked = [], [], [], []
    for number, (question, relevant, others) in enumerate(WIKIPEDIA_RERANKING_CS, 1):
        query_id = f"cs-q{number}"
        candidates = []
        for rank, (title, text) in enumerate([relevant, *others]):
            doc_id = f"cs-q{number}-d{rank}"
            corpus.append({"id": doc_id, "text": text, "title": title})
            qrels.append({"query-id": query_id, "corpus-id": doc_id, "score": int(rank == 0)})
            candidates.append(doc_id)
        queries.append({"id": query_id, "text": question})
        top_ranked.append({"query-id": query_id, "corpus-ids": candidates[1:] + candidates[:1]})
    repo.parquet("cs-corpus", "cs-corpus", {"test": corpus}, CORPUS_V2)
    repo.parquet("cs-qrels", "cs-qrels", {"test": qrels}, QRELS)
    repo.parquet("cs-queries", "cs-queries", {"test": queries}, QUERIES_V2)
    repo.parquet("cs-top_ranked", "cs-top_ranked", {"test": top_ranked}, TOP_RANKED)
    return repo


def _sed_ua() -> FixtureRepo:
    rows = [{"query": q, "passage": p, "score": s} for q, p, s in SED_UA_STS]
    columns = features(query=STRING, passage=STRING, score="float64")
    return _default(
        "mteb/UkrSedUASmallSTSv1", "d83d1c605ce02b53f03112349d7966ab692590b1", {"test": rows}, columns
    )


def ces_ukr_repos() -> list[FixtureRepo]:
    """The repositories of the Czech and Ukrainian tasks that no other fixture serves."""
    return [
        _csfd(),
        _czech_products(),
        _sib200_v3(),
        _ctk_facts(),
        _wikipedia_reranking(),
        _sed_ua(),
        _text_label("mteb/ukr_formality", "e0b2dfa57d505f207deb571e58b0bd0b81180bd4", FORMALITY),
        _text_label(
            "mteb/UkrTweetToxicityBinaryClassification_ukr-detect_ukr-toxicity-dataset",
            "d2638cc529d5d50cecc91b7ae21735fab7b34743",
            TOXICITY,
            label="toxic",
        ),
    ]


TASK_SAMPLES: dict[str, dict[str, str]] = {  # recipe -> task -> one text of its Czech/Ukrainian test data
    "e5_cs_small": {
        "CSFDCZMovieReviewSentimentClassification.v2": CSFD_REVIEWS[3][2],
        "CzechProductReviewSentimentClassification.v2": PRODUCT_REVIEWS[1][4],
        "SIB200Classification.v3": SIB200["ces_Latn"]["health"][3],
        "SIB200ClusteringS2S": SIB200["ces_Latn"]["travel"][0],
        "CTKFactsNLI": CTK_FACTS["test"][1][1][0][0],
        "BelebeleRetrieval": belebele_rows("ces_Latn")[3]["question"],
        "WikipediaRerankingMultilingual": WIKIPEDIA_RERANKING_CS[2][2][0][1],
    },
    "e5_uk_small": {
        "UkrSedUASmallSTSv1": SED_UA_STS[3][1],
        "UkrFormalityClassification.v2": FORMALITY["test"][2][0],
        "UkrTweetToxicityBinaryClassification": TOXICITY["test"][4][0],
        "SIB200Classification.v3": SIB200["ukr_Cyrl"]["geography"][2],
        "SIB200ClusteringS2S": SIB200["ukr_Cyrl"]["sports"][2],
        "BelebeleRetrieval": belebele_rows("ukr_Cyrl")[0]["flores_passage"],
    },
}
"""What ``task_test_texts`` (the contamination reader) must find in each task, restricted to the language."""


def write_ces_ukr_repos(root: Path) -> list[Path]:
    """Write the repositories of :func:`ces_ukr_repos` under ``root``; the paths written.

    The shared repositories are written by :func:`tests.support.hub_skmteb.write_skmteb_repos` (with these
    configs).
    """
    import datasets

    datasets.disable_progress_bars()
    return [path for repo in ces_ukr_repos() for path in write_repo(root, repo)]


def committed_files(root: Path, repo: FixtureRepo) -> list[Path]:
    """The files of a repository's commit under a fixture root, relative to the root."""
    return sorted(p.relative_to(root) for p in repo_dir(root, repo).rglob("*") if p.is_file())


if __name__ == "__main__":
    for written in write_ces_ukr_repos(HUB_DATA):
        print(written.relative_to(HUB_DATA))
