"""The ``finetune`` stage: build datasets, check contamination, train, save model + training_report.json.

``run_stage`` is the stage's ``run`` (``skadapt train`` and ``skadapt finetune``); ``finetune`` is the same
work with trainer callbacks (tests).
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skadapt import artifacts
from skadapt.devices import dev_batch_size
from skadapt.languages import Language
from skadapt.modeldir import record_matryoshka_dims
from skadapt.prompts import model_prompts
from skadapt.results import FinetuneSummary, TrainingReport
from skadapt.results.base import StageResult
from skadapt.results.finetune import Interpolation
from skadapt.stage import RunFacts, Stage, StageContext, TaskReads
from skadapt.tasks.contamination import judge_overlap, overlapping_rows
from skadapt.tasks.dev import overlap_line
from skadapt.tasks.dev_power import (
    at_top_everywhere,
    dev_power,
    flag_lines,
    saturated_for_all_line,
)
from skadapt.tasks.embedding_memo import memoized
from skadapt.tasks.heldout import TrainingTexts
from skadapt.tasks.rows import TrainingDataError
from skadapt.tasks.selection import evaluation_texts, suite_files
from skadapt.train.anchor import build_anchor_datasets
from skadapt.train.card import card_section
from skadapt.train.config import ANCHOR_DATASET, PARALLEL_ANCHOR_DATASET, FinetuneConfig
from skadapt.train.datasets import WARN_SHARE, TaskDataset, build_task_datasets, drop_summary
from skadapt.train.gist import load_guide, needs_guide
from skadapt.train.inputs import inputs
from skadapt.train.interpolation import choose_interpolation, snapshot
from skadapt.train.loading import load_model
from skadapt.train.losses import check_loss
from skadapt.train.matryoshka import resolve_dims
from skadapt.train.negatives import add_hard_negatives, report_line
from skadapt.train.plain_arm import PLAIN_ARM_DIR, train_plain_arm
from skadapt.train.plan import plan_finetune
from skadapt.train.trainer import copy_logs, save_model, train

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer
    from transformers import TrainerCallback

    from skadapt.results.dev import DevSetPower
    from skadapt.tasks.dev import DevSet
    from skadapt.tasks.dev_scores import EncodedSet


log = logging.getLogger(__name__)

REPORT = TrainingReport.FILE


def build_datasets(config: FinetuneConfig) -> list[TaskDataset]:
    """Build every recipe dataset and check its loss (before any model is loaded).

    Raises:
        TrainingDataError: Bad data, naming the dataset, row and field.
    """
    datasets = []
    for entry in config.datasets:
        built = build_task_datasets(entry)
        for dataset in built:
            check_loss(dataset)
        sizes = ", ".join(f"{d.name} {len(d):,}" for d in built)
        summary, warn = drop_summary(built[0].stats)
        log.info(
            "finetune: dataset %s (%s, %s): %s examples; %s",
            entry.name,
            entry.kind,
            entry.loss,
            sizes,
            summary,
        )
        if warn:
            log.warning(
                "finetune: dataset %s (%s): %s; more than %.0f%% of its rows are not trained on: check the "
                "source",
                entry.name,
                entry.source,
                summary,
                WARN_SHARE * 100,
            )
        if len(built) > 1 and config.sampling == "round_robin":
            log.warning(
                "finetune: dataset %s: sampling round_robin stops when the smallest dataset runs out, "
                "and %s has %d examples; use sampling: proportional",
                entry.name,
                built[-1].name,
                len(built[-1]),
            )
        datasets += built
    return datasets


def dataset_texts(datasets: list[TaskDataset]) -> TrainingTexts:
    """The training texts of built datasets, per recipe dataset (an nli entry's ``<name>_pairs`` joins
    its entry), for the dev sets' overlap check (:mod:`skadapt.tasks.heldout`)."""
    texts: dict[str, list[Iterable[str]]] = {}
    for dataset in datasets:
        texts.setdefault(dataset.entry, []).append(dataset.texts())
    return TrainingTexts.from_texts({name: itertools.chain(*parts) for name, parts in texts.items()})


