"""The ``renorm`` stage's section of the published model card: the method, where mu came from, and the
dev-set choice between the candidates."""

from __future__ import annotations

from typing import Any

from skadapt.cards import number, power_table, table
from skadapt.results import RenormReport
from skadapt.results.renorm import Selection
from skadapt.stage import CardContext

METHODS = {
    "r1": "R1: subtract the corpus mean embedding mu (e - mu), then re-normalize",
    "r2": "R2: remove each embedding's component along mu-hat = mu/||mu||, then re-normalize",
}
PROJECTION = (
    "projection on the top {d} directions of the model's embeddings of the corpus sample (right singular "
    "vectors), then re-normalize"
)


def card_section(ctx: CardContext) -> list[str]:
    """Its card section (:attr:`skadapt.stage.Stage.card`)."""
    return renorm_section(ctx.report_as(RenormReport), ctx.config)


def _selection_lines(selection: Selection | None) -> list[str]:
    """The dev-set choice between the renorm candidates as a sentence and a table."""
    candidates = selection.candidates if selection is not None else []
    if selection is None or not candidates:
        return ["no dev-set choice was recorded"]
    sets = list(candidates[0].scores)
    rows = [
        [
            c.name,
            str(c.dimension or ""),
            *(number(c.scores.get(s), 4) for s in sets),
            number(c.mean, 4),
            _difference(c.difference, c.interval),
        ]
        for c in candidates
    ]
    level = ""
    if selection.confidence is not None and len(candidates) > 1:
        each = 1 - (1 - selection.confidence) / (len(candidates) - 1)
        level = (
            f"; a candidate replaces none only when the lower end of its paired bootstrap interval "
            f"({selection.replicates} resamples of the dev examples, one-sided {each:.2%}: "
            f"{selection.confidence:.0%} over all {len(candidates) - 1} candidates) is above 0"
        )
    sentence = f"`{selection.choice}`: {selection.reason or 'the best mean dev score'}{level}"
    header = ["candidate", "dimension", *sets, "mean", "vs none (points)"]
    power = []
    if selection.power:
        intro = (
            'The dev sets, scored for the input model; "detects ≥" is the smallest difference each tells '
            "apart with 80% power at alpha 0.05:"
        )
        power = ["", intro, "", *power_table(selection.power, "input score")]
    return [sentence, "", *table(header, rows), *power]


def _difference(difference: float | None, interval: list[float] | None) -> str:
    if difference is None or interval is None:
        return "—"
    return f"{100 * difference:+.2f} [{100 * interval[0]:+.2f}, {100 * interval[1]:+.2f}]"


def renorm_section(report: RenormReport | None, config: dict[str, Any]) -> list[str]:
    """Renormalization: method, where mu came from, sample size, ||mu||."""
    if report is None:
        return []
    selection = report.selection
    chosen = _selection_lines(selection)
    if not report.kept:
        return ["## Renormalization", "", "- not applied: " + chosen[0], *chosen[1:], ""]
    renorm, _, projection = report.method.lower().partition("proj-")
    steps = [METHODS.get(renorm.rstrip("+"), renorm.rstrip("+"))] if renorm else []
    if projection:
        steps.append(PROJECTION.format(d=projection))
    corpus = config.get("corpus")
    columns = corpus.get("columns") if isinstance(corpus, dict) else [config.get("text_column") or "text"]
    column = f" (column{'s' if len(columns) > 1 else ''} `{'`, `'.join(columns)}`)" if columns else ""
    prompt = report.prompt_text
    lines = [
        "## Renormalization",
        "",
        f"- method: {'; then '.join(steps)}",
        f"- mu estimated on `{report.corpus}`{column}: {number(report.samples)} sentences "
        f"(pool {number(report.pool)} from {number(report.documents)} texts, seed "
        f"{report.seed}), encoded with " + (f"the prompt `{prompt!r}`" if prompt else "no prompt"),
        f"- ||mu|| = {number(report.mu_norm, 4)}; mean cos(e, mu-hat) "
        f"{number(report.mean_cos_to_mu_before, 4)} -> "
        f"{number(report.mean_cos_to_mu_after, 4)}",
    ]
    if report.dropped_eval_overlap:
        lines.append(f"- {report.dropped_eval_overlap} sentences that occur in evaluation data were left out")
    if report.output_dimension and report.output_dimension != report.dimension:
        lines.append(f"- embedding dimension {report.dimension} -> {report.output_dimension}")
    if selection is not None:
        lines += ["- chosen on the dev sets: " + chosen[0], *chosen[1:]]
    lines += [
        "- saved as standard sentence-transformers modules (`Dense` with the projection and bias, then "
        "`Normalize`): no custom code",
        "",
    ]
    return lines
