"""Other languages: `skadapt recipe new` writes complete recipes from the registry, the shipped Czech and
Ukrainian recipes validate and run their offline stages, and the language check knows both languages.

The offline run takes a shipped recipe as it is, with ``--set`` pointing its sources at hand-written local
text, its base model at a tiny model whose tokenizer was trained on Slovak, Czech and Ukrainian, and its
LLM at a scripted local server; evaluation and robustness (mteb data from the Hub) are switched off.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from skadapt.cli import app
from skadapt.languages import LANGUAGES, Language, get_language
from skadapt.llm.language_check import check_language
from skadapt.recipe import load_recipe, recipe_to_yaml
from skadapt.synth.prompts import CZECH_PROMPT, NATIVE_PROMPTS, SLOVAK_PROMPT, load_template, render
from skadapt.templates import (
    SYMMETRIC_TASK_TYPES,
    default_name,
    prompt_policy,
    render_recipe,
    synthetic_dataset,
)
from tests.support.llm_server import Reply, scripted_server, user_message
from tests.support.tiny_models import FIXTURE_TEXTS, build_tiny_model

ROOT = Path(__file__).resolve().parents[1]
E5 = "intfloat/multilingual-e5-small"
runner = CliRunner()

# Hand-written text (written for these tests, not translated from one another).
CZECH = [
    "Praha je hlavní město České republiky a leží na řece Vltavě.",
    "Na jaře se v Brně koná velký mezinárodní strojírenský veletrh.",
    "Děti ve škole čtou balady Karla Jaromíra Erbena a učí se je nazpaměť.",
    "Vlak z Ostravy do Olomouce dnes přijel o dvacet minut později.",
    "Lékařka doporučila pacientovi, aby více chodil pěšky a méně seděl.",
    "Obec opravila most přes potok, který loni poškodila povodeň.",
    "Knihovna půjčuje kromě knih také deskové hry a hudební nástroje.",
    "Vědci z Akademie věd zkoumají, jak sucho ovlivňuje české lesy.",
    "Ceny energií v zimě vzrostly, a proto lidé více šetří teplem.",
    "Na horách napadlo přes noc třicet centimetrů čerstvého sněhu.",
    "Studenti připravují výstavu fotografií o životě na venkově.",
    "Řidiči musí od pondělí počítat s uzavírkou dálnice u Jihlavy.",
]
UKRAINIAN = [
    "Київ є столицею України і розташований на берегах Дніпра.",
    "Навесні у Львові відбувається великий міжнародний книжковий ярмарок.",
    "Діти в школі читають вірші Тараса Шевченка та Лесі Українки.",
    "Потяг з Одеси до Харкова сьогодні прибув на двадцять хвилин пізніше.",
    "Лікарка порадила пацієнтові більше ходити пішки й менше сидіти.",
    "Громада відремонтувала міст через річку, який торік пошкодила повінь.",
    "Науковці досліджують, як посуха впливає на врожай пшениці на півдні.",
    "Ціни на хліб у крамницях зросли вже втретє цього року.",
    "У Карпатах за ніч випало тридцять сантиметрів свіжого снігу.",
    "Студенти готують виставку світлин про життя українського села.",
    "Водіям варто зважати на ремонт дороги поблизу Полтави з понеділка.",
    "Бабуся щонеділі пече пироги з вишнями для всієї родини.",
]
# What the scripted LLM answers for every source sentence (the machinery is tested, not the levels).
CZECH_VARIANTS = [
    "Archeologové u Znojma našli zbytky středověké kovárny i s nástroji.",
    "Městská knihovna v Pardubicích prodloužila otevírací dobu a založila čtenářský klub pro seniory.",
    "Meteorologové upozorňují, že letošní podzim byl na východě země mimořádně suchý.",
    "Zastupitelé budou o návrhu znovu jednat na nejbližším zasedání v prosinci.",
    "Podle starosty začnou práce na jaře a měly by skončit ještě před létem.",
    "Na zasedání zastupitelé jednomyslně odsouhlasili, že se budova opraví.",
]
UKRAINIAN_VARIANTS = [
    "Археологи поблизу Чернігова знайшли рештки середньовічної кузні разом з інструментами.",
    "Міська бібліотека в Полтаві подовжила години роботи та відкрила читацький клуб для пенсіонерів.",
    "Синоптики попереджають, що цьогорічна осінь на сході країни була надзвичайно посушливою.",
    "Депутати знову обговорять цей проєкт на найближчому засіданні в грудні.",
    "За словами голови громади, роботи почнуться навесні й завершаться ще до літа.",
    "На засіданні депутати одностайно погодилися відремонтувати стару будівлю школи.",
]
CYRILLIC = re.compile("[\u0400-\u04ff]")
CZECH_ONLY = re.compile("[ěřůĚŘŮ]")

SHIPPED = {  # recipe -> (language, its corpus, the LLM's variants, the prompt's source line, foreign script)
    "e5_cs_small": ("ces", CZECH, CZECH_VARIANTS, "Původní věta: ", CYRILLIC),
    "e5_uk_small": ("ukr", UKRAINIAN, UKRAINIAN_VARIANTS, "Original (Ukrainian): ", CZECH_ONLY),
}


def _write(tmp_path: Path, text: str, name: str = "recipe.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --- recipe new -----------------------------------------------------------------------------------


@pytest.mark.parametrize("code", sorted(LANGUAGES))
def test_recipe_new_is_complete_and_round_trips(tmp_path: Path, code: str) -> None:
    """render -> file -> load_recipe -> recipe_to_yaml -> load again: the same Recipe, every section filled
    from the registry entry."""
    language = get_language(code)
    text = render_recipe(language, E5)
    prose = " ".join(text.replace("#", " ").split())  # the comments, unwrapped
    recipe = load_recipe(_write(tmp_path, text))
    again = load_recipe(_write(tmp_path, recipe_to_yaml(recipe), "resolved.yaml"))
    assert again == recipe
    assert max(len(line) for line in text.splitlines()) <= 110

    assert recipe.name == default_name(language) and recipe.language == code
    assert recipe.trim.corpus.source == recipe.renorm.corpus.source == language.corpus
    assert recipe.trim.vocab_size == 60_000 and "coverage report" in prose and "Dutch" in prose
    assert recipe.evaluate.tasks == language.eval_tasks
    assert recipe.evaluate.prompt_policy == dict.fromkeys(SYMMETRIC_TASK_TYPES, "query: ")
    assert recipe.robustness.preset == "hteb-min" and recipe.robustness.tasks == language.eval_tasks
    assert recipe.robustness.prompt_policy == recipe.evaluate.prompt_policy and recipe.llm is not None
    ft = recipe.finetune
    assert (ft.batch_size, ft.learning_rate, ft.warmup_ratio, ft.epochs, ft.weight_decay) == (
        32,
        2e-5,
        0.1,
        3,
        0.01,
    )
    datasets = [(d.name, d.kind, d.source, d.columns, list(d.score_range), d.loss) for d in ft.datasets]
    if language.training_data:  # the registry's public data, no synthetic stage
        assert [d[:4] for d in datasets] == [
            (e["name"], e["kind"], e["source"], e["columns"]) for e in language.training_data
        ]
        assert recipe.synth_sts is None
    else:  # the recipe makes its own STS data and trains on its train split
        entry = synthetic_dataset(recipe.name)
        assert datasets == [
            (*(entry[k] for k in ("name", "kind", "source", "columns", "score_range")), "cosine")
        ]
        assert ft.datasets[0].source == f"{recipe.output_dir}/synth_sts/dataset"
        assert recipe.synth_sts.corpus.source == language.corpus and recipe.synth_sts.prompt_template is None
        assert recipe.synth_sts.contamination_tasks == language.eval_tasks
        native = f"the built-in prompt written in {language.name}" in prose
        assert native == (code in NATIVE_PROMPTS)
        assert native != (f"the English prompt naming {language.name}" in prose)
    assert (f"FineWeb2 has no {language.name} config" in prose) == (language.fineweb2_config is None)


def test_recipe_new_follows_a_new_registry_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A language added to the registry gets a complete recipe with no code change."""
    irish = Language(
        code="gle",
        iso639_1="ga",
        name="Irish",
        native_name="Gaeilge",
        script="Latn",
        fineweb2_config="gle_Latn",
        corpus="hub:HuggingFaceFW/fineweb-2:gle_Latn:train",
        wordfreq=None,
        mteb_tasks=("SIB200Classification.v3",),
    )
    monkeypatch.setitem(LANGUAGES, "gle", irish)
    result = runner.invoke(app, ["recipe", "new", "--language", "gle", "--base-model", "org/other-model"])
    assert result.exit_code == 0, result.output
    recipe = load_recipe(_write(tmp_path, result.stdout))
    assert recipe.name == "e5_ga_small" and recipe.enabled_stages()[0] == "synth_sts"
    assert recipe.trim.corpus.source == irish.corpus and recipe.evaluate.tasks == ["SIB200Classification.v3"]
    assert recipe.evaluate.prompt_policy == {}  # a model family without known prompts
    assert "the English prompt naming Irish" in " ".join(result.stdout.replace("#", " ").split())


