"""The plan's typed results: per stage the work, and the time, memory and disk it is estimated to take."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class Part(BaseModel):
    """One piece of a stage's work and its time on this CPU and on the GPU.

    ``seconds_gpu`` is None where no GPU figure applies; CPU-bound work (counting, sentence splitting)
    takes this CPU's time on the GPU machine too, and its ``basis_gpu`` says so.
    """

    name: str
    seconds_cpu: float | None = None
    seconds_gpu: float | None = None
    basis_cpu: str = ""
    basis_gpu: str = ""
    peak_rss_gb: float | None = None
    peak_gpu_gb: float | None = None
    gpu_rate: bool = False
    """Whether ``seconds_gpu`` comes from the GPU machine's rates file (its GPU's measured rates or its
    host's figures), else it is CPU work at this CPU's rate."""


class StagePlan(BaseModel):
    """The plan of one stage.

    Attributes:
        stage: The stage name.
        work: The work as numbers (documents, rows per dataset, steps, texts per task, requests, ...).
        lines: The work for people, one line each.
        parts: The pieces the times are summed from.
        seconds_cpu: Estimated wall time on this CPU (the sum of the parts that have one).
        seconds_gpu: Estimated wall time on the GPU machine; None where no measured GPU figure applies.
        peak_rss_gb: Estimated peak resident memory of the process (CPU run).
        peak_gpu_gb: Estimated peak GPU memory (fine-tuning, encoding).
        disk_gb: Disk the stage writes at its peak (outputs and scratch such as checkpoints).
        unknown: What could not be read, with the reason; the estimate is partial when any.
        notes: What the estimate leaves out or assumes.
    """

    stage: str
    work: dict[str, Any] = Field(default_factory=dict)
    lines: list[str] = Field(default_factory=list)
    parts: list[Part] = Field(default_factory=list)
    seconds_cpu: float | None = None
    seconds_gpu: float | None = None
    peak_rss_gb: float | None = None
    peak_gpu_gb: float | None = None
    disk_gb: float | None = None
    unknown: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def partial(self) -> bool:
        """Whether some of the work could not be read (the times leave it out)."""
        return bool(self.unknown)

    def total(self) -> StagePlan:
        """This plan with its times and peaks summed/maxed from its parts."""
        cpu = [p.seconds_cpu for p in self.parts if p.seconds_cpu is not None]
        gpu_measured = any(p.gpu_rate for p in self.parts)
        gpu = [p.seconds_gpu for p in self.parts if p.seconds_gpu is not None]
        rss = [p.peak_rss_gb for p in self.parts if p.peak_rss_gb is not None]
        vram = [p.peak_gpu_gb for p in self.parts if p.peak_gpu_gb is not None]
        self.seconds_cpu = round(sum(cpu), 1) if cpu else None
        self.seconds_gpu = round(sum(gpu), 1) if gpu and gpu_measured else None
        self.peak_rss_gb = round(max(rss), 2) if rss else None
        self.peak_gpu_gb = round(max(vram), 2) if vram else None
        return self


class Plan(BaseModel):
    """The cost plan of a recipe: one :class:`StagePlan` per stage, in run order.

    Attributes:
        recipe: The recipe file (or name).
        base_model: The recipe's base model.
        model: How the model was mapped to measured rates.
        cpu: Where the CPU rates were measured (None: no CPU rates).
        gpu: Where the GPU rates were measured (None: none).
        stages: The stages.
        cpu_memory_gb: Memory of the machine the CPU rates were measured on.
        gpu_memory_gb: Memory of the GPU the GPU rates were measured on.
    """

    recipe: str
    base_model: str
    model: str
    cpu: str | None
    gpu: str | None
    stages: list[StagePlan]
    cpu_memory_gb: float | None = None
    gpu_memory_gb: float | None = None

    @property
    def partial(self) -> bool:
        """Whether any stage's work could not be fully read."""
        return any(stage.partial for stage in self.stages)

    def stage(self, name: str) -> StagePlan:
        """The plan of one stage.

        Raises:
            KeyError: The recipe has no such stage.
        """
        for stage in self.stages:
            if stage.stage == name:
                return stage
        raise KeyError(name)

    @property
    def seconds_cpu(self) -> float:
        """The whole run on this CPU (the stages' known times)."""
        return round(sum(s.seconds_cpu or 0.0 for s in self.stages), 1)

    @property
    def seconds_gpu(self) -> float | None:
        """The whole run on the GPU machine: stages without a GPU figure count at their CPU time."""
        if not any(s.seconds_gpu is not None for s in self.stages):
            return None
        return round(
            sum(s.seconds_gpu if s.seconds_gpu is not None else s.seconds_cpu or 0 for s in self.stages), 1
        )
