"""``skadapt renorm``: append corpus-mean removal (R1/R2) or a corpus-basis projection + re-normalization to
a model (chosen on dev sets when given)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.commands.options import Options, config_command
from skadapt.console import console, fail, handle_errors, out, usage_error
from skadapt.renorm.config import RenormConfig
from skadapt.results.renorm import RenormReport


def _corpus_language(corpus: str) -> str:
    """The registered language the corpus spec tells (its sentence-splitting rules), for want of
    --language."""
    from skadapt.cards import infer_language
    from skadapt.languages import UnknownLanguageError, resolve_language

    inferred = infer_language(corpus)
    try:
        if inferred is not None:
            return resolve_language(inferred).code
    except UnknownLanguageError:
        pass
    usage_error(
        f"--language is required: the corpus {corpus} does not tell its language (sentence splitting)"
    )


@handle_errors
@config_command
def command(
    model: Annotated[str, typer.Argument(help="sentence-transformers model directory or Hub id.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory of the renormalized model.")],
    config: Annotated[RenormConfig, Options("renorm")],
    language: Annotated[
        str | None,
        typer.Option(
            help="ISO 639-3 or 639-1 code of the corpus language: its sentence-splitting rules, and its "
            "corpus when --corpus is not given (default: from the corpus spec, if it tells)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the corpus sample.")] = 42,
    exclude_tasks: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude-tasks",
            help="Evaluation task specs whose texts are dropped from the sample (local suites) and whose "
            "test texts are dropped from the dev sets (repeatable); an unreachable one stops the command.",
        ),
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing --out directory.")] = False,
) -> None:
    """Estimate the mean embedding on a corpus sample and save MODEL + Dense + Normalize to --out.

    With dev sets (--config, or --set dev.kind=... dev.source=...) and --select dev or auto, none, R1 and
    R2 are scored on them and the best is kept; otherwise --method is applied. Runs as the recipe's renorm
    stage does.
    """
    from skadapt.api import renormalize
    from skadapt.languages import resolve_language
    from skadapt.tasks.contamination import UnreachableTestDataError

    lang = resolve_language(language) if language is not None else None
    if config.corpus is None:
        if lang is None:
            usage_error("--corpus is required (or --language, for the language's corpus)")
        config.corpus = lang.corpus  # type: ignore[assignment]  # the short form, validated
    if config.select == "dev" and config.dev is None:
        usage_error(
            "--select dev needs dev sets: --config FILE with dev:, or --set dev.kind=... --set dev.source=..."
        )
    console.print(
        f"renorm {config.method}: estimating the mean of {model} on {config.corpus.source} "
        f"({config.samples} sentences)"
    )
    try:  # the unreachable task is named as this command's option, not as a recipe field
        result = renormalize(
            model,
            config,
            language=lang or _corpus_language(config.corpus.source),
            out=out_dir,
            seed=seed,
            eval_tasks=exclude_tasks or (),
            overwrite=overwrite,
        )
    except UnreachableTestDataError as error:
        fail(error.for_command("--exclude-tasks"))
    report = RenormReport.parse(result) if isinstance(result, dict) else result
    out.print(
        f"[green]saved[/] {out_dir}: {report.method}, ||mu|| = {report.mu_norm:.4f} from {report.samples} "
        f"sentences (pool {report.pool}, {report.dropped_eval_overlap} evaluation sentences dropped), "
        f"mean cos(e, mu-hat) {report.mean_cos_to_mu_before:.4f} -> {report.mean_cos_to_mu_after:.4f}"
    )
    if report.selection is not None:
        out.print(f"chosen on dev: {report.selection.choice}: {report.selection.reason}", markup=False)