def test_prompt_policy_comes_from_the_model_family() -> None:
    assert prompt_policy("intfloat/multilingual-e5-large") == dict.fromkeys(SYMMETRIC_TASK_TYPES, "query: ")
    assert prompt_policy("sentence-transformers/LaBSE") == {}


# --- shipped recipes ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_recipe_validates_and_is_what_recipe_new_writes(tmp_path: Path, name: str) -> None:
    path = ROOT / "recipes" / f"{name}.yaml"
    result = runner.invoke(app, ["recipe", "validate", str(path)])
    assert result.exit_code == 0, result.output
    assert "synth_sts, trim, finetune, renorm, evaluate, robustness" in " ".join(result.output.split())
    code = SHIPPED[name][0]
    shipped = load_recipe(path)
    assert shipped.language == code and shipped.name == name == default_name(get_language(code))
    assert shipped == load_recipe(_write(tmp_path, render_recipe(get_language(code), E5)))


# --- language data --------------------------------------------------------------------------------


def test_czech_has_a_native_synthetic_sts_prompt() -> None:
    czech = get_language("ces")
    assert load_template(czech) is CZECH_PROMPT
    prompt = render(CZECH_PROMPT, "Věta k přepsání.", czech)
    assert prompt.endswith("Původní věta: Věta k přepsání.")
    json_shape = SLOVAK_PROMPT[SLOVAK_PROMPT.index("{{") : SLOVAK_PROMPT.rindex("}}") + 2]
    assert json_shape in CZECH_PROMPT  # the same answer format the parser expects
    example = re.findall(r"^(?:Původní věta|\d): (.+?)(?: – |$)", CZECH_PROMPT.replace("\n   ", " "), re.M)
    assert len(example) == 8  # the original, six levels, and the question's own line
    for sentence in example[:7]:
        assert check_language(sentence, czech).ok, sentence
    slovak_example = re.findall(r"^\d: (.+?) – ", SLOVAK_PROMPT.replace("\n   ", " "), re.M)
    assert len(slovak_example) == 6 and not set(slovak_example) & set(example)


