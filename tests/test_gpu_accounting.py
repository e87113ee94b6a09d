"""The GPU check's kernel time counts each kernel once, as torch's own profiler table does.

``benchmark/gpu_check.py``'s :func:`self_time_us` serves the CPU (self CPU time) and the GPU (self time of
the device's own events); here both are checked against the total torch prints under its table ("Self CPU
time total", "Self CUDA time total"), on a small training workload traced with ``torch.profiler``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from skadapt import devices

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmark"


@pytest.fixture
def gpu_check(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.syspath_prepend(str(BENCHMARK))
    import gpu_check

    yield gpu_check
    sys.modules.pop("gpu_check", None)


def _traced_steps(device: str) -> Any:
    """``key_averages()`` of a few optimizer steps of a small MLP on ``device``, each under a named range."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 64)).to(
        device
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = torch.randn(128, 64, device=device)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as traced:
        for step in range(3):
            with record_function(f"step {step}"):
                loss = model(data).pow(2).mean()
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
        if device == "cuda":
            torch.cuda.synchronize()
    return traced.key_averages()


@pytest.mark.parametrize(
    "device",
    [
        "cpu",
        pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(not devices.cuda(), reason="CUDA")]),
    ],
)
def test_the_kernel_time_is_torchs_own_total(gpu_check: ModuleType, device: str) -> None:
    from torch.autograd.profiler_util import _format_time

    events = _traced_steps(device)
    label = "CPU" if device == "cpu" else "CUDA"
    [total] = re.findall(rf"Self {label} time total: (\S+)", events.table(row_limit=1))
    ours = gpu_check.self_time_us(events, device)
    assert ours > 0 and _format_time(ours) == total
    if device == "cuda":  # the earlier sum over every event: each kernel on itself and on its operator
        every = sum(e.self_device_time_total for e in events)
        assert every > 1.5 * ours
