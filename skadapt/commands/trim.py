"""``skadapt trim``: trim a model's vocabulary to the tokens a corpus uses."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.commands.options import Options, config_command
from skadapt.console import handle_errors, out
from skadapt.trim.config import TrimConfig


@handle_errors
@config_command
def command(
    model: Annotated[
        str, typer.Argument(help="Model directory (sentence-transformers/transformers) or Hub id.")
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="Output directory (a sentence-transformers model).")],
    config: Annotated[TrimConfig, Options("trim")],
    seed: Annotated[int, typer.Option(help="Seed of the parity sample.")] = 42,
    language: Annotated[
        str | None,
        typer.Option(
            help="ISO 639-3 or 639-1 code of the language, for the model card (default: from the corpus "
            "spec, if it tells)."
        ),
    ] = None,
    eval_tasks: Annotated[
        list[str] | None,
        typer.Option(
            "--eval-tasks",
            help="Evaluation task specs: the texts of the local suites among them are tokenized by both "
            "models and the share kept identical is reported (repeatable).",
        ),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Ignore cached token counts (count again, refresh the cache).")
    ] = False,
    overwrite: Annotated[bool, typer.Option(help="Replace --out if it exists.")] = False,
) -> None:
    """Trim MODEL's vocabulary to the tokens a corpus uses; writes a sentence-transformers model.

    The whole corpus is counted; a seeded sample of it is checked after trimming. When every counted
    token is kept the trim must be exact (every sampled text tokenizes identically, else it fails);
    otherwise the corpus coverage, the identical share and the most frequent dropped tokens are shown.
    The output directory also holds trim_report.json (counts, selection, parameters, coverage, parity;
    with --eval-tasks, how the evaluation suites' texts tokenize) and a model card (README.md). Runs as the
    recipe's trim stage does.
    """
    from rich.markup import escape

    from skadapt.api import trim_model
    from skadapt.artifacts import read_json
    from skadapt.console import usage_error
    from skadapt.results import TrimReport

    if config.corpus is None:
        usage_error("--corpus is required: a file/glob, hub:DATASET[:CONFIG[:SPLIT]] or wordfreq:LANG")
    trim_model(
        model,
        config,
        language=language,
        out=out_dir,
        seed=seed,
        eval_tasks=eval_tasks or (),
        use_cache=not no_cache,
        overwrite=overwrite,
    )
    report = read_json(out_dir / TrimReport.FILE)  # what it says, whatever the stage's run returns
    language_warning = (report.get("corpus_language") or {}).get("warning")
    for warning in [*report["selection"]["warnings"], *([language_warning] if language_warning else [])]:
        out.print(f"[yellow]warning:[/] {escape(warning)}")
    rows, parameters = report["embedding_rows"], report["parameters"]
    out.print(
        f"[green]trimmed[/] {model} -> {out_dir}: {rows['before']:,} -> {rows['after']:,} embedding rows, "
        f"{parameters['before'] / 1e6:.2f}M -> {parameters['after'] / 1e6:.2f}M parameters"
    )
    verdict = escape(report["verdict"])
    out.print(f"[green]{verdict}[/]" if report["exact"] else f"[yellow]{verdict}[/]")
    dropped = report["coverage"]["top_dropped_tokens"]
    if dropped:
        shown = ", ".join(f"{d['token']!r} ({d['count']:,})" for d in dropped)
        out.print(f"most frequent dropped tokens: {escape(shown)}")
