"""``skadapt export``: deployment tiers of a model (ONNX fp32 + int8, a static model), each measured."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.commands.options import Options, config_command
from skadapt.console import console, handle_errors, out
from skadapt.export.config import ExportConfig


@handle_errors
@config_command
def command(
    model: Annotated[str, typer.Argument(help="sentence-transformers model directory.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory of the tiers and their report.")],
    config: Annotated[ExportConfig, Options("export")],
    language: Annotated[
        str | None,
        typer.Option(
            help="ISO 639-3 language: its corpus is the speed corpus without --tasks/--speed-corpus."
        ),
    ] = None,
    tasks: Annotated[
        list[str] | None,
        typer.Option("--tasks", help="Local suite .yaml whose texts the speed is measured on (repeatable)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the speed-text and static-corpus samples.")] = 42,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing --out directory.")] = False,
) -> None:
    """Export MODEL to ONNX (fp32, checked against PyTorch, and dynamic int8) and make a static model
    (distilled, then trained on MODEL: see export.static_training); measure texts/s, peak memory and size of
    each beside MODEL. Score their quality with
    `skadapt evaluate OUT/model/onnx/<file>.onnx OUT/static MODEL`."""
    from skadapt.artifacts import atomic_dir
    from skadapt.export.stage import (
        MODEL_DIR,
        check_model,
        export_tiers,
        require_packages,
        speed_texts,
        training_corpus,
    )
    from skadapt.languages import get_language
    from skadapt.model_sources import resolve_model

    parent = resolve_model(model)
    require_packages(config)
    entry = get_language(language) if language else None  # a usage error before any reading
    corpus = entry.corpus if entry else None
    check_model(parent, config)  # the model first: a missing or incomplete one is no corpus problem
    texts = speed_texts(config, list(tasks or ()), corpus, seed)
    fit_texts = training_corpus(
        config,
        parent,
        finetune_dir=None,
        eval_tasks=list(tasks or ()),
        test_texts=None,
        language=(entry.iso639_1 if entry else None) or "en",
        seed=seed,
    )
    console.print(f"export {model}: tiers {', '.join(config.tiers)}; speed on {len(texts)} texts")
    with atomic_dir(out_dir, overwrite=overwrite) as tmp:
        report = export_tiers(parent, tmp, config, texts, fit_texts, seed)
    out.print((out_dir / "export.md").read_text(encoding="utf-8"))
    for tier, rel in report["tiers"].items():
        out.print(f"[green]{tier}[/]: {out_dir / rel}")
    out.print(f"ONNX layout: {out_dir / MODEL_DIR} (SentenceTransformer(dir, backend='onnx'))")
