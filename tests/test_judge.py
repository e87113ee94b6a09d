"""The LLM judge against a scripted OpenAI-compatible server whose ratings are a known function of the pair:
judge-eval reproduces Spearman/MAE computed independently; malformed answers are counted as failed; the
robustness stage excludes exactly the rewrites rated under the threshold, counts them and reruns from the
cache; synthetic STS reports rating vs level and drops pairs beyond max_gap."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr
from typer.testing import CliRunner

from skadapt.languages import get_language
from skadapt.llm.checks import CHECKS
from skadapt.llm.config import JudgeConfig, LLMConfig
from skadapt.llm.generate import GenerationItem
from skadapt.llm.judge import agreement, confusion, validate_score
from tests.support.llm_server import Reply, scripted_server, user_message
from tests.support.synth_llm import CORPUS, GOOD, VARIANTS

SLOVAK = get_language("slk")
PAIR = re.compile(r"<text_a>\n(.*)\n</text_a>\n\n<text_b>\n(.*)\n</text_b>", re.DOTALL)
ITEM = GenerationItem("x", ())


def judged_pair(body: dict) -> tuple[str, str] | None:
    """(text A, text B) of a judge request, None for any other request."""
    found = PAIR.search(user_message(body))
    return (found.group(1), found.group(2)) if found else None


def score(value: object) -> Reply:
    return Reply(json.dumps({"score": value}))


def test_validate_score_names_each_problem() -> None:
    assert validate_score(ITEM, '{"score": 3.5}') == (3.5, [])
    assert validate_score(ITEM, '```json\n{"score": 0}\n```') == (0.0, [])
    for answer, check in [
        ('{"score": ', "broken_json"),
        ('{"rating": 4}', "missing_fields"),
        ('{"score": "4"}', "missing_fields"),
        ('{"score": true}', "missing_fields"),
        ('{"score": 5.5}', "out_of_range"),
        ('{"score": -1}', "out_of_range"),
        ('The score is {"score": 4}', "reasoning_leak"),
    ]:
        value, failures = validate_score(ITEM, answer)
        assert value is None and [f.check for f in failures] == [check], answer
    assert "out_of_range" in CHECKS  # listed in every error-rate table


def test_agreement_and_confusion_match_an_independent_computation() -> None:
    gold = [0.2, 0.9, 1.5, 2.5, 2.9, 3.1, 4.0, 4.6, 5.0, 3.5]
    ratings = [0.0, 2.0, 1.0, 3.0, None, 3.5, 4.5, 4.0, 5.0, 1.0]
    found = agreement(gold, ratings, threshold=3.0)
    keep = [i for i, r in enumerate(ratings) if r is not None]
    g, r = np.array(gold)[keep], np.array([ratings[i] for i in keep], dtype=float)
    assert found["rated"] == 9 and found["failed"] == 1 and found["pairs"] == 10
    assert found["spearman"] == pytest.approx(spearmanr(g, r)[0])
    assert found["pearson"] == pytest.approx(pearsonr(g, r)[0])
    assert found["mae"] == pytest.approx(np.mean(np.abs(g - r)))
    bands = np.minimum(np.floor(g), 4)
    for index, band in enumerate(found["bands"]):
        mask = bands == index
        assert band["rated"] == mask.sum()
        assert band["mae"] == pytest.approx(np.mean(np.abs(g[mask] - r[mask])))
    decisions = found["threshold"]
    assert decisions["passed_below"] == 1 and decisions["failed_above"] == 1  # 2.5 rated 3; 3.5 rated 1
    assert decisions["accuracy"] == pytest.approx(7 / 9)
    assert agreement([1.0, 1.0], [2.0, 3.0])["spearman"] is None  # constant gold: undefined, not NaN
    assert confusion([0, 0, 3, 5], [0.4, 0.5, None, 4.6]) == {
        "0": {"0": 1, "1": 1},
        "3": {"unrated": 1},
        "5": {"5": 1},
    }


# judge-eval: two local STS tasks with known gold, and what the scripted judge answers to each text A
TASK_A = [  # gold on [0, 10], the judge's answer
    ("Mačka spí na gauči.", "Mačka leží na pohovke.", 10.0, 4.5),
    ("Pes šteká na poštára.", "Pes breše na doručovateľa.", 8.0, 4),
    ("Prší celý deň.", "Celý deň leje.", 6.5, 3),
    ("Vlak mešká.", "Vlak príde neskôr.", 5.0, 3),
    ("Študenti píšu skúšku.", "Žiaci hrajú futbal.", 3.0, 1),
    ("Bratislava leží na Dunaji.", "Košice ležia na Hornáde.", 2.0, 2),
    ("Jem jablko.", "Futbalový zápas skončil remízou.", 0.5, 0),
    ("Lekár vyšetril pacienta.", "Pacienta prezrel doktor.", 9.5, "broken"),
]
TASK_B = [  # gold on [0, 5]
    ("Knižnica je zatvorená.", "Knižnica dnes neotvorí.", 5.0, 5),
    ("Slnko svieti.", "Je slnečno.", 4.2, 3),
    ("Obchod je otvorený.", "Obchod predáva ovocie.", 3.3, 4),
    ("Auto stojí pred domom.", "Dom má červenú strechu.", 1.1, 7),  # out of range, every attempt
    ("Deti sa hrajú.", "Burza dnes klesla.", 0.4, 0.5),
    ("Mesto má nový most.", "Cez rieku vedie nová lávka.", 2.7, 2),
]
ANSWERS = {a: answer for a, _, _, answer in TASK_A + TASK_B}


def judge_eval_script(body: dict, count: int) -> Reply:
    pair = judged_pair(body)
    assert pair is not None and (count > 0 or body["temperature"] == 0)  # judge requests, greedy at first
    answer = ANSWERS[pair[0]]
    return Reply('{"score": ') if answer == "broken" else score(answer)


def write_sts_suite(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, rows in (("a", TASK_A), ("b", TASK_B)):
        (root / f"{name}.jsonl").write_text(
            "".join(
                json.dumps({"sentence1": s1, "sentence2": s2, "score": g}, ensure_ascii=False) + "\n"
                for s1, s2, g, _ in rows
            ),
            encoding="utf-8",
        )
    suite = root / "suite.yaml"
    suite.write_text(
        "language: slk\ntasks:\n"
        "  - {name: GoldA, type: STS, data: a.jsonl, score_range: [0, 10]}\n"
        "  - {name: GoldB, type: STS, data: b.jsonl, score_range: [0, 5]}\n",
        encoding="utf-8",
    )
    return suite


def expected(rows: list[tuple], scale: float) -> dict[str, float]:
    rated = [(g * scale, float(a)) for _, _, g, a in rows if isinstance(a, int | float) and 0 <= a <= 5]
    gold, judged = np.array([g for g, _ in rated]), np.array([a for _, a in rated])
    return {
        "spearman": float(spearmanr(gold, judged)[0]),
        "mae": float(np.mean(np.abs(gold - judged))),
        "failed": len(rows) - len(rated),
    }


def test_judge_eval_reproduces_spearman_and_mae(tmp_path: Path) -> None:
    from skadapt.cli import app

    suite = write_sts_suite(tmp_path / "suite")
    out = tmp_path / "out"
    with scripted_server(judge_eval_script) as server:

        def invoke(*extra: str) -> tuple[int, str]:
            args = ["llm", "judge-eval", "--tasks", str(suite), "--language", "slk", "--out", str(out)]
            args += ["--llm-model", "judge", "--llm-base-url", server.url, "--llm-cache", str(tmp_path / "c")]
            result = CliRunner().invoke(app, [*args, "--llm-attempts", "2", *extra])
            return result.exit_code, result.output

        code, output = invoke()
        assert code == 0, output
        hits = server.hits
        assert hits == len(TASK_A) + len(TASK_B) + 2  # one retry each for the two malformed answers
        code, output = invoke("--overwrite")
        assert code == 0, output
        assert server.hits == hits  # the rerun sent zero requests
    assert "GoldA" in output and "Spearman" in output
    report = json.loads((out / "judge_eval.json").read_text())
    for name, rows, scale in (("GoldA", TASK_A, 0.5), ("GoldB", TASK_B, 1.0)):
        found, want = report["tasks"][name], expected(rows, scale)
        assert found["spearman"] == pytest.approx(want["spearman"])
        assert found["mae"] == pytest.approx(want["mae"])
        assert found["failed"] == want["failed"] == 1
    assert report["tasks"]["all"]["pairs"] == len(TASK_A) + len(TASK_B)
    checks = {row["check"]: row["failed"] for row in report["generation"]["error_rates"]}
    assert checks["broken_json"] == 2 and checks["out_of_range"] == 2
    ratings = [json.loads(line) for line in (out / "ratings.jsonl").read_text().splitlines()]
    failed = {r["text_a"]: r["failed"] for r in ratings if r.get("failed")}
    assert set(failed) == {"Lekár vyšetril pacienta.", "Auto stojí pred domom."}
    assert "out_of_range" in failed["Auto stojí pred domom."]
    markdown = (out / "judge_eval.md").read_text()
    assert "| GoldB | 6 | 1 |" in markdown and "| out_of_range | 2 |" in markdown


def test_judge_eval_needs_an_sts_task(tmp_path: Path) -> None:
    from skadapt.cli import app
    from tests.support.suite_fixtures import write_tiny_suite

    suite = write_tiny_suite(tmp_path / "suite")
    (suite.parent / "only.yaml").write_text(
        "tasks:\n  - {name: P, type: PairClassification, data: pairs.jsonl}\n", encoding="utf-8"
    )
    args = ["llm", "judge-eval", "--tasks", str(suite.parent / "only.yaml"), "--language", "slk"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "o"), "--llm-model", "j"])
    assert result.exit_code == 1 and "no STS task" in result.output


# robustness: the scripted rewriter appends a sentence (FAILING comes back unchanged: "identical"); the
# scripted judge rates LOW rewrites 2, never rates UNRATED, answers OUT out of range once, the rest 4.5
FAILING = "Pes šteká na poštára."
LOW = {"Jem jablko.", "Obchod je otvorený."}
UNRATED = "Slnko svieti."
OUT = "Prší celý deň."


def robustness_script(body: dict, count: int) -> Reply:
    pair = judged_pair(body)
    if pair is None:
        text = user_message(body).rsplit("Text: ", 1)[1]
        return Reply(text if text == FAILING else f"{text} Tak to hovoria správy.")
    assert body["model"] == "judge"  # the judge's own LLM
    original, rewritten = pair
    assert rewritten == f"{original} Tak to hovoria správy."
    if original == UNRATED:
        return Reply("I cannot rate this.")
    if original == OUT:  # out of range on the first, greedy attempt of each seed
        return score(9 if body["temperature"] == 0 else 4)
    return score(2 if original in LOW else 4.5)


def test_robustness_judge_excludes_low_rewrites(tmp_path: Path, tiny_models: dict[str, Path]) -> None:
    from skadapt.robustness.run import RobustnessPlan, run_robustness
    from skadapt.tasks.selection import select_tasks
    from tests.support.suite_fixtures import write_tiny_suite

    suite = write_tiny_suite(tmp_path / "suite")

    def tasks() -> list:
        return [
            t
            for t in select_tasks([str(suite)], language="slk")
            if t.metadata.type in ("STS", "PairClassification")
        ]

    with scripted_server(robustness_script) as server:
        llm = LLMConfig(model="rewriter", base_url=server.url, cache=str(tmp_path / "c"), attempts=2)
        judge = JudgeConfig(llm=llm.model_copy(update={"model": "judge"}), threshold=3.0)
        plan = RobustnessPlan(
            models={"tiny": str(tiny_models["unigram"])},
            transforms=["paraphrase"],
            seeds=[1, 2],
            prompt_policy={"STS": "query: "},
            judge=judge,
        )
        report = run_robustness(tasks(), plan, llm, SLOVAK, tmp_path / "out")
        hits = server.hits
        again = run_robustness(tasks(), plan, llm, SLOVAK, tmp_path / "out")
        assert server.hits == hits  # the rerun sent zero requests, the judge's included
    assert json.dumps(again["rows"]) == json.dumps(report["rows"])

    # the pairs holding FAILING, a LOW text or UNRATED are excluded: 4 of 10 in each task and seed
    assert {(r["task"], r["excluded"], r["items"]) for r in report["rows"]} == {
        ("TinySTS", 4, 10),
        ("TinyPairs", 4, 10),
    }
    rewrites = [
        json.loads(line)
        for line in (tmp_path / "out" / "rewrites" / "paraphrase_s1.jsonl").read_text().splitlines()
    ]
    failed = {r["original"]: r["failed"] for r in rewrites if r.get("failed")}
    assert set(failed) == {FAILING, UNRATED, *LOW}
    assert all(failed[t] == "judge: score 2 < 3" for t in LOW)
    assert failed[UNRATED].startswith("judge: not rated") and "broken_json" in failed[UNRATED]
    assert "identical" in failed[FAILING]
    low = next(r for r in rewrites if r["original"] in LOW)
    assert (
        low["rewritten"] is None and low["judge_score"] == 2 and low["rejected_rewrite"].endswith("správy.")
    )

    # 20 distinct texts per seed; 19 passed the checks and were judged; 18 got a rating
    judged = report["judge"]["transforms"]["paraphrase"]
    per_seed = {"rated": 18, "unrated": 1, "below_threshold": 2, "excluded": 3}
    for seed in ("1", "2"):
        assert {k: judged["seeds"][seed][k] for k in per_seed} == per_seed
        assert judged["seeds"][seed]["mean"] == pytest.approx((15 * 4.5 + 2 * 2 + 4) / 18)
        assert judged["seeds"][seed]["median"] == 4.5
    assert {k: judged[k] for k in per_seed} == {k: 2 * v for k, v in per_seed.items()}
    checks = {row["check"]: row["failed"] for row in report["judge"]["generation"]["error_rates"]}
    assert checks["out_of_range"] == 2 and checks["broken_json"] == 4  # per seed: 1, and 2 attempts
    assert report["judge"]["model"] == "judge" and report["judge"]["threshold"] == 3.0

    markdown = (tmp_path / "out" / "robustness.md").read_text()
    assert "## Judge: meaning kept (0–5)" in markdown
    assert f"| paraphrase | all | 36 | {(15 * 4.5 + 2 * 2 + 4) / 18:.2f} | 4.50 | 4 | 2 |" in markdown
    assert "| paraphrase | 1 | 18 |" in markdown and "### The judge's output checks" in markdown


def test_judge_transport_fields_do_not_change_keys(tmp_path: Path, tiny_models: dict[str, Path]) -> None:
    """A judge LLM's new address or cache file neither invalidates a finished stage nor a command's work
    directory; its model does."""
    from skadapt.languages import get_language
    from skadapt.pipeline.alone import alone_work_dir
    from skadapt.pipeline.keys import stage_key
    from skadapt.recipe import validate_recipe
    from skadapt.robustness.config import RobustnessConfig
    from skadapt.stage import RunFacts

    def recipe(**judge_llm: object) -> object:
        return validate_recipe(
            {
                "name": "k",
                "language": "slk",
                "base_model": str(tiny_models["unigram"]),
                "output_dir": str(tmp_path / "run"),
                "llm": {"model": "rewriter"},
                "robustness": {"models": ["base"], "judge": {"llm": {"model": "judge", **judge_llm}}},
            }
        )

    def key(**judge_llm: object) -> str:
        return stage_key(recipe(**judge_llm), "robustness", [])[0]

    moved = {"base_url": "http://elsewhere/v1", "cache": str(tmp_path / "other.sqlite"), "concurrency": 2}
    assert key() == key(**moved)
    assert key() != key(model="another-judge")

    def work_dir(**judge_llm: object) -> Path:
        judge = JudgeConfig(llm=LLMConfig(**{"model": "judge", **judge_llm}))  # type: ignore[arg-type]
        config = RobustnessConfig(tasks=["SlovakSTS"], transforms=["paraphrase"], seeds=[1], judge=judge)
        moved_too = {k: v for k, v in judge_llm.items() if k != "model"}  # the rewriter's transport too
        facts = RunFacts(tmp_path, get_language("slk"), llm=LLMConfig(model="rewriter", **moved_too))
        return alone_work_dir("robustness", config, facts, {"m": "x"}, tmp_path / "out")

    assert work_dir() == work_dir(**moved)
    assert work_dir() != work_dir(model="another-judge")


# synthetic STS: every source gets the same six hand-written variants; the judge rates them by level
BY_LEVEL = {0: 0.0, 1: 1.5, 2: 2.0, 3: 4.5, 4: 4.0, 5: 5.0}


def test_synth_judge_reports_levels_and_drops_far_pairs(tmp_path: Path) -> None:
    from datasets import load_from_disk

    from skadapt.synth.config import SynthSTSConfig
    from skadapt.synth.run import synthesize_sts
    from skadapt.synth.sources import select_sources

    sources = [s.text for s in select_sources(str(CORPUS), SLOVAK, 6, seed=7).sentences]
    special = sources[0]  # its level-0 pair is rated 3: three from its level

    def rating(source: str, level: int) -> float:
        return 3.0 if (source, level) == (special, 0) else BY_LEVEL[level]

    def script(body: dict, count: int) -> Reply:
        pair = judged_pair(body)
        if pair is None:
            return Reply(GOOD)
        return score(rating(pair[0], VARIANTS.index(pair[1])))

    config = SynthSTSConfig(
        corpus=str(CORPUS),
        n_sources=6,
        annotation_sample_per_level=2,
        contamination_tasks=[],
        judge=JudgeConfig(max_gap=1.0),
    )
    with scripted_server(script) as server:
        llm = LLMConfig(model="scripted", base_url=server.url, cache=str(tmp_path / "c"))
        report = synthesize_sts(config, llm, SLOVAK, tmp_path / "a", seed=7)
        hits = server.hits
        assert hits == 6 + 36  # six generations, 36 ratings
        synthesize_sts(config, llm, SLOVAK, tmp_path / "b", seed=7)
        assert server.hits == hits
    judge = report["judge"]
    levels = [level for _ in sources for level in range(6)]
    ratings = [rating(s, level) for s in sources for level in range(6)]
    assert judge["spearman"] == pytest.approx(spearmanr(levels, ratings)[0])
    assert judge["mae"] == pytest.approx(np.mean(np.abs(np.array(levels) - np.array(ratings))))
    assert judge["confusion"]["0"] == {"0": 5, "3": 1} and judge["confusion"]["1"] == {"2": 6}
    assert judge["confusion"]["3"] == {"5": 6}  # 4.5 rounds half up
    assert judge["dropped"] == {"0": 1, "1": 0, "2": 0, "3": 6, "4": 0, "5": 0}
    assert judge["dropped_total"] == 7 and report["pairs"] == 36 - 7
    assert judge["by_level"]["3"]["mean_rating"] == 4.5 and judge["rated"] == 36
    dataset = load_from_disk(str(tmp_path / "a" / "dataset"))
    rows = [row for split in dataset.values() for row in split]
    assert len(rows) == 29 and not [r for r in rows if r["score"] == 3.0]
    assert all(not math.isnan(r["judge_score"]) and abs(r["judge_score"] - r["score"]) <= 1 for r in rows)
    card = (tmp_path / "a" / "README.md").read_text()
    assert "## Judge" in card and f"Spearman {judge['spearman']:.3f}" in card
    assert "| 3 | 0 | 0 | 0 | 0 | 0 | 6 |" in card  # the confusion table: level 3 rated 5 (rounded)
