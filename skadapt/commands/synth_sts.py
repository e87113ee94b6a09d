"""``skadapt synth-sts``: SkMTEB-style synthetic STS data from a corpus with an LLM."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.commands.options import Options, config_command
from skadapt.console import console, handle_errors, out
from skadapt.llm.config import LLMConfig
from skadapt.synth.config import SynthSTSConfig


@handle_errors
@config_command
def command(
    out_dir: Annotated[Path, typer.Option("--out", help="Output directory.")],
    language: Annotated[
        str, typer.Option(help="ISO 639-3 or 639-1 code of the sources' and variants' language (required).")
    ],
    config: Annotated[SynthSTSConfig, Options("synth_sts")],
    llm: Annotated[LLMConfig, Options("llm")],
    seed: Annotated[int, typer.Option(help="Seed of the source sample, the generation and the split.")] = 42,
    pilot: Annotated[
        int | None, typer.Option(min=1, help="Generate for K sources and write pilot_review.csv only.")
    ] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing --out directory.")] = False,
) -> None:
    """Pick source sentences, have the LLM write six variants (scores 0-5) each, check and save them.

    The LLM answers are cached: an interrupted run, run again, sends only the missing requests. --out
    appears only when the dataset is complete. Contamination settings: --set contamination.allow=true.
    Runs as the recipe's synth_sts stage does.
    """
    from skadapt.annotate.sheetio import refuse_to_replace
    from skadapt.api import synthesize_sts
    from skadapt.artifacts import read_json
    from skadapt.languages import resolve_language
    from skadapt.synth.run import REVIEW_ANSWERS

    if not overwrite:
        refuse_to_replace(out_dir, REVIEW_ANSWERS)
    lang = resolve_language(language)
    if config.contamination_tasks is None:
        config.contamination_tasks = list(lang.eval_tasks)
    console.print(
        f"synth-sts: {pilot or config.n_sources} {lang.name} sources from {config.corpus.source}, "
        f"LLM {llm.backend}:{llm.model}"
    )
    synthesize_sts(config, language=lang, out=out_dir, llm=llm, seed=seed, pilot=pilot, overwrite=overwrite)
    out.print((out_dir / "error_rates.md").read_text(encoding="utf-8"))
    if pilot:
        out.print(f"[green]pilot[/] review sheet: {out_dir / 'pilot_review.csv'}")
        return
    report = read_json(out_dir / "generation_report.json")
    splits = report["splits"]
    out.print(
        f"[green]saved[/] {out_dir / 'dataset'}: {report['pairs']} pairs (train {splits['train']}, held out "
        f"{splits['heldout']}); annotation sheets in {out_dir / 'annotation' / 'sheets'}"
    )
