"""Robustness against a scripted OpenAI-compatible server on a tiny local suite: same seed, same tasks and
scores; different seeds, different languages; corpora never reach the LLM; failed items excluded, counted
and the original re-scored on the survivors; a rerun sends no request and encodes nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skadapt.languages import get_language
from skadapt.llm.config import LLMConfig
from skadapt.robustness.run import RobustnessPlan, run_robustness
from skadapt.robustness.tasks import texts_to_transform
from skadapt.robustness.transforms import TRANSLATION_POOL, draw, resolve_settings, steps
from skadapt.tasks.selection import select_tasks
from tests.support.llm_server import Reply, scripted_server, user_message
from tests.support.suite_fixtures import SENTENCES, write_tiny_suite

SLOVAK = get_language("slk")
TRANSLATIONS = {  # what the scripted LLM answers to "Translate ... into <language>", by input
    "German": [
        "Der Zug kommt heute später.",
        "Die Katze schläft auf dem Sofa.",
        "Es regnet den ganzen Tag.",
        "Der Arzt untersucht den Patienten.",
        "Die Bibliothek ist heute geschlossen.",
        "Die Studenten schreiben eine Prüfung.",
    ],
    "Spanish": [
        "El tren llega tarde hoy.",
        "El gato duerme en el sofá.",
        "Llueve todo el día.",
        "El médico examina al paciente.",
        "Hoy la biblioteca no abre.",
        "Los estudiantes escriben un examen.",
    ],
    "French": [
        "Le train arrive en retard.",
        "Le chat dort sur le canapé.",
        "Il pleut toute la journée.",
        "Le médecin examine le patient.",
        "La bibliothèque est fermée aujourd'hui.",
        "Les étudiants passent un examen.",
    ],
    "Turkish": [
        "Tren bugün geç geliyor.",
        "Kedi kanepede uyuyor.",
        "Bütün gün yağmur yağıyor.",
        "Doktor hastayı muayene ediyor.",
        "Kütüphane bugün kapalı.",
        "Öğrenciler sınava giriyor.",
    ],
    "Arabic": [
        "القطار يصل متأخرا اليوم.",
        "القطة نائمة على الأريكة.",
        "المطر يهطل طوال اليوم.",
        "الطبيب يفحص المريض الآن.",
        "المكتبة مغلقة اليوم.",
        "الطلاب يكتبون الامتحان.",
    ],
}
FAILING = "Pes šteká na poštára."  # the scripted LLM returns it unchanged: "identical", every attempt


def script(body: dict, count: int) -> Reply:
    prompt = user_message(body)
    text = prompt.rsplit("Text: ", 1)[1]
    target = re.search(r"Translate the following text into (\w+)\.", prompt)
    if target:
        options = TRANSLATIONS[target.group(1)]
        return Reply(options[sum(map(ord, text)) % len(options)])
    if text == FAILING:
        return Reply(text)
    return Reply(f"{text} Tak to hovoria správy.")


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_suite(tmp_path_factory.mktemp("suite"))


def plan(models: dict[str, str], transforms: list[str], seeds: list[int]) -> RobustnessPlan:
    return RobustnessPlan(models=models, transforms=transforms, seeds=seeds, prompt_policy={"STS": "query: "})


def llm(url: str, cache: Path) -> LLMConfig:
    return LLMConfig(backend="openai", model="scripted", base_url=url, cache=str(cache), attempts=2)


@pytest.mark.slow
def test_robustness_end_to_end(tmp_path: Path, suite: Path, tiny_models: dict[str, Path]) -> None:
    models = {kind: str(path) for kind, path in tiny_models.items()}
    run_plan = plan(models, ["paraphrase", "translation"], [1337, 1338])
    with scripted_server(script) as server:
        tasks = select_tasks([str(suite)], language="slk")
        report = run_robustness(tasks, run_plan, llm(server.url, tmp_path / "c"), SLOVAK, tmp_path / "out")
        hits = server.hits
        again = run_robustness(
            select_tasks([str(suite)], language="slk"),
            run_plan,
            llm(server.url, tmp_path / "c"),
            SLOVAK,
            tmp_path / "out",
        )
        assert server.hits == hits  # the rerun sent zero requests
    assert again["texts_encoded"] == dict.fromkeys(models, 0)  # ... and encoded nothing
    assert all(count > 0 for count in report["texts_encoded"].values())
    same = json.dumps(again["rows"]) == json.dumps(report["rows"])  # NaN-aware comparison
    assert same  # same seed: same transformed tasks, same scores

    rows = report["rows"]
    retrieval = [r for r in rows if r["task"] == "TinyRetrieval" and r["transform"] == "paraphrase"]
    assert retrieval and all(r["excluded"] == 1 and r["items"] == 10 for r in retrieval)

    # failed items: excluded, counted, original re-scored on the survivors
    sts = [r for r in rows if r["task"] == "TinySTS" and r["transform"] == "paraphrase"]
    assert all(r["excluded"] == 1 for r in sts)
    assert any(r["original"] != r["original_full"] for r in rows if r["excluded"])
    rewrites = [
        json.loads(x)
        for x in (tmp_path / "out" / "rewrites" / "paraphrase_s1337.jsonl").read_text().splitlines()
    ]
    failed = [r for r in rewrites if r.get("failed")]
    assert [r["original"] for r in failed] == [FAILING] and "identical" in failed[0]["failed"]

    # bitext mining is skipped under language transformations
    assert not [r for r in rows if r["task"] == "TinyBitext" and r["transform"] == "translation"]
    assert [r for r in rows if r["task"] == "TinyBitext" and r["transform"] == "paraphrase"]

    stats = report["statistics"]
    assert set(stats["models"]) == set(models)
    assert set(stats["kendall_tau"]) == {"paraphrase", "translation"}  # 3 models
    for model in stats["models"].values():
        assert set(model["axes"]) == {"lexical", "language"}
        assert model["total"] == pytest.approx(sum(model["axes"].values()) / 2)
    for name in ("delta_heatmap.png", "hl_forest.png", "dumbbell.png"):
        assert (tmp_path / "out" / "figures" / name).stat().st_size > 1000
    markdown = (tmp_path / "out" / "robustness.md").read_text()
    assert "## Profile by axis" in markdown and "| identical |" in markdown


def test_retrieval_corpora_never_reach_the_llm(
    tmp_path: Path, suite: Path, tiny_models: dict[str, Path]
) -> None:
    tasks = [t for t in select_tasks([str(suite)], language="slk") if t.metadata.type == "Retrieval"]
    with scripted_server(script) as server:
        run_robustness(
            tasks,
            plan({"m": str(tiny_models["unigram"])}, ["paraphrase"], [1]),
            llm(server.url, tmp_path / "c"),
            SLOVAK,
            tmp_path / "out",
        )
    sent = {user_message(r).rsplit("Text: ", 1)[1] for r in server.requests}
    assert sent == {a for a, _, _ in SENTENCES}  # the queries, and not one corpus passage


def test_seeds_draw_different_languages(suite: Path) -> None:
    targets = {draw(TRANSLATION_POOL, SLOVAK, f"{seed}|translation") for seed in range(1337, 1343)}
    assert len(targets) > 1 and "sk" not in targets
    per_text = {steps("cross_translation", SLOVAK, 1337, f"t{i}")[0].language.iso639_1 for i in range(20)}
    assert len(per_text) > 2
    assert (
        steps("translation", SLOVAK, 1337, "a")[0].language
        == steps("translation", SLOVAK, 1337, "b")[0].language
    )
    pivots = [steps("backtranslation", SLOVAK, 1337, f"t{i}")[1].language.code for i in range(5)]
    assert set(pivots) == {"slk"}  # backtranslation comes back to the source language


def test_what_is_transformed_per_task_type(suite: Path) -> None:
    tasks = {t.metadata.type: t for t in select_tasks([str(suite)], language="slk")}
    for task in tasks.values():
        task.load_data()
    queries = {a for a, _, _ in SENTENCES}
    assert set(texts_to_transform(tasks["Retrieval"])) == queries
    assert set(texts_to_transform(tasks["STS"])) == queries | {b for _, b, _ in SENTENCES}
    assert all(t.endswith("Naozaj.") for t in texts_to_transform(tasks["Classification"]))  # the test split


def test_presets() -> None:
    assert resolve_settings("pteb", None, None, None, None)["seeds"] == list(range(1337, 1343))
    hteb = resolve_settings("hteb", None, None, None, None)
    assert len(hteb["transforms"]) == 8 and hteb["temperature"] == 0.0
    assert resolve_settings("hteb", ["paraphrase"], [1], None, None)["transforms"] == ["paraphrase"]
    with pytest.raises(ValueError, match="unknown transformation"):
        resolve_settings(None, ["rephrase"], None, None, None)


@pytest.mark.slow
def test_cli(
    tmp_path: Path, suite: Path, tiny_models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command writes --out whole or not at all, resumes from its work directory, refuses an existing
    --out without --overwrite."""
    from typer.testing import CliRunner

    from skadapt.cli import app

    out = tmp_path / "out"

    def invoke(*extra: str) -> tuple[int, str]:
        args = [
            "robustness",
            f"tiny={tiny_models['unigram']}",
            "--tasks",
            str(suite),
            "--language",
            "slk",
            "--transforms",
            "paraphrase",
            "--seeds",
            "7",
            "--out",
            str(out),
            "--llm-model",
            "scripted",
            "--llm-base-url",
            server.url,
            "--llm-cache",
            str(tmp_path / "c"),
            *extra,
        ]
        result = CliRunner().invoke(app, args)
        return result.exit_code, result.output

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    def siblings() -> list[str]:
        return sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out."))

    with scripted_server(script) as server:
        with monkeypatch.context() as patch:
            patch.setattr("skadapt.robustness.report.write_reports", broken)
            code, output = invoke()
        assert code == 1 and "disk full" in output
        assert not out.exists()
        (work,) = siblings()  # the rewrites and scores so far, nothing half-written under --out
        assert work.startswith(".out.robustness-")
        hits = server.hits
        code, output = invoke()  # resumes: the LLM answers are cached, the scores are in the work directory
        assert code == 0, output
        assert server.hits == hits
        assert "Profile by axis" in output and (out / "robustness.json").is_file()
        assert not (out / "cache").exists() and siblings() == []
        code, output = invoke()
        assert code == 1 and "already exists" in output and "--overwrite" in output
        code, output = invoke("--overwrite")
        assert code == 0, output


