"""Device placement and the GPU levers (:mod:`skadapt.devices`); the ``gpu`` tests run where CUDA is
(``benchmark/gpu_check.sh`` runs them on the GPU machine) and are skipped elsewhere; the GPU check's smoke
run on this CPU."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from skadapt import devices
from skadapt.recipe import validate_recipe
from skadapt.train.stage import REPORT, finetune
from tests.support.finetune_recipe import tiny_recipe

ROOT = Path(__file__).resolve().parents[1]
STS_DEV = ROOT / "tests" / "data" / "finetune" / "sk_train_sts.jsonl"

gpu = pytest.mark.skipif(not devices.cuda(), reason="needs CUDA (the GPU check runs it)")


def test_a_cpu_run_gets_no_gpu_levers_and_the_cpu_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(devices, "cuda", lambda: False)
    assert devices.training_levers() == {}
    assert devices.encode_batch_size() == devices.CPU_ENCODE_BATCH == 32
    assert devices.encode_batch_size(8) == 8


def test_a_cuda_run_gets_every_lever_and_the_gpu_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.setattr(devices, "cuda", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *_: (9, 0))
    levers = devices.training_levers()
    assert levers["optim"] == "adamw_torch_fused" and levers["tf32"] is True
    assert levers["dataloader_num_workers"] == devices.LOADER_WORKERS and levers["dataloader_pin_memory"]
    assert levers["accelerator_config"] == {"non_blocking": True}  # copies from pinned memory, no wait
    assert devices.training_levers(use_cpu=True) == {}  # a CPU launch of a CUDA machine's ranks
    assert devices.encode_batch_size() == devices.GPU_ENCODE_BATCH
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *_: (7, 5))
    assert devices.training_levers()["tf32"] is False  # no TF32 before Ampere


def test_the_training_arguments_carry_the_levers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from skadapt.train.config import FinetuneConfig
    from skadapt.train.trainer import training_arguments

    config = FinetuneConfig.model_validate(tiny_recipe(tmp_path, tmp_path)["finetune"])
    monkeypatch.setattr(devices, "cuda", lambda: False)
    plain = training_arguments(config, 1, tmp_path, [], None, 10)
    assert plain.dataloader_num_workers == 0 and "fused" not in str(plain.optim)


def _finetune(model: Path, tmp_path: Path, **extra: Any) -> dict[str, Any]:
    data = tiny_recipe(model, tmp_path / "run", epochs=1, save_steps=2, **extra)
    out = tmp_path / "model"
    out.mkdir()
    finetune(validate_recipe(data).context("finetune", str(model), out, tmp_path / "work"))
    return json.loads((out / REPORT).read_text(encoding="utf-8"))


@pytest.mark.gpu
@gpu
def test_finetuning_on_cuda_uses_the_gpu_and_its_levers(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    import torch

    seen: list[Any] = []
    import skadapt.train.trainer as trainer

    real = trainer.training_arguments

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(real(*args, **kwargs))
        return seen[-1]

    trainer.training_arguments = spy
    try:
        report = _finetune(tiny_models["unigram"], tmp_path)
    finally:
        trainer.training_arguments = real
    assert report["steps"]["done"] > 0
    [arguments] = seen
    assert arguments.device.type == "cuda" and arguments.dataloader_num_workers == devices.LOADER_WORKERS
    assert arguments.optim == "adamw_torch_fused"
    assert torch.cuda.max_memory_allocated() > 0


@pytest.mark.gpu
@gpu
def test_bf16_finetuning_runs_on_cuda(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    report = _finetune(tiny_models["unigram"], tmp_path, bf16=True)
    assert report["steps"]["done"] > 0 and all(np.isfinite(p["loss"]) for p in report["loss_curve"])


@pytest.mark.gpu
@gpu
def test_encoding_on_cuda_matches_the_cpu(tiny_models: dict[str, Path]) -> None:
    from sentence_transformers import SentenceTransformer

    texts = ["Bratislava je hlavné mesto.", "Dnes prší.", "Vlak mešká o desať minút, hlási rozhlas."] * 20
    on_gpu = SentenceTransformer(str(tiny_models["unigram"]))
    assert on_gpu.device.type == "cuda"
    on_cpu = SentenceTransformer(str(tiny_models["unigram"]), device="cpu")
    a = on_gpu.encode(texts, batch_size=devices.encode_batch_size())
    b = on_cpu.encode(texts, batch_size=devices.CPU_ENCODE_BATCH)
    assert np.allclose(a, b, atol=1e-4)


@pytest.mark.gpu
@gpu
def test_renorm_estimates_its_mean_on_cuda(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    from skadapt.renorm.config import RenormConfig
    from skadapt.renorm.stage import renormalize

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(STS_DEV.read_text(encoding="utf-8"), encoding="utf-8")
    config = RenormConfig(corpus={"source": str(corpus), "columns": ["sentence1"]}, samples=50, min_chars=10)
    report = renormalize(str(tiny_models["unigram"]), tmp_path / "out", config, language="sk")
    assert report.samples > 0


@pytest.mark.slow
def test_the_gpu_check_smoke_run_passes_on_this_cpu(tmp_path: Path) -> None:
    """``benchmark/gpu_check.sh --smoke``: every phase of the GPU check, on tiny models with a 20,000-piece
    vocabulary, in about a minute and a half of CPU time."""
    env = {**os.environ, "OUT": str(tmp_path), "PYTHON": str(Path(os.sys.executable))}
    done = subprocess.run(
        ["bash", "benchmark/gpu_check.sh", "--smoke"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "gpu_check.json").read_text(encoding="utf-8"))
    assert report["errors"] == [], report["errors"]
    finetune = report["levers"]["finetune"]
    assert {k.split()[-1] for k in finetune} >= {"before", "after"}
    assert all(r["s_per_step"] > 0 for r in finetune.values())
    assert report["slice"]["returncode"] == 0 and report["slice"]["encode"]["long"]["texts_per_s"] > 0
    assert report["demo"]["returncode"] == 0, report["demo"]["log_tail"]
    assert set(report["demo"]["stages"]) >= {"trim", "finetune"}
    assert report["tests"]["failed"] == 0 and report["tests"]["passed"] > 0, report["tests"]
