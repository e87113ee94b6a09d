"""The results of the stages whose summary has no module of its own: what ``run`` returns, recorded as the
manifest's ``result`` (:class:`~skadapt.results.base.StageResult`). Each declares the fields other code
reads (the pipeline, the run's summary, the stage commands); the others are kept as they are."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from skadapt.results.base import StageResult


class TrimSummary(StageResult):
    """The ``trim`` stage's result: its report's figures (rows, parameters, coverage, parity, ...)."""

    exact: bool | None = None
    verdict: str | None = None


class ExportSummary(StageResult):
    """The ``export`` stage's result.

    Attributes:
        parent: The model the tiers came from.
        tiers: Tier name -> its path relative to the export directory.
        parity: Tier -> how close it is to its parent.
        speed: Tier -> texts/s, speed-up, peak memory and size.
    """

    parent: str
    tiers: dict[str, str]
    parity: dict[str, Any] = Field(default_factory=dict)
    speed: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def made_tiers(self) -> dict[str, str]:
        """The deployment tiers it made."""
        return dict(self.tiers)


class SynthSummary(StageResult):
    """The ``synth_sts`` stage's result: pairs made, failed sources, LLM requests and the dataset's path."""

    pairs: int
    splits: dict[str, int] | None = None
    failed_sources: int = 0
    requests_sent: int = 0
    cache_hits: int = 0
    dataset: str


class RobustnessSummary(StageResult):
    """The ``robustness`` stage's result: the robustness profile per model and axis, texts encoded."""

    profile: Any = None
    texts_encoded: dict[str, int] | int | None = None


class PublishSummary(StageResult):
    """The ``publish`` stage's result: the repository, what was (or would be) uploaded, where it went."""

    repo_id: str
    dry_run: bool
    files: int
    bytes: int
    license: str | None = None
    url: str | None = None
    commit_url: str | None = None
