"""Where models compute, and the settings that keep a GPU busy.

On a CUDA machine the host, not the GPU, bounds a small encoder's training step and encoding batch (one
H200: e5-small trained at ~0.1 s per step of ~1.2 TFLOP, milliseconds of GPU work). What removes host work
without changing what is computed is applied there, and only there (``benchmark/gpu_run.py`` measures each
lever before and after on the same GPU; ``benchmark/README.md`` has the table):

- training: fused AdamW (one kernel for all parameters instead of a loop of small ones), batches tokenized
  ahead of the model by two data-loader worker processes into pinned memory, TF32 matrix products on
  GPUs with tensor cores for float32 (compute capability 8 and above), batches copied to the GPU without
  waiting (``non_blocking`` from pinned memory);
- encoding: batches of :data:`GPU_ENCODE_BATCH` texts (the CPU's 32 leave the GPU waiting on Python).

A CPU run gets none of these: its results stay those of earlier versions.
"""

from __future__ import annotations

import functools
from typing import Any

CPU_ENCODE_BATCH = 32
"""Texts per encoding batch on a CPU (the evaluation's historical default)."""
GPU_ENCODE_BATCH = 256
"""Texts per encoding batch on a GPU."""
LOADER_WORKERS = 2
"""Data-loader processes tokenizing the next batches while the GPU trains on this one."""


@functools.cache
def cuda() -> bool:
    """Whether torch sees a CUDA device (the device sentence-transformers puts models on by default)."""
    import torch

    return bool(torch.cuda.is_available())


def training_levers(use_cpu: bool = False) -> dict[str, Any]:
    """Extra ``TrainingArguments`` for a CUDA run (empty on a CPU or with ``use_cpu``)."""
    if use_cpu or not cuda():
        return {}
    import torch

    return {
        "optim": "adamw_torch_fused",
        "tf32": torch.cuda.get_device_capability(0)[0] >= 8,
        "dataloader_num_workers": LOADER_WORKERS,
        "dataloader_persistent_workers": True,
        "dataloader_pin_memory": True,
        "dataloader_prefetch_factor": 4,
        "accelerator_config": {"non_blocking": True},  # copies from pinned memory: the host goes on
    }


def dev_batch_size(cpu_batch: int) -> int:
    """Texts per encoding batch of a dev evaluation given the caller's CPU batch (e.g. the training batch):
    unchanged on a CPU (its dev scores stay those of earlier versions to the last digit), at least
    :data:`GPU_ENCODE_BATCH` on CUDA."""
    return max(cpu_batch, GPU_ENCODE_BATCH) if cuda() else cpu_batch


def encode_batch_size(requested: int | None = None) -> int:
    """``requested``, else the device's default encoding batch (:data:`CPU_ENCODE_BATCH` or
    :data:`GPU_ENCODE_BATCH`)."""
    if requested is not None:
        return requested
    return GPU_ENCODE_BATCH if cuda() else CPU_ENCODE_BATCH