@pytest.mark.slow
def test_the_stage_leaves_out_the_tasks_evaluation_leaves_out(
    tmp_path: Path, suite: Path, tiny_models: dict[str, Path]
) -> None:
    """robustness.tasks unset: the evaluation's tasks less evaluate.exclude_tasks; set: exactly its own."""
    from skadapt.robustness.config import RobustnessConfig
    from skadapt.robustness.stage import run_stage
    from skadapt.stage import RunFacts, StageContext

    model = str(tiny_models["unigram"])

    def scored_tasks(config: RobustnessConfig, url: str, name: str) -> set[str]:
        facts = RunFacts(
            run_dir=tmp_path,
            language=SLOVAK,
            eval_tasks=(str(suite),),
            excluded_tasks=("TinyBitext", "TinyRetrieval"),
            llm=llm(url, tmp_path / "cache"),
        )
        out, work = tmp_path / name / "out", tmp_path / name / "work"
        out.mkdir(parents=True), work.mkdir(parents=True)
        run_stage(StageContext("robustness", config, facts, {"base": model, "final": model}, out, work))
        rows = json.loads((out / "robustness.json").read_text())["rows"]
        return {row["task"] for row in rows}

    settings = {"transforms": ["paraphrase"], "seeds": [1337]}
    with scripted_server(script) as server:
        inherited = scored_tasks(RobustnessConfig(**settings), server.url, "inherited")
        own = scored_tasks(RobustnessConfig(**settings, tasks=[str(suite)]), server.url, "own")
    assert inherited and not inherited & {"TinyBitext", "TinyRetrieval"}
    assert {"TinyBitext", "TinyRetrieval"} <= own
