"""The shipped Czech and Ukrainian recipes, run for a user against a Hub and an OpenAI-compatible LLM server.

``skadapt train recipes/e5_cs_small.yaml`` (and ``e5_uk_small``) with only sizes overridden (read limits,
samples, steps, ``n_sources``) and ``llm.base_url`` pointing at a scripted server
(:mod:`tests.support.llm_server`): synth_sts reads FineWeb2 ``ces_Latn``/``ukr_Cyrl`` and checks its train
split against the language's evaluation tasks, trim and renorm stream FineWeb2, the base model is downloaded
as ``intfloat/multilingual-e5-small`` (a tiny model, for time), and the evaluation reads every recipe task's
data at the revision mteb pins (:mod:`tests.support.hub_ces_ukr`), all through the local Hub
(tests/support/hub_server.py).

The robustness stage fails in skadapt for both recipes, so the end-to-end run sets ``robustness=null``;
:func:`test_shipped_recipe_robustness_runs_against_the_hub` runs it on the same run directory and is an
expected failure until skadapt's robustness reads BelebeleRetrieval (its loader fills mteb's v1 fields, so
``task.dataset`` stays None) and UkrSedUASmallSTSv1 (STS columns ``query``/``passage``).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.hub_ces_ukr import (
    BELEBELE,
    RECIPE_TASKS,
    TASK_SAMPLES,
    ces_ukr_repos,
    committed_files,
    repo_dir,
    write_ces_ukr_repos,
)
from tests.support.hub_fixtures import E5_ID, FINEWEB2_ID, FINEWEB2_TEXTS, HUB_DATA, REPO_ROOT, HubClient
from tests.support.hub_server import HubStore, LocalHub
from tests.support.hub_skmteb import BELEBELE_PASSAGES
from tests.support.hub_skmteb import TASK_SAMPLES as SLOVAK_SAMPLES
from tests.support.llm_server import Reply, scripted_server, user_message

RECIPES = {"e5_cs_small": ("ces", "ces_Latn"), "e5_uk_small": ("ukr", "ukr_Cyrl")}
STAGES = ("synth_sts", "trim", "finetune", "renorm", "evaluate")

# What the scripted LLM writes for each FineWeb2 train sentence: one hand-written variant per similarity level
# (0 = unrelated ... 5 = the same meaning in other words), in the language of the source.
VARIANTS: dict[str, tuple[str, str, str, str, str, str]] = {
    "Praha se v létě plní turisty, kteří obdivují Karlův most a Staroměstský orloj.": (
        "Moje sestra se učí hrát na klavír už třetím rokem.",
        "Karlův most se letos dočká rozsáhlé opravy kamenného zábradlí.",
        "Praha láká návštěvníky také v zimě na vánoční trhy.",
        "Turisté v Praze nejčastěji navštěvují Staroměstský orloj.",
        "V létě je v Praze spousta turistů, kteří míří hlavně ke Karlovu mostu.",
        "V létě Prahu zaplní turisté, kteří se chodí dívat na Karlův most a Staroměstský orloj.",
    ),
    "Na zahradě jsme letos sklidili tolik rajčat, že jsme z nich uvařili domácí kečup.": (
        "Vlak do Olomouce dnes odjede z pátého nástupiště.",
        "Na podzim budeme na zahradě sázet nové ovocné stromy.",
        "Domácí kečup chutná lépe než ten z obchodu.",
        "Letos se nám na zahradě opravdu dařilo rajčatům.",
        "Úroda rajčat byla letos tak bohatá, že jsme z ní uvařili kečup.",
        "Letos jsme na zahradě sklidili tolik rajčat, že z nich vznikl domácí kečup.",
    ),
    "Vláda projedná novelu zákona o dani z příjmu, která má ulevit rodinám s dětmi.": (
        "V neděli bude na horách sněžit a foukat silný vítr.",
        "Poslanci se přou o výši rodičovského příspěvku.",
        "Vláda ve středu jednala také o rozpočtu na dopravu.",
        "Rodiny s dětmi by mohly platit nižší daně.",
        "Kabinet projedná změnu daně z příjmu, která sníží zatížení rodin s dětmi.",
        "Vláda bude jednat o novele zákona o dani z příjmu, jež má pomoci rodinám s dětmi.",
    ),
    "Київ розташований на берегах Дніпра, і навесні тут цвітуть каштани.": (
        "Мій брат купив нову гітару й щовечора вчиться грати.",
        "Улітку кияни відпочивають на міських пляжах.",
        "Дніпро є однією з найдовших річок Європи.",
        "Весняні каштани є символом Києва.",
        "Навесні в Києві, що стоїть на Дніпрі, зацвітають каштани.",
        "Київ лежить на берегах Дніпра, а навесні в місті квітнуть каштани.",
    ),
    "Моя бабуся щонеділі пече пироги з вишнями та запрошує всю родину на обід.": (
        "Автобус до аеропорту відправляється щогодини.",
        "Бабуся вирощує на городі помідори та огірки.",
        "Вишневі пироги найсмачніші влітку.",
        "У неділю вся наша родина обідає в бабусі.",
        "Бабуся щотижня готує пироги з вишнями для родинного обіду.",
        "Щонеділі моя бабуся пече вишневі пироги й кличе всю родину на обід.",
    ),
    "Міська рада ухвалила рішення про ремонт шкіл до початку навчального року.": (
        "Цієї ночі в горах очікується сильний снігопад.",
        "Міська рада виділила кошти на нові тролейбуси.",
        "Навчальний рік в Україні починається першого вересня.",
        "Депутати міської ради обговорювали стан шкільних будівель.",
        "До нового навчального року в місті відремонтують школи, так вирішила рада.",
        "Міськрада вирішила відремонтувати школи ще до початку навчального року.",
    ),
}
EXPLANATIONS = (
    "Jiné téma.",
    "Sdílí jen místo nebo předmět.",
    "Stejné téma, jiné tvrzení.",
    "Část obsahu chybí.",
    "Drobné rozdíly v detailech.",
    "Stejný význam, jiná slova.",
)


def _sts_answer(prompt: str) -> Reply:
    """The synthetic-STS answer: the variants of the source sentence the prompt ends with."""
    source = next((s for s in VARIANTS if prompt.rstrip().endswith(s)), None)
    if source is None:
        return Reply(status=400, error=f"no scripted answer for {prompt[-80:]!r}")
    levels = zip(VARIANTS[source], EXPLANATIONS, strict=True)
    answer = {str(level): {"sentence": s, "explanation": e} for level, (s, e) in enumerate(levels)}
    return Reply(json.dumps(answer, ensure_ascii=False))


# The robustness answers are mechanical (the machinery is tested, not the rewriting): a paraphrase puts a
# phrase of the language before the text, a summary keeps its first clause (or drops its last word), a
# translation is a few fixed Spanish sentences (hteb-min's draw for seed 1337 is Spanish for both languages).
# English Belebele questions (the cross-lingual subsets' queries) are rewritten in the recipe's language,
# as the prompt asks, from their translation in the fixture.
LEAD = {"Czech": "Jinak řečeno: ", "Ukrainian": "Інакше кажучи: "}
SPANISH = (
    "El tren llegó a la estación con media hora de retraso.",
    "Mañana por la tarde lloverá en casi todo el país.",
    "La biblioteca del barrio abre también los sábados por la mañana.",
    "Los vecinos plantaron nuevos árboles en el parque central.",
    "El museo prepara una exposición sobre la historia de la ciudad.",
    "Mi hermana aprendió a nadar durante las vacaciones de verano.",
    "El equipo local ganó el partido en el último minuto.",
    "Los científicos estudian cómo afecta la sequía a los bosques.",
)
ENGLISH_QUESTIONS = {
    name: {
        question["eng_Latn"]: translated[0]
        for link, _, questions in BELEBELE_PASSAGES
        for (question, _, _), translated in zip(questions, BELEBELE[config][link][1], strict=True)
    }
    for name, config in (("Czech", "ces_Latn"), ("Ukrainian", "ukr_Cyrl"))
}
WORD = re.compile(r"[^\W\d_]+")


def _rewrite_answer(prompt: str) -> Reply:
    """A robustness transformation's answer (paraphrase, summarisation, translation)."""
    text = prompt.split("\n\nText: ", 1)[1]
    if prompt.startswith("Translate the following text into Spanish"):
        start = int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16)
        count = max(1, round(len(WORD.findall(text)) / 10))
        return Reply(" ".join(SPANISH[(start + i) % len(SPANISH)] for i in range(count)))
    language = next(name for name in LEAD if f"Write it in {name}," in prompt)
    text = ENGLISH_QUESTIONS[language].get(text, text)
    if prompt.startswith("Paraphrase"):
        return Reply(LEAD[language] + text[0].lower() + text[1:])
    if prompt.startswith("Summarise"):
        clause, words = text.split(",")[0].rstrip(".!?"), text.rstrip(".!?").split()
        return Reply((clause if clause != text.rstrip(".!?") else " ".join(words[:-1] or words)) + ".")
    return Reply(status=400, error=f"no scripted answer for {prompt[:80]!r}")


