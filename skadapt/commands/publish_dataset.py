"""``skadapt publish-dataset``: a synthetic STS dataset directory with its card, to a Hub dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.commands.hub_options import (
    CommitMessage,
    DryRun,
    License,
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
    path: Annotated[
        Path, typer.Argument(help="A `skadapt synth-sts` output directory (or a run's synth_sts/).")
    ],
    repo_id: RepoId,
    private: Private = True,
    revision: Revision = None,
    commit_message: CommitMessage = None,
    token_env: TokenEnv = "HF_TOKEN",
    dry_run: DryRun = False,
    out_dir: OutDir = None,
    license_: License = None,
) -> None:
    """Convert the splits to Parquet, complete the dataset card and upload them to ORG/NAME."""
    from skadapt.artifacts import atomic_dir
    from skadapt.config import section_from_options
    from skadapt.publish.config import PublishConfig
    from skadapt.publish.dataset import find_dataset, prepare_dataset
    from skadapt.publish.model import UPLOAD_DIR, PublishOptions, send
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
    )
    source = find_dataset(path)
    token = None if dry_run else resolve_token(token_env)
    out_dir = out_dir or path.parent / f"{path.name}-publish"
    console.print(f"publish-dataset {path} -> {repo_id}")
    with atomic_dir(out_dir) as tmp:
        report = prepare_dataset(source, options, tmp)
    show_warnings(report["warnings"])
    show_files(report, out_dir / UPLOAD_DIR)
    card = out_dir / UPLOAD_DIR / "README.md"
    if token is None:
        out.print(f"[green]dry run[/]: card {card}; nothing uploaded (run without --dry-run to upload)")
        return
    result = send(out_dir, options, token, repo_type="dataset")
    out.print(f"[green]uploaded[/] {result.url}: {result.commit_url}")
