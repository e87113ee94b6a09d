"""``manifest.json``: what the pipeline records of a finished stage (its key, config, inputs, result)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import Field

from skadapt import artifacts
from skadapt.results.base import Part


class StageManifest(Part):
    """A finished stage, as :func:`skadapt.pipeline.run_recipe` records it.

    Attributes:
        stage: The stage name (also its directory).
        status: ``complete``.
        config: The stage's recipe section, every default filled in.
        non_default_config: The fields of that section that differ from their defaults (the model card
            lists the fine-tuning hyperparameters from them, as sentence-transformers' trainer does).
        report: The stage's report file (its :class:`~skadapt.results.base.StageReport` ``FILE``), when it
            wrote one; the pipeline checked it against its type.
        language: The recipe language (ISO 639-3).
        inputs: The key's inputs (``base_model``, upstream keys, data fingerprints).
        models: Model references the stage saw (``base``, ``final``, ...), relative to the run.
        base_model_source: Repo, revision and commit of a base model read from the Hub.
        result: The stage's summary.
        finished_at: When it finished (ISO 8601).
    """

    FILE: ClassVar[str] = artifacts.MANIFEST

    stage: str
    status: str
    config: dict[str, Any] = Field(default_factory=dict)
    non_default_config: dict[str, Any] = Field(default_factory=dict)
    report: str | None = None
    language: str | None = None
    inputs: dict[str, Any] = Field(default_factory=dict)
    models: dict[str, str] = Field(default_factory=dict)
    base_model_source: dict[str, Any] | None = None
    result: dict[str, Any] = Field(default_factory=dict)
    finished_at: str = ""

    @classmethod
    def read(cls, directory: Path) -> Self | None:
        """The manifest of a finished stage directory, or None (missing, unreadable, unfinished)."""
        data = artifacts.read_manifest(Path(directory))
        return None if data is None else cls.parse(data, str(Path(directory) / cls.FILE))

    @property
    def kept(self) -> bool:
        """Whether the stage kept the model it made (a stage that kept none says ``kept: false``)."""
        return self.result.get("kept", True) is not False
