"""The model card: sentence-transformers' own card, with skadapt's metadata and sections added.

sentence-transformers renders the base card (model details, architecture, usage snippet, framework versions)
from the loaded model's ``model_card_data`` -- the card ``SentenceTransformer.save`` writes. skadapt then
parses it with ``huggingface_hub.ModelCard`` and adds:

- YAML metadata: language, license, base_model, ``library_name: sentence-transformers``,
  ``pipeline_tag: sentence-similarity``, tags, Hub datasets, and a ``model-index`` with the evaluation;
- sections: usage with the model's prompts; then each stage's own section, in run order, as the stage
  declares it (``Stage.card``: vocabulary trimming, training data with sizes and licenses and
  hyperparameters, renormalization, evaluation beside the base model (and humans) with the do-no-harm
  verdicts, robustness, ...); then the deployment tiers, the data read from the Hub, licenses, limitations.

Nothing is looked up on the Hub: everything comes from the model directory and the run's reports.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skadapt import artifacts
from skadapt.cards import DataLicense
from skadapt.model_sources import HUB_ID
from skadapt.publish import sections
from skadapt.publish.target import Target
from skadapt.publish.tiers import tier_rows, tiers_markdown
from skadapt.results import EvaluationReport, RobustnessReport, TrainingReport, TrimReport
from skadapt.results.evaluate import ModelEvaluation
from skadapt.stage import CardContext

log = logging.getLogger("skadapt")

TAGS = ("sentence-transformers", "sentence-similarity", "feature-extraction", "skadapt")
REPORTS_DIR = "skadapt"
"""Folder of the uploaded repository holding the run's reports."""
_INSERT_BEFORE = ("\n<!--\n## Bias, Risks and Limitations", "\n## Training Details", "\n## Citation")


@dataclass
class CardFacts:
    """What the card says besides the reports: names, language, licenses.

    Attributes:
        repo_id: The Hub repository (ORG/NAME) the card is for.
        language: ISO 639-1 (else 639-3) code of the target language, if known.
        language_name: Its English name, if known.
        base_model: The base model's Hub id, if known.
        model_license: The published model's license, if set.
        base_license: The base model's license, if known.
        datasets: Training data licenses.
        warnings: License matters the publisher must decide on.
    """

    repo_id: str
    language: str | None = None
    language_name: str | None = None
    base_model: str | None = None
    model_license: str | None = None
    base_license: str | None = None
    datasets: list[DataLicense] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def is_hub_id(value: str | None) -> bool:
    """Whether ``value`` looks like a Hub repository id (ORG/NAME), not a local path."""
    return bool(value) and bool(HUB_ID.fullmatch(str(value))) and not Path(str(value)).exists()


