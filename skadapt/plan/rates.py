"""Rates measured on machines (``skadapt/plan/rates/*.json``, written by ``benchmark/gpu_check.py``) and
the times they give.

A rates file holds, per model label (``e5-small-trimmed``, ...) and precision, the seconds per optimizer
step of two row shapes (``pairs_long``: query + 1,200-char passage; ``triplets_short``: NLI triplets) at
the batch it was measured with, encoding texts/s of ~100- and ~1,200-character texts, peak GPU memory and
the process's peak RSS; a CPU file adds the data paths (documents/s of counting and sentence sampling,
rows/s of reading, grouping and the contamination check) and the ``fixed`` costs (imports, model loads,
wordfreq counting, mteb's task set-up, checkpoint writes, the statistics: ``benchmark/plan_fixed_costs.py``);
a GPU file adds its ``host`` (the GPU machine's cores: one core's speed against the CPU file's, PyTorch/ONNX
encoding on its cores, a fresh process's start, the CUDA start) and its ``slice`` (the real-size fine-tuning
slice: the dev evaluation's seconds beside encoding). Times for other batches, lengths and models
are extrapolated from these: by tokens per batch along the line through the two measured shapes (a fixed
part: optimizer and embeddings; a part per token), linear in the text length between the two encoded
lengths, by the non-embedding parameter ratio for another architecture. Every figure is wall-clock time
on a quiet machine (``gpu_check.py`` records the load average before and after): CPU seconds / threads
would assume torch's threads scale perfectly, which on this machine they did not (a process used 0.9-1.0
of its 2 cores).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

SHAPE_CHARS = {"pairs_long": 60 + 1200, "triplets_short": 110 + 55 + 55}
"""Characters of text per training row of each measured shape."""
ENCODE_CHARS = {"short": 100, "long": 1200}
MAX_ENCODE_CHARS = 2000
"""Texts longer than this are cut at the models' 512 tokens: they cost what a text of this length costs."""
TRAINING_BYTES = 16
"""Bytes per parameter a training step holds at any batch: fp32 weights, gradients, AdamW's two moments."""
PROCESS_GB = 0.6
"""Resident memory of a Python process with torch and transformers loaded, before any model."""
GPU_NAMES = {"NVIDIA H200": "H200", "NVIDIA H100 80GB HBM3": "H100"}


@dataclass(frozen=True)
class Rate:
    """One figure and how it was obtained (``measured`` or what it was extrapolated from)."""

    value: float
    basis: str
    peak_gb: float | None = None
    peak_rss_gb: float | None = None

    @property
    def measured(self) -> bool:
        return self.basis == "measured"


