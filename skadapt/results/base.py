"""The base of every stage report: a pydantic model whose ``FILE`` is the JSON it is read from and written to.

A report model declares the fields other code reads; fields it does not declare are kept as they are
(``extra="allow"``), so reading a report and writing it back changes nothing. A report that lacks a declared
field, or holds one of the wrong type, is an error naming the file and the field: a renamed key fails loudly
instead of silently dropping what was read from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from skadapt import artifacts
from skadapt.errors import SkadaptError


class ReportError(SkadaptError, ValueError):
    """A stage report that does not match its type (a missing or renamed field, a wrong value)."""


class Part(BaseModel):
    """A report or a nested part of one: declared fields typed, the others kept."""

    model_config = ConfigDict(extra="allow")

    @classmethod
    def parse(cls, data: Any, source: str = "") -> Self:
        """The report from its JSON data.

        Raises:
            ReportError: The data does not match the type; the message names the fields.
        """
        try:
            return cls.model_validate(data)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '(top level)'}: {e['msg']}" for e in error.errors()
            )
            where = source or getattr(cls, "FILE", cls.__name__)
            raise ReportError(
                f"{where}: not a {cls.__name__} ({problems}); the report was written by another version of "
                "skadapt or edited by hand: run its stage again"
            ) from error

    def as_json(self) -> dict[str, Any]:
        """The data as JSON, as it was read (declared and kept fields; defaults it did not hold left out)."""
        return self.model_dump(mode="json", exclude_unset=True)


class StageReport(Part):
    """A stage's report file (``FILE`` in the stage directory): the stage writes it through its type
    (:meth:`write`), every other reader reads it through the same type (:meth:`read`)."""

    FILE: ClassVar[str]

    @classmethod
    def write_data(cls, directory: Path, data: dict[str, Any]) -> Self:
        """Check ``data`` against the type and write it as ``FILE`` into ``directory``; the report.

        Raises:
            ReportError: The data does not match the type (the stage built it wrong: nothing is written).
        """
        report = cls.parse(data, f"{cls.FILE} as built")
        report.write(directory)
        return report

    def write(self, directory: Path) -> Path:
        """Write it as ``FILE`` into ``directory`` (the values it was built with); the path."""
        path = Path(directory) / self.FILE
        artifacts.write_json(path, self.as_json())
        return path

    @classmethod
    def read(cls, directory: Path) -> Self | None:
        """The report in ``directory``, or None when it has none.

        Raises:
            ReportError: The file is not JSON or does not match the type.
        """
        path = Path(directory) / cls.FILE
        if not path.is_file():
            return None
        data = artifacts.read_json(path)
        if data is None:
            raise ReportError(f"{path}: not readable as JSON; run its stage again")
        return cls.parse(data, str(path))


class StageResult(Part):
    """What a stage's ``run`` returns: its summary, which the pipeline records as its manifest's ``result``
    and reads back through the same type when the stage is skipped (``Stage.result``).

    Attributes:
        kept: Whether a model stage kept the model it made (``False``: its output is its input unchanged,
            e.g. renormalization that lost on dev); other stages leave it unset.
    """

    kept: bool = True

    def made_tiers(self) -> dict[str, str]:
        """Deployment tiers of the final model it made (name -> path in its directory): none here."""
        return {}

    def side_models(self) -> dict[str, str]:
        """Reference models it made beside its own (name -> path in its directory), which the evaluation
        can score but which never become the run's final model: none here."""
        return {}

    @classmethod
    def of(cls, data: dict[str, Any]) -> Self:
        """The result from what a stage's work returned (its values as built; a wrong one is an error)."""
        return cls.parse(data, f"the stage's result ({cls.__name__})")
