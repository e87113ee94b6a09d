"""``skadapt export``: deployment tiers of a model (ONNX fp32 + int8, a static model), each measured."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.commands.options import Options, config_command
from skadapt.console import console, fail, handle_errors, out
from skadapt.export.config import ExportConfig
from skadapt.results import ExportReport


@handle_errors
@config_command
def command(
    model: Annotated[str, typer.Argument(help="sentence-transformers model directory.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory of the tiers and their report.")],
    config: Annotated[ExportConfig, Options("export")],
    language: Annotated[
        str | None,
        typer.Option(
            help="ISO 639-3 or 639-1 language code: its corpus is the speed corpus without "
            "--tasks/--speed-corpus."
        ),
    ] = None,
    tasks: Annotated[
        list[str] | None,
        typer.Option("--tasks", help="Local suite .yaml whose texts the speed is measured on (repeatable)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the speed-text and static-corpus samples.")] = 42,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing --out directory.")] = False,
) -> None:
    """Export MODEL to ONNX (fp32, checked against PyTorch, and dynamic int8) and make a static model
    (distilled, then trained on MODEL: see export.static_training); measure texts/s, peak memory and size of
    each beside MODEL. Score their quality with
    `skadapt evaluate OUT/model/onnx/<file>.onnx OUT/static MODEL`. Runs as the recipe's export stage does."""
    from skadapt.api import export_tiers
    from skadapt.export.stage import MODEL_DIR
    from skadapt.tasks.contamination import UnreachableTestDataError

    console.print(f"export {model}: tiers {', '.join(config.tiers)}")
    try:  # the unreachable task is named as this command's option, not as a recipe field
        export_tiers(
            model,
            config,
            language=language,
            out=out_dir,
            seed=seed,
            eval_tasks=tasks or (),
            overwrite=overwrite,
        )
    except UnreachableTestDataError as error:
        fail(error.for_command("--tasks"))
    report = ExportReport.read(out_dir)
    out.print((out_dir / "export.md").read_text(encoding="utf-8"))
    for tier, rel in (report.tiers if report is not None else {}).items():
        out.print(f"[green]{tier}[/]: {out_dir / rel}")
    out.print(f"ONNX layout: {out_dir / MODEL_DIR} (SentenceTransformer(dir, backend='onnx'))")
