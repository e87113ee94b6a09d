"""Language registry: everything skadapt knows about a language is data here, never an ``if`` in code."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from skadapt.errors import SkadaptError


class Language(BaseModel):
    """One target language.

    Attributes:
        code: ISO 639-3 code (the registry key, e.g. ``slk``).
        iso639_1: Two-letter code where one exists (used by wordfreq and many datasets).
        name: English name, used in LLM prompts.
        native_name: Name in the language itself, used in LLM prompts.
        script: ISO 15924 script code.
        fineweb2_config: FineWeb2 config name (``HuggingFaceFW/fineweb-2``); None where FineWeb2 has none.
        corpus: Default corpus source spec for trimming and renormalization.
        wordfreq: wordfreq language code (Croatian uses wordfreq's "sh"), None where wordfreq lacks it.
        mteb_benchmark: Name of a registered mteb benchmark for the language, if any.
        mteb_tasks: mteb task names to evaluate on when no benchmark exists.
        training_data: Public training datasets known for the language, as ``finetune.datasets`` recipe
            entries (``skadapt recipe new`` writes them into the recipe).
        dev_data: Public dev sets (validation splits) known for the language, as ``finetune.dev.sets``
            recipe entries: the checkpoint, WiSE-FT and renormalization choices are made on them.
        dev_overlap: What the recipe's comment says about the dev sets and the evaluation test texts.
        marker_letters: Letters of this language that its close neighbours do not use (Slovak ä ľ ĺ ŕ ô);
            an LLM output meant to be in a neighbour and containing them is in the wrong language.
        neighbours: ISO 639-3 codes of languages a language identifier confuses with this one.
        sample_text: Two short everyday sentences in the language: a model's tokenizer must read them as
            words, not as its unknown token, before the model is used (:mod:`skadapt.tokenizer_check`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    code: str
    iso639_1: str | None
    name: str
    native_name: str
    script: str
    fineweb2_config: str | None
    corpus: str
    wordfreq: str | None
    mteb_benchmark: str | None = None
    mteb_tasks: tuple[str, ...] = ()
    training_data: tuple[dict[str, Any], ...] = ()
    training_overlap: str = ""
    dev_data: tuple[dict[str, Any], ...] = ()
    dev_overlap: str = ""
    marker_letters: str = ""
    neighbours: tuple[str, ...] = ()
    sample_text: str = ""

    @property
    def eval_tasks(self) -> list[str]:
        """Task specs a new recipe evaluates on: the benchmark, else the task list."""
        return [self.mteb_benchmark] if self.mteb_benchmark else list(self.mteb_tasks)


SKLEP_REVISION = "10549a8c63542e6a0db4fcf5fcdc29b3e1b8c4e9"
"""skLEP at the commit mteb's SlovakRTE pins ("Update class_label for NLI and RTE"): the ClassLabel names
the nli/rte labels are read through are those of this revision, not of whatever main is later."""
SKLEP = "hub:slovak-nlp/sklep"
SLOVAK_TRAINING_DATA = (  # skLEP (verified against its dataset card and the skLEP/mteb loaders)
    {
        "name": "skquad",
        "kind": "pairs",
        "source": f"{SKLEP}:question-answering:train@{SKLEP_REVISION}",
        "columns": {"anchor": "question", "positive": "context"},
    },
    {
        "name": "nli",
        "kind": "nli",
        "source": f"{SKLEP}:nli:train@{SKLEP_REVISION}",
        "columns": {"premise": "premise", "hypothesis": "hypothesis", "label": "label"},
    },
    {
        "name": "rte",
        "kind": "rte",
        "source": f"{SKLEP}:rte:train@{SKLEP_REVISION}",
        "columns": {"premise": "text1", "hypothesis": "text2", "label": "label"},
    },
    {
        "name": "sts",
        "kind": "sts",
        "source": f"{SKLEP}:sts:train@{SKLEP_REVISION}",
        "columns": {"sentence1": "sentence1", "sentence2": "sentence2", "score": "similarity_score"},
        "score_range": [0, 5],
    },
)

SLOVAK_DEV_DATA = (  # skLEP's validation splits (QA 9,583, STS 1,481, NLI 2,490, RTE 277 rows)
    {
        "kind": "retrieval",
        "source": f"{SKLEP}:question-answering:validation@{SKLEP_REVISION}",
        "columns": {"query": "question", "positive": "context"},
    },
    {
        "kind": "sts",
        "source": f"{SKLEP}:sts:validation@{SKLEP_REVISION}",
        "columns": {"sentence1": "sentence1", "sentence2": "sentence2", "score": "similarity_score"},
        "score_range": [0, 5],
    },
    {
        "kind": "nli",
        "source": f"{SKLEP}:nli:validation@{SKLEP_REVISION}",
        "columns": {"premise": "premise", "hypothesis": "hypothesis", "label": "label"},
    },
    {
        "kind": "rte",
        "source": f"{SKLEP}:rte:validation@{SKLEP_REVISION}",
        "columns": {"premise": "text1", "hypothesis": "text2", "label": "label"},
    },
)


def _fw2(config: str) -> str:
    return f"hub:HuggingFaceFW/fineweb-2:{config}:train"


_LANGUAGES = [
    Language(
        code="slk",
        iso639_1="sk",
        name="Slovak",
        native_name="slovenčina",
        script="Latn",
        fineweb2_config="slk_Latn",
        corpus=_fw2("slk_Latn"),
        wordfreq="sk",
        mteb_benchmark="MTEB(slk, v1)",
        training_data=SLOVAK_TRAINING_DATA,
        training_overlap=(
            "skLEP's train splits sit beside SkMTEB's test splits: SlovakSTS is skLEP's sts test split, "
            "SlovakRTE skLEP's rte test split, SKQuadRetrieval/SKQuadReranking are built from SK-QuAD, "
            "whose train set is skLEP's question-answering data, and STS-benchmark-style data repeats "
            "sentences across splits. So every training row with a text of an evaluation test split is "
            "dropped (and counted in training_report.json), instead of stopping the run."
        ),
        dev_data=SLOVAK_DEV_DATA,
        dev_overlap=(
            "Dev sets: skLEP's validation splits. The best checkpoint and renormalization (none/R1/R2) "
            "are chosen on the mean of their main scores (nDCG@10, Spearman, triplet accuracy, AP). A dev "
            "row holding an evaluation test text is dropped first and counted (training_report.json "
            "dev.sets, renorm_report.json selection.sets): nothing is chosen on test texts."
        ),
        marker_letters="äľĺŕô",
        neighbours=("ces",),
        sample_text="Dnes je pekné počasie a deti sa hrajú v parku. Ďakujem, že ste prišli včas.",
    ),
    Language(
        code="ces",
        iso639_1="cs",
        name="Czech",
        native_name="čeština",
        script="Latn",
        fineweb2_config="ces_Latn",
        corpus=_fw2("ces_Latn"),
        wordfreq="cs",
        mteb_tasks=(  # no Czech mteb benchmark: one or more tasks of each type mteb has for Czech
            "CSFDCZMovieReviewSentimentClassification.v2",
            "CzechProductReviewSentimentClassification.v2",
            "SIB200Classification.v3",
            "SIB200ClusteringS2S",
            "CTKFactsNLI",
            "BelebeleRetrieval",
            "WikipediaRerankingMultilingual",
        ),
        marker_letters="ěřů",
        neighbours=("slk",),
        sample_text="Dnes je hezké počasí a děti si hrají v parku. Děkuji, že jste přišli včas.",
    ),
    Language(
        code="ukr",
        iso639_1="uk",
        name="Ukrainian",
        native_name="українська",
        script="Cyrl",
        fineweb2_config="ukr_Cyrl",
        corpus=_fw2("ukr_Cyrl"),
        wordfreq="uk",
        mteb_tasks=(  # no Ukrainian mteb benchmark: the Ukrainian tasks and the Ukrainian subsets of others
            "UkrSedUASmallSTSv1",
            "UkrFormalityClassification.v2",
            "UkrTweetToxicityBinaryClassification",
            "SIB200Classification.v3",
            "SIB200ClusteringS2S",
            "BelebeleRetrieval",
        ),
        marker_letters="ґєї",  # Russian has none of them, Belarusian writes і but not ґ є ї
        sample_text="Сьогодні гарна погода, і діти граються в парку. Дякую, що ви прийшли вчасно.",
    ),
    Language(
        code="pol",
        iso639_1="pl",
        name="Polish",
        native_name="polski",
        script="Latn",
        fineweb2_config="pol_Latn",
        corpus=_fw2("pol_Latn"),
        wordfreq="pl",
        mteb_benchmark="MTEB(pol, v1)",
        sample_text="Dzisiaj jest ładna pogoda i dzieci bawią się w parku. Dziękuję, że przyszliście.",
    ),
    Language(
        code="slv",
        iso639_1="sl",
        name="Slovenian",
        native_name="slovenščina",
        script="Latn",
        fineweb2_config="slv_Latn",
        corpus=_fw2("slv_Latn"),
        wordfreq="sl",
        mteb_tasks=(
            "SIB200Classification.v3",
            "MassiveIntentClassification",
            "MassiveScenarioClassification",
        ),
        sample_text="Danes je lepo vreme in otroci se igrajo v parku. Hvala, da ste prišli pravočasno.",
    ),
    Language(
        code="hrv",
        iso639_1="hr",
        name="Croatian",
        native_name="hrvatski",
        script="Latn",
        fineweb2_config="hrv_Latn",
        corpus=_fw2("hrv_Latn"),
        wordfreq="sh",
        mteb_tasks=("FrenkHrClassification.v2", "SIB200Classification.v3"),
        sample_text="Danas je lijepo vrijeme i djeca se igraju u parku. Hvala što ste došli na vrijeme.",
    ),
    Language(
        code="hun",
        iso639_1="hu",
        name="Hungarian",
        native_name="magyar",
        script="Latn",
        fineweb2_config="hun_Latn",
        corpus=_fw2("hun_Latn"),
        wordfreq="hu",
        mteb_tasks=("HunSum2AbstractiveRetrieval", "SIB200Classification.v3", "MassiveIntentClassification"),
        sample_text="Ma szép idő van, és a gyerekek a parkban játszanak. Köszönöm, hogy időben jöttetek.",
    ),
    Language(
        code="lit",
        iso639_1="lt",
        name="Lithuanian",
        native_name="lietuvių",
        script="Latn",
        fineweb2_config="lit_Latn",
        corpus=_fw2("lit_Latn"),
        wordfreq="lt",
        mteb_tasks=("SIB200Classification.v3", "FloresBitextMining"),
        sample_text="Šiandien gražus oras, o vaikai žaidžia parke. Ačiū, kad atėjote laiku.",
    ),
    Language(
        code="lav",
        iso639_1="lv",
        name="Latvian",
        native_name="latviešu",
        script="Latn",
        fineweb2_config="lvs_Latn",
        corpus=_fw2("lvs_Latn"),
        wordfreq="lv",
        mteb_tasks=("MassiveIntentClassification", "MassiveScenarioClassification", "WikiClusteringP2P.v2"),
        sample_text="Šodien ir jauks laiks, un bērni spēlējas parkā. Paldies, ka atnācāt laikā.",
    ),
    Language(
        code="est",
        iso639_1="et",
        name="Estonian",
        native_name="eesti",
        script="Latn",
        fineweb2_config="ekk_Latn",
        corpus=_fw2("ekk_Latn"),
        wordfreq=None,
        mteb_tasks=("EstonianValenceClassification.v2", "SIB200Classification.v3"),
        sample_text="Täna on ilus ilm ja lapsed mängivad pargis. Aitäh, et tulite õigel ajal.",
    ),
    Language(
        code="dan",
        iso639_1="da",
        name="Danish",
        native_name="dansk",
        script="Latn",
        fineweb2_config="dan_Latn",
        corpus=_fw2("dan_Latn"),
        wordfreq="da",
        mteb_benchmark="MTEB(Scandinavian, v1)",
        sample_text="I dag er vejret godt, og børnene leger i parken. Tak fordi I kom til tiden.",
    ),
    Language(
        code="nld",
        iso639_1="nl",
        name="Dutch",
        native_name="Nederlands",
        script="Latn",
        fineweb2_config="nld_Latn",
        corpus=_fw2("nld_Latn"),
        wordfreq="nl",
        mteb_benchmark="MTEB(nld, v1)",
        sample_text="Vandaag is het mooi weer en de kinderen spelen in het park. Bedankt dat jullie kwamen.",
    ),
    Language(
        code="eng",
        iso639_1="en",
        name="English",
        native_name="English",
        script="Latn",
        fineweb2_config=None,
        corpus="hub:HuggingFaceFW/fineweb:sample-10BT:train",
        wordfreq="en",
        mteb_benchmark="MTEB(eng, v2)",
        sample_text="Today the weather is nice and the children play in the park. Thank you for coming.",
    ),
]

LANGUAGES: dict[str, Language] = {language.code: language for language in _LANGUAGES}
_BY_TWO_LETTERS = {language.iso639_1: language for language in _LANGUAGES if language.iso639_1}


class UnknownLanguageError(SkadaptError, ValueError):
    """Raised for a language code the registry does not know (``code``)."""

    def __init__(self, message: str, code: str = "") -> None:
        super().__init__(message)
        self.code = code


def get_language(code: str) -> Language:
    """Return the registry entry for an ISO 639-3 code (``slk``) or an ISO 639-1 code (``sk``): the one
    lookup of a language code, wherever one is taken (recipes, suites, commands, the public API).

    Raises:
        UnknownLanguageError: The code is not registered under either standard; the message lists the
            known codes.
    """
    found = LANGUAGES.get(code) or _BY_TWO_LETTERS.get(code)
    if found is None:
        known = ", ".join(
            f"{three} ({entry.iso639_1})" if entry.iso639_1 else three
            for three, entry in sorted(LANGUAGES.items())
        )
        raise UnknownLanguageError(
            f"unknown language {code!r}; known codes (ISO 639-3, ISO 639-1): {known} (add one in "
            "skadapt/languages.py)",
            code,
        )
    return found


def resolve_language(value: Language | str) -> Language:
    """The registry entry of a :class:`Language` (itself) or of a code (:func:`get_language`): what the
    public API and the commands accept, resolved once at the edge.

    Raises:
        UnknownLanguageError: The code is not registered under either standard.
    """
    return value if isinstance(value, Language) else get_language(value)


def language_code(code: str) -> str:
    """The ISO 639-3 code of a registered language given by either code (``sk`` -> ``slk``); a code the
    registry does not know, as given (where any code is allowed, e.g. the annotation guidelines' language,
    which falls back to English)."""
    found = LANGUAGES.get(code) or _BY_TWO_LETTERS.get(code)
    return found.code if found is not None else code
