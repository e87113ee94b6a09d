"""The Hub options of ``skadapt publish`` and ``skadapt publish-dataset``, and their shared output."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from skadapt.console import console, out

RepoId = Annotated[
    str, typer.Option("--repo-id", help="ORG/NAME of the Hub repository (created if missing).")
]
Private = Annotated[
    bool,
    typer.Option("--private/--public", help="Visibility of a new repository (an existing one keeps its)."),
]
Revision = Annotated[
    str | None, typer.Option("--revision", "--branch", help="Branch to push to (created if missing).")
]
CommitMessage = Annotated[str | None, typer.Option("--commit-message", help="Commit message.")]
TokenEnv = Annotated[
    str, typer.Option("--token-env", help="Variable holding the token (else HF_TOKEN, else `hf auth login`).")
]
DryRun = Annotated[
    bool, typer.Option("--dry-run", help="Write the card and the upload folder, list the files; no network.")
]
OutDir = Annotated[
    Path | None,
    typer.Option(
        "--out", help="Where upload/ and publish.json go (default: RUN/publish for a run, else DIR-publish)."
    ),
]
License = Annotated[str | None, typer.Option("--license", help="License id, e.g. mit, cc-by-sa-4.0.")]


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


def show_warnings(warnings: list[str]) -> None:
    """Each warning on the console (stderr)."""
    for warning in warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False, soft_wrap=True)
