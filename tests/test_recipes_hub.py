"""The shipped Slovak recipe, run for a user against a Hub: every ``hub:`` source, the model download, the
preflight and the contamination check go through the real clients to the local Hub
(tests/support/hub_server.py).

Only sizes are overridden (read limits, samples, steps); the base model is served as
``intfloat/multilingual-e5-small`` (a tiny model, for time); the evaluation is the whole ``MTEB(slk, v1)``
served at the revisions mteb pins.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.hub_fixtures import E5_REVISION, FINEWEB2_REVISION, HF_TOKEN, HubClient
from tests.support.hub_server import LocalHub


@pytest.fixture
def hub_client(hub: LocalHub, tmp_path: Path) -> HubClient:
    """A user with a token that accepted the gated SlovakNLI dataset's terms (``HF_TOKEN``)."""
    return HubClient(hub, tmp_path, token=HF_TOKEN)


SIZES = [
    "trim.corpus.max_documents=20",
    "trim.vocab_size=150",
    "finetune.max_steps=2",
    "finetune.batch_size=2",
    "finetune.save_steps=1",
    "finetune.dev.steps=1",
    "finetune.max_seq_length=128",  # the tiny model has 130 positions; its trimmed vocabulary is 150 tokens
    "renorm.samples=20",
    "renorm.min_chars=20",
    "renorm.corpus.max_documents=20",
]
RUN = """
import json, sys
from typer.testing import CliRunner
from skadapt.cli import app

args = json.loads(sys.argv[1]) if len(sys.argv) > 1 else ARGS
result = CliRunner().invoke(app, args, env={"COLUMNS": "250"})
emit("exit_code", result.exit_code)
emit("output", result.output)
"""


def _train(
    client: HubClient, run: Path, *extra: str, flags: tuple[str, ...] = (), timeout: float = 600
) -> dict[str, object]:
    sets = [arg for item in [*SIZES, f"output_dir={run}", *extra] for arg in ("--set", item)]
    args = ["train", "recipes/e5_sk_small.yaml", *sets, *flags]
    return client.run(f"ARGS = {json.dumps(args)}\n" + RUN, timeout=timeout)


