"""Pieces of work priced with the measured rates: encoding texts, training steps, CPU data paths; the
context every stage's plan prices them in (:class:`Context`; a stage's plan gets
:class:`skadapt.stage.PlanContext`, which adds the run's facts)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from skadapt.plan.model import Part
from skadapt.plan.models import ModelShape
from skadapt.plan.rates import ENCODE_CHARS, Rate, Rates

CPU_WORK = "this CPU's rate (CPU work)"
CHARS_PER_TOKEN = 3.0
"""Characters per token of Slovak text in mE5's tokenizer, about (gpu_check's rows: 2.7-3.3)."""
MODEL_MAX_CHARS = 512 * CHARS_PER_TOKEN
"""Characters of the longest text a model encodes whole (512 tokens)."""
BASIS_PROMPTS = 2
"""Prompts a corpus basis encodes each text with (a query and a document prompt, as E5's)."""
SHORT_CHARS = ENCODE_CHARS["short"]


@dataclass
class Context:
    """What every stage planner needs: the rates and the model before and after trimming."""

    cpu: Rates | None
    gpu: Rates | None
    base: ModelShape
    model: ModelShape
    unknown: list[str] = field(default_factory=list)
    loaded: bool = False
    """Whether an earlier stage of the run loaded a model (the run's one process has paid the imports and
    the CUDA start)."""


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


def wordfreq_part(ctx: Context, name: str, forms: float) -> Part:
    """Counting a wordfreq list's word forms (single-threaded Python per word: the forms, not their
    characters, set the time) at the measured ``fixed.wordfreq_forms_per_s``."""
    per_s = ctx.cpu.fixed("wordfreq_forms_per_s") if ctx.cpu is not None else None
    if not per_s:
        return Part(name=name, basis_cpu="no wordfreq_forms_per_s", basis_gpu=CPU_WORK)
    seconds = forms / per_s
    speed = ctx.gpu.host("core_speed") if ctx.gpu is not None else 1.0
    return Part(
        name=name,
        seconds_cpu=seconds,
        seconds_gpu=seconds / speed,
        basis_cpu="measured wordfreq_forms_per_s (one core)",
        basis_gpu=_host_basis(ctx, "core_speed"),
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


HOST_WORK = "the GPU machine's host"


def _host_basis(ctx: Context, key: str) -> str:
    factor = ctx.gpu.host(key) if ctx.gpu is not None else 1.0
    return (
        f"{HOST_WORK} at this CPU's figure / {factor:g} ({key})" if factor != 1 else f"{HOST_WORK}, as here"
    )


def fixed_part(ctx: Context, name: str, key: str, count: float = 1.0, gpu_extra: float = 0.0) -> Part:
    """``count`` times a fixed cost measured on this CPU (``fixed.KEY`` of its rates file: imports, model
    set-up, statistics): single-threaded host work, on the GPU machine at its host's ``core_speed``, plus
    ``gpu_extra`` seconds there (the CUDA start)."""
    value = ctx.cpu.fixed(key) if ctx.cpu is not None else None
    if value is None:
        return Part(name=name, basis_cpu=f"no fixed cost {key}", basis_gpu=f"no fixed cost {key}")
    seconds = value * count
    speed = ctx.gpu.host("core_speed") if ctx.gpu is not None else 1.0
    extra = f" + CUDA start {gpu_extra:g} s" if gpu_extra else ""
    return Part(
        name=name,
        seconds_cpu=seconds,
        seconds_gpu=seconds / speed + gpu_extra,
        basis_cpu=f"fixed cost measured here ({key})",
        basis_gpu=_host_basis(ctx, "core_speed") + extra,
    )


def load_part(ctx: Context, name: str, parameters: list[int]) -> Part:
    """Loading models of ``parameters`` each (SentenceTransformer from disk), per parameter; the run's first
    load adds the sentence-transformers imports and the first load's lazy ones, and on the GPU machine the
    CUDA start (the stages run in one process)."""
    cpu = ctx.cpu
    per = cpu.fixed("load_s_per_gparam") if cpu is not None else None
    if cpu is None or per is None:
        return Part(name=name, basis_cpu="no load_s_per_gparam", basis_gpu="no load_s_per_gparam")
    first = not ctx.loaded
    ctx.loaded = True
    seconds = sum(parameters) / 1e9 * per
    if first:
        seconds += (cpu.fixed("imports_s") or 0.0) + (cpu.fixed("first_load_s") or 0.0)
        name += " (the run's first: with the imports)"
    speed = ctx.gpu.host("core_speed") if ctx.gpu is not None else 1.0
    cuda = ctx.gpu.host("cuda_init_s", 0.0) if ctx.gpu is not None and first else 0.0
    keys = "load_s_per_gparam" + (", imports_s, first_load_s" if first else "")
    return Part(
        name=name,
        seconds_cpu=seconds,
        seconds_gpu=seconds / speed + cuda,
        basis_cpu=f"fixed costs measured here ({keys})",
        basis_gpu=_host_basis(ctx, "core_speed") + (f" + CUDA start {cuda:g} s" if cuda else ""),
    )


def write_part(ctx: Context, name: str, gigabytes: float) -> Part:
    """Writing ``gigabytes`` to disk (checkpoints: weights and optimizer state) at the measured
    ``fixed.checkpoint_gb_per_s``, the same on the GPU machine's disk (not measured there)."""
    per_s = ctx.cpu.fixed("checkpoint_gb_per_s") if ctx.cpu is not None else None
    if not per_s:
        return Part(name=name, basis_cpu="no checkpoint_gb_per_s", basis_gpu="no checkpoint_gb_per_s")
    seconds = gigabytes / per_s
    return Part(
        name=name,
        seconds_cpu=seconds,
        seconds_gpu=seconds,
        basis_cpu="measured checkpoint_gb_per_s",
        basis_gpu=f"{HOST_WORK}, this CPU's disk rate (checkpoint_gb_per_s)",
    )


def on_host(ctx: Context, part: Part, key: str = "cpu_encode_speedup") -> Part:
    """A part the GPU machine does on its host's cores (ONNX and static tiers, speed rounds): this CPU's
    seconds divided by the host's ``key`` figure."""
    factor = ctx.gpu.host(key) if ctx.gpu is not None else 1.0
    if part.seconds_cpu is not None:
        part.seconds_gpu = part.seconds_cpu / factor
    part.basis_gpu, part.peak_gpu_gb = _host_basis(ctx, key), None
    part.gpu_rate = ctx.gpu is not None  # a figure of the GPU machine's rates file (its host)
    return part


def gb(n_bytes: float) -> float:
    """Bytes as GB (10^9)."""
    return round(n_bytes / 1e9, 3)


def stream_part(ctx: Context, name: str, spec: str, rows: float, chars: float | None) -> Part | None:
    """Reading a Hub stream's rows (``datasets`` streaming Parquet over HTTP, measured against a local Hub:
    the network's own speed is not in it); local files are read inside the step that uses them."""
    if not spec.startswith("hub:"):
        return None
    return cpu_part(ctx, name, "read_hub", rows, chars)


def memory_part(name: str, parts: list[Part], extra_bytes: float) -> Part:
    """The resident memory of the encoding parts' process plus ``extra_bytes`` held beside the model."""
    process = max((p.peak_rss_gb for p in parts if p.peak_rss_gb is not None), default=None)
    if process is None:
        return Part(name=name)
    return Part(name=name, peak_rss_gb=round(process + extra_bytes / 2**30, 2))


def merged_part(name: str, parts: list[Part]) -> Part:
    """One part summing several (times) and keeping their peaks and their bases (one each)."""

    def basis(found: set[str]) -> str:
        extrapolated = any("extrapolated" in b for b in found)
        first = sorted(found)[0].replace(", length extrapolated", "") if found else ""
        if not extrapolated:
            return first
        return first + (", some lengths extrapolated" if len(found) > 1 else ", length extrapolated")

    cpu = [p.seconds_cpu for p in parts if p.seconds_cpu is not None]
    gpu = [p.seconds_gpu for p in parts if p.seconds_gpu is not None]
    return Part(
        name=name,
        seconds_cpu=sum(cpu) if cpu else None,
        seconds_gpu=sum(gpu) if gpu else None,
        basis_cpu=basis({p.basis_cpu for p in parts}),
        basis_gpu=basis({p.basis_gpu for p in parts}),
        peak_rss_gb=max((p.peak_rss_gb for p in parts if p.peak_rss_gb is not None), default=None),
        peak_gpu_gb=max((p.peak_gpu_gb for p in parts if p.peak_gpu_gb is not None), default=None),
        gpu_rate=any(p.gpu_rate for p in parts),
    )
