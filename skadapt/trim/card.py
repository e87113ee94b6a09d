"""The trimmed model's card (``README.md``): Hub metadata plus what was trimmed, from what, how faithfully.

The base model's own card is not copied (it describes the untrimmed model); this short card replaces it.
Its YAML metadata names the base model, the language, ``library_name: sentence-transformers`` and tags;
its body gives the vocabulary and parameters before/after, the corpus spec, the corpus coverage and
identical-tokenization share, and the ``skadapt trim`` command that made it. Everything comes from the
trim report (``trim_report.json``), which the card points to.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from skadapt.sources import SourceError, parse_source

CARD_FILE = "README.md"
TAGS = (
    "sentence-transformers",
    "sentence-similarity",
    "feature-extraction",
    "vocabulary-trimming",
    "skadapt",
)
DEFAULTS = {"text_column": "text", "min_frequency": 1, "extra_vocab_size": 0, "batch_size": 1000}
"""Trim options left out of the reconstructed command line when they have these values."""


def hub_id(model_ref: str) -> str:
    """The Hub id of a model reference: the id itself, or one read from a Hub-cache path, else the path."""
    found = re.search(r"models--([^/]+)--([^/]+)", model_ref)
    if found:
        return f"{found.group(1)}/{found.group(2)}"
    return model_ref


def infer_language(corpus: str | None) -> str | None:
    """A language code implied by a corpus spec (``wordfreq:sk``, a registered FineWeb2 config), or None."""
    if not corpus:
        return None
    from skadapt.languages import LANGUAGES

    try:
        parsed = parse_source(corpus)
    except SourceError:
        return None
    if parsed.kind == "wordfreq":
        return parsed.name
    for language in LANGUAGES.values():
        fineweb2 = (
            parsed.kind == "hub" and language.fineweb2_config and parsed.config == language.fineweb2_config
        )
        if corpus == language.corpus or fineweb2:
            return language.iso639_1 or language.code
    return None


def command_line(model_ref: str, config: dict[str, Any], seed: int) -> str:
    """The ``skadapt trim`` command that reproduces a trim (output path as ``OUT``)."""
    parts = ["skadapt trim", model_ref, "--corpus", str(config.get("corpus")), "--out", "OUT"]
    for name in ("vocab_size", "min_frequency", "text_column", "max_documents", "max_bytes"):
        value = config.get(name)
        if value is not None and DEFAULTS.get(name) != value:
            parts += [f"--{name.replace('_', '-')}", str(value)]
    for item in config.get("keep") or []:
        parts += ["--keep", repr(item) if " " in item else item]
    if config.get("extra_corpus") and config.get("extra_vocab_size"):
        parts += ["--extra-corpus", str(config["extra_corpus"])]
        parts += ["--extra-vocab-size", str(config["extra_vocab_size"])]
    parts += ["--parity-documents", str(config.get("parity_documents")), "--seed", str(seed)]
    return " ".join(parts)


def _corpus_line(counts: dict[str, Any], config: dict[str, Any]) -> str:
    limits = [f"{name} {config[name]:,}" for name in ("max_documents", "max_bytes") if config.get(name)]
    column = config.get("text_column", "text")
    return (
        f"`{counts['source']}` (column `{column}`): {counts['documents']:,} texts, "
        f"{counts['bytes'] / 1e6:.2f} MB, {counts['tokens']:,} token occurrences of "
        f"{counts['distinct_tokens']:,} distinct tokens"
        + (f" (limits: {', '.join(limits)})" if limits else "")
    )


def _exactness(report: dict[str, Any]) -> str:
    if report["exact"]:
        return (
            "yes - every counted corpus token is kept and every sampled corpus text tokenizes and embeds "
            "as before"
        )
    if report["coverage"]["all_counted_tokens_kept"]:
        return "not verified - every counted corpus token is kept, but no parity sample was checked"
    return "no - vocab_size / min_frequency cut counted tokens, so texts using them tokenize differently"


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
    vocab, parameters = report["vocab"], report["parameters"]
    coverage, parity, selection = report["coverage"], report["parity"], report["selection"]
    name = base.rstrip("/").rsplit("/", 1)[-1]
    lines = [
        "---",
        metadata,
        "---",
        "",
        f"# {name}, vocabulary trimmed" + (f" to {language}" if language else ""),
        "",
        f"`{base}` with its vocabulary trimmed to the tokens a corpus uses (`skadapt trim`): embedding rows "
        "of unused tokens are removed, everything else is unchanged.",
        "",
        "| | before | after |",
        "|---|---:|---:|",
        f"| vocabulary (tokens) | {vocab['before']:,} | {vocab['after']:,} |",
        f"| parameters | {parameters['before']:,} | {parameters['after']:,} |",
        "",
        "## Corpus",
        "",
        f"- corpus: {_corpus_line(report['counts'], config)}",
    ]
    if report.get("extra_counts"):
        lines.append(
            f"- extra corpus: {_corpus_line(report['extra_counts'], config)}; "
            f"its {config.get('extra_vocab_size', 0):,} most frequent tokens added"
        )
    lines += [
        f"- vocab_size {selection['vocab_size_requested']:,} (kept {selection['vocab_size_kept']:,} + "
        f"{selection['special_tokens_on_top']} special tokens on top), min_frequency "
        f"{config.get('min_frequency', 1)}, {report['tokenizer']} tokenizer",
        "",
        "## Fidelity",
        "",
        f"- corpus coverage: {coverage['corpus_coverage']:.2%} of the counted token occurrences are kept "
        f"tokens ({coverage['distinct_dropped_tokens']:,} of {coverage['distinct_counted_tokens']:,} "
        "distinct counted tokens dropped)",
    ]
    if parity["texts"]:
        embeddings = (
            f"; their embeddings differ by at most {parity['max_abs_embedding_diff']:.2g} "
            f"(tolerance {parity['tolerance']:g})"
            if parity["identically_tokenized"]
            else ""
        )
        lines.append(
            f"- identical tokenization: {parity['identically_tokenized']:,} of {parity['texts']:,} sampled "
            f"corpus texts (seed {seed}), {parity['identical_fraction']:.1%}{embeddings}"
        )
    else:
        lines.append("- identical tokenization: not checked (no parity sample)")
    lines.append(f"- exact: {_exactness(report)}")
    dropped = coverage.get("top_dropped_tokens") or []
    if dropped:
        shown = ", ".join(f"`{d['token']}` ({d['count']:,})" for d in dropped[:10])
        lines.append(f"- most frequent dropped tokens: {shown}")
    lines += [
        "",
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
