"""Model-card helpers the stages share: Hub ids, the language of a corpus, Markdown numbers and tables, the
training data's licenses (:class:`DataLicense`, restrictions flagged), the dev sets' power
(:func:`power_table`), and the one rendering of a trim report (``trim_report.json``).

Stages never import each other; what they say about one another's reports is rendered here, once, so the
trimmed model's own card (``skadapt.trim.card``) and the published card (``skadapt.publish``) word the trim
alike. This module imports no stage, nor the recipe or the pipeline.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from skadapt.sources import SourceError, parse_source

if TYPE_CHECKING:
    from skadapt.results.dev import DevSetPower

TRIM_HEADING = "## Vocabulary trimming"

UNKNOWN = "unknown"
_NON_COMMERCIAL = re.compile(r"(^|[-_. ])nc([-_. ]|$)", re.IGNORECASE)
_SHARE_ALIKE = re.compile(r"(^|[-_. ])sa([-_. ]|$)", re.IGNORECASE)


def restrictions(license_id: str | None) -> list[str]:
    """``non-commercial`` and/or ``share-alike`` when the license id says so (``cc-by-nc-sa-4.0``: both)."""
    if not license_id:
        return []
    found = []
    if _NON_COMMERCIAL.search(license_id) or "noncommercial" in license_id.lower():
        found.append("non-commercial")
    if _SHARE_ALIKE.search(license_id) or "sharealike" in license_id.lower():
        found.append("share-alike")
    return found


@dataclass(frozen=True)
class DataLicense:
    """The license of one training dataset.

    Attributes:
        name: The dataset's name in the recipe.
        source: Its source spec (``hub:ID``, a file).
        license: The license id, or None when unknown.
        origin: Where the license was read (``recipe``, ``option``, ``dataset card``).
    """

    name: str
    source: str
    license: str | None
    origin: str | None = None

    @property
    def restrictions(self) -> list[str]:
        """``non-commercial`` / ``share-alike`` flags of the license."""
        return restrictions(self.license)


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


def number(value: Any, digits: int = 2, sign: bool = False) -> str:
    """A number for a card: ``-`` when missing or NaN, integers with thousands separators, else ``digits``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, int) and not sign:
        return f"{value:,}"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def table(header: list[str], rows: list[list[str]], align: list[str] | None = None) -> list[str]:
    """A Markdown table as lines (``align``: one ``---`` / ``---:`` per column, default left)."""
    align = align or ["---"] * len(header)
    return [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(align) + "|",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _power_flag(entry: DevSetPower) -> str:
    if entry.score is None:
        return "not computed"
    flags = ["saturated"] if entry.saturated else []
    if entry.below_chance:
        flags.append(f"below chance ({number(entry.chance, 3)})")
    if entry.saturated_for_all:
        flags.append("at the top for every candidate")
    return ", ".join(flags) or "ok"


def power_table(power: list[DevSetPower], score: str) -> list[str]:
    """The dev sets' power (:mod:`skadapt.tasks.dev_power`) as a table: dev set, kind, size, ``score``
    (the column naming the model measured), the smallest difference it detects, its flags."""
    rows = [
        [p.name, p.kind, number(p.size), number(p.score, 3), number(p.mde, 3), _power_flag(p)] for p in power
    ]
    return table(
        ["dev set", "kind", "size", score, "detects ≥", "flag"], rows, ["---", "---", *["---:"] * 3, "---"]
    )


def corpus_fields(value: Any) -> dict[str, Any]:
    """A corpus as a report's config holds it, as a mapping: ``{source, columns, max_documents}`` (a
    report written before the corpus was a section holds the spec alone)."""
    return {"source": value} if isinstance(value, str) else dict(value or {})


def _corpus_line(counts: dict[str, Any], corpus: dict[str, Any], max_bytes: int | None) -> str:
    """A counted corpus: spec (and the commit a Hub source was read at), column, texts, size, token
    occurrences and distinct tokens, read limits."""
    given = {"max_documents": corpus.get("max_documents"), "max_bytes": max_bytes}
    limits = [f"{name} {value:,}" for name, value in given.items() if value]
    size = f"{counts['bytes'] / 1e6:.2f} MB, " if counts.get("bytes") is not None else ""
    commit = f" at commit `{counts['commit']}`" if counts.get("commit") else ""
    column = (corpus.get("columns") or ["text"])[0]
    return (
        f"`{counts.get('source')}`{commit} (column `{column}`): "
        f"{number(counts.get('documents'))} texts, {size}{number(counts.get('tokens'))} token occurrences of "
        f"{number(counts.get('distinct_tokens'))} distinct tokens"
        + (f" (limits: {', '.join(limits)})" if limits else "")
    )


def _exactness(report: dict[str, Any]) -> str:
    """Whether the trimmed model is exact on its corpus, in words."""
    coverage, parity = report.get("coverage") or {}, report.get("parity") or {}
    if report["exact"]:
        return (
            "yes - every counted corpus token is kept and every sampled corpus text tokenizes and embeds "
            "as before"
        )
    if coverage.get("all_counted_tokens_kept"):
        if not parity.get("texts"):
            return "not verified - every counted corpus token is kept, but no parity sample was checked"
        return (
            "no - every counted corpus token is kept, but not every sampled corpus text tokenizes and embeds "
            "as before"
        )
    return "no - vocab_size / min_frequency cut counted tokens, so texts using them tokenize differently"


def _corpus_lines(report: dict[str, Any]) -> list[str]:
    """The corpus, the extra corpus and how the vocabulary was chosen from them."""
    config, selection = report.get("config") or {}, report.get("selection") or {}
    lines = []
    if report.get("counts"):
        corpus = corpus_fields(config.get("corpus"))
        lines.append(f"- corpus: {_corpus_line(report['counts'], corpus, config.get('max_bytes'))}")
    if report.get("extra_counts"):
        extra = corpus_fields(config.get("extra_corpus"))
        lines.append(
            f"- extra corpus: {_corpus_line(report['extra_counts'], extra, config.get('max_bytes'))}; "
            f"its {number(config.get('extra_vocab_size') or 0)} most frequent tokens added"
        )
    if selection:
        lines.append(
            f"- vocab_size {number(selection.get('vocab_size_requested'))} (kept "
            f"{number(selection.get('vocab_size_kept'))} + {selection.get('special_tokens_on_top', 0)} "
            f"special tokens on top), min_frequency {config.get('min_frequency', 1)}, "
            f"{report.get('tokenizer')} tokenizer"
        )
    return lines


def _fidelity_lines(report: dict[str, Any], seed: int | None) -> list[str]:
    """Corpus coverage, identical tokenization of the parity sample, exactness, dropped tokens."""
    coverage, parity = report.get("coverage") or {}, report.get("parity")
    lines = []
    if coverage.get("corpus_coverage") is not None:
        distinct = coverage.get("distinct_counted_tokens")
        of = f" of {number(distinct)}" if distinct is not None else ""
        lines.append(
            f"- corpus coverage: {coverage['corpus_coverage']:.2%} of the counted token occurrences are kept "
            f"tokens ({number(coverage.get('distinct_dropped_tokens'))}{of} distinct counted tokens dropped)"
        )
    if parity is not None and parity.get("texts"):
        seed = parity.get("seed", seed)
        diff = parity.get("max_abs_embedding_diff")
        embeddings = (
            f"; their embeddings differ by at most {diff:.2g}"
            + (f" (tolerance {parity['tolerance']:g})" if parity.get("tolerance") is not None else "")
            if diff is not None and parity.get("identically_tokenized")
            else ""
        )
        lines.append(
            f"- identical tokenization: {number(parity.get('identically_tokenized'))} of "
            f"{number(parity['texts'])} sampled corpus texts"
            + (f" (seed {seed})" if seed is not None else "")
            + f", {parity.get('identical_fraction', 0):.1%}{embeddings}"
        )
    elif parity is not None:
        lines.append("- identical tokenization: not checked (no parity sample)")
    if report.get("exact") is not None:
        lines.append(f"- exact: {_exactness(report)}")
    elif report.get("verdict"):
        lines.append(f"- {report['verdict']}")
    dropped = coverage.get("top_dropped_tokens") or []
    if dropped:
        shown = ", ".join(f"`{d['token']}` ({number(d['count'])})" for d in dropped[:10])
        lines.append(f"- most frequent dropped tokens: {shown}")
    evaluation = report.get("evaluation_tokenization")
    if evaluation and evaluation.get("texts"):
        lines.append(
            "- evaluation texts tokenized as by the base model: "
            f"{evaluation.get('identical_fraction', 0):.1%} of {number(evaluation['texts'])} "
            f"(token coverage {evaluation.get('token_coverage', 0):.2%})"
        )
    return lines


def trim_section(report: dict[str, Any] | None, *, seed: int | None = None) -> list[str]:
    """The trim as a card section: vocabulary and parameters before/after, the corpus, coverage, exactness.

    Args:
        report: The trim report (``trim_report.json``); None or empty gives [].
        seed: The parity sample's seed, when the report's parity record does not carry it.

    Returns:
        Markdown lines, ending with a blank line.
    """
    if not report:
        return []
    vocab, parameters = report.get("vocab") or {}, report.get("parameters") or {}
    lines = [
        TRIM_HEADING,
        "",
        "`skadapt trim` removed the embedding rows of the tokens it did not select from the corpus below; no "
        "other weight changed.",
        "",
        *table(
            ["", "before", "after"],
            [
                ["vocabulary (tokens)", number(vocab.get("before")), number(vocab.get("after"))],
                ["parameters", number(parameters.get("before")), number(parameters.get("after"))],
            ],
            ["---", "---:", "---:"],
        ),
        "",
    ]
    return [*lines, *_corpus_lines(report), *_fidelity_lines(report, seed), ""]
