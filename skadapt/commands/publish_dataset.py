"""``skadapt publish-dataset``: a synthetic STS dataset directory with its card, to a Hub dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.commands.hub_options import OutDir, show_files, show_warnings
from skadapt.commands.options import Options, config_command
from skadapt.console import console, handle_errors, out
from skadapt.publish.config import PublishConfig

PUBLISH_DATASET_OPTIONS = Options("publish", exclude=frozenset({"dataset_licenses"}))
"""The ``publish`` fields; ``dataset_licenses`` (a model's training data) does not apply to a dataset."""


@handle_errors
@config_command
def command(
    path: Annotated[
        Path, typer.Argument(help="A `skadapt synth-sts` output directory (or a run's synth_sts/).")
    ],
    config: Annotated[PublishConfig, PUBLISH_DATASET_OPTIONS],
    out_dir: OutDir = None,
) -> None:
    """Convert the splits to Parquet, complete the dataset card and upload them to ORG/NAME."""
    from skadapt.publish.dataset import find_dataset, prepare_dataset
    from skadapt.publish.model import UPLOAD_DIR, send
    from skadapt.publish.upload import resolve_token

    source = find_dataset(path)
    token = None if config.dry_run else resolve_token(config.token_env)
    out_dir = out_dir or path.parent / f"{path.name}-publish"
    console.print(f"publish-dataset {path} -> {config.repo_id}")
    report = prepare_dataset(source, config, out_dir)
    show_warnings(report["warnings"])
    show_files(report, out_dir / UPLOAD_DIR)
    card = out_dir / UPLOAD_DIR / "README.md"
    if token is None:
        out.print(f"[green]dry run[/]: card {card}; nothing uploaded (run without --dry-run to upload)")
        return
    result = send(out_dir, config, token, repo_type="dataset")
    out.print(f"[green]uploaded[/] {result.url}: {result.commit_url}")
