"""``skadapt publish``: a run's final model (or a model directory) with its model card, to the Hub."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.commands.hub_options import OutDir, show_files, show_warnings
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
        str | None, typer.Option(help="ISO 639-3 code of the target language (default: from the run).")
    ] = None,
) -> None:
    """Write the model card and upload the model (renorm, else finetune, else trim) to ORG/NAME.

    Assembles as the recipe's publish stage does (--out is replaced when it exists), then uploads --out's
    folder: a refused upload leaves it assembled."""
    from skadapt.api import run_stage
    from skadapt.artifacts import read_json
    from skadapt.publish.model import PUBLISH_REPORT, UPLOAD_DIR, send
    from skadapt.publish.target import find_target
    from skadapt.publish.upload import resolve_token

    target = find_target(path, config.repo_id)
    token = None if config.dry_run else resolve_token(config.token_env)  # before any work
    if out_dir is None:
        out_dir = target.run_dir / "publish" if target.kind == "run" else path.parent / f"{path.name}-publish"
    console.print(f"publish {target.kind} {path}: model {target.model_dir} -> {config.repo_id}")
    assemble = config.model_copy(update={"dry_run": True})  # sent below, from --out: kept if the Hub refuses
    run_stage(
        "publish", None, assemble, language=language, out=out_dir, options={"path": path}, overwrite=True
    )
    report = read_json(out_dir / PUBLISH_REPORT)
    show_warnings(report["warnings"])
    show_files(report, out_dir / UPLOAD_DIR)
    card = out_dir / UPLOAD_DIR / "README.md"
    if token is None:
        out.print(f"[green]dry run[/]: card {card}; nothing uploaded (run without --dry-run to upload)")
        return
    result = send(out_dir, config, token)
    visibility = "private" if config.private else "public"
    out.print(f"[green]uploaded[/] {result.url} ({visibility} when new): {result.commit_url}")