def training_texts(config: FinetuneConfig) -> TrainingTexts:
    """The training texts of ``config.datasets``, read from their sources and built as fine-tuning builds
    them (what a later stage checks its dev sets against when fine-tuning did not hand them over)."""
    started = time.perf_counter()
    texts = dataset_texts(build_datasets(config))
    log.info(
        "training texts for the dev sets' overlap check: %d distinct texts in %d datasets (%.1f MB of "
        "digests, %.1fs)",
        len(texts),
        len(texts.digests),
        texts.nbytes / 1e6,
        time.perf_counter() - started,
    )
    return texts


def finetune(
    ctx: StageContext[FinetuneConfig], callbacks: list[TrainerCallback] | None = None
) -> dict[str, Any]:
    """Fine-tune ``ctx.input_model`` with ``ctx.config`` and write the model to ``ctx.out_dir``.

    Checkpoints go to ``ctx.work_dir``; a later call with the same work_dir resumes. The run's evaluation
    tasks are what the contamination check and the anchor sample keep apart.

    Args:
        ctx: The stage context.
        callbacks: Extra trainer callbacks.

    Returns:
        A summary for the stage manifest (dataset sizes, steps, dev scores, contamination status).

    Raises:
        TrainingDataError: Bad training or dev data.
        ContaminationError: Training data overlaps the evaluation test data above the threshold.
        ContaminationCheckError: The check could not run (unreachable data without ``allow``, or any
            other error reading a task).
        FinetuneSetupError: Inconsistent training settings.
    """
    from skadapt.tasks.dev import build_dev_set

    config, run, model = ctx.config, ctx.run, ctx.input_model
    started = time.perf_counter()
    datasets = build_datasets(config)
    training = dataset_texts(datasets)  # before the contamination drop, as the later stages make them
    if run.training is not None:
        run.training.put(training)
    contamination, test_texts = _contamination(run, config, datasets)
    loaded = load_model(model)
    dims = (
        resolve_dims(config.matryoshka_dims, loaded.get_embedding_dimension())
        if config.matryoshka_dims
        else []
    )
    prompts = model_prompts(loaded.prompts, model)
    loaded.prompts = prompts  # a model saved without its family's prompts gets them
    for dataset in datasets:
        dataset.resolve_prompts(prompts)
    datasets = _with_hard_negatives(config, datasets, loaded, model, run.seed, test_texts)
    guide = load_guide(config.gist, model, config.max_seq_length) if needs_guide(datasets) else None
    dev = None  # its rows holding an evaluation test text are dropped: test texts never choose; those
    batch = dev_batch_size(config.batch_size)  # a dev evaluation's encoding batch: the device's
    if config.dev is not None:  # sharing a training text are counted, and dropped unless kept
        dev = build_dev_set(config.dev, batch, prompts, test_texts, training)
    inference_length = loaded.max_seq_length  # the saved model keeps it: training length is not inference
    with memoized(loaded):  # the dev sets' power and WiSE-FT's a=0 read the embeddings the evaluator made
        dev_before = dev.evaluator(loaded) if dev is not None else {}
        power = _starting_power(loaded, dev, batch, run.seed, ctx.launch.is_main)
        known = _starting_encodings(loaded, dev, batch) if config.interpolation is not None else {}
    if config.anchor is not None:
        datasets.extend(_anchor_datasets(run, config, loaded))
    start = snapshot(loaded) if config.interpolation is not None else None
    loaded.max_seq_length = config.max_seq_length
    result = train(
        loaded,
        datasets,
        config,
        run.seed,
        ctx.work_dir,
        dev,
        callbacks,
        world_size=ctx.launch.world_size,
        guide=guide,
        matryoshka_dims=dims,
    )
    result.model.max_seq_length = inference_length
    interpolation = None
    if config.interpolation is not None and dev is not None and start is not None:
        grid = config.interpolation.grid
        interpolation = choose_interpolation(
            result.model, start, grid, dev.sets, batch_size=batch, seed=run.seed, known=known
        )
    dev_after = {}  # the kept mixture's main scores were computed by the choice: not encoded again
    if dev is not None:
        dev_after = _kept_scores(dev, interpolation) if interpolation else dev.evaluator(result.model)
        _mark_saturated_for_all(power, dev, [dev_before, dev_after], result.dev_history, ctx.launch.is_main)
    report = TrainingReport(
        model=artifacts.recorded_path(model, ctx.out_dir.parent),  # relative to the run, if inside it
        seed=run.seed,
        datasets=_reported_datasets(config, datasets),
        losses={d.name: d.loss for d in datasets},
        matryoshka=_matryoshka(dims, datasets),
        sampling=config.sampling,
        world_size=result.world_size,  # DDP processes the trainer trained with (torchrun/accelerate)
        steps={"done": result.global_step, "planned": result.planned_steps},
        max_seq_length={"training": config.max_seq_length, "inference": inference_length},
        resumed_from=result.resumed_from,
        time_s={"train": round(result.seconds, 3), "total": round(time.perf_counter() - started, 3)},
        train_metrics=result.metrics,
        loss_curve=result.loss_curve,
        dev=None
        if dev is None
        else {
            "metric": dev.metric,
            "size": dev.size,
            "sets": dev.report,
            "before": _floats(dev_before),
            "final": _floats(dev_after),
            "history": result.dev_history,
            "best_checkpoint": result.best_checkpoint,
            "power": power,
        },
        interpolation=interpolation,
        contamination=contamination,
        versions=artifacts.library_versions(),
    )
    if config.plain_arm:
        report.plain_arm = train_plain_arm(
            str(model), datasets, config, run.seed, ctx.out_dir / PLAIN_ARM_DIR, ctx.work_dir / PLAIN_ARM_DIR,
            save=ctx.launch.is_main,
        )  # fmt: skip
    if ctx.launch.is_main:  # the other ranks of a launch train but never write the model
        report.model_prompts = save_model(result.model, datasets, ctx.out_dir)
        if dims:
            record_matryoshka_dims(ctx.out_dir, dims)
        if config.report_to == "tensorboard":
            copy_logs(ctx.work_dir, ctx.out_dir)
        report.write(ctx.out_dir)  # the values as built
    return {
        "datasets": {d.name: len(d) for d in datasets},
        "dropped_rows": _dropped_rows(datasets),
        "hard_negatives": {
            d.entry: report_line(d.entry, d.stats["hard_negatives"])
            for d in datasets
            if "hard_negatives" in d.stats
        },
        "losses": report.losses,
        "steps": report.steps.as_json(),
        "resumed_from": result.resumed_from,
        "final_loss": result.loss_curve[-1]["loss"] if result.loss_curve else None,
        "dev": None
        if dev is None
        else {"metric": dev.metric, "before": dev_before.get(dev.metric), "final": dev_after.get(dev.metric)},
        "dev_overlap": {} if dev is None else _overlap_lines(dev.report),
        "interpolation": None if interpolation is None else interpolation.chosen,
        "plain_arm": None if report.plain_arm is None else PLAIN_ARM_DIR,
        "contamination": {
            "status": contamination["status"],
            "max_rate": contamination["max_rate"],
            "unreachable": sorted(contamination["unreachable"]),
            "dropped": {k: v["dropped"] for k, v in (contamination["dropped"] or {}).items()},
        },
    }


