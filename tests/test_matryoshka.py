"""Matryoshka fine-tuning (``finetune.matryoshka_dims``) on the tiny model: every task loss trains at each
dimension, the anchor at the full one, the model records its dimensions, bad dimensions fail clearly."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from skadapt.modeldir import matryoshka_dims_of
from skadapt.recipe import RecipeError, validate_recipe
from skadapt.train.matryoshka import MatryoshkaError
from skadapt.train.stage import REPORT, finetune
from tests.test_finetune_train import DATA, recipe_data

CORPUS = Path(__file__).parent / "data" / "sk_corpus.txt"
STS = DATA / "sk_train_sts.jsonl"


def _train(base: Path, tmp_path: Path, name: str, **finetune_options: Any) -> Path:
    out = tmp_path / name
    out.mkdir()
    data = recipe_data(base, tmp_path / f"run-{name}", **finetune_options)
    finetune(validate_recipe(data).context("finetune", str(base), out, tmp_path / f"work-{name}"))
    return out


@pytest.mark.slow
def test_matryoshka_training_records_its_dims_and_sums_the_loss_over_them(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    base = tiny_models["unigram"]
    sts_only = {
        "datasets": [{"name": "sts", "kind": "sts", "source": str(STS), "max_samples": 48}],
        "epochs": 1,
    }
    plain = _train(base, tmp_path, "plain", **sts_only)
    nested = _train(base, tmp_path, "mrl", matryoshka_dims=[8, 4], **sts_only)  # 32 (full) added first

    report = json.loads((nested / REPORT).read_text(encoding="utf-8"))
    plain_report = json.loads((plain / REPORT).read_text(encoding="utf-8"))
    assert report["matryoshka"] == {"dims": [32, 8, 4], "datasets": ["sts"], "full_dimension_only": []}
    assert plain_report["matryoshka"] is None
    assert matryoshka_dims_of(nested) == [32, 8, 4] and matryoshka_dims_of(plain) is None
    card = (nested / "README.md").read_text(encoding="utf-8")  # sentence-transformers' card names the loss
    assert re.search(r'"loss": "CosineSimilarityLoss",\s*"matryoshka_dims": \[\s*32,\s*8,\s*4\s*\]', card)
    # the first step scores the same batch with the same weights: at 32, 8 and 4 dimensions vs at 32 only
    first, first_plain = report["loss_curve"][0], plain_report["loss_curve"][0]
    assert first["step"] == first_plain["step"] == 1
    assert first["loss"] > 1.5 * first_plain["loss"], (first, first_plain)


@pytest.mark.slow
def test_matryoshka_wraps_every_task_loss_and_leaves_the_anchor_at_full_dimension(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    from sentence_transformers import SentenceTransformer

    base = tiny_models["unigram"]
    datasets = [
        {"name": "nli", "kind": "nli", "source": str(DATA / "sk_train_nli.jsonl"), "loss": "cached_mnrl",
         "max_samples": 16},
        {"name": "sts", "kind": "sts", "source": str(STS), "loss": "cosent", "max_samples": 16},
    ]  # fmt: skip
    anchor = {"corpus": str(CORPUS), "samples": 16, "min_chars": 20}
    out = _train(
        base,
        tmp_path,
        "all",
        datasets=datasets,
        anchor=anchor,
        epochs=1,
        mini_batch_size=4,
        matryoshka_dims=[32, 16],
    )
    report = json.loads((out / REPORT).read_text(encoding="utf-8"))
    assert report["matryoshka"] == {
        "dims": [32, 16],
        "datasets": ["nli", "sts"],
        "full_dimension_only": ["anchor"],
    }
    card = (out / "README.md").read_text(encoding="utf-8")
    assert card.count("MatryoshkaLoss") >= 2 and "AnchorMSELoss" in card
    assert SentenceTransformer(str(out), truncate_dim=16).encode(["Prší."]).shape == (1, 16)


@pytest.mark.parametrize(
    ("dims", "message"),
    [
        ([8, 16], r"matryoshka_dims must be distinct dimensions in descending order, got \[8, 16\]"),
        ([16, 16, 8], r"descending order, got \[16, 16, 8\]"),
        ([], r"descending order, got \[\]"),
        ([16, 0], r"greater than 0"),
    ],
)
def test_bad_dims_are_recipe_errors(
    tiny_models: dict[str, Path], tmp_path: Path, dims: list[int], message: str
) -> None:
    with pytest.raises(RecipeError, match=message):
        validate_recipe(recipe_data(tiny_models["unigram"], tmp_path, matryoshka_dims=dims))


@pytest.mark.parametrize(
    ("dims", "message"),
    [
        ([64, 16], r"matryoshka_dims \[64, 16\]: 64 is larger than the model's dimension 32"),
        ([32], r"names only the model's own dimension: add smaller ones"),
    ],
)
def test_dims_that_do_not_fit_the_model_fail_before_training(
    tiny_models: dict[str, Path], tmp_path: Path, dims: list[int], message: str
) -> None:
    base = tiny_models["unigram"]
    out = tmp_path / "model"
    out.mkdir()
    recipe = validate_recipe(recipe_data(base, tmp_path / "run", matryoshka_dims=dims))
    with pytest.raises(MatryoshkaError, match=message):
        finetune(recipe.context("finetune", str(base), out, tmp_path / "work"))
    assert not (tmp_path / "work" / "checkpoints").exists() and not any(out.iterdir())


def test_renorm_keeps_the_recorded_dims(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    from skadapt.modeldir import record_matryoshka_dims
    from skadapt.renorm.config import RenormConfig
    from skadapt.renorm.stage import renormalize

    parent = tmp_path / "parent"
    shutil.copytree(tiny_models["unigram"], parent)
    record_matryoshka_dims(parent, [32, 16, 8])
    renormalize(str(parent), tmp_path / "renorm", RenormConfig(corpus=str(CORPUS), method="r2", samples=20))
    assert matryoshka_dims_of(tmp_path / "renorm") == [32, 16, 8]
    assert json.loads((tmp_path / "renorm" / "config_sentence_transformers.json").read_text())["prompts"]
