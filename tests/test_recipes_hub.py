"""The shipped Slovak recipe, run for a user against a Hub: every ``hub:`` source, the model download, the
preflight and the contamination check go through the real clients to the local Hub (tests/hub_server.py).

Only sizes are overridden (read limits, samples, steps); the base model is served as
``intfloat/multilingual-e5-small`` (a tiny model, for time); the evaluation is the whole ``MTEB(slk, v1)``
served at the revisions mteb pins.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import hub_fixtures
from tests.hub_fixtures import HF_TOKEN, HubClient
from tests.hub_server import LocalHub

local_hub, hub, hub_e5 = hub_fixtures.local_hub, hub_fixtures.hub, hub_fixtures.hub_e5


@pytest.fixture
def hub_client(hub: LocalHub, tmp_path: Path) -> HubClient:
    """A user with a token that accepted the gated SlovakNLI dataset's terms (``HF_TOKEN``)."""
    return HubClient(hub, tmp_path, token=HF_TOKEN)


SIZES = [
    "trim.max_documents=20",
    "trim.vocab_size=150",
    "finetune.max_steps=2",
    "finetune.batch_size=2",
    "finetune.save_steps=1",
    "renorm.samples=20",
    "renorm.min_chars=20",
    "renorm.max_documents=20",
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
    training = json.loads((run / "finetune" / "training_report.json").read_text())
    assert [d["name"] for d in training["datasets"]] == ["skquad", "nli", "rte", "sts"]
    contamination = training["contamination"]
    assert contamination["action"] == "drop" and contamination["status"] == "checked"
    assert set(contamination["dropped"]) == {"skquad", "nli", "rte", "sts"}
    assert contamination["over_threshold"] == []
    report = json.loads((run / "evaluate" / "report.json").read_text())
    assert [m["model"] for m in report["models"]] == ["base", "trim", "finetune", "renorm"]
    assert all(len(m["tasks"]) == 31 for m in report["models"])  # the whole MTEB(slk, v1), from the Hub
    assert hub_client.hub.served("/api/models/intfloat/multilingual-e5-small")
    assert hub_client.hub.served("/datasets/slovak-nlp/sklep/resolve/10549a8c")
    again = _train(hub_client, run, "evaluate.bootstrap=20")
    assert again["exit_code"] == 0 and str(again["output"]).count("up to date, skipped") == 4


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
    from tests.hub_fixtures import FINEWEB2_REVISION

    result = _train(hub_client, tmp_path / "run", flags=("--check",))
    output = " ".join(str(result["output"]).split())  # the table's cells wrap
    assert result["exit_code"] == 0, output
    assert f"main is commit {FINEWEB2_REVISION}: pin it with" in output  # FineWeb2 is not pinned
    assert "commit 10549a8c6354" in output  # skLEP: pinned
    assert "contamination the finetune stage will find (action: drop)" in output
    assert not (tmp_path / "run" / "trim").exists()
