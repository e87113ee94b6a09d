"""``skadapt renorm``: append corpus-mean removal (R1/R2) or a corpus-basis projection + re-normalization to
a model (chosen on dev sets when given)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from skadapt.commands.options import Options, config_command
from skadapt.console import console, handle_errors, out, usage_error
from skadapt.renorm.config import RenormConfig

if TYPE_CHECKING:
    from skadapt.languages import Language


def _split_language(language: Language | None, corpus: str) -> str:
    """ISO 639-1 code of the sentence-splitting rules: from --language, else from the corpus spec."""
    from skadapt.trim.card import infer_language

    if language is not None:
        return language.iso639_1 or "en"
    inferred = infer_language(corpus)
    if inferred is None:
        usage_error(
            f"--language is required: the corpus {corpus} does not tell its language (sentence splitting)"
        )
    return inferred


@handle_errors
@config_command
def command(
    model: Annotated[str, typer.Argument(help="sentence-transformers model directory or Hub id.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory of the renormalized model.")],
    config: Annotated[RenormConfig, Options("renorm")],
    language: Annotated[
        str | None,
        typer.Option(
            help="ISO 639-3 language of the corpus: its sentence-splitting rules, and its corpus when "
            "--corpus is not given (default: from the corpus spec, if it tells)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the corpus sample.")] = 42,
    exclude_tasks: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude-tasks",
            help="Suite .yaml whose texts are dropped from the sample and from the dev sets (repeatable).",
        ),
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing --out directory.")] = False,
) -> None:
    """Estimate the mean embedding on a corpus sample and save MODEL + Dense + Normalize to --out.

    With dev sets (--config, or --set dev.kind=... dev.source=...) and --select dev or auto, none, R1 and
    R2 are scored on them and the best is kept; otherwise --method is applied.
    """
    from skadapt.artifacts import atomic_dir
    from skadapt.languages import get_language
    from skadapt.model_sources import resolve_model
    from skadapt.renorm.stage import renormalize
    from skadapt.tasks.contamination import collect_test_texts
    from skadapt.tasks.selection import evaluation_texts

    lang = get_language(language) if language is not None else None  # resolved once, here
    if config.corpus is None:
        if lang is None:
            usage_error("--corpus is required (or --language, for the language's corpus)")
        config.corpus = lang.corpus
    if config.select == "dev" and config.dev is None:
        usage_error(
            "--select dev needs dev sets: --config FILE with dev:, or --set dev.kind=... --set dev.source=..."
        )
    split_language = _split_language(lang, config.corpus)
    exclude = evaluation_texts(exclude_tasks or [], split_language)
    dev = config.dev if config.select != "method" else None
    test_texts = collect_test_texts(exclude_tasks or [])[0] if dev is not None else None
    console.print(
        f"renorm {config.method}: estimating the mean of {model} on {config.corpus} "
        f"({config.samples} sentences)"
    )
    with atomic_dir(out_dir, overwrite=overwrite) as tmp:
        result = renormalize(
            resolve_model(model),
            tmp,
            config,
            seed=seed,
            language=split_language,
            exclude=exclude,
            dev=dev,
            test_texts=test_texts,
        )
    out.print(
        f"[green]saved[/] {out_dir}: {result.method}, ||mu|| = {result.mu_norm:.4f} from {result.samples} "
        f"sentences (pool {result.pool}, {result.dropped_eval_overlap} evaluation sentences dropped), "
        f"mean cos(e, mu-hat) {result.mean_cos_to_mu_before:.4f} -> {result.mean_cos_to_mu_after:.4f}"
    )
    if result.selection is not None:
        out.print(f"chosen on dev: {result.selection.choice}: {result.selection.reason}", markup=False)
