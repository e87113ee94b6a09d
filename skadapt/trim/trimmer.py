"""``trim_model``: the one trimming function behind ``skadapt trim`` and the pipeline's ``trim`` stage."""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from skadapt import artifacts
from skadapt.languages import UnknownLanguageError, get_language
from skadapt.modeldir import finalize_model_dir
from skadapt.sources.config import CorpusSource
from skadapt.tokenizer_check import check_tokenizer
from skadapt.trim import card, counting, model, parity, report, selection, tokenizer
from skadapt.trim.config import TrimConfig
from skadapt.trim.coverage import CorpusCoverage, corpus_coverage
from skadapt.trim.encoder import load_tokenizer
from skadapt.trim.errors import TrimError
from skadapt.trim.language import corpus_language
from skadapt.trim.parallel import ProgressHook

log = logging.getLogger("skadapt.trim")

DEFAULT_SEED = 42
"""Seed of the parity sample when none is given (the recipe's default seed)."""


@contextlib.contextmanager
def counting_progress(label: str, enabled: bool) -> Iterator[ProgressHook | None]:
    """A rich progress line (documents, MB, MB/s) for counting, or no hook when disabled."""
    if not enabled:
        yield None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from skadapt.console import console

    columns = (
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        TextColumn("{task.fields[docs]:,} texts  {task.fields[mb]:.1f} MB  {task.fields[rate]:.2f} MB/s"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(label, docs=0, mb=0.0, rate=0.0)

        def hook(documents: int, size: int) -> None:
            elapsed = bar.tasks[task].elapsed or 1e-9
            bar.update(task, docs=documents, mb=size / 1e6, rate=size / 1e6 / elapsed)

        yield hook


def _count(
    tokenizer_json: str,
    corpus: CorpusSource,
    config: TrimConfig,
    *,
    use_cache: bool,
    show_progress: bool,
    parity_documents: int,
    seed: int,
) -> counting.TokenCounts:
    with counting_progress(f"counting {corpus.source}", show_progress) as hook:
        return counting.count_source(
            tokenizer_json,
            corpus.source,
            column=corpus.columns[0],  # one column (TrimConfig checks it): its counts resume
            max_documents=corpus.max_documents,
            max_bytes=config.max_bytes,
            parity_documents=parity_documents,
            seed=seed,
            batch_size=config.batch_size,
            workers=config.workers,
            use_cache=use_cache,
            on_progress=hook,
        )


def _write_tokenizer(
    info: tokenizer.TokenizerInfo, keep: list[int], source_dir: Path, target_dir: Path
) -> dict[int, int]:
    """Write the rewritten tokenizer files; returns the old -> new id mapping."""
    mapping = {old: new for new, old in enumerate(keep)}
    new_json = tokenizer.rewrite(info, keep)
    target_dir.mkdir(parents=True, exist_ok=True)
    (target_dir / "tokenizer.json").write_text(json.dumps(new_json, ensure_ascii=False), encoding="utf-8")
    config_path = source_dir / "tokenizer_config.json"
    if config_path.is_file():
        config = tokenizer.remap_tokenizer_config(
            json.loads(config_path.read_text(encoding="utf-8")), mapping
        )
        (target_dir / "tokenizer_config.json").write_text(
            json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    if (source_dir / "special_tokens_map.json").is_file():
        shutil.copy2(source_dir / "special_tokens_map.json", target_dir / "special_tokens_map.json")
    return mapping


def model_prompts(model_dir: Path) -> list[str]:
    """The prompts of a sentence-transformers model (``query: ``, ``passage: ``), always kept spellable."""
    path = model_dir / "config_sentence_transformers.json"
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    return [p for p in (data.get("prompts") or {}).values() if isinstance(p, str) and p]


def _corpus_language(spec: str, sample: list[str], code: str | None) -> dict[str, Any] | None:
    """Whether the corpus is in the language of ``code`` (:func:`skadapt.trim.language.corpus_language`;
    its warning logged), or None without a registered language."""
    try:
        language = get_language(code) if code is not None else None
    except UnknownLanguageError:
        language = None
    if language is None:
        return None
    found = corpus_language(spec, sample, language)
    if found["warning"]:
        log.warning(found["warning"])
    return found


def _log_fidelity(verdict: str, exact: bool, coverage: CorpusCoverage) -> None:
    if exact:
        log.info(verdict)
        return
    log.warning(verdict)
    if coverage.top_dropped:
        shown = ", ".join(f"{token!r} ({count:,})" for _, token, count in coverage.top_dropped)
        log.warning("most frequent dropped tokens: %s", shown)


def trim_model(
    model_ref: str,
    config: TrimConfig,
    out_dir: Path,
    *,
    use_cache: bool = True,
    show_progress: bool = False,
    seed: int = DEFAULT_SEED,
    language: str | None = None,
) -> dict[str, Any]:
    """Trim a model's vocabulary to a corpus and write a sentence-transformers directory to ``out_dir``.

    The whole corpus is counted; the parity sample is a seeded sample of the counted texts. When every
    counted token is kept, every sampled text must tokenize identically (else :class:`ParityError`), and
    the trim is reported as exact; when ``vocab_size`` cuts counted tokens, the report gives the share of
    sampled texts tokenized identically, the corpus coverage and the most frequent dropped tokens.
    Identically tokenized texts must embed within ``parity.PARITY_TOLERANCE`` in every case.

    Args:
        model_ref: A local model directory (sentence-transformers or transformers) or a Hub model id.
        config: The trim settings (the recipe's ``trim`` section).
        out_dir: An empty directory to write into (callers make it atomic).
        use_cache: Read/write the token-count cache.
        show_progress: Show a progress line while counting.
        seed: Seed of the parity sample (the recipe seed).
        language: Language code for the model card (default: inferred from the corpus spec, if it can be);
            a registered language's corpus is checked to be in it (a warning and the report's
            ``corpus_language``).

    Returns:
        A small JSON summary (rows, parameters, coverage, parity, exact, verdict) for manifests and the CLI.

    Raises:
        TrimError: Bad settings (no corpus, vocab size too small), unsupported tokenizer, failed parity.
        ModelCheckError: The model's tokenizer is missing, does not load or reads text mostly as unknown.
        SourceError: The corpus cannot be read.
    """
    if config.corpus is None:
        raise TrimError("trim.corpus is not set; pass --corpus FILE|hub:DATASET|wordfreq:LANG")
    with tempfile.TemporaryDirectory(prefix="skadapt-trim-") as scratch:
        model_dir = model.resolve_model_dir(model_ref)
        check_tokenizer(model_dir)  # a Hub model's download too: no empty or foreign tokenizer is trimmed
        source_dir = model.ensure_sentence_transformers(model_dir, Path(scratch))
        subdir = model.transformer_subdir(source_dir)
        transformer_dir = source_dir / subdir
        tokenizer_json = tokenizer.read_tokenizer_json(transformer_dir)
        info = tokenizer.analyse(tokenizer_json, str(transformer_dir / "tokenizer.json"))
        selection.check_vocab_size(info, config.vocab_size)

        counts = _count(
            tokenizer_json,
            config.corpus,
            config,
            use_cache=use_cache,
            show_progress=show_progress,
            parity_documents=config.parity_documents,
            seed=seed,
        )
        in_language = _corpus_language(config.corpus.source, counts.sample, language)
        extra = None
        if config.extra_corpus is not None and config.extra_vocab_size > 0:
            extra = _count(
                tokenizer_json,
                config.extra_corpus,
                config,
                use_cache=use_cache,
                show_progress=show_progress,
                parity_documents=0,
                seed=seed,
            )
        encoder = load_tokenizer(tokenizer_json)
        keep_ids = selection.keep_list_ids(
            info, lambda text: encoder.encode(text, add_special_tokens=False).ids, config.keep
        )
        prompts = model_prompts(source_dir)
        keep_ids |= {i for p in prompts for i in encoder.encode(p, add_special_tokens=False).ids}
        chosen = selection.select_vocabulary(
            info,
            counts.counts,
            vocab_size=config.vocab_size,
            min_frequency=config.min_frequency,
            keep_ids=keep_ids,
            extra_counts=extra.counts if extra is not None else None,
            extra_vocab_size=config.extra_vocab_size,
        )

        target_dir = out_dir / subdir
        mapping = _write_tokenizer(info, chosen.keep, transformer_dir, target_dir)
        transformer = model.load_transformer(transformer_dir)
        parameters_before = model.parameter_count(transformer)
        rows_before = model.slice_rows(transformer, chosen.keep)
        model.update_config(transformer, mapping, len(chosen.keep))
        transformer.save_pretrained(target_dir)
        parameters_after = model.parameter_count(transformer)
        del transformer
        model.copy_modules(source_dir, out_dir, subdir)

        coverage = corpus_coverage(counts.counts, chosen.keep, info.tokens)
        checked = parity.check_parity(source_dir, out_dir, counts.sample, require_identical=coverage.complete)
        exact, verdict = report.fidelity(coverage, checked, config.vocab_size, config.min_frequency)
        _log_fidelity(verdict, exact, coverage)
        parity_summary = {**checked.summary(), "seed": seed}
        finalize_model_dir(out_dir)  # after the parity check, which compares with the source as saved
        trim_report = report.build_report(
            model=artifacts.recorded_path(model_ref, out_dir.parent),  # relative to the run, if inside it
            config=config.model_dump(mode="json"),
            tokenizer_kind=info.kind,
            counts=counts.summary(),
            extra_counts=extra.summary() if extra is not None else None,
            selection=chosen.summary(),
            vocab_before=info.size,
            rows_before=rows_before,
            rows_after=len(chosen.keep),
            parameters_before=parameters_before,
            parameters_after=parameters_after,
            parity=parity_summary,
            coverage=coverage.summary(),
            exact=exact,
            verdict=verdict,
            corpus_language=in_language,
        )
        report.write_report(out_dir, trim_report)
        card.write_card(
            out_dir,
            trim_report,
            model_ref=model_ref,
            language=language or card.infer_language(config.corpus.source),
            seed=seed,
        )
        if stale := model.stale_exports(out_dir):
            raise TrimError(f"stale exports of the untrimmed model were copied: {', '.join(map(str, stale))}")
    log.info(
        "trimmed %s: %d -> %d embedding rows, %.2fM -> %.2fM parameters",
        model_ref,
        rows_before,
        len(chosen.keep),
        parameters_before / 1e6,
        parameters_after / 1e6,
    )
    return {
        "embedding_rows": len(chosen.keep),
        "embedding_rows_before": rows_before,
        "parameters": parameters_after,
        "parameters_before": parameters_before,
        "counts_fingerprint": counts.key,
        "counts_cached": counts.cached,
        "exact": exact,
        "verdict": verdict,
        "coverage": coverage.summary(),
        "parity": parity_summary,
        "warnings": chosen.warnings
        + ([in_language["warning"]] if in_language and in_language["warning"] else []),
    }
