"""mteb's ``MTEB(slk, v1)`` benchmark read from the local Hub (tests/support/hub_server.py,
tests/support/hub_skmteb.py).

The real ``mteb``/``datasets``/``huggingface_hub`` clients run in a subprocess whose ``HF_ENDPOINT`` is the
local Hub: every task loads its fixture repository at the revision mteb pins, a tiny sentence-transformers
model gets a score on each task, and skadapt's contamination reader gets each task's evaluation texts.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from tests.support.hub_fixtures import HF_TOKEN, HUB_DATA, HubClient
from tests.support.hub_server import HubStore, LocalHub
from tests.support.hub_skmteb import (
    BENCHMARK,
    SHARED_REPOS,
    TASK_SAMPLES,
    repo_dir,
    skmteb_repos,
    write_skmteb_repos,
)

CLIENT_CODE = """
import math
import mteb
from sentence_transformers import SentenceTransformer
from skadapt.tasks.contamination import task_test_texts

model = SentenceTransformer(MODEL, device="cpu")
tasks = mteb.get_benchmark(BENCHMARK).tasks
emit("datasets", {t.metadata.name: t.metadata.dataset for t in tasks})
result = mteb.evaluate(
    model, tasks, cache=None, co2_tracker=False, show_progress_bar=False,
    encode_kwargs={"batch_size": 32, "show_progress_bar": False},
)
emit("scores", {r.task_name: r.get_score() for r in result.task_results})
emit("texts", {t.metadata.name: task_test_texts(t) for t in mteb.get_benchmark(BENCHMARK).tasks})
"""


def test_fixture_repos_match_their_generator(tmp_path: Path) -> None:
    """The committed repositories hold what tests/support/hub_skmteb.py writes, and nothing else."""
    import pyarrow.parquet as pq

    written = write_skmteb_repos(tmp_path)
    for repo in skmteb_repos():
        fresh = sorted(p.relative_to(tmp_path) for p in repo_dir(tmp_path, repo).rglob("*") if p.is_file())
        committed = sorted(
            p.relative_to(HUB_DATA) for p in repo_dir(HUB_DATA, repo).rglob("*") if p.is_file()
        )
        assert committed == fresh, repo.repo_id
    settings = sorted(p.relative_to(HUB_DATA) for p in (HUB_DATA / "datasets").glob("*/*/settings.json"))
    assert (
        settings
        == sorted(  # the gated repositories, and only they, have their settings committed
            Path("datasets", repo.repo_id, "settings.json") for repo in skmteb_repos() if repo.gated
        )
        == [Path("datasets/natalia-nk/NLI-SK-annotated/settings.json")]
    )
    for path in written:
        committed = HUB_DATA / path.relative_to(tmp_path)
        if (
            path.suffix == ".parquet"
        ):  # the bytes depend on the pyarrow version, the table and features do not
            assert pq.read_table(committed).equals(pq.read_table(path), check_metadata=True), committed
        else:
            assert committed.read_bytes() == path.read_bytes(), committed
    size = sum(p.stat().st_size for repo in skmteb_repos() for p in repo_dir(HUB_DATA, repo).rglob("*"))
    assert size < 1_500_000


def test_every_benchmark_task_has_a_repo_at_the_pinned_revision() -> None:
    import mteb

    store = HubStore()
    store.load(HUB_DATA)
    pinned = {repo.repo_id: repo.revision for repo in skmteb_repos()} | SHARED_REPOS
    tasks = mteb.get_benchmark(BENCHMARK).tasks
    assert sorted(t.metadata.name for t in tasks) == sorted(TASK_SAMPLES)
    for task in tasks:
        path, revision = task.metadata.dataset["path"], task.metadata.dataset["revision"]
        assert pinned.get(path) == revision, task.metadata.name
        served = store.get("dataset", path)
        assert served is not None and served.refs["main"] == revision, path


@pytest.fixture(scope="module")
def benchmark_run(local_hub: LocalHub, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One client run over the whole benchmark: per-task datasets, scores and texts, and the request log."""
    from tests.support.tiny_models import build_tiny_model

    model = build_tiny_model(tmp_path_factory.mktemp("skmteb-model") / "tiny", "unigram")
    local_hub.clear_log()
    home = tmp_path_factory.mktemp("skmteb-client")
    client = HubClient(local_hub, home, token=HF_TOKEN)  # SlovakNLI's repository is gated
    header = f"MODEL, BENCHMARK = {str(model)!r}, {BENCHMARK!r}\n"
    result = client.run(header + CLIENT_CODE, timeout=600)
    result["requests"] = [r.path for r in local_hub.requests]
    result["unexpected"] = list(local_hub.unexpected)
    local_hub.clear_log()
    return result


@pytest.mark.slow
def test_mteb_scores_every_task_from_the_local_hub(benchmark_run: dict[str, Any]) -> None:
    assert benchmark_run["unexpected"] == []  # every request had a route
    scores = benchmark_run["scores"]
    assert sorted(scores) == sorted(TASK_SAMPLES)
    assert all(isinstance(s, float) and math.isfinite(s) for s in scores.values()), scores
    requested = benchmark_run["requests"]
    for name, dataset in benchmark_run["datasets"].items():  # each task read its repository's pinned commit
        repo = f"/datasets/{dataset['path']}/"
        assert any(repo in path and dataset["revision"] in path for path in requested), name
        commits = {
            path.split(repo, 1)[1].split("/")[1] for path in requested if "/resolve/" in path and repo in path
        }
        assert commits <= {dataset["revision"], "main"}, (name, commits)


@pytest.mark.slow
@pytest.mark.parametrize("task", list(TASK_SAMPLES))
def test_contamination_reader_reads_each_tasks_texts(benchmark_run: dict[str, Any], task: str) -> None:
    assert TASK_SAMPLES[task] in benchmark_run["texts"][task]
