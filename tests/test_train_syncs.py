"""Fewer waits for the device per training step, the same training (issue 50).

The trainer logs at most ``LOSS_CURVE_POINTS`` losses per run and skips transformers' per-step NaN check of
the loss (both read a value back from the device, which waits for the GPU); the duplicate-free batches
compare precomputed hashes. On the CPU the waits are counted as the reads that cause them on a GPU
(``Tensor.item``, ``Tensor.__bool__``); the weights must come out identical to those of the settings before.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from skadapt.recipe import validate_recipe
from skadapt.train import trainer as trainer_module
from skadapt.train.stage import REPORT, finetune
from tests.support.finetune_recipe import tiny_recipe

STEPS = 60
"""Above LOSS_CURVE_POINTS: the new settings log every second step, the old ones every step."""


def _old_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The training arguments as they were: a logged loss per step, the NaN check, the plain sampler."""
    from sentence_transformers.sentence_transformer.training_args import BatchSamplers

    made = trainer_module.training_arguments

    def before(*args: Any, **kwargs: Any) -> Any:
        arguments = made(*args, **kwargs)
        arguments.logging_steps, arguments.logging_nan_inf_filter = 1, True
        if callable(arguments.batch_sampler):  # the hashed duplicate-free sampler
            arguments.batch_sampler = BatchSamplers.NO_DUPLICATES
        return arguments

    monkeypatch.setattr(trainer_module, "training_arguments", before)


def _train(model: Path, root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict, Counter]:
    """Fine-tune the tiny model for STEPS steps: (its report, its weights, reads of device values)."""
    import torch
    from safetensors.numpy import load_file

    reads: Counter = Counter()
    item, truth = torch.Tensor.item, torch.Tensor.__bool__

    def counted_item(self: torch.Tensor) -> Any:
        reads["item"] += 1
        return item(self)

    def counted_bool(self: torch.Tensor) -> bool:
        reads["bool"] += 1
        return truth(self)

    data = tiny_recipe(model, root / "run", epochs=20, max_steps=STEPS, save_steps=1000)
    out = root / "model"
    out.mkdir(parents=True)
    context = validate_recipe(data).context("finetune", str(model), out, root / "work")
    with monkeypatch.context() as patch:
        patch.setattr(torch.Tensor, "item", counted_item)
        patch.setattr(torch.Tensor, "__bool__", counted_bool)
        finetune(context)
    report = json.loads((out / REPORT).read_text(encoding="utf-8"))
    [weights] = out.rglob("model.safetensors")
    return report, load_file(weights), reads


@pytest.mark.slow
def test_fewer_reads_of_the_device_the_same_weights(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    new, new_weights, new_reads = _train(tiny_models["unigram"], tmp_path / "new", monkeypatch)
    _old_settings(monkeypatch)
    old, old_weights, old_reads = _train(tiny_models["unigram"], tmp_path / "old", monkeypatch)

    assert new["steps"]["done"] == old["steps"]["done"] == STEPS
    assert new_weights.keys() == old_weights.keys()
    assert all(np.array_equal(new_weights[k], old_weights[k]) for k in new_weights)  # to the last bit
    old_curve = {p["step"]: p["loss"] for p in old["loss_curve"]}
    assert [p["step"] for p in new["loss_curve"]] == [1, *range(2, STEPS + 1, 2)]
    for last, point in zip(new["loss_curve"], new["loss_curve"][1:], strict=False):
        steps = range(last["step"] + 1, point["step"] + 1)  # a logged loss: the mean since the last one
        assert point["loss"] == pytest.approx(np.mean([old_curve[s] for s in steps]), rel=1e-5)
    # per step, before: 2 NaN checks + a logged loss and gradient norm + the model's own mask check
    # (transformers' ``padding_mask.all()`` in every forward, left as it is); after: the mask check, and a
    # logged loss every second step
    assert old_reads["bool"] - new_reads["bool"] == 2 * STEPS, (new_reads, old_reads)
    assert sum(new_reads.values()) <= 0.6 * sum(old_reads.values()), (new_reads, old_reads)


def test_the_hashed_sampler_keeps_a_text_out_of_a_batch_holding_it(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    """Rows sharing texts within and across columns: every batch holds each text once, and the batches are
    those of the plain duplicate-free sampler (so training is unchanged)."""
    import torch
    from datasets import Dataset
    from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
    from sentence_transformers.sentence_transformer.training_args import BatchSamplers

    from skadapt.train.config import FinetuneConfig
    from skadapt.train.stage import build_datasets
    from skadapt.train.trainer import training_arguments

    texts = [f"veta {i}" for i in range(12)]
    rows = {
        "anchor": [texts[i % 12] for i in range(60)],
        "positive": [texts[(i * 5 + 1) % 12] for i in range(60)],
        "negative": [texts[(i * 7 + 4) % 12] for i in range(60)],
    }
    data = Dataset.from_dict(rows)
    config = FinetuneConfig.model_validate(tiny_recipe(tmp_path, tmp_path)["finetune"])
    args = training_arguments(config, 7, tmp_path, build_datasets(config), None, 10)  # nli: MNRL
    hashed_sampler = args.batch_sampler
    assert hashed_sampler.keywords == {"precompute_hashes": True, "precompute_num_proc": 0}
    model = SentenceTransformer(str(tiny_models["unigram"]), device="cpu")
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=data)

    def batches(sampler: Any) -> list[list[int]]:
        trainer.args.batch_sampler = sampler
        made = trainer.get_batch_sampler(data, 4, False, None, torch.Generator(), seed=7)
        return [list(batch) for batch in made]

    environment = os.environ
    hashed = batches(hashed_sampler)
    assert os.environ is environment  # hashed in this process: datasets' pool would have replaced it
    assert sorted(i for batch in hashed for i in batch) == list(range(60))  # every row, once
    for batch in hashed:
        held = [rows[column][i] for i in batch for column in rows]
        assert len(held) == len(set(held)), held
    assert any(len(batch) < 4 for batch in hashed)  # duplicates did push rows apart
    assert hashed == batches(BatchSamplers.NO_DUPLICATES)
