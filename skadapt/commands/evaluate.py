"""``skadapt evaluate``: models side by side on mteb benchmarks, mteb tasks and local suites."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.console import console, fail, handle_errors, out
from skadapt.errors import SkadaptError
from skadapt.evaluate.verdicts import HARMS


class EvaluateOptionError(SkadaptError, ValueError):
    """A malformed command-line option."""


def _pairs(values: list[str] | None, option: str) -> dict[str, str]:
    result = {}
    for value in values or []:
        key, sep, item = value.partition("=")
        if not sep or not key:
            raise EvaluateOptionError(f"{option} {value!r}: expected KEY=VALUE")
        result[key] = item
    return result


def _models(values: list[str]) -> dict[str, str]:
    from skadapt.evaluate.runner import model_label
    from skadapt.model_sources import resolve_model

    taken: set[str] = set()
    models = {}
    for value in values:
        label, sep, path = value.partition("=")
        if sep and label and not Path(value).exists():
            taken.add(label)
        else:
            label, path = model_label(value, taken), value
        models[label] = resolve_model(path)
    return models


@handle_errors
def command(
    models: Annotated[
        list[str], typer.Argument(help="Model directories or Hub ids; LABEL=PATH names a column.")
    ],
    tasks: Annotated[
        list[str],
        typer.Option(
            "--tasks", "-t", help="mteb benchmark (e.g. 'MTEB(slk, v1)'), mteb task, or suite .yaml."
        ),
    ],
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Write mteb result files and the report here.")
    ] = None,
    language: Annotated[
        str,
        typer.Option(
            help="ISO 639-3 language: of local tasks that declare none, and the subset a multilingual mteb "
            "task named on its own is scored on (benchmarks are evaluated as mteb defines them)."
        ),
    ] = "slk",
    prompt: Annotated[
        list[str] | None,
        typer.Option("--prompt", help="Prompt policy TYPE=PROMPT, e.g. --prompt 'STS=query: ' (repeatable)."),
    ] = None,
    mirror: Annotated[
        list[str] | None, typer.Option("--mirror", help="TASK=DIR: load a built-in task from a local copy.")
    ] = None,
    batch_size: Annotated[int, typer.Option(min=1)] = 32,
    cache_dir: Annotated[
        Path | None,
        typer.Option("--cache", help="mteb result cache (default $SKADAPT_MTEB_CACHE or ~/.cache)."),
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Recompute every task.")] = False,
    margin: Annotated[float, typer.Option(help="TOST equivalence margin in points.")] = 2.0,
    alpha: Annotated[float, typer.Option(help="Significance level (TOST CI is 1-2*alpha).")] = 0.05,
    bootstrap: Annotated[
        int, typer.Option(min=0, help="Bootstrap resamples for per-task CIs of local suites (0: none).")
    ] = 1000,
    fail_on_harm: Annotated[
        bool, typer.Option(help="Exit 1 when a model harms the one before it (do-no-harm verdict).")
    ] = False,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing --out directory.")] = False,
    human: Annotated[
        Path | None, typer.Option(help="A scored `skadapt human` directory: add the Human comparison.")
    ] = None,
) -> None:
    """Evaluate models side by side; print the Table-1 averages and paired comparisons."""
    from rich.table import Table as RichTable

    from skadapt.artifacts import atomic_dir
    from skadapt.evaluate.stage import default_cache_dir, run_evaluation

    labelled = _models(models)
    options = {
        "language": language,
        "cache_dir": None if no_cache else (cache_dir or default_cache_dir()),
        "prompt_policy": _pairs(prompt, "--prompt"),
        "dataset_mirrors": _pairs(mirror, "--mirror"),
        "batch_size": batch_size,
        "margin": margin,
        "alpha": alpha,
        "bootstrap": bootstrap,
        "human_dir": human,
    }
    if human is not None and out_dir is None:
        fail("--human needs --out (the comparison is written into the report)")
    console.print(f"evaluating {', '.join(labelled)} on {', '.join(tasks)}")
    if out_dir is not None:
        with atomic_dir(out_dir, overwrite=overwrite) as tmp:
            table, items, verdicts = run_evaluation(labelled, tasks, tmp, **options)
        if human is not None:
            out.print((out_dir / "human.md").read_text(encoding="utf-8"))
    else:
        table, items, verdicts = run_evaluation(labelled, tasks, None, **options)

    summary = RichTable(title="main scores ×100 (All = mean over tasks, Type = mean over types)")
    for column in ("model", *table.types, "All", "Type"):
        summary.add_column(column, justify="left" if column == "model" else "right")
    for row in table.rows:
        cells = [f"{row.types[t]:.2f}" for t in table.types]
        summary.add_row(row.model, *cells, f"{row.all:.2f}", f"{row.type_mean:.2f}")
    out.print(summary)
    if items:
        stats = RichTable(
            title=f"paired over {items[0].n} tasks (TOST ±{margin:g}, {100 * (1 - 2 * alpha):g}% CI)"
        )
        for column in ("A", "B", "mean B-A", "Wilcoxon p", "CI", "TOST p", "equivalent"):
            stats.add_column(column)
        for c in items:
            stats.add_row(
                c.a,
                c.b,
                f"{c.mean_diff:+.2f}",
                f"{c.wilcoxon_p:.3f}",
                f"[{c.ci_low:+.2f}, {c.ci_high:+.2f}]",
                f"{c.tost_p:.3f}",
                "yes" if c.equivalent else "no",
            )
        out.print(stats)
    if verdicts:
        lines = RichTable(title="do-no-harm verdicts: each model against the one before it")
        for column in ("input -> output", "mean Δ", "CI", "Wilcoxon p", "tasks below −margin", "verdict"):
            lines.add_column(column)
        for v in verdicts:
            lines.add_row(
                f"{v.a} -> {v.b}",
                f"{v.mean_diff:+.2f}",
                f"[{v.ci_low:+.2f}, {v.ci_high:+.2f}]",
                f"{v.wilcoxon_p:.3f}",
                ", ".join(v.harmed_tasks) or "none",
                v.verdict,
            )
        out.print(lines)
    if out_dir is not None:
        console.print(f"report: {out_dir / 'report.md'}")
    harms = [f"{v.a} -> {v.b}" for v in verdicts if v.verdict == HARMS]
    if fail_on_harm and harms:
        fail(
            f"harm beyond the ±{margin:g} margin cannot be excluded for: {', '.join(harms)} "
            "(the mean over tasks, or a task whose interval lies below the margin: see report.md)"
        )