@dataclass(frozen=True)
class Rates:
    """The rates of one machine (one JSON file)."""

    name: str
    data: dict[str, Any]

    @property
    def device(self) -> str:
        """``cpu`` or ``cuda``."""
        return str(self.data.get("environment", {}).get("device", "cpu"))

    @property
    def cores(self) -> int:
        """CPU cores of the machine measured."""
        return int(self.data.get("environment", {}).get("cpu_count") or 1)

    @property
    def title(self) -> str:
        """Where and when it was measured, e.g. ``H200, measured by gpu_check.py 2026-11-26``."""
        env = self.data.get("environment", {})
        if self.device == "cuda":
            gpu = str(env.get("gpu", "GPU"))
            where = GPU_NAMES.get(gpu, gpu)
        else:
            where = f"this CPU ({self.data.get('machine') or self.name}, {env.get('cpu_count', '?')} cores)"
        script = str(self.data.get("source", "gpu_check.py")).removeprefix("benchmark/")
        return f"{where}, measured by {script} {self.data.get('date', '')}".strip()

    def _finetune(self, label: str, precision: str) -> dict[str, Any]:
        return self.data.get("finetune", {}).get(label, {}).get(precision, {})

    def step(self, label: str, precision: str, chars_per_row: float, batch: int) -> Rate | None:
        """Seconds per optimizer step of ``batch`` rows of ``chars_per_row`` characters: the measured shape
        nearest in length; at another batch, its tokens per batch scaled and priced on the line through
        the two measured shapes (a fixed part and one per token), else linearly. A label measured on one
        shape only (``e5-small``, the untrimmed vocabulary) borrows the other shape's ratio from its
        ``-trimmed`` sibling; a label not measured at all, its ``-trimmed`` sibling's rates."""
        shape = min(SHAPE_CHARS, key=lambda s: abs(SHAPE_CHARS[s] - chars_per_row))
        found = self._finetune(label, precision).get(shape)
        basis = "measured"
        if not self._finetune(label, precision) and self._finetune(f"{label}-trimmed", precision):
            found = self._finetune(f"{label}-trimmed", precision).get(shape)
            basis = f"extrapolated: the {label}-trimmed rate (the full vocabulary adds optimizer work)"
        if found is None:
            sibling = self._finetune(f"{label}-trimmed", precision)
            other = next(
                (s for s in SHAPE_CHARS if s != shape and s in self._finetune(label, precision)), None
            )
            if other is None or shape not in sibling or other not in sibling:
                return None
            ratio = sibling[shape]["s_per_step"] / sibling[other]["s_per_step"]
            own = self._finetune(label, precision)[other]
            found = {**own, "s_per_step": own["s_per_step"] * ratio}
            basis = f"extrapolated: {other} x the {label}-trimmed {shape}/{other} ratio"
        own = basis == "measured"  # the label's own rows (measured, or derived from its measured rows)
        if own and found.get("derived"):
            basis = f"extrapolated: {found['derived']}"
        measured_batch = int(found.get("batch") or self.data.get("settings", {}).get("batch", 32))
        factor = batch / measured_batch
        state = float(found.get("parameters") or 0) * TRAINING_BYTES / 2**30
        seconds = float(found["s_per_step"]) * factor
        fit = self._fit(label, precision) if own else None
        if factor != 1 and fit is not None:
            tokens = found["tokens_per_batch"] * factor
            seconds = fit[0] + fit[1] * tokens
            basis += (
                f" at batch {measured_batch}; batch {batch} by tokens per batch between the measured shapes"
            )
        elif factor != 1:
            basis += f" at batch {measured_batch}, x{factor:g} for batch {batch}"
        return Rate(
            seconds,
            basis,
            _scaled_memory(found.get("peak_gb"), factor, state),
            _scaled_memory(found.get("peak_rss_gb"), factor, state + PROCESS_GB),
        )

    def _fit(self, label: str, precision: str) -> tuple[float, float] | None:
        """(seconds, seconds per token) of a step: the line through the two measured shapes' (tokens per
        batch, seconds) - a fixed part (the optimizer, the embeddings) and a part growing with the tokens."""
        rows = [r for r in self._finetune(label, precision).values() if r.get("tokens_per_batch")]
        if len(rows) != 2 or rows[0]["tokens_per_batch"] == rows[1]["tokens_per_batch"]:
            return None
        (t1, s1), (t2, s2) = ((r["tokens_per_batch"], float(r["s_per_step"])) for r in rows)
        per_token = (s2 - s1) / (t2 - t1)
        fixed = s1 - per_token * t1
        return (fixed, per_token) if per_token > 0 and fixed >= 0 else None

    def encode(self, label: str, precision: str, chars: float) -> Rate | None:
        """Seconds per text of ``chars`` characters: linear between (and beyond) the two measured lengths,
        proportional below the short one (down to a tenth of its cost), flat past the models' 512 tokens;
        the ``-trimmed`` label's for an untrimmed model (its vocabulary does not change encoding speed)."""
        table = self.data.get("encode", {})
        found, note = table.get(label, {}).get(precision), ""
        if not found:
            found, note = table.get(f"{label}-trimmed", {}).get(precision), f" ({label}-trimmed's rate)"
        if not found or "short" not in found or "long" not in found:
            return None
        short, long = 1 / found["short"]["texts_per_s"], 1 / found["long"]["texts_per_s"]
        x = min(max(chars, 1.0), MAX_ENCODE_CHARS)
        slope = (long - short) / (ENCODE_CHARS["long"] - ENCODE_CHARS["short"])
        if x < ENCODE_CHARS["short"]:
            seconds = short * max(x / ENCODE_CHARS["short"], 0.1)
        else:
            seconds = short + slope * (x - ENCODE_CHARS["short"])
        inside = ENCODE_CHARS["short"] <= x <= ENCODE_CHARS["long"]
        basis = ("measured" if inside else "measured, length extrapolated") + note
        peak = max(found["short"].get("peak_gb") or 0, found["long"].get("peak_gb") or 0) or None
        rss = max(found["short"].get("peak_rss_gb") or 0, found["long"].get("peak_rss_gb") or 0) or None
        return Rate(seconds, basis, peak, rss)

    def fixed(self, name: str) -> float | None:
        """A fixed cost measured on this machine (``fixed`` of a CPU file, e.g. ``imports_s``,
        ``load_s_per_gparam``), None without it."""
        value = self.data.get("fixed", {}).get(name)
        return float(value) if value is not None else None

    def host(self, name: str, default: float = 1.0) -> float:
        """A figure of a GPU machine's host (``host`` of a GPU file): ``core_speed`` (one of its cores
        against one core of the CPU file's machine), ``cpu_encode_speedup`` (PyTorch/ONNX encoding on its
        cores against the CPU file's), ``process_start_s``, ``cuda_init_s``; ``default`` without it."""
        value = self.data.get("host", {}).get(name)
        return float(value) if value is not None else default

    def dev_overhead(self, label: str) -> tuple[float, str] | None:
        """Seconds per text a fine-tuning dev evaluation spends beside encoding (the evaluators' own work:
        similarities, rankings, metrics), from the real-size slice (``slice`` of a GPU file): its measured
        dev evaluation less the encoding of its texts at ``label``'s rate; None without a slice."""
        found = self.data.get("slice", {})
        groups = found.get("dev_texts_chars") or {}
        if not found.get("dev_eval_s") or not groups:
            return None
        encode = 0.0
        for count, chars in groups.values():
            rate = self.encode(label, "fp32", chars)
            if rate is None:
                return None
            encode += count * rate.value
        texts = sum(count for count, _ in groups.values())
        per_text = max(found["dev_eval_s"] - encode, 0.0) / texts
        return per_text, (
            f"the real-size slice's dev evaluation: {found['dev_eval_s']:g} s for {texts:,} texts, of which "
            f"encoding {encode:.1f} s at {label}'s rate, the evaluators {per_text * 1e3:.2f} ms per text"
        )

    def data_path(self, name: str) -> dict[str, Any] | None:
        """A data-path figure (CPU files), e.g. ``trim_count``: ``{documents_per_s, fixed_s, ...}``."""
        return self.data.get("data", {}).get(name)

    def items_per_s(self, name: str) -> float | None:
        """Items per (wall) second of a data path."""
        rate = self.data_path(name) or {}
        return next((v for k, v in rate.items() if k.endswith("_per_s") and not k.endswith("_cpu_s")), None)


def _scaled_memory(peak: float | None, factor: float, fixed: float) -> float | None:
    """A peak memory at ``factor`` times the measured batch: what lies above the ``fixed`` part (weights,
    gradients, optimizer state, the process) is activations, which grow with the batch."""
    if peak is None or factor == 1:
        return peak
    fixed = min(fixed, peak)
    return round(fixed + (peak - fixed) * factor, 3)


@cache
def all_rates() -> tuple[Rates, ...]:
    """Every rates file shipped with skadapt."""
    folder = resources.files("skadapt.plan") / "rates"
    found = []
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".json"):
            found.append(Rates(item.name.removesuffix(".json"), json.loads(item.read_text(encoding="utf-8"))))
    return tuple(found)


def cpu_rates() -> Rates | None:
    """The CPU rates nearest this machine (same core count, else the first)."""
    cpus = [r for r in all_rates() if r.device == "cpu"]
    same = [r for r in cpus if r.data.get("environment", {}).get("cpu_count") == os.cpu_count()]
    return (same or cpus or [None])[0]


def gpu_rates() -> Rates | None:
    """The GPU rates (the first GPU file)."""
    return next((r for r in all_rates() if r.device == "cuda"), None)
