"""Running models on tasks through ``mteb.evaluate`` with a prompt policy and a resumable result cache."""

from __future__ import annotations

import copy
import json
import logging
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from skadapt import artifacts
from skadapt.errors import SkadaptError
from skadapt.prompts import model_prompts, role_prompt
from skadapt.results.evaluate import TaskScore
from skadapt.tasks.embedding_memo import memoize

if TYPE_CHECKING:
    from mteb.abstasks.abstask import AbsTask
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

log = logging.getLogger("skadapt.evaluate")


class EvaluationError(SkadaptError):
    """A model cannot be loaded or a prompt policy is invalid."""


def validate_prompt_policy(policy: dict[str, str], field: str = "prompt_policy") -> dict[str, str]:
    """Check that prompt-policy keys are mteb task types, optionally with ``-query``/``-document``;
    ``field``: the policy's name in the message, as the caller's user writes it (``--prompt-policy``,
    ``evaluate.prompt_policy``).

    Raises:
        EvaluationError: A key that is not a task type.
    """
    from mteb.abstasks.task_metadata import TaskType
    from mteb.types import PromptType

    types = set(get_args(TaskType))
    endings = tuple(f"-{p.value}" for p in PromptType)
    for key in policy:
        base = key.rsplit("-", 1)[0] if key.endswith(endings) else key
        if base not in types:
            raise EvaluationError(
                f"{field} {key}: not an mteb task type (use e.g. STS, Clustering, "
                "PairClassification, Classification, BitextMining, optionally with -query/-document)"
            )
    return policy


def model_label(path: str, taken: set[str]) -> str:
    """A short unique label for a model path (its directory name)."""
    label = Path(path.rstrip("/")).name or path
    candidate, index = label, 2
    while candidate in taken:
        candidate, index = f"{label}-{index}", index + 1
    taken.add(candidate)
    return candidate


def model_fingerprint(path: str) -> str:
    """Identity of a model's files (local dir) or its Hub id."""
    local = Path(path)
    return artifacts.path_fingerprint(local) if local.exists() else path


def load_encoder(
    path: str, label: str, prompt_policy: dict[str, str] | None = None
) -> SentenceTransformerEncoderWrapper:
    """Load a sentence-transformers model (a directory, Hub id or ONNX file of a directory, see
    :mod:`skadapt.tasks.backends`) wrapped for mteb, with the policy added to its own prompts.

    mteb resolves prompts per task: task name, then ``<TaskType>-<query|document>``, then task type, then
    prompt type. The model's own ``query``/``passage`` prompts stay in place; the policy adds task-type
    keys (``{"STS": "query: "}``), so mteb passes ``query: `` on STS while retrieval keeps query/passage.

    The mteb model name/revision are set from the label and a fingerprint of the files and prompts, so the
    result cache never mixes two models or two prompt policies.

    Raises:
        EvaluationError: The model cannot be loaded or the policy has invalid keys.
    """
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    from skadapt.tasks.backends import load_sentence_model, tokenizer_with_vocab

    policy = validate_prompt_policy(dict(prompt_policy or {}))
    try:
        model = memoize(load_sentence_model(path, device="cpu" if not _has_accelerator() else None))
    except (OSError, ValueError) as error:
        raise EvaluationError(f"{path}: cannot load as a sentence-transformers model ({error})") from None
    own = role_prompts(model.prompts or {}, path)
    prompts = {**own, **policy}
    wrapper_log = logging.getLogger("mteb.models.sentence_transformer_wrapper")
    level = wrapper_log.level
    wrapper_log.setLevel(logging.ERROR)  # "prompts will overwrite the model's": intended here
    try:
        with warnings.catch_warnings(), tokenizer_with_vocab(model):
            warnings.simplefilter("ignore")
            wrapper = SentenceTransformerEncoderWrapper(model, model_prompts=prompts or None)
    finally:
        wrapper_log.setLevel(level)
    revision = artifacts.hash_json(
        {"files": model_fingerprint(path), "prompts": own, "policy": policy, "model": path}
    )[:16]
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", label)
    wrapper.mteb_model_meta = wrapper.mteb_model_meta.model_copy(
        update={"name": f"skadapt/{safe}", "revision": revision}
    )
    return wrapper


