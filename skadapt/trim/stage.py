"""The ``trim`` pipeline stage: trims the stage's input model into the stage directory."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from skadapt.results import TrimReport, TrimSummary
from skadapt.stage import Entrance, Input, Option, RunFacts, Stage, StageContext, corpus_input
from skadapt.trim.card import card_section
from skadapt.trim.config import TrimConfig
from skadapt.trim.parity import compare_tokenization
from skadapt.trim.plan import plan_trim
from skadapt.trim.trimmer import trim_model

log = logging.getLogger(__name__)
TOKENIZER = "tokenizer.json"


def run_stage(ctx: StageContext[TrimConfig], *, use_cache: bool = True) -> TrimSummary:
    """Trim ``ctx.input_model`` with the stage config into ``ctx.out_dir``.

    The parity sample is drawn with the run seed; the model card names the run language (without one,
    ``skadapt trim`` without ``--language``: the corpus's, if its spec tells). ``use_cache``: read and
    write the token-count cache (``skadapt trim --no-cache`` counts again).

    Returns:
        The trim summary (rows, parameters, counts fingerprint, coverage, parity, exact) for the manifest.
    """
    language = ctx.run.language
    result = trim_model(
        ctx.input_model,
        ctx.config,
        Path(ctx.out_dir),
        use_cache=use_cache,
        show_progress=True,
        seed=ctx.run.seed,
        language=(language.iso639_1 or language.code) if language is not None else None,
    )
    check = evaluation_tokenization(list(ctx.run.eval_tasks), Path(ctx.input_model), Path(ctx.out_dir))
    if check is not None:
        report = TrimReport.read(ctx.out_dir)
        assert report is not None  # trim_model wrote it
        report.evaluation_tokenization = check
        report.write(ctx.out_dir)
        result = {**result, "evaluation_tokenization": check}
    return TrimSummary.of(result)


def evaluation_tokenization(specs: list[str], original: Path, trimmed: Path) -> dict[str, Any] | None:
    """How the texts of the local suites among the evaluation task ``specs`` tokenize after trimming.

    The parity sample checks the trimming corpus; this shows what the trimmed vocabulary does to the text
    the model is evaluated on. None when the recipe has no local suite or a model has no tokenizer.json.
    """
    from tokenizers import Tokenizer

    from skadapt.tasks.selection import suites_in
    from skadapt.tasks.suite import suite_texts

    texts = sorted({text for suite in suites_in(specs) for text in suite_texts(suite)})
    if not texts or not (original / TOKENIZER).is_file() or not (trimmed / TOKENIZER).is_file():
        return None
    comparison = compare_tokenization(
        Tokenizer.from_file(str(original / TOKENIZER)), Tokenizer.from_file(str(trimmed / TOKENIZER)), texts
    )
    share = len(comparison.identical) / len(texts)
    log.info("trim: %.1f%% of %d evaluation texts tokenize identically", 100 * share, len(texts))
    return {
        "texts": len(texts),
        "identically_tokenized": len(comparison.identical),
        "identical_fraction": round(share, 6),
        "token_coverage": round(comparison.token_coverage, 6),
    }


def inputs(config: TrimConfig, run: RunFacts) -> list[Input]:
    """Its corpora."""
    named = (("trim.corpus", config.corpus), ("trim.extra_corpus", config.extra_corpus))
    return [corpus_input(field, corpus) for field, corpus in named if corpus is not None]


def defaults(config: TrimConfig, run: RunFacts) -> None:
    """The corpus: the language's (its registry entry's ``corpus``), unless the section names one."""
    if config.corpus is None and run.language is not None:
        config.corpus = run.language.corpus  # type: ignore[assignment]  # its short form, validated


def shows(out_dir: Path, result: TrimSummary) -> list[str]:
    """What ``skadapt trim`` prints: the selection's warnings, the rows and parameters before and after, the
    verdict, the most frequent dropped tokens (from its report, whatever the run returned)."""
    from rich.markup import escape

    from skadapt.artifacts import read_json

    report = read_json(out_dir / TrimReport.FILE)
    language_warning = (report.get("corpus_language") or {}).get("warning")
    warnings = [*report["selection"]["warnings"], *([language_warning] if language_warning else [])]
    lines = [f"[yellow]warning:[/] {escape(warning)}" for warning in warnings]
    rows, parameters = report["embedding_rows"], report["parameters"]
    lines.append(
        f"[green]trimmed[/] {escape(report['model'])} -> {escape(str(out_dir))}: {rows['before']:,} -> "
        f"{rows['after']:,} embedding rows, {parameters['before'] / 1e6:.2f}M -> "
        f"{parameters['after'] / 1e6:.2f}M parameters"
    )
    verdict = escape(report["verdict"])
    lines.append(f"[green]{verdict}[/]" if report["exact"] else f"[yellow]{verdict}[/]")
    dropped = report["coverage"]["top_dropped_tokens"]
    if dropped:
        shown = ", ".join(f"{d['token']!r} ({d['count']:,})" for d in dropped)
        lines.append(f"most frequent dropped tokens: {escape(shown)}")
    return lines


ENTRANCE = Entrance(
    help="""Trim MODEL's vocabulary to the tokens a corpus uses; writes a sentence-transformers model.

    The whole corpus is counted; a seeded sample of it is checked after trimming. When every counted
    token is kept the trim must be exact (every sampled text tokenizes identically, else it fails);
    otherwise the corpus coverage, the identical share and the most frequent dropped tokens are shown.
    The output directory also holds trim_report.json (counts, selection, parameters, coverage, parity;
    with --eval-tasks, how the evaluation suites' texts tokenize) and a model card (README.md). Runs as the
    recipe's trim stage does.
    """,
    model="Model directory (sentence-transformers/transformers) or Hub id.",
    out="Output directory (a sentence-transformers model).",
    seed="Seed of the parity sample.",
    language="ISO 639-3 or 639-1 code of the language, for the model card (default: from the corpus spec, "
    "if it tells).",
    options=(
        Option(
            "eval_tasks",
            list[str] | None,
            None,
            "Evaluation task specs: the texts of the local suites among them are tokenized by both models "
            "and the share kept identical is reported (repeatable).",
            value=lambda tasks: tasks or (),
        ),
        Option(
            "use_cache",
            bool,
            False,
            "Ignore cached token counts (count again, refresh the cache).",
            flag="--no-cache",
            value=lambda no_cache: not no_cache,
        ),
    ),
    check=lambda config: (
        "--corpus is required: a file/glob, hub:DATASET[:CONFIG[:SPLIT]] or wordfreq:LANG"
        if config.corpus is None
        else None
    ),
    shows=shows,
)


STAGE = Stage(
    "trim",
    TrimConfig,
    run_stage,
    makes_model=True,
    reads=("eval_tasks",),
    report=TrimReport,
    inputs=inputs,
    result=TrimSummary,
    plan=plan_trim,
    defaults=defaults,
    card=card_section,
    card_tag="vocabulary-trimming",
    entrance=ENTRANCE,
)
