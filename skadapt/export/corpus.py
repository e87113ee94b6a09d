"""The export's fitting corpus: texts the static table is trained on and the dims tiers' basis is fitted on
(``export.corpus``), by default the texts the model was fine-tuned on, never an evaluation text."""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skadapt.export.config import FitCorpus
from skadapt.export.onnx import ExportError
from skadapt.sources.config import CorpusSource

log = logging.getLogger("skadapt.export")


@dataclass
class Corpus:
    """The export's fitting corpus: what the static table is trained on and the dims basis fitted on.

    Attributes:
        texts: Unique texts, in a fixed order (sorted, then shuffled with the seed).
        sources: Per source: its spec, columns, texts read and texts kept.
        dropped_eval_overlap: Texts left out because they are (or contain) evaluation texts.
        sentences_added: Sentences of multi-sentence texts added as texts of their own.
        dropped_dev_overlap: Texts left out because they are (or contain) dev texts (what the dims basis
            and int8 are chosen on).
    """

    texts: list[str]
    sources: list[dict[str, Any]]
    dropped_eval_overlap: int
    sentences_added: int
    dropped_dev_overlap: int = 0


def read_corpus(
    sources: list[CorpusSource],
    fit: FitCorpus,
    *,
    exclude: set[str],
    language: str,
    seed: int,
    held_out: set[str] | None = None,
    field: str = "export.corpus.sources",
) -> Corpus:
    """The corpus texts: every string value of the named columns of each source's rows (``.txt``: its lines;
    at most ``fit.max_texts`` per column, fewer where the source's ``max_documents`` says so), less those
    that are or contain (as a sentence) a text of ``exclude`` (normalized evaluation texts: see
    :func:`skadapt.textsample.normalize_text`) or of ``held_out`` (normalized dev texts), plus the
    sentences of multi-sentence texts (``fit.sentences``), unique, a seeded sample of at most
    ``fit.max_texts``; ``field`` names the sources in errors.

    Raises:
        ExportError: A source cannot be read, lacks a column, or no text is left.
    """
    from skadapt.sources import SourceError, corpus_texts
    from skadapt.textsample import normalize_text, split_sentences

    pool: dict[str, list[str]] = {}  # text -> its sentences
    stats: list[dict[str, Any]] = []
    dropped = dropped_dev = 0
    held_out = held_out or set()
    for corpus in sources:
        read = kept = 0
        try:
            for text in corpus_texts(corpus, max_documents=fit.max_texts):
                text = text.strip() if isinstance(text, str) else ""
                if not text:
                    continue
                read += 1
                sentences = split_sentences(text, language)
                keys = [normalize_text(t) for t in [text, *sentences]]
                if any(key in exclude for key in keys):
                    dropped += 1
                    continue
                if any(key in held_out for key in keys):
                    dropped_dev += 1
                    continue
                kept += 1
                pool[text] = sentences
        except SourceError as error:
            raise ExportError(f"{field}: {error}") from error
        columns = list(corpus.columns)
        stats.append({"source": corpus.source, "columns": columns, "texts_read": read, "texts_kept": kept})
    added = 0
    if fit.sentences:
        for sentence in sorted({s for sentences in pool.values() if len(sentences) > 1 for s in sentences}):
            if sentence not in pool:
                pool[sentence] = [sentence]
                added += 1
    if not pool:
        raise ExportError(
            f"{field}: no text to fit on"
            + (f" ({dropped} were evaluation texts)" if dropped else "")
            + (f" ({dropped_dev} were dev texts)" if dropped_dev else "")
            + f"; name sources with text in {field}"
        )
    texts = sorted(pool)
    random.Random(seed).shuffle(texts)
    return Corpus(texts[: fit.max_texts], stats, dropped, added, dropped_dev)


def fit_corpus(
    fit: FitCorpus,
    *,
    parent: str,
    finetune_dir: str | None,
    exclude: set[str],
    language: str,
    seed: int,
    held_out: set[str] | None = None,
) -> Corpus | None:
    """The corpus ``fit`` names (less ``exclude`` and ``held_out``: :func:`read_corpus`); without one, the
    texts of the datasets the model was fine-tuned on (the training report of ``finetune_dir``, else of
    ``parent``); None when there is neither (a model not fine-tuned by skadapt: its static tier is
    distilled alone and its dims tiers truncate).

    Raises:
        ExportError: Reading the corpus fails (:func:`read_corpus`).
    """
    if fit.sources is not None:
        sources = list(fit.sources)
    else:
        reports = [
            Path(d) for d in (finetune_dir, parent) if d and (Path(d) / "training_report.json").is_file()
        ]
        if not reports:
            log.warning(
                "export: no corpus (the static tier is distilled alone, the dims tiers truncate): %s has "
                "no training_report.json (it was not fine-tuned by skadapt), so there are no fine-tuning "
                "texts to fit on; name texts in export.corpus.sources to fit on them",
                parent,
            )
            return None
        sources = finetune_sources(reports[0])
    return read_corpus(sources, fit, exclude=exclude, language=language, seed=seed, held_out=held_out)


def parallel_corpus(
    fit: FitCorpus, *, exclude: set[str], held_out: set[str] | None, language: str, seed: int
) -> Corpus | None:
    """Both sides of the pairs of ``fit.parallel`` as texts (whole, not split into sentences), less the
    evaluation and dev texts as :func:`read_corpus` leaves them out; None without parallel sources.

    Raises:
        ExportError: A source cannot be read, lacks a column, or no text is left.
    """
    if not fit.parallel:
        return None
    whole = fit.model_copy(update={"sentences": False})
    return read_corpus(
        list(fit.parallel),
        whole,
        exclude=exclude,
        language=language,
        seed=seed,
        held_out=held_out,
        field="export.corpus.parallel",
    )


def finetune_sources(report_dir: Path) -> list[CorpusSource]:
    """The text columns of the recipe datasets the model in ``report_dir`` was fine-tuned on, as
    its ``training_report.json`` records them (the fine-tuning anchor, a corpus sample, is left out).

    Raises:
        ExportError: ``report_dir`` has no training report, or the report names no dataset.
    """
    from skadapt.results.finetune import TrainingReport

    report = TrainingReport.read(report_dir)
    if report is None:
        raise ExportError(
            f"export.corpus: {report_dir} has no training_report.json, so the texts the model was "
            "fine-tuned on are unknown; name the texts to fit on in export.corpus.sources "
            "(e.g. [{source: data/train.jsonl, columns: [text]}])"
        )
    sources = []
    for dataset in report.datasets:
        if dataset.kind == "anchor":
            continue
        stats = (dataset.model_extra or {}).get("stats") or {}
        columns = stats.get("source_columns") or {}
        names = [name for role, name in columns.items() if role not in ("score", "label")]
        if names:
            sources.append(CorpusSource(source=dataset.source, columns=names))
    if not sources:
        raise ExportError(
            f"export.corpus: {report_dir}/training_report.json names no dataset with text columns; "
            "name the texts to fit on in export.corpus.sources"
        )
    return sources
