"""``skadapt synth-sts``: SkMTEB-style synthetic STS data from a corpus with an LLM."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.commands import llm_options as opt
from skadapt.console import console, handle_errors, out


@handle_errors
def command(
    source: Annotated[str, typer.Option(help="Corpus the source sentences come from (any source spec).")],
    out_dir: Annotated[Path, typer.Option("--out", help="Output directory.")],
    llm_model: opt.Model,
    language: Annotated[str, typer.Option(help="ISO 639-3 code.")] = "slk",
    n_sources: Annotated[int, typer.Option(min=1, help="Source sentences (x6 pairs).")] = 100,
    seed: int = 42,
    pilot: Annotated[
        int | None, typer.Option(min=1, help="Generate for K sources and write pilot_review.csv only.")
    ] = None,
    text_column: str = "text",
    min_chars: Annotated[int, typer.Option(min=1)] = 60,
    max_chars: Annotated[int, typer.Option(min=1)] = 200,
    max_documents: Annotated[int | None, typer.Option(min=1, help="Corpus texts read.")] = None,
    temperature: Annotated[float, typer.Option(min=0, max=2)] = 1.0,
    prompt_template: Annotated[
        str | None, typer.Option(help="Prompt file replacing the built-in one.")
    ] = None,
    per_level: Annotated[int, typer.Option(min=1, help="Sources held out for human annotation.")] = 50,
    annotators: Annotated[int, typer.Option(min=1)] = 3,
    contamination_tasks: Annotated[
        list[str] | None,
        typer.Option(
            "--contamination-task",
            help="Evaluation task/suite the train split must not overlap "
            "(repeatable; default: the language's benchmark).",
        ),
    ] = None,
    contamination_allow: Annotated[
        bool, typer.Option(help="Go on when the evaluation data cannot be reached or overlaps.")
    ] = False,
    llm_backend: opt.Backend = "openai",
    llm_base_url: opt.BaseUrl = None,
    llm_api_key_env: opt.ApiKeyEnv = "OPENAI_API_KEY",
    llm_revision: opt.Revision = None,
    llm_cache: opt.Cache = None,
    llm_max_tokens: opt.MaxTokens = 1024,
    llm_attempts: opt.Attempts = 3,
    llm_concurrency: opt.Concurrency = 8,
) -> None:
    """Pick source sentences, have the LLM write six variants (scores 0-5) each, check and save them."""
    from skadapt.languages import get_language
    from skadapt.recipe import ContaminationConfig, SynthSTSConfig, section_from_options
    from skadapt.synth.run import synthesize_sts

    lang = get_language(language)
    llm = opt.llm_config(
        llm_backend,
        llm_model,
        llm_base_url,
        llm_api_key_env,
        llm_revision,
        llm_cache,
        llm_max_tokens,
        llm_attempts,
        llm_concurrency,
    )
    config = section_from_options(
        SynthSTSConfig,
        source=source,
        text_column=text_column,
        n_sources=n_sources,
        min_chars=min_chars,
        max_chars=max_chars,
        max_documents=max_documents,
        temperature=temperature,
        prompt_template=prompt_template,
        annotation_sample_per_level=per_level,
        annotators=annotators,
        contamination_tasks=lang.eval_tasks if contamination_tasks is None else contamination_tasks,
        contamination=ContaminationConfig(allow=contamination_allow),
    )
    console.print(
        f"synth-sts: {pilot or n_sources} {lang.name} sources from {source}, LLM {llm.backend}:{llm.model}"
    )
    report = synthesize_sts(config, llm, lang, out_dir, seed=seed, pilot=pilot)
    out.print((out_dir / "error_rates.md").read_text(encoding="utf-8"))
    if pilot:
        out.print(f"[green]pilot[/] review sheet: {out_dir / 'pilot_review.csv'}")
        return
    splits = report["splits"]
    out.print(
        f"[green]saved[/] {out_dir / 'dataset'}: {report['pairs']} pairs (train {splits['train']}, held out "
        f"{splits['heldout']}); annotation sheets in {out_dir / 'annotation' / 'sheets'}"
    )