def _answer(body: dict[str, Any], count: int) -> Reply:
    prompt = user_message(body)
    return _rewrite_answer(prompt) if "\n\nText: " in prompt else _sts_answer(prompt)


SIZES = [
    "synth_sts.n_sources=3",  # FineWeb2's fixture has three train sentences per language
    "synth_sts.corpus.max_documents=20",
    "synth_sts.annotation_sample_per_level=1",
    "trim.corpus.max_documents=20",
    "trim.vocab_size=150",
    "finetune.max_steps=2",
    "finetune.batch_size=2",
    "finetune.save_steps=1",
    "renorm.samples=20",
    "renorm.min_chars=20",
    "renorm.corpus.max_documents=20",
    "evaluate.bootstrap=20",
]
RUN = """
import os
from typer.testing import CliRunner
from skadapt.cli import app

os.chdir(WORKDIR)  # the recipe's output_dir and its synthetic dataset's source are relative paths
result = CliRunner().invoke(app, ARGS, env={"COLUMNS": "250"})
emit("exit_code", result.exit_code)
emit("output", result.output)
"""


def _train(client: HubClient, workdir: Path, recipe: str, llm_url: str, *extra: str) -> dict[str, Any]:
    sets = [arg for item in [*SIZES, f"llm.base_url={llm_url}", *extra] for arg in ("--set", item)]
    args = ["train", str(REPO_ROOT / "recipes" / f"{recipe}.yaml"), *sets]
    header = f"ARGS, WORKDIR = {json.dumps(args)}, {str(workdir)!r}\n"
    return client.run(header + RUN, timeout=600)


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# -- the fixture repositories ------------------------------------------------------------------------------


