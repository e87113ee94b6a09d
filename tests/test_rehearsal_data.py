"""The cost rehearsal's generator (benchmark/rehearsal_data.py) at a tiny scale, read back through the real
``datasets``/``mteb`` clients from the local Hub: every skLEP config and split has its scaled row count,
FineWeb2 streams its scaled documents, and mteb's tasks load their scaled test sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark import rehearsal_data
from tests.support.hub_fixtures import FINEWEB2_REVISION, HF_TOKEN, SKLEP_REVISION, HubClient
from tests.support.hub_server import HubStore, LocalHub

SCALE = 0.002

CLIENT_CODE = """
import datasets, mteb
from skadapt.tasks.contamination import task_test_texts

sizes = {}
for config in ("question-answering", "nli", "sts", "rte"):
    loaded = datasets.load_dataset("slovak-nlp/sklep", config, revision=SKLEP)
    sizes[config] = {split: loaded[split].num_rows for split in ("train", "validation", "test")}
    if config == "nli":
        emit("nli_labels", loaded["train"].features["label"].names)
emit("sklep", sizes)
stream = datasets.load_dataset(
    "HuggingFaceFW/fineweb-2", "slk_Latn", split="train", streaming=True, revision=FINEWEB
)
lengths = [len(row["text"]) for row in stream]
emit("fineweb", {"documents": len(lengths), "mean_chars": sum(lengths) / len(lengths)})
tasks = mteb.get_tasks(tasks=TASKS, languages=["slk"])
emit("texts", {t.metadata.name: len(task_test_texts(t)) for t in tasks})
"""

TASKS = ["SlovakSTS", "SKQuadRetrieval", "Tatoeba", "SlovakRTE", "PravdaSKTagClustering"]

pytestmark = pytest.mark.slow  # the module's tree takes seconds to generate


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rehearsal") / "hub"
    rehearsal_data.write_all(root, SCALE, buffer_chars=300_000)
    return root


def test_generated_tree_reads_back_at_its_scaled_sizes(tree: Path, tmp_path: Path) -> None:
    store = HubStore()
    store.load(tree)
    with LocalHub(store) as hub:
        code = f"SKLEP, FINEWEB, TASKS = {SKLEP_REVISION!r}, {FINEWEB2_REVISION!r}, {TASKS!r}\n" + CLIENT_CODE
        result = HubClient(hub, tmp_path, token=HF_TOKEN).run(code, timeout=600)
        assert not hub.unexpected
    expected = {
        config: {
            split: max(1, round(n * SCALE))
            for split, n in zip(("train", "validation", "test"), sizes, strict=True)
        }
        for config, sizes in rehearsal_data.SKLEP_SIZES.items()
    }
    assert result["sklep"] == expected
    assert result["nli_labels"] == ["entailment", "neutral", "contradiction"]
    fineweb = result["fineweb"]
    assert fineweb["documents"] == round(rehearsal_data.FINEWEB_DOCUMENTS * SCALE)
    assert 1_500 < fineweb["mean_chars"] < 5_000  # log-normal around 3,000 characters
    stats = rehearsal_data.task_stats()
    texts = result["texts"]
    # every pair of an STS/bitext test set contributes two texts
    assert texts["SlovakSTS"] == 2 * round(stats["SlovakSTS"]["test"]["num_samples"] * SCALE)
    assert texts["Tatoeba"] == 2 * round(stats["Tatoeba"]["test"]["num_samples"] * SCALE)
    assert texts["SlovakRTE"] == 2 * expected["rte"]["test"]
    skquad = stats["SKQuadRetrieval"]["test"]  # documents with their titles, and the queries
    documents, queries = (round(skquad[key] * SCALE) for key in ("num_documents", "num_queries"))
    assert texts["SKQuadRetrieval"] == 2 * documents + queries
    assert texts["PravdaSKTagClustering"] == round(
        stats["PravdaSKTagClustering"]["test"]["num_samples"] * SCALE
    )


def test_a_finished_tree_is_reused_and_another_scale_refused(tree: Path) -> None:
    summary = json.loads((tree / "complete.json").read_text())
    assert rehearsal_data.write_all(tree, SCALE) == summary  # cached: nothing rewritten
    with pytest.raises(SystemExit, match="another rehearsal tree"):
        rehearsal_data.write_all(tree, SCALE * 2)
