"""Pieces of work priced with the measured rates: encoding texts, training steps, CPU data paths."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from skadapt.plan.model import Part
from skadapt.plan.models import ModelShape
from skadapt.plan.rates import Rate, Rates

CPU_WORK = "this CPU's rate (CPU work)"
CHARS_PER_TOKEN = 3.0
"""Characters per token of Slovak text in mE5's tokenizer, about (gpu_check's rows: 2.7-3.3)."""


@dataclass
class Context:
    """What every stage planner needs: the rates and the model before and after trimming."""

    cpu: Rates | None
    gpu: Rates | None
    base: ModelShape
    model: ModelShape
    unknown: list[str] = field(default_factory=list)


def _basis(rates: Rates | None, rate: Rate | None, label: str | None, shape: ModelShape) -> str:
    if rates is None:
        return "no rates file"
    if label is None:
        return f"no estimate: model {shape.how}"
    if rate is None:
        return f"not measured for {label}"
    scaled = f", x{shape.scale:.2f} ({shape.how})" if shape.scale != 1 else ""
    return f"{label} {rate.basis}{scaled}"


def _measured(
    ctx: Context,
    name: str,
    shape: ModelShape,
    amount: float,
    rate_of: Callable[[Rates, str, str], Rate | None],
    gpu_precision: str = "fp32",
    precision_shown: bool = False,
) -> Part:
    """``amount`` units (texts, steps) at ``rate_of(rates, label, precision)`` on the CPU (fp32) and on the
    GPU (``gpu_precision``, named in the GPU basis when ``precision_shown``), scaled to ``shape``."""
    label = shape.label()
    part = Part(name=name)
    for rates, side, precision in ((ctx.cpu, "cpu", "fp32"), (ctx.gpu, "gpu", gpu_precision)):
        rate = rate_of(rates, label, precision) if rates is not None and label else None
        basis = _basis(rates, rate, label, shape)
        seconds = amount * rate.value * shape.scale if rate is not None else None
        if side == "cpu":
            part.seconds_cpu, part.basis_cpu = seconds, basis
            part.peak_rss_gb = rate.peak_rss_gb if rate is not None else None
        else:
            part.seconds_gpu, part.basis_gpu = seconds, f"{precision} {basis}" if precision_shown else basis
            part.peak_gpu_gb = rate.peak_gb if rate is not None else None
            part.gpu_rate = rate is not None
    return part


def encode_part(ctx: Context, name: str, shape: ModelShape, texts: float, chars: float) -> Part:
    """Encoding ``texts`` texts of ``chars`` characters with a model of ``shape`` (fp32)."""
    return _measured(
        ctx, name, shape, texts, lambda rates, label, precision: rates.encode(label, precision, chars)
    )


def train_part(
    ctx: Context, name: str, shape: ModelShape, steps: float, chars_per_row: float, batch: int, bf16: bool
) -> Part:
    """``steps`` optimizer steps of ``batch`` rows of ``chars_per_row`` characters (CPU: fp32; GPU: the
    recipe's precision)."""
    return _measured(
        ctx,
        name,
        shape,
        steps,
        lambda rates, label, precision: rates.step(label, precision, chars_per_row, batch),
        gpu_precision="bf16" if bf16 else "fp32",
        precision_shown=True,
    )


def data_value(ctx: Context, path: str, key: str) -> float | None:
    """One figure of a CPU data-path rate (e.g. the calibration documents' ``chars``), None without it."""
    rate = ctx.cpu.data_path(path) if ctx.cpu is not None else None
    value = (rate or {}).get(key)
    return float(value) if value else None


PARALLEL_PATHS = {"trim_count": None, "renorm_sample": 16}
"""Data paths that use every core (the tokenizer's threads; one sentence-splitting process per core, at most
16) and the most cores they use (None: all)."""


def _cores(rates: Rates | None, path: str) -> int:
    cores = rates.cores if rates is not None else 1
    most = PARALLEL_PATHS[path]
    return min(cores, most) if most else cores


def cpu_part(ctx: Context, name: str, path: str, items: float, chars: float | None = None) -> Part:
    """CPU work at a measured data-path rate (``path``: ``trim_count``, ``nli_grouping``, ...); with
    ``chars``, items are scaled to the measured items' length. The GPU machine does it at the same rate,
    or, for a path that uses every core, at the rate scaled by its cores."""
    rate = ctx.cpu.data_path(path) if ctx.cpu is not None else None
    per_s = ctx.cpu.items_per_s(path) if ctx.cpu is not None else None
    if rate is None or not per_s:
        return Part(name=name, basis_cpu=f"no {path} rate", basis_gpu=CPU_WORK)
    measured_chars = rate.get("chars") or rate.get("row_chars")
    if path == "renorm_sample":  # the calibration split the documents it counted
        measured_chars = measured_chars or data_value(ctx, "trim_count", "chars")
    factor = chars / measured_chars if chars and measured_chars else 1.0
    fixed = float(rate.get("fixed_s", 0.0))
    seconds = fixed + items * factor / per_s
    basis = f"measured {path} rate" + (f", x{factor:.2g} for the text length" if factor != 1 else "")
    seconds_gpu, basis_gpu = seconds, CPU_WORK
    if path in PARALLEL_PATHS and ctx.gpu is not None:
        here, there = _cores(ctx.cpu, path), _cores(ctx.gpu, path)
        seconds_gpu = fixed + (seconds - fixed) * here / there
        basis_gpu = f"{CPU_WORK}, extrapolated: {here} -> {there} cores"
    return Part(
        name=name,
        seconds_cpu=seconds,
        seconds_gpu=seconds_gpu,
        basis_cpu=basis,
        basis_gpu=basis_gpu,
        peak_rss_gb=rate.get("peak_rss_gb"),
    )


def gb(n_bytes: float) -> float:
    """Bytes as GB (10^9)."""
    return round(n_bytes / 1e9, 3)