def test_fixture_repos_match_their_generator(tmp_path: Path) -> None:
    """The committed repositories hold what tests/support/hub_ces_ukr.py writes, and nothing else."""
    import pyarrow.parquet as pq

    written = write_ces_ukr_repos(tmp_path)
    for repo in ces_ukr_repos():
        assert committed_files(HUB_DATA, repo) == committed_files(tmp_path, repo), repo.repo_id
    for path in written:
        committed = HUB_DATA / path.relative_to(tmp_path)
        if path.suffix == ".parquet":  # the bytes depend on the pyarrow version, the table does not
            assert pq.read_table(committed).equals(pq.read_table(path), check_metadata=True), committed
        else:
            assert committed.read_bytes() == path.read_bytes(), committed
    size = sum(p.stat().st_size for repo in ces_ukr_repos() for p in repo_dir(HUB_DATA, repo).rglob("*"))
    assert size < 300_000


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_every_recipe_task_has_a_repo_at_the_pinned_revision(recipe: str) -> None:
    import mteb
    import yaml

    shipped = yaml.safe_load((REPO_ROOT / "recipes" / f"{recipe}.yaml").read_text(encoding="utf-8"))
    assert shipped["evaluate"]["tasks"] == RECIPE_TASKS[recipe] == list(TASK_SAMPLES[recipe])
    store = HubStore()
    store.load(HUB_DATA)
    for name in RECIPE_TASKS[recipe]:
        dataset = mteb.get_task(name).metadata.dataset
        served = store.get("dataset", dataset["path"])
        assert served is not None and served.refs["main"] == dataset["revision"], name


# -- mteb and skadapt's readers on the served data ----------------------------------------------------------