@pytest.mark.slow
def test_e5_sk_small_runs_against_the_hub(hub_client: HubClient, hub_e5: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = _train(hub_client, run, "evaluate.bootstrap=20", timeout=900)
    assert result["exit_code"] == 0, result["output"]
    output = str(result["output"])
    assert "preflight: " in output and "inputs OK" in output  # the preflight went through the Hub too
    trim = json.loads((run / "trim" / "trim_report.json").read_text())
    assert trim["source"].startswith("hub:HuggingFaceFW/fineweb-2:slk_Latn:train")
    sklep_commit = "10549a8c63542e6a0db4fcf5fcdc29b3e1b8c4e9"
    fineweb2 = {"hub:HuggingFaceFW/fineweb-2:slk_Latn:train": FINEWEB2_REVISION}  # read at main: its commit
    sklep = "hub:slovak-nlp/sklep:{}:validation@10549a8c63542e6a0db4fcf5fcdc29b3e1b8c4e9"
    dev = {sklep.format(config): sklep_commit for config in ("question-answering", "sts", "nli", "rte")}
    for stage, read in (("trim", fineweb2), ("renorm", {**fineweb2, **dev})):  # renorm chooses on dev
        sources = json.loads((run / stage / "manifest.json").read_text())["sources"]
        assert {spec: entry["commit"] for spec, entry in sources.items()} == read
    for stage in ("trim", "finetune", "renorm", "evaluate"):  # the base model is a Hub read too
        model = json.loads((run / stage / "manifest.json").read_text())["base_model_source"]
        assert model == {
            "repo": "intfloat/multilingual-e5-small",
            "revision": "main",
            "commit": E5_REVISION,
            "resolved_by": "hub",
        }
    finetune_sources = json.loads((run / "finetune" / "manifest.json").read_text())["sources"]
    assert len(finetune_sources) == 8 and all(  # 4 train and 4 dev splits
        e["commit"] == sklep_commit for e in finetune_sources.values()
    )
    assert dev.keys() <= finetune_sources.keys()
    training = json.loads((run / "finetune" / "training_report.json").read_text())
    assert [d["name"] for d in training["datasets"]] == ["skquad", "nli", "rte", "sts"]
    contamination = training["contamination"]
    assert contamination["action"] == "drop" and contamination["status"] == "checked"
    assert set(contamination["dropped"]) == {"skquad", "nli", "rte", "sts"}
    assert contamination["over_threshold"] == []
    _assert_chosen_on_skleps_validation_splits(run, training)
    report = json.loads((run / "evaluate" / "report.json").read_text())
    kept = json.loads((run / "renorm" / "renorm_report.json").read_text())["kept"]
    # a renormalization that lost on dev keeps its input: the same model as finetune, scored once
    models = ["base", "trim", "finetune"] + (["renorm"] if kept else [])
    assert [m["model"] for m in report["models"]] == models
    assert all(len(m["tasks"]) == 31 for m in report["models"])  # the whole MTEB(slk, v1), from the Hub
    assert hub_client.hub.served("/api/models/intfloat/multilingual-e5-small")
    assert hub_client.hub.served("/datasets/slovak-nlp/sklep/resolve/10549a8c")
    again = _train(hub_client, run, "evaluate.bootstrap=20")
    assert again["exit_code"] == 0 and str(again["output"]).count("up to date, skipped") == 4


DEV_CONFIGS = {"retrieval": "question-answering", "sts": "sts", "nli": "nli", "rte": "rte"}
"""The recipe's dev set kinds -> the skLEP config whose validation split each reads, in recipe order."""
DEV_EXAMPLES = {"retrieval": 4, "sts": 5, "nli": 3, "rte": 4}
"""Examples each scores from the fixture's validation splits: QA questions, STS pairs less the one that
holds a SlovakSTS test sentence, NLI triplets (one per premise), RTE pairs."""


def _assert_chosen_on_skleps_validation_splits(run: Path, training: dict[str, Any]) -> None:
    """The best checkpoint and renormalization were chosen on skLEP's validation splits, read from the Hub,
    without the dev row that holds an evaluation test text; renorm's choice is recorded with its dev
    scores in renorm_report.json and the stage manifest."""
    from tests.support.hub_fixtures import SKLEP_REVISION, sklep_rows

    sources = [f"hub:slovak-nlp/sklep:{c}:validation@{SKLEP_REVISION}" for c in DEV_CONFIGS.values()]
    dev = training["dev"]
    assert [(s["kind"], s["source"], s["examples"]) for s in dev["sets"]] == list(
        zip(DEV_CONFIGS, sources, DEV_EXAMPLES.values(), strict=True)
    )
    assert [s["rows"] for s in dev["sets"]] == [
        len(sklep_rows(c, "validation")) for c in DEV_CONFIGS.values()
    ]
    dropped = {s["kind"]: s["contamination"]["by_task"] for s in dev["sets"]}
    assert dropped == {"retrieval": {}, "sts": {"SlovakSTS": 1}, "nli": {}, "rte": {}}
    assert dev["metric"] == "sequential_score" and [h["step"] for h in dev["history"]] == [1, 2]
    best = max(dev["history"], key=lambda h: h["score"])  # the checkpoint kept is the best on dev
    assert dev["best_checkpoint"].endswith(f"checkpoint-{best['step']}")
    assert dev["final"]["sequential_score"] == pytest.approx(best["score"], abs=1e-6)
    renorm = json.loads((run / "renorm" / "renorm_report.json").read_text())
    selection = renorm["selection"]
    assert [(s["kind"], s["source"], s["examples"]) for s in selection["sets"]] == [
        (s["kind"], s["source"], s["examples"]) for s in dev["sets"]
    ]
    assert selection["metrics"] == {
        "retrieval-0": "retrieval-0_cosine_ndcg@10",
        "sts-1": "sts-1_spearman_cosine",
        "nli-2": "nli-2_cosine_accuracy",
        "rte-3": "rte-3_cosine_ap",
    }
    candidates = {c["name"]: c for c in selection["candidates"]}
    assert list(candidates)[:3] == ["none", "r1", "r2"]  # then the corpus-basis projections
    assert {n.split("+")[-1].split("-")[0] for n in list(candidates)[3:]} == {"proj"}
    for candidate in candidates.values():
        assert set(candidate["scores"]) == set(selection["metrics"])
        assert candidate["mean"] == pytest.approx(sum(candidate["scores"].values()) / 4, abs=1e-6)
    winners = {n: c["mean"] for n, c in candidates.items() if c["beats_none"]}  # beyond the noise only
    assert selection["choice"] == (max(winners, key=winners.__getitem__) if winners else "none")
    assert renorm["method"] == selection["choice"] and renorm["kept"] == (selection["choice"] != "none")
    assert (run / "renorm" / "modules.json").is_file() == renorm["kept"]
    manifest = json.loads((run / "renorm" / "manifest.json").read_text())
    assert manifest["result"]["selection"] == selection and manifest["result"]["method"] == renorm["method"]


@pytest.mark.slow
def test_a_hub_outage_mid_run_is_one_message_and_the_run_resumes(
    hub_client: HubClient, hub_e5: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    hub_client.hub.outage("down", trigger="/datasets/slovak-nlp/sklep/")  # after trim, as fine-tuning reads
    failed = _train(hub_client, run, "evaluate=null", flags=("--no-check",))
    assert failed["exit_code"] == 1, failed["output"]
    message = str(failed["output"])
    assert "stage finetune failed: dataset 'skquad': cannot open hub:slovak-nlp/sklep" in message
    assert "run the command again to resume" in message
    assert (run / "trim" / "manifest.json").is_file() and not (run / "finetune").exists()
    assert not [p for p in run.iterdir() if p.name.startswith(".finetune.tmp")]  # nothing half-written
    hub_client.hub.restore()
    resumed = _train(hub_client, run, "evaluate=null")
    assert resumed["exit_code"] == 0, resumed["output"]
    assert "stage trim: up to date, skipped" in str(resumed["output"])
    assert (run / "renorm" / "manifest.json").is_file()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (
            "finetune.datasets.1.source=hub:slovak-nlp/sklep:nlx:train@10549a8c63542e6a0db4fcf5fcdc29b3e1b8c4e9",
            "nlx",
        ),
        (
            'finetune.datasets.2.columns={"premise": "text_one", "hypothesis": "text2", "label": "label"}',
            "text_one",
        ),
        ('finetune.datasets.1.label_map={"1": "other"}', "ClassLabel name 'neutral' (label 1)"),
    ],
    ids=["config", "column", "label_map"],
)
def test_preflight_names_a_bad_hub_input_within_seconds(
    hub_client: HubClient, hub_e5: Path, tmp_path: Path, override: str, expected: str
) -> None:
    import time

    start = time.perf_counter()
    result = _train(hub_client, tmp_path / "run", override, flags=("--check",))
    assert time.perf_counter() - start < 60  # a fresh process: imports included
    output = str(result["output"])
    assert result["exit_code"] == 1 and expected in output and "1 of " in output, output
    assert not (tmp_path / "run" / "trim").exists()


