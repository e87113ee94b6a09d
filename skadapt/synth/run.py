"""One synthetic-STS run: sources -> checked generation -> dataset, annotation sheets, report and card."""

from __future__ import annotations

import csv
import logging
from pathlib import Path
from typing import Any

from skadapt import artifacts
from skadapt.annotate.sheets import SCORE, export_sheets
from skadapt.languages import Language
from skadapt.llm.config import LLMConfig
from skadapt.llm.generate import ItemOutcome
from skadapt.llm.judge import Judge
from skadapt.llm.session import LLMSession
from skadapt.synth.config import SynthSTSConfig
from skadapt.synth.dataset import card, save_splits, write_jsonl
from skadapt.synth.prompts import LEVELS, load_template, template_version
from skadapt.synth.sources import SourceSentence, select_sources
from skadapt.synth.sts import apply_judge, generate_variants, hold_out_sources, pair_rows
from skadapt.tasks.contamination import contamination_report

log = logging.getLogger(__name__)
REVIEW_ANSWERS = (SCORE, "comment")
"""The columns people fill in the sheets written here: the annotation sheets' and the pilot review's."""


def synthesize_sts(
    config: SynthSTSConfig,
    llm: LLMConfig,
    language: Language,
    out_dir: Path,
    *,
    seed: int,
    pilot: int | None = None,
) -> dict[str, Any]:
    """Generate the dataset into ``out_dir`` (a pilot of ``pilot`` sources writes only a review sheet).

    Returns:
        The generation report (also written to ``generation_report.json``).
    """
    template = load_template(language, config.prompt_template)
    wanted = pilot or config.n_sources
    selection = select_sources(
        config.corpus,
        language,
        wanted,
        seed=seed,
        min_chars=config.min_chars,
        max_chars=config.max_chars,
    )
    if not selection.sentences:
        raise ValueError(
            f"synth_sts.corpus {config.corpus.source}: no {language.name} sentence of {config.min_chars}-"
            f"{config.max_chars} characters found in {selection.documents} texts"
        )
    if len(selection.sentences) < wanted:
        log.warning(
            "synthetic STS: only %d source sentences found (asked for %d)", len(selection.sentences), wanted
        )
    with LLMSession(llm) as session:
        generator = session.generator(
            seed=seed, template_version=template_version(template), temperature=config.temperature
        )
        outcomes, stats = generate_variants(selection.sentences, generator, template, language)
        metadata = {"generator": llm.model, "template_version": template_version(template)}
        rows = pair_rows(selection.sentences, outcomes, metadata)
        judged = None
        if config.judge is not None:
            with Judge(config.judge, llm, session) as judge:
                ratings = judge.rate(
                    [(row["sentence1"], row["sentence2"]) for row in rows],
                    language,
                    seed=seed,
                    label="judging synthetic STS",
                )
                rows, judged = apply_judge(rows, ratings, config.judge.max_gap)
                judged = {**judge.describe(), **judged}
    out_dir.mkdir(parents=True, exist_ok=True)
    sampling = {"temperature": config.temperature, "top_p": llm.top_p, "max_tokens": llm.max_tokens}
    failures = _failures(selection.sentences, outcomes)
    write_jsonl(out_dir / "failures.jsonl", failures)
    (out_dir / "error_rates.md").write_text(stats.markdown() + "\n", encoding="utf-8")
    report: dict[str, Any] = {
        "language": language.code,
        "language_iso639_1": language.iso639_1,
        "language_name": language.name,
        "seed": seed,
        "llm": {"backend": llm.backend, "model": llm.model, "revision": llm.revision},
        "sampling": sampling,
        "template_version": template_version(template),
        "sources": {
            "spec": config.corpus.source,
            "min_chars": config.min_chars,
            "max_chars": config.max_chars,
            "documents_read": selection.documents,
            "eligible": selection.eligible,
            "wrong_language": selection.wrong_language,
            "selected": len(selection.sentences),
            "generated": len({row["source_id"] for row in rows}),
        },
        "failed_sources": len(failures),
        "pairs": len(rows),
        "generation": stats.to_dict(),
    }
    if judged is not None:
        report["judge"] = judged
    if pilot:
        _review_sheet(out_dir, selection.sentences, outcomes)
        report["pilot"] = pilot
    else:
        report.update(_write_dataset(config, language, out_dir, rows, seed))
    artifacts.write_json(out_dir / "generation_report.json", report)
    if not pilot:
        write_card(out_dir, report)
    return report


def _write_dataset(
    config: SynthSTSConfig, language: Language, out_dir: Path, rows: list[dict[str, Any]], seed: int
) -> dict[str, Any]:
    sources = len({row["source_id"] for row in rows})
    held = min(config.annotation_sample_per_level, sources // 2)
    heldout = hold_out_sources(rows, held, seed)
    train = [row for row in rows if row["source_id"] not in heldout]
    annotation = [row for row in rows if row["source_id"] in heldout]
    contamination = contamination_report(
        [text for row in train for text in (row["sentence1"], row["sentence2"])],
        config.contamination_tasks or [],
        config.contamination.threshold,
        config.contamination.allow,
        language=language.code,
        section="synth_sts",
    )
    save_splits({"train": train, "heldout": annotation}, out_dir / "dataset")
    export_sheets(
        annotation, out_dir / "annotation", annotators=config.annotators, seed=seed, language=language.code
    )
    result = {
        "splits": {"train": len(train), "heldout": len(annotation)},
        "heldout_sources": len(heldout),
        "contamination": contamination,
    }
    return result


def write_card(out_dir: Path, report: dict[str, Any]) -> None:
    """The dataset card, from the generation report."""
    table = (out_dir / "error_rates.md").read_text(encoding="utf-8")
    (out_dir / "README.md").write_text(card(report, table, report["language"]), encoding="utf-8")


def _failures(sources: list[SourceSentence], outcomes: list[ItemOutcome]) -> list[dict[str, Any]]:
    return [
        {"source_id": s.id, "sentence": s.text, "attempts": o.attempts, "failures": o.failures}
        for s, o in zip(sources, outcomes, strict=True)
        if not o.ok
    ]


def _review_sheet(out_dir: Path, sources: list[SourceSentence], outcomes: list[ItemOutcome]) -> None:
    """``pilot_review.csv``: every source with its six variants (or why it failed) and a comment column."""
    with (out_dir / "pilot_review.csv").open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["source_id", "source", "level", "sentence", "explanation", "status", "comment"])
        for source, outcome in zip(sources, outcomes, strict=True):
            if not outcome.ok:
                writer.writerow([source.id, source.text, "", "", "", f"failed: {outcome.reason}", ""])
                continue
            for level in LEVELS:
                variant = outcome.value[level]
                writer.writerow(
                    [source.id, source.text, level, variant["sentence"], variant["explanation"], "ok", ""]
                )