CLIENT_CODE = """
import mteb
from sentence_transformers import SentenceTransformer
from skadapt.tasks.selection import mteb_tasks
from skadapt.tasks.contamination import task_test_texts

model = SentenceTransformer(MODEL, device="cpu")
for recipe, (language, names) in RECIPES.items():
    tasks = [task for name in names for task in mteb_tasks(name, language)]
    emit(recipe + ":subsets", {t.metadata.name: sorted(t.hf_subsets) for t in tasks})
    result = mteb.evaluate(
        model, tasks, cache=None, co2_tracker=False, show_progress_bar=False,
        encode_kwargs={"batch_size": 32, "show_progress_bar": False},
    )
    emit(recipe + ":scores", {r.task_name: r.get_score() for r in result.task_results})
    fresh = [mteb_tasks(name, language)[0] for name in names]  # loaded by the contamination reader itself
    emit(recipe + ":texts", {name: task_test_texts(task) for name, task in zip(names, fresh)})
"""


@pytest.fixture(scope="module")
def recipe_tasks_run(local_hub: LocalHub, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One client run over both recipes' tasks: subsets, scores, evaluation texts, Hub requests."""
    from tests.support.tiny_models import build_tiny_model

    model = build_tiny_model(tmp_path_factory.mktemp("ces-ukr-model") / "tiny", "unigram")
    local_hub.clear_log()
    client = HubClient(local_hub, tmp_path_factory.mktemp("ces-ukr-client"))
    recipes = {recipe: (language, RECIPE_TASKS[recipe]) for recipe, (language, _) in RECIPES.items()}
    header = f"MODEL, RECIPES = {str(model)!r}, {recipes!r}\n"
    result = client.run(header + CLIENT_CODE, timeout=600)
    result["requests"] = [r.path for r in local_hub.requests]
    result["unexpected"] = list(local_hub.unexpected)
    local_hub.clear_log()
    return result


@pytest.mark.slow
@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_mteb_scores_every_recipe_task_from_the_local_hub(
    recipe_tasks_run: dict[str, Any], recipe: str
) -> None:
    import mteb

    assert recipe_tasks_run["unexpected"] == []
    script = RECIPES[recipe][1]
    scores = recipe_tasks_run[f"{recipe}:scores"]
    assert sorted(scores) == sorted(RECIPE_TASKS[recipe])
    assert all(isinstance(s, float) and math.isfinite(s) for s in scores.values()), scores
    subsets = recipe_tasks_run[f"{recipe}:subsets"]
    assert subsets["SIB200ClusteringS2S"] == subsets["SIB200Classification.v3"] == [script]
    assert subsets["BelebeleRetrieval"] == sorted(
        [f"{script}-{script}", f"{script}-eng_Latn", f"eng_Latn-{script}"]
    )
    requested = recipe_tasks_run["requests"]
    for name in RECIPE_TASKS[recipe]:  # each task read its repository at the pinned commit
        dataset = mteb.get_task(name).metadata.dataset
        repo = f"/datasets/{dataset['path']}/resolve/"
        commits = {path.split(repo, 1)[1].split("/")[0] for path in requested if repo in path}
        assert commits == {dataset["revision"]}, (name, commits)
    for name, sample in TASK_SAMPLES[recipe].items():  # the contamination reader gets the language's texts
        texts = recipe_tasks_run[f"{recipe}:texts"][name]
        assert sample in texts, name
    for name in ("BelebeleRetrieval", "SIB200ClusteringS2S"):  # shared repositories: not the Slovak rows
        assert SLOVAK_SAMPLES[name] not in recipe_tasks_run[f"{recipe}:texts"][name], name


# -- the recipes, end to end ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recipe_runs(
    local_hub: LocalHub, hub_e5: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], dict[str, Any]]:
    """``run(recipe)``: train it (robustness off), then again; the outputs, LLM prompts and Hub requests of
    the first run, and its work directory. Each recipe runs once per module."""
    runs: dict[str, dict[str, Any]] = {}

    def run(recipe: str) -> dict[str, Any]:
        if recipe not in runs:
            workdir = tmp_path_factory.mktemp(recipe)
            client = HubClient(local_hub, workdir)
            local_hub.clear_log()
            with scripted_server(_answer) as llm:
                first = _train(client, workdir, recipe, llm.url, "robustness=null")
                prompts = [user_message(body) for body in llm.requests]
                requests, unexpected = [r.path for r in local_hub.requests], list(local_hub.unexpected)
                again = _train(client, workdir, recipe, llm.url, "robustness=null")
                runs[recipe] = {
                    "first": first,
                    "again": again,
                    "prompts": prompts,
                    "hits_after_rerun": llm.hits,
                    "requests": requests,
                    "unexpected": unexpected,
                    "workdir": workdir,
                }
            local_hub.clear_log()
        return runs[recipe]

    return run