@pytest.mark.slow
def test_check_passes_and_shows_each_hub_sources_commit(
    hub_client: HubClient, hub_e5: Path, tmp_path: Path
) -> None:
    from tests.support.hub_fixtures import FINEWEB2_REVISION

    result = _train(hub_client, tmp_path / "run", flags=("--check",))
    output = " ".join(str(result["output"]).split())  # the table's cells wrap
    assert result["exit_code"] == 0, output
    assert f"main is commit {FINEWEB2_REVISION}: pin it with" in output  # FineWeb2 is not pinned
    assert "commit 10549a8c6354" in output  # skLEP: pinned
    # the dev examples that hold an evaluation test text, before any stage: the STS one of SlovakSTS
    assert "dev examples with an evaluation test text" in output
    assert "│ finetune.dev.sets.1 sts │ 6 │ 1 │ SlovakSTS 1 │" in output  # 6 examples, 1 dropped
    assert "contamination the finetune stage will find (action: drop)" in output
    assert not (tmp_path / "run" / "trim").exists()


GATED = "natalia-nk/NLI-SK-annotated"


@pytest.mark.slow
@pytest.mark.parametrize("token", [None, "hf_not_accepted"], ids=["no_token", "terms_not_accepted"])
def test_a_gated_dataset_stops_the_run_before_any_stage(
    hub: LocalHub, hub_e5: Path, tmp_path: Path, token: str | None
) -> None:
    """SlovakNLI's dataset is gated: without a token (401), or with one that has not accepted its terms
    (403), the preflight of `skadapt train` names it in one line with the page to accept the terms, how to
    give a token and evaluate.exclude_tasks, exits 1 and starts no stage. One auth-check request per Hub
    dataset repository of the run."""
    hub.denied_tokens.add("hf_not_accepted")
    client = HubClient(hub, tmp_path, token=token)
    result = _train(client, tmp_path / "run")
    output = str(result["output"])
    assert result["exit_code"] == 1, output
    problems = [line for line in output.splitlines() if line.startswith("problem: ")]
    assert [p for p in problems if "gated" in p.split(":")[1]] == problems  # every problem is a gated one
    assert len(problems) == 1 and problems[0].startswith(f"problem: gated dataset {GATED}: "), problems
    line = problems[0]
    assert f"https://huggingface.co/datasets/{GATED}" in line
    assert "evaluate.exclude_tasks: [SlovakNLI]" in line
    if token is None:
        assert "no token is given" in line and "HF_TOKEN" in line and "hf auth login" in line
    else:
        assert "the token in use has no access" in line
    assert "no stage started" in output
    assert not (tmp_path / "run").exists() or not any((tmp_path / "run").iterdir())
    checked = hub.served("/auth-check")
    assert len(checked) == len({r.path for r in checked})  # one request per repository
    assert f"/api/datasets/{GATED}/auth-check" in {r.path for r in checked}


