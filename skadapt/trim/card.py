"""The trimmed model's card (``README.md``): Hub metadata, the trim section, and how the model was made; and
the trim's section of the published card (:func:`card_section`, the same trim section).

The base model's own card is not copied (it describes the untrimmed model); this short card replaces it.
Its YAML metadata names the base model, the language, ``library_name: sentence-transformers`` and tags;
its body is the trim section shared with the published card (:func:`skadapt.cards.trim_section`: vocabulary
and parameters before/after, the corpus, coverage, identical tokenization, exactness) and the ``skadapt
trim`` command that made it. Everything comes from the trim report (``trim_report.json``), which the card
points to.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skadapt.cards import corpus_fields, hub_id, infer_language, trim_section
from skadapt.results import TrimReport
from skadapt.stage import CardContext

__all__ = [
    "CARD_FILE",
    "card_section",
    "command_line",
    "hub_id",
    "infer_language",
    "render_card",
    "write_card",
]

CARD_FILE = "README.md"
TAGS = (
    "sentence-transformers",
    "sentence-similarity",
    "feature-extraction",
    "vocabulary-trimming",
    "skadapt",
)
DEFAULTS = {"min_frequency": 1, "extra_vocab_size": 0, "batch_size": 1000}
"""Trim options left out of the reconstructed command line when they have these values."""


def _corpus_options(flag: str, value: Any) -> list[str]:
    """``--corpus SPEC`` and the corpus's other fields that differ from their defaults."""
    corpus = corpus_fields(value)
    parts = [flag, str(corpus.get("source"))]
    if (corpus.get("columns") or ["text"]) != ["text"]:
        parts += [option for column in corpus["columns"] for option in (f"{flag}-columns", column)]
    if corpus.get("max_documents"):
        parts += [f"{flag}-max-documents", str(corpus["max_documents"])]
    return parts


def command_line(model_ref: str, config: dict[str, Any], seed: int) -> str:
    """The ``skadapt trim`` command that reproduces a trim (output path as ``OUT``)."""
    parts = ["skadapt trim", model_ref, *_corpus_options("--corpus", config.get("corpus")), "--out", "OUT"]
    for name in ("vocab_size", "min_frequency", "max_bytes"):
        value = config.get(name)
        if value is not None and DEFAULTS.get(name) != value:
            parts += [f"--{name.replace('_', '-')}", str(value)]
    for item in config.get("keep") or []:
        parts += ["--keep", repr(item) if " " in item else item]
    if config.get("extra_corpus") and config.get("extra_vocab_size"):
        parts += _corpus_options("--extra-corpus", config["extra_corpus"])
        parts += ["--extra-vocab-size", str(config["extra_vocab_size"])]
    parts += ["--parity-documents", str(config.get("parity_documents")), "--seed", str(seed)]
    return " ".join(parts)


def render_card(report: dict[str, Any], *, model_ref: str, language: str | None, seed: int) -> str:
    """The card text (YAML front matter + Markdown body) for a trim report."""
    from huggingface_hub import ModelCardData

    base = hub_id(model_ref)
    config = report["config"]
    languages = [language] if language else None
    metadata = ModelCardData(
        base_model=base,
        language=languages,
        library_name="sentence-transformers",
        pipeline_tag="sentence-similarity",
        tags=list(TAGS),
    ).to_yaml()
    name = base.rstrip("/").rsplit("/", 1)[-1]
    lines = [
        "---",
        metadata,
        "---",
        "",
        f"# {name}, vocabulary trimmed" + (f" to {language}" if language else ""),
        "",
        f"`{base}` with its vocabulary trimmed to the tokens a corpus uses.",
        "",
        *trim_section(report, seed=seed),
        "## How it was made",
        "",
        "```bash",
        command_line(model_ref, config, seed),
        "```",
        "",
        "(or the `trim` stage of a `skadapt train` recipe). Counts, selection and parity results are in "
        "`trim_report.json`. Loads with plain `SentenceTransformer(path)`; keep using the base model's "
        "prompts (`query: ` / `passage: ` for E5 models).",
        "",
    ]
    return "\n".join(lines)


def write_card(
    out_dir: Path, report: dict[str, Any], *, model_ref: str, language: str | None, seed: int
) -> Path:
    """Write ``README.md`` into ``out_dir``; returns its path."""
    path = out_dir / CARD_FILE
    path.write_text(render_card(report, model_ref=model_ref, language=language, seed=seed), encoding="utf-8")
    return path


def card_section(ctx: CardContext) -> list[str]:
    """The trim's section of the published card (:attr:`skadapt.stage.Stage.card`)."""
    report = ctx.report_as(TrimReport)
    return trim_section(report.as_json() if report is not None else None)
