"""``skadapt renorm``: append corpus-mean removal (R1/R2) + re-normalization to a model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from skadapt.console import console, handle_errors, out


@handle_errors
def command(
    model: Annotated[str, typer.Argument(help="sentence-transformers model directory or Hub id.")],
    corpus: Annotated[str, typer.Option(help="Source: file/glob, hub:DATASET[:CONFIG[:SPLIT]].")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory of the renormalized model.")],
    method: Annotated[
        Literal["r1", "r2"], typer.Option(help="r1: e - mu; r2: remove the mu-hat projection.")
    ] = "r2",
    samples: Annotated[int, typer.Option(min=1, help="Sentences in the mean estimate.")] = 100_000,
    prompt: Annotated[
        Literal["none", "query", "passage"], typer.Option(help="Prompt the mean is estimated with.")
    ] = "none",
    text_column: Annotated[str, typer.Option(help="Column of the corpus texts.")] = "text",
    max_documents: Annotated[
        int, typer.Option(min=1, help="Texts read; the sample is a reservoir sample of all of them.")
    ] = 200_000,
    language: Annotated[
        str, typer.Option(help="ISO 639-3 language of the corpus (sentence-splitting rules).")
    ] = "slk",
    min_chars: Annotated[int, typer.Option(min=1)] = 64,
    max_chars: Annotated[int, typer.Option(min=1)] = 512,
    seed: int = 42,
    exclude_tasks: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude-tasks", help="Suite .yaml whose texts are dropped from the sample (repeatable)."
        ),
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing --out directory.")] = False,
) -> None:
    """Estimate the mean embedding on a corpus sample and save MODEL + Dense + Normalize to --out."""
    from skadapt.artifacts import atomic_dir
    from skadapt.evaluate.selection import evaluation_texts
    from skadapt.languages import get_language
    from skadapt.model_sources import resolve_model
    from skadapt.recipe import RenormConfig, section_from_options
    from skadapt.renorm import renormalize

    config = section_from_options(
        RenormConfig,
        corpus=corpus,
        method=method,
        samples=samples,
        prompt=prompt,
        text_column=text_column,
        min_chars=min_chars,
        max_chars=max_chars,
        max_documents=max_documents,
    )
    split_language = get_language(language).iso639_1 or "en"
    exclude = evaluation_texts(exclude_tasks or [], split_language)
    console.print(f"renorm {method}: estimating the mean of {model} on {corpus} ({samples} sentences)")
    with atomic_dir(out_dir, overwrite=overwrite) as tmp:
        result = renormalize(
            resolve_model(model), tmp, config, seed=seed, language=split_language, exclude=exclude
        )
    out.print(
        f"[green]saved[/] {out_dir}: {result.method}, ||mu|| = {result.mu_norm:.4f} from {result.samples} "
        f"sentences (pool {result.pool}, {result.dropped_eval_overlap} evaluation sentences dropped), "
        f"mean cos(e, mu-hat) {result.mean_cos_to_mu_before:.4f} -> {result.mean_cos_to_mu_after:.4f}"
    )