@pytest.mark.parametrize(
    ("code", "sentence", "neighbour", "reason"),
    [
        (
            "ces",
            "Městská knihovna v Olomouci prodlouží od září otevírací dobu o dvě hodiny denně.",
            "Mestská knižnica v Žiline predĺži od septembra otváracie hodiny o dve hodiny denne.",  # Slovak
            "Slovak letters",
        ),
        (
            "ukr",
            "Науковці з Харкова створили прилад, який за кілька хвилин виявляє забруднення води.",
            "Учёные из Новосибирска создали прибор, который быстро обнаруживает загрязнение воды.",
            "identified as 'ru'",  # Russian
        ),
    ],
    ids=["ces-not-slovak", "ukr-not-russian"],
)
def test_language_check_accepts_the_language_and_rejects_a_neighbour(
    code: str, sentence: str, neighbour: str, reason: str
) -> None:
    language = get_language(code)
    assert check_language(sentence, language).ok
    verdict = check_language(neighbour, language)
    assert not verdict.ok and reason in verdict.reason


# --- offline run of the shipped recipes -----------------------------------------------------------


@pytest.fixture(scope="module")
def multilingual_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny model whose Unigram tokenizer (XLM-R style, like mE5's) knows Slovak, Czech and Ukrainian."""
    texts = [*FIXTURE_TEXTS, *CZECH, *CZECH_VARIANTS, *UKRAINIAN, *UKRAINIAN_VARIANTS]
    return build_tiny_model(tmp_path_factory.mktemp("multilingual") / "model", "unigram", texts)


def _answer(variants: list[str]) -> str:
    return json.dumps({str(level): {"sentence": s, "explanation": "-"} for level, s in enumerate(variants)})


def _vocabulary(model_dir: Path) -> set[str]:
    from tokenizers import Tokenizer

    return set(Tokenizer.from_file(str(model_dir / "tokenizer.json")).get_vocab())


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_recipe_runs_its_offline_stages(
    name: str, multilingual_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """synth_sts (scripted LLM) -> trim -> finetune on the synthetic train split -> renorm, as shipped."""
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

    code, texts, variants, prompt_line, foreign = SHIPPED[name]
    monkeypatch.chdir(tmp_path)  # the recipe's run directory (and its synthetic dataset) are relative
    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "cache"))
    corpus = tmp_path / f"{code}.txt"
    corpus.write_text("\n".join(texts) + "\n", encoding="utf-8")
    sources = 6
    with scripted_server(lambda body, count: Reply(_answer(variants))) as server:
        overrides = [
            f"base_model={multilingual_model}",
            f"llm.base_url={server.url}",
            "llm.model=scripted",
            f"synth_sts.corpus={corpus}",
            f"synth_sts.n_sources={sources}",
            "synth_sts.min_chars=30",
            "synth_sts.annotation_sample_per_level=2",
            "synth_sts.contamination_tasks=[]",  # the evaluation tasks' data is on the Hub
            f"trim.corpus={corpus}",
            "trim.workers=1",
            "trim.parity_documents=12",
            "finetune.max_steps=2",
            "finetune.batch_size=8",
            "finetune.max_seq_length=64",
            f"renorm.corpus={corpus}",
            "renorm.samples=12",
            "renorm.min_chars=20",
            "evaluate=null",
            "robustness=null",
        ]
        args = ["train", str(ROOT / "recipes" / f"{name}.yaml")]
        result = runner.invoke(app, [*args, *(x for o in overrides for x in ("--set", o))])
        assert result.exit_code == 0, result.output
        prompts = [user_message(body) for body in server.requests]
    assert len(prompts) == sources and all(prompt_line in p for p in prompts)

    run = tmp_path / "runs" / name
    for stage in ("synth_sts", "trim", "finetune", "renorm"):
        assert json.loads((run / stage / "manifest.json").read_text())["status"] == "complete"
    synth = json.loads((run / "synth_sts" / "manifest.json").read_text())["result"]
    train_pairs = synth["splits"]["train"]
    assert synth["failed_sources"] == 0 and synth["requests_sent"] == sources
    assert train_pairs == (sources - 2) * 6  # two sources held out for people to score

    report = json.loads((run / "trim" / "trim_report.json").read_text())
    assert report["exact"] and report["parity"]["passed"]
    assert report["embedding_rows"]["after"] < report["embedding_rows"]["before"]
    assert [token for token in _vocabulary(multilingual_model) if foreign.search(token)]
    assert not [token for token in _vocabulary(run / "trim") if foreign.search(token)]  # gone after trimming
    before = Tokenizer.from_file(str(multilingual_model / "tokenizer.json"))
    after = Tokenizer.from_file(str(run / "trim" / "tokenizer.json"))
    for text in texts:
        assert after.encode(text).tokens == before.encode(text).tokens

    training = json.loads((run / "finetune" / "training_report.json").read_text())
    (dataset,) = training["datasets"]
    assert (dataset["name"], dataset["kind"], dataset["loss"]) == ("synth_sts", "sts", "cosine")
    assert dataset["examples"] == train_pairs and training["steps"] == {"done": 2, "planned": 2}

    model = SentenceTransformer(str(run / "renorm"), device="cpu")
    embedding = model.encode([texts[0]], normalize_embeddings=False)
    assert embedding.shape == (1, 32) and abs(float((embedding**2).sum()) - 1.0) < 1e-4


def test_shipped_recipes_name_real_registry_tasks() -> None:
    """The recipes' evaluation tasks are the registry's, which test_recipe checks against mteb."""
    for name, (code, *_) in SHIPPED.items():
        data = yaml.safe_load((ROOT / "recipes" / f"{name}.yaml").read_text(encoding="utf-8"))
        assert data["evaluate"]["tasks"] == get_language(code).eval_tasks
