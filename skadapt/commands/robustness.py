"""``skadapt robustness``: models scored on LLM-rewritten evaluation texts against the originals."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from skadapt.commands import llm_options as opt
from skadapt.console import console, handle_errors, out


@handle_errors
def command(
    models: Annotated[
        list[str], typer.Argument(help="Model directories or Hub ids; LABEL=PATH names a row.")
    ],
    tasks: Annotated[list[str], typer.Option("--tasks", "-t", help="mteb benchmark/task or suite .yaml.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for the report, figures and rewrites.")],
    llm_model: opt.Model,
    transforms: Annotated[
        str | None, typer.Option(help="Comma-separated transformations, or 'all' (default: the preset's).")
    ] = None,
    seeds: Annotated[str | None, typer.Option(help="Comma-separated seeds, e.g. 1337,1338,1339.")] = None,
    preset: Annotated[
        Literal["pteb", "hteb", "hteb-min"] | None, typer.Option(help="PTEB/HTEB settings.")
    ] = None,
    language: Annotated[str, typer.Option(help="ISO 639-3 language of the texts.")] = "slk",
    prompt: Annotated[
        list[str] | None, typer.Option("--prompt", help="Prompt policy TYPE=PROMPT (repeatable).")
    ] = None,
    temperature: Annotated[float | None, typer.Option(min=0, max=2)] = None,
    batch_size: Annotated[int, typer.Option(min=1)] = 32,
    llm_backend: opt.Backend = "openai",
    llm_base_url: opt.BaseUrl = None,
    llm_api_key_env: opt.ApiKeyEnv = "OPENAI_API_KEY",
    llm_revision: opt.Revision = None,
    llm_cache: opt.Cache = None,
    llm_max_tokens: opt.MaxTokens = 512,
    llm_attempts: opt.Attempts = 3,
    llm_concurrency: opt.Concurrency = 8,
) -> None:
    """Rewrite the tasks' texts per transformation and seed, score every model, print the profile."""
    from skadapt.commands.evaluate import _models, _pairs
    from skadapt.evaluate.selection import select_tasks
    from skadapt.languages import get_language
    from skadapt.robustness.run import RobustnessPlan, run_robustness
    from skadapt.robustness.transforms import resolve_settings

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
    names = transforms.split(",") if transforms else None
    seed_list = [int(s) for s in seeds.split(",")] if seeds else None
    settings = resolve_settings(preset, names, seed_list, temperature, None)
    plan = RobustnessPlan(
        models=_models(models),
        prompt_policy=_pairs(prompt, "--prompt"),
        batch_size=batch_size,
        **settings,  # type: ignore[arg-type]
    )
    selected = select_tasks(tasks, language=language)
    console.print(
        f"robustness: {len(plan.models)} model(s), {len(selected)} task(s), {', '.join(plan.transforms)} "
        f"x seeds {', '.join(map(str, plan.seeds))}; LLM {llm.backend}:{llm.model}"
    )
    run_robustness(selected, plan, llm, get_language(language), out_dir)
    out.print((out_dir / "robustness.md").read_text(encoding="utf-8"))
    out.print(f"[green]saved[/] {out_dir / 'robustness.json'}, figures in {out_dir / 'figures'}")
