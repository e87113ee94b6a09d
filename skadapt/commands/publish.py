"""``skadapt publish``: a run's final model (or a model directory) with its model card, to the Hub."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.commands.hub_options import (
    CommitMessage,
    DryRun,
    OutDir,
    Private,
    RepoId,
    Revision,
    TokenEnv,
    show_files,
    show_warnings,
)
from skadapt.console import console, handle_errors, out


@handle_errors
def command(
    path: Annotated[Path, typer.Argument(help="Run directory (its final model) or a model directory.")],
    repo_id: RepoId,
    private: Private = True,
    revision: Revision = None,
    commit_message: CommitMessage = None,
    token_env: TokenEnv = "HF_TOKEN",
    dry_run: DryRun = False,
    out_dir: OutDir = None,
    license_: Annotated[
        str | None,
        typer.Option("--license", help="License of the model, e.g. mit (default: the base model's)."),
    ] = None,
    dataset_license: Annotated[
        list[str] | None,
        typer.Option("--dataset-license", help="NAME=LICENSE of a training dataset (repeatable)."),
    ] = None,
    language: Annotated[
        str | None, typer.Option(help="ISO 639-3 code of the target language (default: from the run).")
    ] = None,
) -> None:
    """Write the model card and upload the model (renorm, else finetune, else trim) to ORG/NAME."""
    from skadapt.artifacts import atomic_dir
    from skadapt.config import section_from_options
    from skadapt.publish.config import PublishConfig
    from skadapt.publish.licenses import parse_license_options
    from skadapt.publish.model import UPLOAD_DIR, PublishOptions, prepare, send
    from skadapt.publish.target import find_target
    from skadapt.publish.upload import resolve_token

    section_from_options(PublishConfig, repo_id=repo_id, token_env=token_env)  # checks ORG/NAME
    options = PublishOptions(
        repo_id=repo_id,
        private=private,
        revision=revision,
        commit_message=commit_message,
        token_env=token_env,
        dry_run=dry_run,
        license=license_,
        dataset_licenses=parse_license_options(dataset_license),
        language=language,
    )
    target = find_target(path)
    token = None if dry_run else resolve_token(token_env)
    if out_dir is None:
        out_dir = target.run_dir / "publish" if target.kind == "run" else path.parent / f"{path.name}-publish"
    console.print(f"publish {target.kind} {path}: model {target.model_dir} -> {repo_id}")
    with atomic_dir(out_dir) as tmp:
        prepared = prepare(target, options, tmp)
    show_warnings(prepared.warnings)
    show_files(prepared.report, out_dir / UPLOAD_DIR)
    card = out_dir / UPLOAD_DIR / "README.md"
    if token is None:
        out.print(f"[green]dry run[/]: card {card}; nothing uploaded (run without --dry-run to upload)")
        return
    result = send(out_dir, options, token)
    visibility = "private" if private else "public"
    out.print(f"[green]uploaded[/] {result.url} ({visibility} when new): {result.commit_url}")
