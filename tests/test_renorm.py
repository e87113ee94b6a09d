"""Renorm: sentence sampling, R1/R2 as vanilla sentence-transformers modules, formula equality, CLI, stage."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from skadapt.cli import app
from skadapt.renorm.config import RenormConfig
from skadapt.renorm.stage import renorm_formula, renormalize
from skadapt.textsample import reservoir_sample, sample_sentences, split_sentences

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "sk_corpus.txt"
SUITE_SK = DATA / "suite_sk" / "suite.yaml"
REPORT_KEYS = [  # renorm_report.json's keys in their order (the file is read by name by publish and users)
    "method",
    "kept",
    "corpus",
    "prompt",
    "prompt_text",
    "samples",
    "pool",
    "documents",
    "dropped_eval_overlap",
    "mu_norm",
    "mean_cos_to_mu_before",
    "mean_cos_to_mu_after",
    "dimension",
    "output_dimension",
    "seed",
    "selection",
    "seconds",
]
TEXTS = ["Prvá veta je krátka. Druhá veta ide hneď za ňou! A tretia? Áno, aj tá.", "Krátka."]


def test_split_sentences_uses_the_language_rules():
    assert split_sentences(TEXTS[0], "sk") == [
        "Prvá veta je krátka.",
        "Druhá veta ide hneď za ňou!",
        "A tretia?",
        "Áno, aj tá.",
    ]
    assert split_sentences("Cena je 12,50 €. To je veľa.", "sk") == ["Cena je 12,50 €.", "To je veľa."]
    # Abbreviations a regex splits at: pysbd's Slovak rules keep them inside the sentence.
    assert split_sentences("Prišiel napr. aj p. Novák. Potom odišiel.", "sk") == [
        "Prišiel napr. aj p. Novák.",
        "Potom odišiel.",
    ]
    assert split_sentences("Jedna veta. Druhá veta.", "xx") == ["Jedna veta.", "Druhá veta."]  # fallback


def test_sample_is_a_seeded_reservoir_of_the_whole_stream():
    texts = [f"Veta číslo {i} má presne toľko znakov, koľko treba." for i in range(50)] * 2 + ["Krátka veta."]
    exclude = {"veta číslo 3 má presne toľko znakov, koľko treba."}
    a = sample_sentences(texts, 10, min_chars=20, max_chars=80, seed=1, language="sk", exclude=exclude)
    b = sample_sentences(texts, 10, min_chars=20, max_chars=80, seed=1, language="sk", exclude=exclude)
    c = sample_sentences(texts, 10, min_chars=20, max_chars=80, seed=2, language="sk", exclude=exclude)
    assert a.sentences == b.sentences and a.sentences != c.sentences
    assert len(a.sentences) == len(set(a.sentences)) == 10
    assert a.eligible == 49 and a.dropped == 1 and a.documents == 101  # every unique sentence was a candidate
    assert all(20 <= len(s) <= 80 for s in a.sentences)
    assert not any("číslo 3 " in s for s in a.sentences)
    # Not the head of the stream: over seeds, late sentences are drawn as often as early ones.
    numbers = [
        int(s.split()[2])
        for seed in range(200)
        for s in sample_sentences(texts, 10, min_chars=20, max_chars=80, seed=seed, language="sk").sentences
    ]
    late = sum(n >= 25 for n in numbers) / len(numbers)
    assert 0.4 < late < 0.6


def test_a_long_stream_is_split_in_worker_processes_to_the_same_sample(monkeypatch):
    """Past PARALLEL_AFTER texts the splitting moves to worker processes; sample and counts are the same."""
    from skadapt import textsample

    texts = [f"Dokument {i} má prvú vetu dosť dlhú. A druhú vetu číslo {i % 37} tiež." for i in range(300)]
    serial = sample_sentences(texts, 25, min_chars=20, max_chars=80, seed=3, language="sk", workers=1)
    monkeypatch.setattr(textsample, "PARALLEL_AFTER", 10)
    monkeypatch.setattr(textsample, "BATCH", 7)
    spawned = []
    real = textsample.ProcessPoolExecutor

    def counting(*args, **kwargs):
        spawned.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(textsample, "ProcessPoolExecutor", counting)
    parallel = sample_sentences(texts, 25, min_chars=20, max_chars=80, seed=3, language="sk", workers=2)
    assert spawned == [(2,)]
    assert parallel == serial
    assert (serial.documents, serial.eligible) == (300, 300 + 37)


def test_spawned_workers_of_python_m_skadapt_do_not_rerun_the_cli():
    """Under ``python -m skadapt`` the splitting workers (spawn) import ``skadapt.__main__`` as
    ``__mp_main__``: that must not start the command line a second time in every worker."""
    import runpy

    runpy.run_module("skadapt", run_name="__mp_main__")  # the CLI would exit (SystemExit) on no arguments


def test_duplicate_detection_holds_hashes_not_the_sentences(monkeypatch):
    """The set of sentences seen is what grows with the corpus: ~100 bytes a sentence, not the text."""
    import tracemalloc

    from skadapt import textsample

    monkeypatch.setattr(textsample, "split_sentences", lambda text, language: [text])  # one sentence each
    count, length = 40_000, 300
    texts = (f"{i:07d} " + "x" * (length - 9) + "." for i in range(count))  # one unique sentence each
    tracemalloc.start()
    try:
        sample = sample_sentences(texts, 10, min_chars=20, max_chars=400, seed=1, language="sk", workers=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sample.eligible == count
    assert peak / count < 150, peak / count  # the sentences are 300 characters (~350 bytes as str objects)


def test_reservoir_sample_is_uniform():
    counts = [0] * 20
    for seed in range(2000):
        for item in reservoir_sample((str(i) for i in range(20)), 5, seed)[0]:
            counts[int(item)] += 1
    assert max(counts) / min(counts) < 1.3  # each item drawn with probability 1/4


def _check_renormalized(base: Path, renormed: Path, method: str, texts: list[str]) -> None:
    """Vanilla sentence-transformers reload equals the formula; R2 is orthogonal to mu-hat."""
    from sentence_transformers import SentenceTransformer

    modules = json.loads((renormed / "modules.json").read_text())
    assert [m["type"].rsplit(".", 1)[-1] for m in modules[-2:]] == ["Dense", "Normalize"]
    assert all(m["type"].startswith("sentence_transformers.") for m in modules)
    config = json.loads((renormed / modules[-2]["path"] / "config.json").read_text())
    assert config["activation_function"] == "torch.nn.modules.linear.Identity"

    mu = np.load(renormed / "renorm_mu.npy")
    e = SentenceTransformer(str(base), device="cpu").encode(texts, prompt="")
    r = SentenceTransformer(str(renormed), device="cpu", trust_remote_code=False).encode(texts, prompt="")
    assert np.abs(r - renorm_formula(e, mu, method)).max() <= 1e-6
    assert np.allclose(np.linalg.norm(r, axis=1), 1, atol=1e-6)
    if method == "r2":
        assert np.abs(r @ (mu / np.linalg.norm(mu))).max() <= 1e-6


@pytest.mark.parametrize("method", ["r1", "r2"])
def test_tiny_model_renorm_loads_vanilla_and_equals_formula(
    tiny_models: dict[str, Path], tmp_path: Path, method
):
    out = tmp_path / method
    result = renormalize(
        str(tiny_models["unigram"]), out, RenormConfig(corpus=str(CORPUS), method=method, samples=50), seed=3
    )
    assert result.samples == 50 and result.mu_norm == pytest.approx(
        float(np.linalg.norm(np.load(out / "renorm_mu.npy")))
    )
    report = json.loads((out / "renorm_report.json").read_text())
    assert (
        list(report) == REPORT_KEYS
        and report["selection"] is None
        and list(report["seconds"]) == ["sample", "encode"]
    )
    assert report == result.model_dump(mode="json") and report["method"] == method
    _check_renormalized(tiny_models["unigram"], out, method, split_sentences(CORPUS.read_text(), "sk")[:20])
    if method == "r2":
        assert abs(result.mean_cos_to_mu_after) < 1e-6

    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    assert SentenceTransformerEncoderWrapper(str(out)).model[-2].linear.weight.shape[0] == 32  # mteb loads it


def test_renorm_is_deterministic(tiny_models: dict[str, Path], tmp_path: Path):
    config = RenormConfig(corpus=str(CORPUS), samples=40)
    a = renormalize(str(tiny_models["bpe"]), tmp_path / "a", config, seed=5)
    b = renormalize(str(tiny_models["bpe"]), tmp_path / "b", config, seed=5)
    assert a.mu_norm == b.mu_norm
    assert np.array_equal(
        np.load(tmp_path / "a" / "renorm_mu.npy"), np.load(tmp_path / "b" / "renorm_mu.npy")
    )


def test_cli_renorm_and_its_errors(tiny_models: dict[str, Path], tmp_path: Path):
    runner = CliRunner()
    model_out = [str(tiny_models["wordpiece"]), "--out", str(tmp_path / "m")]
    unknown = runner.invoke(app, ["renorm", *model_out, "--corpus", str(CORPUS)])
    assert unknown.exit_code == 2 and "--language is required" in unknown.output  # a usage error
    assert not (tmp_path / "m").exists()
    base = ["renorm", *model_out, "--language", "slk"]
    ok = runner.invoke(app, [*base, "--corpus", str(CORPUS), "--method", "r1", "--samples", "30"])
    assert ok.exit_code == 0, ok.output
    assert "||mu||" in ok.stdout and (tmp_path / "m" / "3_Dense").is_dir()
    missing = runner.invoke(app, [*base, "--corpus", str(tmp_path / "nope.txt"), "--overwrite"])
    assert missing.exit_code == 1 and "nope.txt: no such file" in missing.output
    exists = runner.invoke(app, [*base, "--corpus", str(CORPUS)])
    assert exists.exit_code == 1 and "already exists" in exists.output
    window = runner.invoke(app, [*base, "--corpus", str(CORPUS), "--min-chars", "600", "--overwrite"])
    assert window.exit_code == 2 and "must not exceed" in window.output
    (tmp_path / "short.txt").write_text("Krátka veta.\n")
    short = runner.invoke(app, [*base, "--corpus", str(tmp_path / "short.txt"), "--overwrite"])
    assert short.exit_code == 1 and "no sentence of 64-512 characters" in short.output


def test_suite_sentences_are_dropped_from_the_sample(tiny_models: dict[str, Path], tmp_path: Path):
    from skadapt.tasks.selection import evaluation_texts

    corpus = tmp_path / "c.txt"
    leaked = "Slovenskí hokejisti porazili Fínov po predĺžení a postúpili do semifinále turnaja."
    corpus.write_text(CORPUS.read_text() + leaked + "\n")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "d.jsonl").write_text(
        json.dumps({"sentence1": leaked, "sentence2": "x"}, ensure_ascii=False) + "\n"
    )
    (suite / "s.yaml").write_text("tasks:\n  - {name: B, type: BitextMining, data: d.jsonl}\n")
    result = renormalize(
        str(tiny_models["unigram"]), tmp_path / "m", RenormConfig(corpus=str(corpus), samples=1000),
        exclude=evaluation_texts([str(suite / "s.yaml")]),
    )  # fmt: skip
    assert result.dropped_eval_overlap == 1


def test_pipeline_renorm_then_evaluate(tiny_models: dict[str, Path], tmp_path: Path, monkeypatch):
    from skadapt.pipeline import run_recipe
    from skadapt.recipe import validate_recipe
    from tests.support.suite_fixtures import write_tiny_suite

    monkeypatch.chdir(tmp_path)
    suite = write_tiny_suite(tmp_path / "suite")
    recipe = validate_recipe(
        {
            "name": "demo",
            "language": "slk",
            "base_model": str(tiny_models["unigram"]),
            "output_dir": str(tmp_path / "run"),
            "renorm": {"corpus": str(CORPUS), "samples": 60, "method": "r2"},
            "evaluate": {
                "tasks": [str(suite)],
                "models": ["base", "renorm"],
                "prompt_policy": {"STS": "query: "},
            },
        }
    )
    outcomes = run_recipe(recipe)
    assert [o.status for o in outcomes] == ["ran", "ran"]
    run = tmp_path / "run"
    _check_renormalized(
        tiny_models["unigram"], run / "renorm", "r2", split_sentences(CORPUS.read_text(), "sk")[:10]
    )
    report = json.loads((run / "evaluate" / "report.json").read_text())
    assert [m["model"] for m in report["models"]] == ["base", "renorm"]
    assert (run / "evaluate" / "report.md").is_file() and (run / ".cache" / "mteb").is_dir()
    assert outcomes[1].result.comparisons[0]["b"] == "renorm"
    assert [o.status for o in run_recipe(recipe)] == ["skipped", "skipped"]


@pytest.mark.slow
@pytest.mark.real_model
def test_real_e5_small_base_r1_r2_on_slovak_suite(e5_small: Path, tmp_path: Path):
    from skadapt.evaluate.config import EvaluateConfig
    from skadapt.evaluate.stage import run_evaluation
    from skadapt.tasks.selection import evaluation_texts

    exclude = evaluation_texts([str(SUITE_SK)])
    texts = split_sentences(CORPUS.read_text(), "sk")[:16]
    models = {"base": str(e5_small)}
    for method in ("r1", "r2"):
        out = tmp_path / method
        config = RenormConfig(corpus=str(CORPUS), method=method)
        result = renormalize(str(e5_small), out, config, exclude=exclude)
        assert result.samples > 150 and 0.5 < result.mu_norm < 1.0
        _check_renormalized(e5_small, out, method, texts)
        models[method] = str(out)
    policy = {
        t: "query: " for t in ("STS", "PairClassification", "Classification", "Clustering", "BitextMining")
    }
    table, items, _ = run_evaluation(
        EvaluateConfig(tasks=[str(SUITE_SK)], prompt_policy=policy),
        models,
        tmp_path / "eval",
        language="slk",
        cache_dir=tmp_path / "cache",
    )
    assert [r.model for r in table.rows] == ["base", "r1", "r2"]
    assert len(table.task_types) == 7 and len(items) == 2
    base = table.row("base")
    assert base.types["BitextMining"] > 80 and base.types["Retrieval"] > 60  # a real model on real Slovak
    print((tmp_path / "eval" / "report.md").read_text())


def _dev_sts(path: Path) -> Path:
    """A small STS dev set of corpus sentence pairs with fixed scores (the sentences are the fixture's)."""
    sentences = split_sentences(CORPUS.read_text(), "sk")[:24]
    rows = [
        {"sentence1": a, "sentence2": b, "score": float(i % 6)}
        for i, (a, b) in enumerate(zip(sentences[::2], sentences[1::2], strict=True))
    ]
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def test_dev_selection_scores_every_candidate_and_keeps_none_within_the_noise(
    tiny_models: dict[str, Path], tmp_path: Path
):
    from scipy.stats import spearmanr
    from sentence_transformers import SentenceTransformer

    from skadapt.tasks.config import DevSets

    dev_file = _dev_sts(tmp_path / "dev.jsonl")
    dev = DevSets(kind="sts", source=str(dev_file))
    out = tmp_path / "out"
    out.mkdir()
    config = RenormConfig(corpus=str(CORPUS), samples=80, min_chars=20)
    result = renormalize(str(tiny_models["unigram"]), out, config, seed=3, dev=dev)
    report = json.loads((out / "renorm_report.json").read_text())
    assert report["selection"]["choice"] == result.method and report["kept"] == (result.method != "none")
    assert list(report) == REPORT_KEYS and list(report["selection"]) == [
        "metrics",
        "candidates",
        "choice",
        "reason",
        "confidence",
        "replicates",
        "basis",
        "sets",
        "power",
    ]
    assert report["selection"]["metrics"] == {"sts-0": "sts-0_spearman_cosine"}
    keys = ["name", "scores", "mean", "dimension", "difference", "interval", "beats_none", "lower_bounds"]
    assert [list(c) for c in report["selection"]["candidates"]] == [keys] * 9
    assert [s["name"] for s in report["selection"]["sets"]] == ["sts-0"] and report["dimension"] == 32
    # none, r1 and r2 recomputed here from the embeddings and the saved mu
    rows = [json.loads(line) for line in dev_file.read_text().splitlines()]
    model = SentenceTransformer(str(tiny_models["unigram"]), device="cpu")
    first = model.encode([r["sentence1"] for r in rows], prompt="query: ")
    second = model.encode([r["sentence2"] for r in rows], prompt="query: ")
    mu = np.load(out / "renorm_mu.npy")
    expected = {}
    for name in ("none", "r1", "r2"):
        a, b = (e if name == "none" else renorm_formula(e, mu, name) for e in (first, second))
        cosine = np.sum(a * b, axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        expected[name] = spearmanr(cosine, [r["score"] for r in rows]).statistic
    candidates = {c["name"]: c for c in report["selection"]["candidates"]}
    assert list(candidates) == [
        "none", "r1", "r2", "proj-24", "proj-8", "r1+proj-24", "r1+proj-8", "r2+proj-24", "r2+proj-8"
    ]  # fmt: skip
    for name, value in expected.items():
        assert candidates[name]["mean"] == pytest.approx(value, abs=1e-5), name
    # 12 dev pairs: no difference is beyond the noise, and the report says so
    assert result.method == "none" and not result.kept and not (out / "modules.json").is_file()
    assert report["selection"]["reason"].startswith("no candidate beats none beyond the noise")
    for candidate in list(candidates.values())[1:]:
        low, high = candidate["interval"]
        assert low <= 0 and low <= high and not candidate["beats_none"]
        difference = candidate["mean"] - candidates["none"]["mean"]
        assert candidate["difference"] == pytest.approx(difference, abs=2e-6)


def test_a_stage_that_keeps_no_model_leaves_final_on_its_input(tiny_models: dict[str, Path], tmp_path: Path):
    """When renormalization loses on dev, the run's final (evaluate, publish) stays the previous model."""
    from skadapt.pipeline import run_recipe
    from skadapt.publish.target import PublishError, find_target
    from skadapt.recipe import validate_recipe
    from skadapt.stage import StageContext
    from skadapt.stages import STAGES
    from tests.support.suite_fixtures import write_tiny_suite

    seen: dict[str, str] = {}

    def renorm_lost(ctx: StageContext) -> dict[str, object]:
        report = {"method": "none", "kept": False, "corpus": str(CORPUS), "prompt": "none", "prompt_text": ""}
        report |= dict.fromkeys(("samples", "pool", "documents", "dropped_eval_overlap"), 1)
        report |= dict.fromkeys(("mu_norm", "mean_cos_to_mu_before", "mean_cos_to_mu_after"), 0.5)
        report |= {"dimension": 32, "seed": 42}
        (ctx.out_dir / "renorm_report.json").write_text(json.dumps(report))
        return {"method": "none", "kept": False}

    def evaluate_sees(ctx: StageContext) -> dict[str, object]:
        seen.update(ctx.models)
        return {}

    base = str(tiny_models["unigram"])
    recipe = validate_recipe(
        {
            "name": "kept",
            "language": "slk",
            "base_model": base,
            "output_dir": str(tmp_path / "run"),
            "renorm": {"corpus": str(CORPUS)},
            "evaluate": {"tasks": [str(write_tiny_suite(tmp_path / "suite"))], "models": ["base", "renorm"]},
        }
    )
    runners = {"renorm": renorm_lost, "evaluate": evaluate_sees}
    run_recipe(recipe, runners=runners)
    assert seen["final"] == seen["renorm"] == seen["base"] == base
    seen.clear()
    assert [o.status for o in run_recipe(recipe, runners=runners)] == ["skipped", "skipped"]
    run_recipe(recipe, runners=runners, only="evaluate")
    assert seen["final"] == base  # also when the renorm stage is read back from its manifest
    with pytest.raises(PublishError, match="no finished stage that made a model"):
        find_target(tmp_path / "run", stages=STAGES)


def test_renorm_select_dev_needs_dev_sets() -> None:
    from skadapt.recipe import RecipeError, validate_recipe

    recipe = {
        "name": "x",
        "language": "slk",
        "base_model": "m",
        "renorm": {"corpus": "c.txt", "select": "dev"},
    }
    with pytest.raises(RecipeError, match=r"renorm\.dev or finetune\.dev"):
        validate_recipe(recipe)
    recipe["renorm"]["dev"] = {"kind": "sts", "source": "dev.jsonl"}
    assert validate_recipe(recipe).run_facts().dev is not None


def test_the_command_drops_the_excluded_suites_texts_from_its_dev_sets(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    """`skadapt renorm --exclude-tasks SUITE`: dev rows holding a text of the suite never choose the method;
    the report counts them per task."""
    dev_file = _dev_sts(tmp_path / "dev.jsonl")
    rows = [json.loads(line) for line in dev_file.read_text().splitlines()]
    test_sentence = json.loads((SUITE_SK.parent / "sts.jsonl").read_text().splitlines()[0])["sentence1"]
    rows[0]["sentence1"] = test_sentence
    dev_file.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    args = ["renorm", str(tiny_models["unigram"]), "--out", str(out), "--corpus", str(CORPUS)]
    args += [
        "--samples",
        "40",
        "--min-chars",
        "20",
        "--set",
        "dev.kind=sts",
        "--set",
        f"dev.source={dev_file}",
    ]
    result = CliRunner().invoke(app, [*args, "--language", "slk", "--exclude-tasks", str(SUITE_SK)])
    assert result.exit_code == 0, result.output
    (dev,) = json.loads((out / "renorm_report.json").read_text())["selection"]["sets"]
    assert (dev["rows"], dev["examples"]) == (len(rows), len(rows) - 1)
    assert dev["contamination"]["by_task"] == {"SkTestSTS": 1} and dev["contamination"]["rows"] == 1