@pytest.mark.slow
@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_shipped_recipe_runs_against_the_hub(
    recipe_runs: Callable[[str], dict[str, Any]], recipe: str
) -> None:
    import mteb

    result = recipe_runs(recipe)
    assert result["first"]["exit_code"] == 0, result["first"]["output"]
    output = str(result["first"]["output"])
    assert "preflight: " in output and "inputs OK" in output  # the preflight went through the Hub too
    assert result["unexpected"] == []
    config = RECIPES[recipe][1]
    run = result["workdir"] / "runs" / recipe
    corpus = f"hub:{FINEWEB2_ID}:{config}:train"
    sources = FINEWEB2_TEXTS[config]["train"][0]
    assert sorted(next(s for s in sources if p.rstrip().endswith(s)) for p in result["prompts"]) == sorted(
        sources
    )

    synth = _json(run / "synth_sts" / "generation_report.json")
    assert synth["sources"]["spec"] == corpus and synth["sources"]["selected"] == len(sources)
    assert synth["failed_sources"] == 0 and synth["splits"] == {"train": 12, "heldout": 6}
    training = _json(run / "finetune" / "training_report.json")
    for contamination in (synth["contamination"], training["contamination"]):
        # fail-closed: every evaluation task's test texts were read from the Hub, none overlaps
        assert contamination["status"] == "checked" and contamination["unreachable"] == {}, contamination
        assert sorted(contamination["tasks"]) == sorted(RECIPE_TASKS[recipe])
        assert all(t["test_texts"] > 0 and t["exact"] == 0 for t in contamination["tasks"].values())
    trim = _json(run / "trim" / "trim_report.json")
    assert trim["source"] == corpus and trim["exact"]
    assert [(d["name"], d["examples"]) for d in training["datasets"]] == [("synth_sts", 12)]
    renorm = _json(run / "renorm" / "renorm_report.json")
    assert renorm["corpus"] == corpus and renorm["documents"] == len(sources)
    report = _json(run / "evaluate" / "report.json")
    assert [m["model"] for m in report["models"]] == ["base", "trim", "finetune", "renorm"]
    for model in report["models"]:  # every recipe task scored
        assert sorted(model["tasks"]) == sorted(RECIPE_TASKS[recipe]), model["model"]
        assert all(math.isfinite(score) for score in model["tasks"].values()), model

    requested = result["requests"]
    assert any(f"/api/models/{E5_ID}" in path for path in requested)  # the base model came from the Hub
    assert any(f"/datasets/{FINEWEB2_ID}/resolve/" in path and config in path for path in requested)
    for name in RECIPE_TASKS[recipe]:  # each task's data came from its repository at the pinned commit
        dataset = mteb.get_task(name).metadata.dataset
        assert any(f"/datasets/{dataset['path']}/resolve/{dataset['revision']}/" in p for p in requested), (
            name
        )

    again = result["again"]
    assert again["exit_code"] == 0, again["output"]
    assert str(again["output"]).count("up to date, skipped") == len(STAGES), again["output"]
    assert result["hits_after_rerun"] == len(sources)  # nothing was generated again


@pytest.mark.slow
@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_shipped_recipe_robustness_runs_against_the_hub(
    recipe_runs: Callable[[str], dict[str, Any]], local_hub: LocalHub, recipe: str
) -> None:
    """The recipe as shipped, robustness included, on the run directory of the end-to-end run."""
    workdir = recipe_runs(recipe)["workdir"]
    with scripted_server(_answer) as llm:
        result = _train(HubClient(local_hub, workdir), workdir, recipe, llm.url)
    assert result["exit_code"] == 0, result["output"]
    assert str(result["output"]).count("up to date, skipped") == len(STAGES)
    robustness = _json(workdir / "runs" / recipe / "robustness" / "robustness.json")
    assert sorted(robustness["tasks"]) == sorted(RECIPE_TASKS[recipe])
    assert robustness["transforms"] == ["paraphrase", "summarisation", "translation"]
    scored = {(row["task"], row["transform"]) for row in robustness["rows"]}
    assert len(scored) == 3 * len(RECIPE_TASKS[recipe]) and not robustness["skipped_variants"]
