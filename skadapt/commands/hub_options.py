"""What ``skadapt publish`` and ``skadapt publish-dataset`` share: the ``--out`` option and their output."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from skadapt.console import console, out

OutDir = Annotated[
    Path | None,
    typer.Option(
        "--out", help="Where upload/ and publish.json go (default: RUN/publish for a run, else DIR-publish)."
    ),
]


def _size(count: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if count < 1024 or unit == "GB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count} B"


def show_files(report: dict[str, Any], folder: Path) -> None:
    """The files of the upload folder as a table (stdout)."""
    table = Table(title=f"{report['repo_type']} repository {report['repo_id']} <- {folder}")
    table.add_column("file")
    table.add_column("size", justify="right")
    for item in report["files"]:
        table.add_row(escape(item["path"]), _size(item["bytes"]))
    out.print(table)


def show_repositories(repositories: list[Any]) -> None:
    """Every repository a publish plans (stdout): repository, what goes there, files, size, folder."""
    count = f"{len(repositories)} repositor{'y' if len(repositories) == 1 else 'ies'}"
    table = Table(title=f"the publish plans {count}")
    for column in ("repository", "what goes there", "files", "size", "folder"):
        table.add_column(column, justify="right" if column in ("files", "size") else "left")
    for item in repositories:
        size = _size(item.bytes)
        table.add_row(escape(item.repo_id), escape(item.what), str(item.files), size, item.folder)
    out.print(table)


def show_warnings(warnings: list[str]) -> None:
    """Each warning on the console (stderr)."""
    for warning in warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False, soft_wrap=True)