def _starting_power(
    model: SentenceTransformer, dev: DevSet | None, batch_size: int, seed: int, warn: bool
) -> list[DevSetPower]:
    """Each dev set's power for the starting model; with ``warn``, a warning per flag it raises."""
    if dev is None:
        return []
    power = dev_power(model, dev.sets, batch_size, seed=seed)
    for line in flag_lines(power, "the starting model") if warn else []:
        log.warning("finetune: %s", line)
    return power


def _starting_encodings(
    model: SentenceTransformer, dev: DevSet | None, batch_size: int
) -> dict[float, list[EncodedSet]]:
    """The starting model's dev embeddings as WiSE-FT's ``a = 0`` (the same weights: ``1 * start + 0 *
    tuned``), read from the memo the dev check filled; none for a dev set dev_scores cannot score."""
    from skadapt.tasks.dev_scores import encode_dev_set

    if dev is None:
        return {}
    try:
        return {0.0: [encode_dev_set(model, dev_set, batch_size) for dev_set in dev.sets]}
    except TypeError:  # a kind without per-example scores: WiSE-FT cannot score it either
        return {}


def _kept_scores(dev: DevSet, interpolation: Interpolation) -> dict[str, float]:
    """The kept mixture's main score per dev set (under the evaluator's metric key) and, for several
    sets, their mean (``sequential_score``), as the interpolation's choice scored them."""
    kept = next(entry for entry in interpolation.scores if entry["alpha"] == interpolation.chosen)
    scores = {part.metric: kept["sets"][part.evaluator.name] for part in dev.sets}
    if dev.parts:
        scores[dev.metric] = kept["score"]
    return scores


