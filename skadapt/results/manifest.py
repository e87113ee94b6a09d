"""``manifest.json``: what the pipeline records of a finished stage (its key, config, inputs, result)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import Field

from skadapt import artifacts
from skadapt.results.base import Part


class StageManifest(Part):
    """A finished stage, as :func:`skadapt.pipeline.run_recipe` writes it and reads it back (every field
    the pipeline writes is declared here).

    Attributes:
        stage: The stage name (also its directory).
        status: ``complete``.
        key: The stage's key (config, seed, language, inputs, upstream keys): the stage is skipped while
            the key of the current recipe equals it.
        run_id: The distributed launch that wrote it (``TORCHELASTIC_RUN_ID``), None outside one.
        config: The stage's recipe section, every default filled in.
        non_default_config: The fields of that section that differ from their defaults (the model card
            lists the fine-tuning hyperparameters from them, as sentence-transformers' trainer does).
        report: The stage's report file (its :class:`~skadapt.results.base.StageReport` ``FILE``), when it
            wrote one; the pipeline checked it against its type.
        seed: The recipe seed.
        language: The recipe language (ISO 639-3).
        inputs: The key's inputs (``base_model``, upstream keys, data fingerprints).
        sources: Spec -> repo, revision asked and the commit read, for each Hub source the stage read.
        models: Model references the stage saw (``base``, ``final``, ...), relative to the run.
        base_model_source: Repo, revision and commit of a base model read from the Hub.
        result: The stage's result (its ``Stage.result`` type reads it).
        outputs: The files it wrote, with their sizes.
        started_at: When it started (ISO 8601).
        finished_at: When it finished (ISO 8601).
        duration_s: How long it ran.
        versions: Python's and the libraries' versions it ran with.
    """

    FILE: ClassVar[str] = artifacts.MANIFEST

    stage: str
    status: str
    key: str = ""
    run_id: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    non_default_config: dict[str, Any] = Field(default_factory=dict)
    report: str | None = None
    seed: int | None = None
    language: str | None = None
    inputs: dict[str, Any] = Field(default_factory=dict)
    sources: dict[str, dict[str, Any]] = Field(default_factory=dict)
    base_model_source: dict[str, Any] | None = None
    models: dict[str, str] = Field(default_factory=dict)
    result: dict[str, Any] = Field(default_factory=dict)
    outputs: list[dict[str, Any]] = Field(default_factory=list)
    started_at: str = ""
    finished_at: str = ""
    duration_s: float | None = None
    versions: dict[str, str] = Field(default_factory=dict)

    def write(self, directory: Path) -> None:
        """Write it into ``directory`` (every field, in declaration order)."""
        artifacts.write_json(Path(directory) / self.FILE, self.model_dump(mode="json"))

    @classmethod
    def read(cls, directory: Path) -> Self | None:
        """The manifest of a finished stage directory, or None (missing, unreadable, unfinished)."""
        data = artifacts.read_manifest(Path(directory))
        return None if data is None else cls.parse(data, str(Path(directory) / cls.FILE))

    @property
    def kept(self) -> bool:
        """Whether the stage kept the model it made (a stage that kept none says ``kept: false``)."""
        return self.result.get("kept", True) is not False
