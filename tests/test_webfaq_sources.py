"""The Slovak recipes' optional web-FAQ section, proven on the local Hub against imitations of the real
repositories' layouts (:mod:`tests.support.hub_webfaq`): WebFAQ's ``slk`` config loads as the recipe
writes it, its pair with an SkMTEB test text is dropped, and MQA loads from the Hub's Parquet conversion
while its loading script on ``main`` is refused by ``datasets``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.support.hub_fixtures import REPO_ROOT, HubClient
from tests.support.hub_server import LocalHub
from tests.support.hub_skmteb import WEBFAQ_RETRIEVAL
from tests.support.hub_webfaq import (
    MQA_ID,
    MQA_PARQUET,
    PARQUET_EXPORT,
    WEBFAQ_ID,
    WEBFAQ_REVISION,
    mqa_rows,
    webfaq_rows,
    write_webfaq_repos,
)

RECIPES = [REPO_ROOT / "recipes" / "e5_sk_small.yaml", REPO_ROOT / "recipes" / "e5_sk_large.yaml"]
START, END = "# >>> web-faq", "# <<< web-faq"


def web_faq_entries(recipe: Path) -> list[dict]:
    """The recipe's commented web-FAQ dataset entries, uncommented."""
    lines = recipe.read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip().startswith(START))
    last = next(i for i, line in enumerate(lines) if line.strip().startswith(END))
    entries = [line.strip()[2:] for line in lines[first + 1 : last] if line.strip().startswith("# ")]
    code = [line for line in entries if line.startswith(("- ", "  "))]
    return yaml.safe_load("\n".join(code))


@pytest.fixture(scope="module")
def web_faq_hub(local_hub: LocalHub, tmp_path_factory: pytest.TempPathFactory) -> LocalHub:
    root = tmp_path_factory.mktemp("web-faq-hub")
    write_webfaq_repos(root)
    local_hub.store.load(root)
    return local_hub


def test_the_recipes_carry_the_same_commented_web_faq_entry() -> None:
    from skadapt.train.config import FinetuneDataset

    small, large = (web_faq_entries(recipe) for recipe in RECIPES)
    assert small == large
    [entry] = [FinetuneDataset.model_validate(e) for e in small]
    assert entry.source == f"hub:{WEBFAQ_ID}:slk:default" and entry.hard_negatives is not None
    assert entry.hard_negatives.strategy == "mined" and entry.hard_negatives.relative_margin == 0.05


@pytest.mark.slow
def test_web_faq_sources_load_from_the_local_hub(
    web_faq_hub: LocalHub, hub: LocalHub, tmp_path: Path
) -> None:
    client = HubClient(hub, tmp_path)  # ``hub`` fails the test on any request the local Hub has no route for
    entries = web_faq_entries(RECIPES[0])
    result = client.run(
        f"""
import datasets
from skadapt.sources import read_rows, resolve_commit
from skadapt.tasks.contamination import gather_test_texts, overlapping_rows
from skadapt.train.config import FinetuneDataset
from skadapt.train.datasets import build_task_dataset
[entry] = [FinetuneDataset.model_validate(e) for e in {entries!r}]
built = build_task_dataset(entry)
emit("pairs", [built.data["anchor"], built.data["positive"]])
emit("commit", resolve_commit(entry.source).commit)
test_texts, unreachable = gather_test_texts(["WebFAQRetrieval"], False, language="slk")
keep, report = overlapping_rows({{"webfaq": built.rows()}}, test_texts)
emit("dropped", report["webfaq"])
mqa = "hub:{MQA_ID}:sk-faq-question:train@{PARQUET_EXPORT}"
emit("mqa", [row for _, row in read_rows(mqa).rows])
emit("mqa_commit", resolve_commit(mqa).commit)
try:
    datasets.load_dataset("{MQA_ID}", "sk-faq-question", split="train", streaming=True)
except RuntimeError as error:
    emit("script", str(error))
""",
        timeout=240,
    )
    rows = webfaq_rows()
    assert result["pairs"] == [[r["question"] for r in rows], [r["answer"] for r in rows]]
    assert result["commit"] == WEBFAQ_REVISION
    # the pair whose question is a WebFAQRetrieval test query is what the recipe's contamination drop removes
    assert result["dropped"]["dropped"] == 1 and result["dropped"]["by_task"] == {"WebFAQRetrieval": 1}
    assert WEBFAQ_RETRIEVAL[0][3] in rows[-1]["question"]
    assert result["mqa"] == mqa_rows("sk-faq-question")  # the sk folder only, both shards, nested answers
    assert result["mqa_commit"] == MQA_PARQUET
    assert "Dataset scripts are no longer supported, but found mqa.py" in result["script"]
