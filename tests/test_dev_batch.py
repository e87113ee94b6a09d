"""Dev evaluation at a fraction of training's cost (issue 50): the device's encoding batch (unchanged on a
CPU) and WiSE-FT's ``a = 0`` read from the starting model's dev embeddings instead of encoding again."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from skadapt import devices
from skadapt.tasks.config import DevSets
from skadapt.tasks.dev import build_dev_set
from tests.test_finetune_no_harm import DEV
from tests.test_finetune_train import DATA

STS = {key: value for key, value in DEV.items() if key != "steps"}
"""The STS dev set (without the training's evaluation interval)."""


def _triplets(path: Path) -> dict[str, str]:
    """A triplets dev set of the NLI fixture's premises (entailment positive, contradiction negative)."""
    premises: dict[str, dict[str, str]] = {}
    for line in (DATA / "sk_train_nli.jsonl").read_text(encoding="utf-8").splitlines()[:60]:
        row = json.loads(line)
        premises.setdefault(row["premise"], {})[row["label"]] = row["hypothesis"]
    rows = [
        {"anchor": p, "positive": h["entailment"], "negative": h["contradiction"]}
        for p, h in premises.items()
        if "entailment" in h and "contradiction" in h
    ]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    return {"kind": "triplets", "source": str(path)}


def _forwards(model: Any, monkeypatch: pytest.MonkeyPatch) -> Counter:
    """Counts the model's forward passes (one per encoded batch)."""
    calls: Counter = Counter()
    forward = model.forward

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls["forward"] += 1
        return forward(*args, **kwargs)

    monkeypatch.setattr(model, "forward", counted)
    return calls


def test_the_dev_batch_is_the_devices(tiny_models: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from sentence_transformers import SentenceTransformer

    monkeypatch.setattr(devices, "cuda", lambda: False)
    assert (
        devices.dev_batch_size(8) == 8
        and build_dev_set(DevSets.model_validate(STS)).evaluator.batch_size == 32
    )
    model = SentenceTransformer(str(tiny_models["unigram"]), device="cpu")
    calls = _forwards(model, monkeypatch)
    cpu = build_dev_set(DevSets.model_validate(STS), devices.dev_batch_size(8))
    on_cpu = cpu.evaluator(model)
    cpu_forwards = calls["forward"]

    monkeypatch.setattr(devices, "cuda", lambda: True)
    assert devices.dev_batch_size(8) == devices.GPU_ENCODE_BATCH == 256
    assert devices.dev_batch_size(512) == 512
    gpu = build_dev_set(DevSets.model_validate(STS), devices.dev_batch_size(8))
    assert gpu.evaluator.batch_size == 256
    calls.clear()
    on_gpu = gpu.evaluator(model)  # on this CPU: the GPU's batch, fewer passes, the same scores
    assert calls["forward"] < cpu_forwards / 4, (calls, cpu_forwards)
    assert on_gpu == pytest.approx(on_cpu, abs=1e-6)


def test_wise_ft_reads_a_zero_from_the_starting_models_dev_embeddings(
    tiny_models: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """As the stage does it: the dev check and the power before training fill the memo, ``a = 0`` reads
    it; the choice and every score are those of encoding the mixture at 0 again."""
    import torch
    from sentence_transformers import SentenceTransformer

    from skadapt.tasks import dev_scores
    from skadapt.tasks.embedding_memo import memoized
    from skadapt.train.interpolation import choose_interpolation, snapshot
    from skadapt.train.stage import _starting_encodings, _starting_power

    model = SentenceTransformer(str(tiny_models["unigram"]), device="cpu")
    dev = build_dev_set(DevSets.model_validate({"sets": [STS, _triplets(tmp_path / "triplets.jsonl")]}), 8)
    with memoized(model):
        dev.evaluator(model)
        _starting_power(model, dev, 8, 42, False)
        known = _starting_encodings(model, dev, 8)
    start = snapshot(model)
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():  # "training": every weight moved a little
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn(parameter.shape, generator=generator))
    tuned = snapshot(model)

    encoded = Counter()
    encode = dev_scores.encode_dev_set

    def counted(*args: Any, **kwargs: Any) -> Any:
        encoded["sets"] += 1
        return encode(*args, **kwargs)

    monkeypatch.setattr(dev_scores, "encode_dev_set", counted)
    grid = [0.0, 0.5, 0.8]
    reused = choose_interpolation(model, start, grid, dev.sets, batch_size=8, seed=42, known=known)
    reused_sets = encoded["sets"]
    reused_state = {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(tuned)
    encoded.clear()
    again = choose_interpolation(model, start, grid, dev.sets, batch_size=8, seed=42)
    assert (reused_sets, encoded["sets"]) == (3 * 2, 4 * 2)  # 3 of 4 grid points encoded, 2 sets each
    assert reused.scores == again.scores and reused.chosen == again.chosen
    assert all(torch.equal(reused_state[k], v) for k, v in model.state_dict().items())