def role_prompts(prompts: dict[str, str | None], name: str = "") -> dict[str, str]:
    """The model's query/document prompts under mteb's keys (its own, else its family's defaults).

    sentence-transformers 6 adds an empty ``document`` prompt to every model, which shadows an E5-style
    ``passage`` prompt in ``encode_document``; the first non-empty of document/passage/corpus is used.
    """
    known = model_prompts(prompts, name)
    roles = {"query": role_prompt(known, "query"), "document": role_prompt(known, "document")}
    return {role: text for role, text in roles.items() if text}


def _has_accelerator() -> bool:
    import torch

    return torch.cuda.is_available()


def _drop_stale(cache: Any, task: AbsTask, meta: Any) -> None:
    """Remove a cached result computed on different task data (local tasks carry a data hash); set aside
    one that is no JSON (mteb writes it in place: a run killed meanwhile leaves its first part), with a
    line: the task is computed again."""
    path = cache.get_task_result_path(task.metadata.name, meta)
    data = artifacts.read_json(path)
    if isinstance(data, dict) and data.get("dataset_revision") != task.metadata.revision:
        path.unlink(missing_ok=True)
    elif data is None and path.is_file():
        aside = path.with_name(f"{path.name}.damaged")
        path.replace(aside)
        log.warning(
            "task %s: its cached result %s is not readable JSON (cut short?); set aside as %s, the task "
            "is computed again",
            task.metadata.name,
            path,
            aside,
        )


def task_score(result: Any, task: AbsTask, label: str) -> TaskScore:
    """The main score of a task result over the task's eval splits and subsets, in points.

    A cached result may hold more subsets than the task now asks for (a multilingual task filtered to one
    language after an unfiltered run): it is filtered to the task's subsets and splits first.
    """
    result = result.validate_and_filter_scores(task)
    splits = [s for s in task.eval_splits if s in result.scores] or None
    value = float(result.get_score(splits=splits))
    meta = task.metadata
    entries = [entry for split in splits or list(result.scores) for entry in result.scores[split]]
    return TaskScore(
        model=label,
        task=meta.name,
        type=str(meta.type),
        metric=meta.main_score,
        score=round(100 * value, 4),
        experiments=experiment_scores(entries, meta.main_score),
    )


def experiment_scores(entries: list[dict[str, Any]], metric: str) -> list[float] | None:
    """Per-experiment main scores (x100) of mteb score entries (one per subset and split), averaged over
    the entries; None when mteb kept none or the entries disagree in their number of experiments."""
    runs = []
    for entry in entries:
        if isinstance(entry.get("scores_per_experiment"), list):
            values = [run.get(metric) for run in entry["scores_per_experiment"]]
        elif metric == "v_measure" and isinstance(entry.get("v_measures"), dict):
            values = [v for level in entry["v_measures"].values() for v in level]
        elif metric == "v_measure" and isinstance(entry.get("v_measures"), list):
            values = list(entry["v_measures"])
        else:
            return None
        if len(values) < 2 or not all(isinstance(v, int | float) for v in values):
            return None
        runs.append([float(v) for v in values])
    if not runs or len({len(run) for run in runs}) != 1:
        return None
    return [round(100 * sum(column) / len(column), 4) for column in zip(*runs, strict=True)]