def model_prompts(model_dir: Path) -> dict[str, str]:
    """The prompts of ``config_sentence_transformers.json`` (name -> text), or {}."""
    try:
        config = json.loads((model_dir / "config_sentence_transformers.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in (config.get("prompts") or {}).items() if v}


def eval_candidates(target: Target) -> list[str]:
    """Row labels the published model may have in the evaluation report, best first."""
    candidates = []
    report = target.reports.of(EvaluationReport)
    models = report.settings.models if report is not None else {}
    anchor = target.run_dir or target.model_dir.parent  # the report records paths relative to the run
    for label, path in models.items():
        given = Path(artifacts.resolved_path(path, anchor))
        if given.parts[-2:] == target.model_dir.parts[-2:] or given.resolve() == target.model_dir.resolve():
            candidates.append(str(label))
    if target.stage:
        candidates.append(target.stage)
    candidates.append("final")
    return candidates


def _mteb_dataset(task: str) -> tuple[str, str | None]:
    """(dataset id, revision) of an mteb task; the task name itself for local suite tasks."""
    try:
        import mteb

        metadata = mteb.get_task(task).metadata
        return str(metadata.dataset["path"]), metadata.dataset.get("revision")
    except Exception:  # a local suite task, or mteb cannot resolve it offline
        return task, None


def eval_results(evaluation: ModelEvaluation) -> list[Any]:
    """``huggingface_hub.EvalResult`` per task: the published model's main score (x100)."""
    from huggingface_hub import EvalResult

    results = []
    for task, task_type in evaluation.task_types.items():
        score = evaluation.scores.get(evaluation.label, {}).get(task)
        if score is None:
            continue
        dataset_id, revision = _mteb_dataset(task)
        results.append(
            EvalResult(
                task_type=task_type,
                task_name=task_type,
                dataset_type=dataset_id,
                dataset_name=task,
                dataset_split="test",
                dataset_revision=revision,
                metric_type=evaluation.metrics.get(task, "main_score"),
                metric_name=f"{evaluation.metrics.get(task, 'main_score')} (x100)",
                metric_value=round(float(score), 4),
            )
        )
    return results


def sentence_transformers_card(model_dir: Path, facts: CardFacts) -> str:
    """The card sentence-transformers generates for the model (offline: no Hub look-ups, no widget).

    Its ``train_datasets`` stay empty: the template's training section wants the trainer's column
    statistics; skadapt's own training section lists the datasets.
    """
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.model_card import generate_model_card

    model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    data = model.model_card_data
    data.local_files_only = True
    data.generate_widget_examples = False
    data.set_model_id(facts.repo_id)
    data.model_name = f"{facts.repo_id.rsplit('/', 1)[-1]}"
    if facts.language:
        data.set_language(facts.language)
    if facts.model_license:
        data.set_license(facts.model_license)
    if facts.base_model:
        data.base_model = facts.base_model  # set_base_model() would ask the Hub to confirm it
    return generate_model_card(model)


def _insert(text: str, addition: str) -> str:
    """``addition`` before ST's later sections (limitations stub, training details), else at the end."""
    for marker in _INSERT_BEFORE:
        index = text.find(marker)
        if index >= 0:
            return text[:index] + "\n" + addition + text[index:]
    return text.rstrip("\n") + "\n\n" + addition


def hub_datasets(facts: CardFacts) -> list[str]:
    """The Hub ids of the ``hub:`` training datasets (the card's ``datasets`` metadata)."""
    return [
        data.source[4:].split(":", 1)[0].split("@", 1)[0]
        for data in facts.datasets
        if data.source.startswith("hub:")
    ]


def skadapt_text(target: Target, facts: CardFacts) -> str:
    """skadapt's sections of the card as Markdown: the adaptation and the usage, each stage's own section in
    run order (``Stage.card``), then the deployment tiers, the Hub data, the licenses and the limitations."""
    reports = target.reports
    evaluation = evaluation_of(target)
    evaluated = reports.of(EvaluationReport)
    policy = dict(evaluated.settings.prompt_policy) if evaluated is not None else {}
    training = reports.of(TrainingReport)
    max_length = training.max_seq_length.inference if training is not None else None
    parts = [
        *_intro(target, facts),
        *sections.usage_section(facts.repo_id, model_prompts(target.model_dir), policy),
        *_stage_sections(target, facts, evaluation),
        *_nonempty(tiers_markdown(tier_rows(target), facts.repo_id)),
        *sections.hub_sources_section(target.manifests),
        *sections.licenses_section(facts.model_license, facts.base_model, facts.base_license, facts.datasets),
        *sections.limitations_section(
            facts.language_name,
            reports.of(TrimReport),
            evaluation,
            reports.of(RobustnessReport),
            target.base_model,
            max_length,
        ),
    ]
    return "\n".join(parts)


def _nonempty(text: str) -> list[str]:
    """``text`` as one part, or none when it is empty."""
    return [text] if text else []


def _present(target: Target) -> list[str]:
    """The stages the run has (a report or a finished manifest), in run order."""
    present = target.reports.by_stage
    return [s.name for s in target.stages if s.name in present or s.name in target.manifests]


def _intro(target: Target, facts: CardFacts) -> list[str]:
    """The "Adaptation" section: the base model, the language and the model stages the model went through
    (one that chose on dev to keep its input is said so)."""
    makers = {s.name for s in target.stages if s.makes_model}
    made = [
        f"{stage} (chosen on dev: not kept)" if not _kept(target, stage) else stage
        for stage in _present(target)
        if stage in makers
    ]
    return [
        "## Adaptation",
        "",
        f"`{facts.base_model or 'The base model'}` adapted"
        + (f" to {facts.language_name}" if facts.language_name else "")
        + " with skadapt ("
        + (" -> ".join(made) if made else "no recorded stages")
        + "). This is a plain sentence-transformers model: `SentenceTransformer` loads it without skadapt "
        "and without `trust_remote_code`."
        + (f" The reports this card is built from are in `{REPORTS_DIR}/`." if target.run_dir else ""),
        "",
    ]


def _kept(target: Target, stage: str) -> bool:
    """Whether a model stage kept the model it made (its manifest says ``kept: false`` when it chose on dev
    to keep its input)."""
    manifest = target.manifests.get(stage)
    return manifest is None or manifest.kept


def _stage_sections(target: Target, facts: CardFacts, evaluation: ModelEvaluation | None) -> list[str]:
    """Each present stage's own section (``Stage.card``), in run order."""
    lines: list[str] = []
    present = _present(target)
    for stage in target.stages:
        if stage.card is None or stage.name not in present:
            continue
        context = CardContext(
            stage=stage.name,
            report=target.reports.by_stage.get(stage.name),
            config=target.config(stage.name),
            non_default_config=target.non_default_config(stage.name),
            evaluation=evaluation,
            licenses=facts.datasets,
        )
        lines += stage.card(context)
    return lines


def evaluation_of(target: Target) -> ModelEvaluation | None:
    """The run's evaluation of the published model, or None when it has none (no evaluation report, or
    one that did not score this model)."""
    report = target.reports.of(EvaluationReport)
    return report.of_model(eval_candidates(target)) if report is not None else None


def unevaluated_text(language_name: str | None) -> str:
    """What the card's first section says of a model skadapt has no evaluation of."""
    tasks = f"{language_name} tasks" if language_name else "any task"
    return (
        f"**Not evaluated.** skadapt has no evaluation of this model (its run has no `evaluate` stage "
        f"that scored it): its quality on {tasks} is unknown, and it may score below its base model. "
        "Evaluate it (`skadapt evaluate`, or an `evaluate` section in the recipe) before relying on it."
    )


def _in_first_section(text: str, addition: str) -> str:
    """``addition`` as the last paragraph of the card's first section (before its first ``## ``)."""
    index = text.find("\n## ")
    if index < 0:
        return text.rstrip("\n") + "\n\n" + addition + "\n"
    return text[:index].rstrip("\n") + "\n\n" + addition + "\n" + text[index:]


def build_card(target: Target, facts: CardFacts) -> str:
    """The complete card text (YAML metadata + Markdown) for the target's model."""
    from huggingface_hub import ModelCard

    base_text = sentence_transformers_card(target.model_dir, facts)
    card = ModelCard(base_text)
    data = card.data
    data.language = [facts.language] if facts.language else None
    data.license = facts.model_license
    data.base_model = facts.base_model if is_hub_id(facts.base_model) else None
    data.library_name = "sentence-transformers"
    data.pipeline_tag = "sentence-similarity"
    present = target.reports.by_stage
    stage_tags = [s.card_tag for s in target.stages if s.card_tag and s.name in present]
    data.tags = list(dict.fromkeys([*(data.tags or []), *TAGS, *stage_tags]))
    data.datasets = hub_datasets(facts) or None
    evaluation = evaluation_of(target)
    if evaluation is not None:
        data.model_name = facts.repo_id.rsplit("/", 1)[-1]
        data.eval_results = eval_results(evaluation) or None
        data.tags = [*data.tags, "mteb"] if data.eval_results else data.tags
    text = _insert(card.text, skadapt_text(target, facts))
    if evaluation is None:
        text = _in_first_section(text, unevaluated_text(facts.language_name))
    card.text = text.rstrip("\n") + "\n"
    return str(card)
