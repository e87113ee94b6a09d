"""``skadapt robustness``: models scored on LLM-rewritten evaluation texts against the originals."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.commands.options import Options, config_command
from skadapt.console import console, handle_errors, out
from skadapt.llm.config import LLMConfig
from skadapt.results import RobustnessReport
from skadapt.robustness.config import RobustnessConfig


@handle_errors
@config_command
def command(
    models: Annotated[
        list[str], typer.Argument(help="Model directories or Hub ids; LABEL=PATH names a row.")
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for the report, figures and rewrites.")],
    language: Annotated[str, typer.Option(help="ISO 639-3 or 639-1 code of the texts (required).")],
    config: Annotated[
        RobustnessConfig,
        Options("robustness", exclude=frozenset({"models"}), short={"tasks": "-t"}),
    ],
    llm: Annotated[LLMConfig, Options("llm")],
    overwrite: Annotated[bool, typer.Option(help="Replace an existing --out directory.")] = False,
) -> None:
    """Rewrite the tasks' texts per transformation and seed, score every model, print the profile.

    The rewrites and mteb results are kept in a hidden work directory next to --out until the command
    succeeds: an interrupted run resumes (the LLM answers are cached too); --out appears only when done.
    """
    from skadapt.api import run_robustness
    from skadapt.artifacts import refuse_nonempty
    from skadapt.commands.evaluate import check_prompt_policy, labelled_models
    from skadapt.languages import resolve_language

    lang = resolve_language(language)
    if not overwrite:  # before any model is fetched
        refuse_nonempty(out_dir)
    check_prompt_policy(config.prompt_policy)
    labelled = labelled_models(models, lang)
    specs = list(config.tasks) or list(lang.eval_tasks)
    console.print(f"robustness: {', '.join(labelled)} on {', '.join(specs)}; LLM {llm.backend}:{llm.model}")
    run_robustness(labelled, config, language=lang, out=out_dir, llm=llm, overwrite=overwrite)
    out.print((out_dir / RobustnessReport.MARKDOWN).read_text(encoding="utf-8"))
    out.print(f"[green]saved[/] {out_dir / RobustnessReport.FILE}, figures in {out_dir / 'figures'}")
