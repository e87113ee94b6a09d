"""The plan as a table (rich) and its notes: what each figure rests on, what is unknown."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from skadapt.plan.model import Plan, StagePlan


def duration(seconds: float | None) -> str:
    """``"2 h 05 min"``, ``"4 min 10 s"``, ``"12 s"``; ``-`` when None."""
    if seconds is None:
        return "-"
    seconds = round(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds} s"


def _gb(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} GB" if value < 10 else f"{value:.0f} GB"


def _over(peak: float | None, available: float | None) -> str:
    """A warning when a peak exceeds the memory of the machine the rates were measured on."""
    if peak is None or not available or peak <= available:
        return ""
    return f" (> {available:g} GB)"


def _bases(stage: StagePlan, side: str) -> list[str]:
    """What a stage's times on one side (``cpu``/``gpu``) rest on: one line per basis, naming its parts."""
    grouped: dict[str, list[str]] = {}
    for part in stage.parts:
        seconds = part.seconds_cpu if side == "cpu" else part.seconds_gpu
        basis = part.basis_cpu if side == "cpu" else part.basis_gpu
        if basis:
            grouped.setdefault(basis, []).append(f"{part.name} {duration(seconds)}")
    return [f"{basis}: {', '.join(parts)}" for basis, parts in grouped.items()]


def render_plan(plan: Plan, *, details: bool = True) -> Group:
    """The plan as a rich renderable: one row per stage (work, times, memory, disk), then the bases."""
    gpu = plan.gpu.split(",")[0] if plan.gpu else "GPU"
    table = Table(title=f"cost plan {plan.recipe}", show_lines=True)
    for column in ("stage", "work", "this CPU", gpu, "peak memory", "disk"):
        table.add_column(column, overflow="fold")
    for stage in plan.stages:
        work = "\n".join(stage.lines)
        if stage.unknown:
            work += "\n" + "\n".join(f"unknown: {u}" for u in stage.unknown)
        memory = f"RAM {_gb(stage.peak_rss_gb)}{_over(stage.peak_rss_gb, plan.cpu_memory_gb)}"
        if stage.peak_gpu_gb:
            memory += f"\nGPU {_gb(stage.peak_gpu_gb)}{_over(stage.peak_gpu_gb, plan.gpu_memory_gb)}"
        partial = " (partial)" if stage.partial else ""
        table.add_row(
            stage.stage,
            Text(work),
            duration(stage.seconds_cpu) + partial,
            duration(stage.seconds_gpu) + (partial if stage.seconds_gpu is not None else ""),
            memory,
            _gb(stage.disk_gb),
        )
    total_gpu = f"; on the GPU machine {duration(plan.seconds_gpu)}" if plan.seconds_gpu is not None else ""
    lines = [
        Text(f"model: {plan.base_model}: {plan.model}"),
        Text(
            f"rates: CPU {plan.cpu or 'none'}; GPU {plan.gpu or 'none'} (extrapolated figures say so below)"
        ),
        Text(
            f"total: this CPU {duration(plan.seconds_cpu)}{total_gpu}"
            + (" - PARTIAL: see unknown" if plan.partial else "")
        ),
    ]
    if details:
        for stage in plan.stages:
            sides = [("this CPU", "cpu")] + ([(gpu, "gpu")] if stage.seconds_gpu is not None else [])
            for title, side in sides:
                bases = _bases(stage, side)
                if bases:
                    lines.append(Text(f"{stage.stage} on {title}:\n  " + "\n  ".join(bases)))
            for note in stage.notes:
                lines.append(Text(f"{stage.stage}: {note}"))
    return Group(table, *lines)