def evaluate_model(
    path: str,
    label: str,
    tasks: list[AbsTask],
    *,
    cache_dir: Path | None,
    results_dir: Path | None = None,
    prompt_policy: dict[str, str] | None = None,
    batch_size: int = 32,
    show_progress: bool = False,
    on_model: Callable[[str, Any], None] | None = None,
    encoder: SentenceTransformerEncoderWrapper | None = None,
    recompute: bool = False,
) -> list[TaskScore]:
    """Evaluate one model on tasks with ``mteb.evaluate``; finished tasks come from the cache.

    Args:
        path: Model directory or Hub id.
        label: Name of the model in tables.
        tasks: mteb task objects.
        cache_dir: mteb ``ResultCache`` directory (None: no cache).
        results_dir: Where to write mteb's per-task result JSON files.
        prompt_policy: Task type -> prompt, added to the model's prompts.
        batch_size: Encoding batch size.
        show_progress: Show mteb's own (tqdm) progress bars. Otherwise, on a terminal (see
            ``skadapt.console.progress_enabled``), one progress bar per model shows the tasks done, the
            task running, and the texts encoded with their throughput (texts/s).
        on_model: Called with (label, the loaded SentenceTransformer) after the model's tasks, while its
            embedding memo is alive (the bootstrap reuses the embeddings mteb computed).
        encoder: The model already loaded by :func:`load_encoder` (its embedding memo carries over
            between calls); default: load ``path``.
        recompute: Ignore cached results: compute every task and refresh the cache.
    """
    import mteb

    from skadapt.console import counting_forward_passes, progress_group

    encoder = encoder or load_encoder(path, label, prompt_policy)
    cache = mteb.ResultCache(cache_path=str(cache_dir)) if cache_dir is not None else None
    if cache is not None:
        for task in tasks:
            _drop_stale(cache, task, encoder.mteb_model_meta)
    by_name = {}
    with progress_group(False if show_progress else None) as bars:
        bar = bars.bar(f"evaluating {label}", total=len(tasks), unit="tasks", rate_unit="texts")
        model = getattr(encoder, "model", None)
        with counting_forward_passes(model, bar.count, enabled=bar.enabled):
            for task in tasks:  # one call per task: a task whose data cannot be loaded is named in the error
                bar.describe(f"evaluating {label}: {task.metadata.name}")
                try:
                    result = mteb.evaluate(
                        encoder,
                        task,
                        cache=cache,
                        encode_kwargs={"batch_size": batch_size, "show_progress_bar": show_progress},
                        show_progress_bar=show_progress,
                        overwrite_strategy="always" if recompute else "only-missing",
                        co2_tracker=False,
                    )
                except (ConnectionError, OSError) as error:  # Hub unreachable, dataset missing, bad mirror
                    raise EvaluationError(
                        f"task {task.metadata.name}: cannot load its data ({type(error).__name__}: {error}); "
                        "check the network/HF_TOKEN, or point the task at a local copy with "
                        "evaluate.dataset_mirrors / --dataset-mirrors TASK=DIR"
                    ) from None
                by_name.update({r.task_name: r for r in result.task_results})
                bar.advance()
        bar.describe(f"evaluated {label}")
    scores = []
    for task in tasks:
        task_result = by_name.get(task.metadata.name)
        if task_result is None:
            raise EvaluationError(f"mteb returned no result for task {task.metadata.name} ({label})")
        if results_dir is not None:
            target = results_dir / label / f"{task.metadata.name}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(task_result.to_dict(), indent=2, default=str) + "\n")
        scores.append(task_score(task_result, task, label))
    if on_model is not None:
        on_model(label, encoder.model)
    return scores


def evaluate_models(
    models: dict[str, str],
    tasks: list[AbsTask],
    **kwargs: Any,
) -> list[TaskScore]:
    """Evaluate several labelled models (label -> path) on the same tasks; see ``evaluate_model``.

    Each model gets fresh copies of the tasks: mteb tasks carry random state (``rng_state`` of clustering
    and classification sub-sampling) that an evaluation advances, so reusing one task object would give
    the second model a different sample than the first and make identical models score differently.
    """
    scores: list[TaskScore] = []
    for label, path in models.items():
        log.info("evaluating %s (%s) on %d tasks", label, path, len(tasks))
        fresh = [copy.deepcopy(task) for task in tasks]
        scores.extend(evaluate_model(path, label, fresh, **kwargs))
    return scores