PREFLIGHT = """
from skadapt.preflight import preflight
from skadapt.recipe import load_recipe

recipe = load_recipe("recipes/e5_sk_small.yaml", SETS)
emit("checks", [(c.input, c.checked, c.problem) for c in preflight(recipe)])
"""


@pytest.mark.slow
@pytest.mark.parametrize("how", ["token", "exclude_tasks"])
def test_a_token_or_excluding_the_task_passes_the_gated_check(
    hub: LocalHub, hub_e5: Path, tmp_path: Path, how: str
) -> None:
    """With a token the gated dataset opens; without one, evaluate.exclude_tasks: [SlovakNLI] leaves it out
    of the evaluation and the contamination check, so the run reads it nowhere and the preflight says the
    averages are over 30 of 31 tasks."""
    sets = [*SIZES, f"output_dir={tmp_path / 'run'}"]
    if how == "exclude_tasks":
        sets.append('evaluate.exclude_tasks=["SlovakNLI"]')
    client = HubClient(hub, tmp_path, token=HF_TOKEN if how == "token" else None)
    checks = client.run(f"SETS = {json.dumps(sets)}\n" + PREFLIGHT)["checks"]
    assert [c for c in checks if c[2] is not None] == [], checks
    hub_line = next(c for c in checks if c[0] == "Hub datasets")
    assert "none gated beyond the credentials" in hub_line[1]
    from tests.support.hub_fixtures import SKLEP_REVISION

    dev = [c for c in checks if c[0].startswith("finetune.dev.")]  # each dev set, as the training sources
    assert [c[0] for c in dev] == [
        f"finetune.dev.sets.{i} {kind}: hub:slovak-nlp/sklep:{config}:validation@{SKLEP_REVISION}"
        for i, (kind, config) in enumerate(DEV_CONFIGS.items())
    ]
    assert all(c[1].startswith("opens, columns, labels (columns ") for c in dev)
    assert all(c[1].endswith(f"; commit {SKLEP_REVISION[:12]})") for c in dev)  # pinned, resolved
    assert "labels entailment, neutral, contradiction" in dev[2][1]
    assert "labels entailment, not_entailment" in dev[3][1]
    readers = {r.path for r in hub.served("/auth-check")}
    assert (f"/api/datasets/{GATED}/auth-check" in readers) == (how == "token")
    if how == "exclude_tasks":
        excluded = next(c for c in checks if c[0] == "evaluate.exclude_tasks SlovakNLI")
        assert "averages over 30 of 31 tasks" in excluded[1]