def _mark_saturated_for_all(
    power: list[DevSetPower],
    dev: DevSet,
    results: list[dict[str, Any]],
    history: list[dict[str, Any]],
    warn: bool,
) -> None:
    """Set each set's ``saturated_for_all`` from every candidate scored on it: the evaluator's ``results``
    (the starting and the final model) and the dev ``history`` (one set: its ``score``; several: its
    ``sets``); with ``warn``, a warning per set at the top for all."""
    single = not dev.parts
    for entry, part in zip(power, dev.sets, strict=True):
        scores = [found.get(part.metric) for found in results]
        scores += [h.get("score") if single else h.get("sets", {}).get(entry.name) for h in history]
        entry.saturated_for_all = at_top_everywhere(scores)
        if entry.saturated_for_all and warn:
            which = f"the starting model, the {len(history)} checkpoints scored and the final model"
            log.warning("finetune: %s", saturated_for_all_line(entry, which))


def _overlap_lines(sets: list[dict[str, Any]]) -> dict[str, str]:
    """Dev set name -> what it shares with the training data, in one line."""
    return {s["name"]: overlap_line(s["training_overlap"]) for s in sets if s.get("training_overlap")}


def _contamination(
    run: RunFacts, config: FinetuneConfig, datasets: list[TaskDataset]
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The contamination check; with ``action: drop`` the overlapping rows leave ``datasets`` first.

    Returns:
        The report, and the evaluation test texts (task -> texts) it checked against.
    """
    settings = config.contamination
    test_texts, unreachable = run.test_texts(settings.allow)
    dropped = None
    if settings.action == "drop":
        keep, dropped = overlapping_rows({d.name: d.rows() for d in datasets}, test_texts)
        for dataset in datasets:
            removed = dataset.keep_rows(keep[dataset.name], "contamination")
            if removed:
                by_task = ", ".join(f"{t} {n}" for t, n in dropped[dataset.name]["by_task"].items())
                log.warning(
                    "finetune: dataset %s: %d of %d rows dropped, their texts are evaluation test texts (%s)",
                    dataset.name,
                    removed,
                    dropped[dataset.name]["rows"],
                    by_task,
                )
            if not len(dataset):
                raise TrainingDataError(
                    f"finetune dataset {dataset.name!r}: every row overlaps the evaluation test data "
                    "(contamination.action: drop); use other training data"
                )
    report = judge_overlap(
        (text for dataset in datasets for text in dataset.texts()),
        test_texts,
        unreachable,
        settings.threshold,
        settings.allow,
    )
    report.update(action=settings.action, dropped=dropped)
    return report, test_texts


def _with_hard_negatives(
    config: FinetuneConfig,
    datasets: list[TaskDataset],
    model: SentenceTransformer,
    model_ref: str,
    seed: int,
    test_texts: dict[str, list[str]],
) -> list[TaskDataset]:
    """Every pairs dataset with ``hard_negatives`` gets its negatives (and ``<name>_pairs`` for the pairs
    that got none); the starting model is the default mining model. Runs after the contamination drop,
    so only rows kept are mined, and corpus texts that are evaluation test texts are never candidates."""
    options = {entry.name: entry.hard_negatives for entry in config.datasets}
    result: list[TaskDataset] = []
    for dataset in datasets:
        hard = options.get(dataset.name)
        if hard is None:
            result.append(dataset)
            continue
        result += add_hard_negatives(
            dataset,
            hard,
            starting_model=model,
            starting_ref=model_ref,
            max_seq_length=config.max_seq_length,
            seed=seed,
            test_texts=test_texts,
        )
    return result


def _dataset_source(config: FinetuneConfig, name: str) -> str:
    if config.anchor is not None and name == ANCHOR_DATASET and config.anchor.corpus is not None:
        return config.anchor.corpus.source
    if config.anchor is not None and name == PARALLEL_ANCHOR_DATASET and config.anchor.parallel:
        return ", ".join(p.source for p in config.anchor.parallel)
    return next(e.source for e in config.datasets if e.name == name)


def _reported_datasets(config: FinetuneConfig, datasets: list[TaskDataset]) -> list[dict[str, Any]]:
    """One report entry per recipe dataset (and the anchor); an nli entry that built its ``<name>_pairs``
    dataset too lists both in ``parts`` (examples: their sum; columns, prompts and stats: the first's)."""
    entries: dict[str, dict[str, Any]] = {}
    for d in datasets:
        part = {
            "name": d.name,
            "examples": len(d),
            "columns": d.columns,
            "prompts": d.prompts,
            "stats": d.stats,
        }
        if d.entry in entries:
            entries[d.entry]["examples"] += len(d)
            entries[d.entry]["parts"].append(part)
            continue
        entries[d.entry] = {
            "name": d.entry,
            "kind": d.kind,
            "source": _dataset_source(config, d.entry),
            "examples": len(d),
            "columns": d.columns,
            "loss": d.loss,
            "prompts": d.prompts,
            "stats": d.stats,
            "parts": [part],
        }
    for entry in entries.values():
        if [part["name"] for part in entry["parts"]] == [entry["name"]]:
            del entry["parts"]
    return list(entries.values())


def _dropped_rows(datasets: list[TaskDataset]) -> dict[str, str]:
    """Recipe dataset -> the line on its dropped rows (contamination drops included)."""
    lines: dict[str, str] = {}
    for d in datasets:
        if d.entry not in lines and "rows_read" in d.stats:
            lines[d.entry] = drop_summary(d.stats)[0]
    return lines


def _anchor_datasets(run: RunFacts, config: FinetuneConfig, model: SentenceTransformer) -> list[TaskDataset]:
    """The anchor's distillation datasets; the run's evaluation suites never enter them."""
    assert config.anchor is not None
    language = run.text_language
    datasets = build_anchor_datasets(
        config.anchor,
        model,
        seed=run.seed,
        language=language,
        exclude=evaluation_texts(list(run.eval_tasks), language),
    )
    for d in datasets:
        log.info("finetune: %s: %d texts, weight %g", d.name, len(d), config.anchor.weight)
    return datasets


def _matryoshka(dims: list[int], datasets: list[TaskDataset]) -> dict[str, Any] | None:
    """The Matryoshka dimensions trained and the datasets whose loss trained at each (the anchor: at the
    full dimension only); None without ``matryoshka_dims``."""
    if not dims:
        return None
    return {
        "dims": dims,
        "datasets": [d.name for d in datasets if d.kind != "anchor"],
        "full_dimension_only": [d.name for d in datasets if d.kind == "anchor"],
    }


def _floats(scores: dict[str, Any]) -> dict[str, float]:
    return {k: round(float(v), 6) for k, v in scores.items() if isinstance(v, int | float)}


def input_files(config: FinetuneConfig, run: RunFacts) -> list[Path]:
    """The run's evaluation suite files: the contamination check and the anchor sample read them."""
    return suite_files(list(run.eval_tasks))


def run_stage(ctx: StageContext[FinetuneConfig]) -> FinetuneSummary:
    """Train ``ctx.input_model`` into ``ctx.out_dir``."""
    return FinetuneSummary.of(finetune(ctx))


def provides(config: FinetuneConfig, language: Language | None) -> dict[str, Any]:
    """Its dev sets (renormalization chooses on them unless it has its own), whether unreachable test data
    may go unchecked, and the run's training texts (made from ``datasets`` when a stage first asks)."""
    from skadapt.tasks.heldout import SharedTrainingTexts

    def make() -> TrainingTexts:
        return training_texts(config)

    return {
        "dev": config.dev,
        "dev_field": "finetune.dev",
        "contamination_allow": config.contamination.allow,
        "training": SharedTrainingTexts(make),
    }


def preview(config: FinetuneConfig, run: RunFacts) -> list[Any]:
    """What its contamination check and the dev sets' checks will find, computed the way they compute it
    (:func:`contamination_preview`), as tables and lines."""
    from skadapt.tasks.preview import render_preview

    found = contamination_preview(config, run)
    return render_preview(found) if found is not None else []


def contamination_preview(config: FinetuneConfig, run: RunFacts) -> dict[str, Any] | None:
    """``{"action", "threshold", "dropped": {dataset: {rows, dropped, by_task}}, "over_threshold", "rates",
    "unreachable", "dev": {dev set: {rows, dropped, by_task}}, "dev_training": {dev set: training_overlap
    report}}`` (``dev``: the examples of each dev set of the run — its own, and the run's others — that
    building it drops for an evaluation test text; ``dev_training``: of those left, the ones sharing a
    training text, :func:`skadapt.tasks.dev.overlap_with_training`). Sources an earlier stage of the run
    writes are left out. The evaluation parts are empty without evaluation tasks; None when nothing is
    left to check."""
    from skadapt.tasks.contamination import gather_test_texts
    from skadapt.tasks.dev import overlap_with_test_texts, overlap_with_training

    sections = [("finetune.dev", config.dev)]
    if run.dev is not None and run.dev is not config.dev:
        sections.append((run.dev_field, run.dev))
    dev_sets = [
        (f"{field}.sets.{index} {entry.kind}", entry, dev)
        for field, dev in sections
        if dev is not None
        for index, entry in enumerate(dev.sets)
        if not run.made_by_run(entry.source)
    ]
    sources = [e for e in config.datasets if not run.made_by_run(e.source)]
    if not sources and not dev_sets:
        return None
    datasets = build_datasets(config.model_copy(update={"datasets": sources})) if sources else []
    settings = config.contamination
    found: dict[str, Any] = {
        "action": settings.action,
        "threshold": settings.threshold,
        "dropped": {},
        "over_threshold": [],
        "rates": {},
        "unreachable": [],
        "dev": {},
    }
    test_texts: dict[str, list[str]] = {}
    if run.eval_tasks:
        test_texts, unreachable = gather_test_texts(
            list(run.eval_tasks),
            True,
            language=run.language.code if run.language is not None else None,
            mirrors=dict(run.dataset_mirrors) or None,
            exclude=run.excluded_tasks,
        )
        _, dropped = overlapping_rows({d.name: d.rows() for d in datasets}, test_texts)
        overlap = judge_overlap(
            (t for d in datasets for t in d.texts()), test_texts, unreachable, settings.threshold, True
        )
        found.update(
            dropped=dropped,
            over_threshold=overlap["over_threshold"],
            rates={task: v["rate"] for task, v in overlap["tasks"].items() if v["normalized"]},
            unreachable=sorted(unreachable),
            dev={field: overlap_with_test_texts(entry, test_texts) for field, entry, _ in dev_sets},
        )
    training = dataset_texts(datasets) if datasets else None
    found["dev_training"] = (
        {}
        if training is None
        else {
            field: overlap_with_training(entry, training, test_texts, dev.training_overlap)
            for field, entry, dev in dev_sets
        }
    )
    return found


def summary(config: FinetuneConfig, result: StageResult | None, stage_dir: Path) -> list[str]:
    """Its dev sets' overlap with the training data, the rows it dropped, its hard negatives."""
    tuned = FinetuneSummary.parse(result) if result is not None else FinetuneSummary()
    return [
        *(f"finetune dev {name}: {line}" for name, line in tuned.dev_overlap.items()),
        *(f"finetune data {name}: {line}" for name, line in tuned.dropped_rows.items()),
        *(f"finetune negatives {name}: {line}" for name, line in tuned.hard_negatives.items()),
    ]


def task_data(config: FinetuneConfig, run: RunFacts) -> list[TaskReads]:
    """The evaluation tasks' data its contamination check reads (``exclude_tasks`` leaves a task out)."""
    return [TaskReads("finetune's contamination check", list(run.eval_tasks), excludable=True)]


STAGE = Stage(
    "finetune",
    FinetuneConfig,
    run_stage,
    input_files,
    makes_model=True,
    distributed=True,
    reads=("eval_tasks", "excluded_tasks", "dataset_mirrors"),
    report=TrainingReport,
    inputs=inputs,
    result=FinetuneSummary,
    plan=plan_finetune,
    card=card_section,
    card_tag="contrastive-finetuning",
    provides=provides,
    preview=preview,
    summary=summary,
    task_data=task_data,
    models=("plain",),
)
