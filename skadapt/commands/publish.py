"""``skadapt publish``: a run's final model (or a model directory) with its model card, to the Hub."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.commands.hub_options import OutDir, show_files, show_repositories, show_warnings
from skadapt.commands.options import Options, config_command
from skadapt.console import console, handle_errors, out
from skadapt.publish.config import PublishConfig

PUBLISH_OPTIONS = Options("publish")


@handle_errors
@config_command
def command(
    path: Annotated[Path, typer.Argument(help="Run directory (its final model) or a model directory.")],
    config: Annotated[PublishConfig, PUBLISH_OPTIONS],
    out_dir: OutDir = None,
    language: Annotated[
        str | None,
        typer.Option(help="ISO 639-3 or 639-1 code of the target language (default: from the run)."),
    ] = None,
) -> None:
    """Write the model card and upload the model (renorm, else finetune, else trim) to ORG/NAME.

    Assembles as the recipe's publish stage does (--out is replaced when it exists), then uploads --out's
    folder: a refused upload leaves it assembled."""
    from skadapt.api import publish_model
    from skadapt.publish.model import UPLOAD_DIR, planned_repositories
    from skadapt.publish.target import find_target
    from skadapt.stages import every_stage

    target = find_target(path, config.repo_id, stages=every_stage())
    if out_dir is None:
        out_dir = target.run_dir / "publish" if target.kind == "run" else path.parent / f"{path.name}-publish"
    console.print(f"publish {target.kind} {path}: model {target.model_dir} -> {config.repo_id}")
    report = publish_model(path, config, language=language, out=out_dir)
    show_warnings(report["warnings"])
    show_files(report, out_dir / UPLOAD_DIR)
    repositories = planned_repositories(report)
    show_repositories(repositories)
    uploaded = report.get("uploaded")
    if not uploaded:
        card = out_dir / UPLOAD_DIR / "README.md"
        out.print(
            f"[green]dry run[/]: card {card}; nothing uploaded to the repositories above "
            "(run without --dry-run to upload)"
        )
        return
    visibility = "private" if config.private else "public"
    out.print(f"[green]uploaded[/] {uploaded['url']} ({visibility} when new): {uploaded['commit_url']}")
    for repository in repositories[1:]:
        out.print(f"[green]uploaded[/] {repository.repo_id}: {repository.commit_url}")
