"""The results of the stages whose summary has no module of its own: what ``run`` returns, recorded as the
manifest's ``result`` (:class:`~skadapt.results.base.StageResult`). Each declares the fields other code
reads (the pipeline, the run's summary, the stage commands); the others are kept as they are."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from skadapt.results.base import Part, StageResult


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


class PlannedRepository(Part):
    """One repository a publish uploads to (or would, in a dry run).

    Attributes:
        repo_id: The Hub repository.
        what: What goes there, in words (the model, the static tier, a dims tier).
        folder: Its upload folder, relative to the publish directory (``upload``, ``upload-static``, ...).
        files: How many files.
        bytes: Their total size.
        commit_url: The commit of the upload; None in a dry run.
    """

    repo_id: str
    what: str
    folder: str
    files: int
    bytes: int
    commit_url: str | None = None

    def line(self) -> str:
        """One line: the repository, what goes there, files and size, where it went."""
        size = f"{self.bytes / 1e6:.1f} MB" if self.bytes >= 100_000 else f"{self.bytes:,} bytes"
        where = f": {self.commit_url}" if self.commit_url else ""
        return f"{self.repo_id}: {self.what}, {self.files} files, {size} ({self.folder}/){where}"


class PublishSummary(StageResult):
    """The ``publish`` stage's result: the repository, what was (or would be) uploaded, where it went;
    ``repositories``: every repository of the publish (the model's first, then its tiers' own)."""

    repo_id: str
    dry_run: bool
    files: int
    bytes: int
    license: str | None = None
    url: str | None = None
    commit_url: str | None = None
    repositories: list[PlannedRepository] = Field(default_factory=list)
