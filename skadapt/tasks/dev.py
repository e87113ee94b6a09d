"""The dev sets that choices are made on: the best checkpoint, WiSE-FT's coefficient, renormalization.

- ``kind: sts`` - rows with sentence1, sentence2, score (on ``score_range``) -> EmbeddingSimilarityEvaluator,
  selected on Spearman of cosine similarities; both sentences get the model's query prompt.
- ``kind: retrieval`` - rows with query, positive -> InformationRetrievalEvaluator over the corpus of all
  positives, selected on nDCG@10; queries get the query prompt, passages the document prompt. An optional
  ``corpus`` (``{source, columns}``, as a stage's corpus) adds distractor passages no query is relevant to
  (same-topic text: a corpus of only the positives is easier than a real one); a distractor that is an
  evaluation test text, a positive of the set (folded) or a repeat is dropped and counted in the set's
  report (``corpus``).
- ``kind: triplets`` - rows with anchor, positive, negative (NLI-style) -> TripletEvaluator, selected on
  cosine accuracy; the query prompt on all three.
- ``kind: nli`` - rows with premise, hypothesis, label (as training's ``nli`` reads them): grouped on the
  exact premise text into (premise, entailed, contradicted) triplets, each entailed hypothesis paired
  with one of the premise's contradicted ones in turn -> the ``triplets`` evaluator. Neutral rows and
  hypotheses left without a partner are counted, not used.
- ``kind: rte`` - rows with premise, hypothesis, label -> BinaryClassificationEvaluator (entailment vs
  every other label), selected on the average precision of cosine similarities; query prompt on both.
- ``kind: bitext`` - rows with sentence1, sentence2 (a sentence and its translation; ``columns`` maps the
  two sides) -> nearest-neighbour matching of every sentence1 among all sentence2, selected on mteb's
  BitextMining F1 (:mod:`skadapt.tasks.bitext_dev`); query prompt on both. What the dims tiers' basis
  and renorm's projections need to see cross-lingual quality.
- ``kind: clustering`` - rows with text, label -> mteb's clustering score: the mean V-measure of its
  k-means experiments with a cluster per label (:mod:`skadapt.tasks.cluster_dev`); query prompt. Needs 2
  labels at least.
- ``kind: classification`` - rows with text, label -> the accuracy of mteb's logistic regression,
  cross-validated over the set in 5 stratified folds (:mod:`skadapt.tasks.class_dev`); query prompt. Needs
  2 labels at least, each with 5 texts at least. These two see what pulling a fine-tuned model back towards
  its base (WiSE-FT, renormalization) costs most.

Labels are read through the set's ``label_map``, then the source's ClassLabel names, then as written
(clustering and classification: any label, ``label_map`` merging labels).

**Evaluation test texts never choose.** With the evaluation tasks' test texts given (``test_texts``), every
dev row any of whose texts is one of them (exactly or folded, as the contamination check compares) is
dropped before the evaluator is built, and counted per set and task in its report: a choice made on test
texts would flatter the stage it kept. A set left empty is an error.

**Dev rows the model was trained on are counted, and dropped by default.** With the run's training texts
given (``training``, :class:`~skadapt.tasks.heldout.TrainingTexts`), every remaining example any of whose
texts is a fine-tuning training text (folded; the rule is :mod:`skadapt.tasks.heldout`'s) is counted per
training dataset and text role in the set's report (``training_overlap``), and left out when the dev sets'
``training_overlap`` is ``drop`` (the default; ``keep`` scores them and still reports them): a choice made
on trained-on rows rewards memorisation. A set the drop leaves empty is an error naming the set.

Several dev sets run in sequence and the dev score is the mean of their main scores.
"""

from __future__ import annotations

import functools
import logging
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skadapt.devices import encode_batch_size
from skadapt.prompts import role_prompt
from skadapt.sources import column_text, column_value
from skadapt.sources.columns import is_blank
from skadapt.tasks.contamination import EXAMPLES, folded_words, overlapping_rows
from skadapt.tasks.rows import RowSource, TrainingDataError, label_key, open_rows

if TYPE_CHECKING:
    from skadapt.tasks.config import DevSetConfig, DevSets
    from skadapt.tasks.heldout import TrainingTexts

log = logging.getLogger(__name__)

DEV_NAME = "dev"


@dataclass
class DevSet:
    """A built dev evaluator and the metric the trainer selects the best checkpoint on.

    Attributes:
        evaluator: The sentence-transformers evaluator (named ``dev``).
        metric: Key of the main score in the evaluator's results, e.g. ``dev_spearman_cosine``.
        size: Examples scored: pairs (sts, rte, bitext), queries (retrieval), triplets (triplets, nli) or
            texts (clustering, classification).
        report: Per set: name, kind, source, rows read, examples, rows dropped by reason, the rows
            dropped because a text is an evaluation test text (``contamination``: rows, by task) and the
            examples sharing a text with the training data (``training_overlap``: action, checked,
            overlapping, by dataset and role, examples; None when no training texts were given); a
            retrieval set with a distractor ``corpus`` also its account (source, read, used, dropped as
            repeats, as positives and as evaluation test texts); clustering and classification the
            texts per label (``labels``).
        parts: The sets a combined evaluator runs in sequence (several dev sets; empty for one).
    """

    evaluator: Any
    metric: str
    size: int
    report: list[dict[str, Any]] = field(default_factory=list)
    parts: list[DevSet] = field(default_factory=list)

    @property
    def sets(self) -> list[DevSet]:
        """The dev sets it is made of, one evaluator each (itself, when it is one set)."""
        return self.parts or [self]


ROLES = {
    "sts": ("sentence1", "sentence2", "score"),
    "retrieval": ("query", "positive"),
    "triplets": ("anchor", "positive", "negative"),
    "nli": ("premise", "hypothesis", "label"),
    "rte": ("premise", "hypothesis", "label"),
    "bitext": ("sentence1", "sentence2"),
    "clustering": ("text", "label"),
    "classification": ("text", "label"),
}
"""Dev set kind -> the roles (default column names) its rows need."""
NLI_LABELS = ("entailment", "neutral", "contradiction")
RTE_LABELS = ("entailment", "not_entailment", "neutral", "contradiction")
LABELS = {"nli": NLI_LABELS, "rte": RTE_LABELS}
"""Kinds whose labels are a fixed set of names."""
CLASS_KINDS = ("clustering", "classification")
"""Kinds whose labels are the set's own (any label; a text per row)."""
MIN_PER_LABEL = {"classification": 5}
"""Texts a label needs at least (classification: one per cross-validation fold)."""
TEXTS = {
    "sts": ("sentence1", "sentence2"),
    "retrieval": ("query", "positive"),
    "triplets": ("anchor", "positive", "negative"),
    "nli": ("anchor", "positive", "negative"),
    "rte": ("premise", "hypothesis"),
    "bitext": ("sentence1", "sentence2"),
    "clustering": ("text",),
    "classification": ("text",),
}
"""Dev set kind -> the text fields of its examples (what the contamination drop compares)."""
TEXT_ROLES = {
    kind: tuple(role for role in roles if role not in ("score", "label")) for kind, roles in ROLES.items()
}
"""Dev set kind -> the roles of its rows that hold texts."""
ENCODED_ONCE = {
    "retrieval": ("positive",),
    "rte": ("premise", "hypothesis"),
    "nli": ("premise",),
    "clustering": ("text",),
    "classification": ("text",),
}
"""Roles whose distinct texts the evaluator encodes once (the retrieval corpus; the binary classification
evaluator's sentences; a premise heads one triplet; the clustering and classification texts); the other
roles are encoded once per example."""


def _column(config: DevSetConfig, role: str) -> str:
    return config.columns.get(role, role)


def _label(config: DevSetConfig, raw: Any, names: list[str] | None, where: str) -> str:
    """A label as a name of ``LABELS[kind]``: through ``label_map``, the ClassLabel names, or as written."""
    key = str(raw)
    if key in config.label_map:
        name = config.label_map[key]
    elif names is not None and isinstance(raw, int) and 0 <= raw < len(names):
        name = names[raw]
    else:
        name = key
    allowed = LABELS[config.kind]
    if label_key(name) not in allowed:
        hint = f"label_map {config.label_map}" if config.label_map else "no label_map"
        raise TrainingDataError(
            f"dev set {config.source}: {where}: label {raw!r} is not one of {', '.join(allowed)} ({hint}); "
            "map it with label_map"
        )
    return label_key(name)


def _class_label(config: DevSetConfig, raw: Any, names: list[str] | None, where: str) -> str:
    """A clustering/classification label as text: through ``label_map`` (keyed by the value as written, or
    by its ClassLabel name), the ClassLabel names, or as written."""
    if not isinstance(raw, str | int | float) or is_blank(raw):
        raise TrainingDataError(
            f"dev set {config.source}: {where}: label {raw!r} is no label; a label is a text or a number"
        )
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    key = str(raw).strip()
    if key in config.label_map:
        return config.label_map[key]
    if names is not None and isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw < len(names):
        return config.label_map.get(names[raw], names[raw])
    return key


def check_first_row(config: DevSetConfig) -> str:
    """Open a dev set and check its first row has every column its kind needs, and (nli/rte) that every
    ClassLabel name of its label column is a known label (clustering/classification: that its first label
    is one) - the preflight check. A retrieval set's distractor corpus is checked apart, as every corpus
    field is (:func:`skadapt.stage.corpus_input`).

    Returns:
        What was found, e.g. ``"columns text1, text2, label; labels entailment, not_entailment"``.

    Raises:
        TrainingDataError: The source cannot be opened, is empty, lacks a column or has an unknown label.
    """
    source = open_rows(config.source, "dev")
    where, row = next(iter(source.rows), (None, None))
    if row is None:
        raise TrainingDataError(f"dev set: {config.source} is empty (no rows)")
    missing = [_column(config, role) for role in ROLES[config.kind] if _column(config, role) not in row]
    if missing:
        raise TrainingDataError(
            f"dev set {config.source}: no column {', '.join(missing)} (columns: {', '.join(row)}); "
            "map them with columns"
        )
    found = f"columns {', '.join(_column(config, role) for role in ROLES[config.kind])}"
    if config.kind in CLASS_KINDS:
        names = source.label_names.get(_column(config, "label"))
        _class_label(config, row[_column(config, "label")], names, str(where))
        return f"{found}; labels {', '.join(names)}" if names else f"{found}; labels written as values"
    if config.kind not in LABELS:
        return found
    column = _column(config, "label")
    names = source.label_names.get(column)
    if names is None:
        _label(config, row[column], None, str(where))
        return f"{found}; labels written as values"
    for index, name in enumerate(names):
        _label(config, config.label_map.get(str(index), name), None, f"ClassLabel {index} of {column!r}")
    return f"{found}; labels {', '.join(names)}"


def count_examples(config: DevSetConfig) -> int:
    """The examples a dev set's rows make (nli: triplets), before any drop (what a size estimate needs).

    Raises:
        TrainingDataError: As building it.
    """
    return len(_read(config).items)


def text_columns(config: DevSetConfig) -> list[str]:
    """The columns of a dev set's :data:`TEXT_ROLES` (as ``columns`` maps them)."""
    return [_column(config, role) for role in TEXT_ROLES[config.kind]]


def encoded_texts(config: DevSetConfig) -> list[str]:
    """The texts a dev set's evaluator encodes, read from its rows (what a plan counts): each row's
    :data:`TEXT_ROLES` (columns mapped), those of :data:`ENCODED_ONCE` once per distinct text; a cell that
    is not text is skipped (building the set checks them). A retrieval set's distractor passages follow,
    each distinct one not already a positive.

    Raises:
        TrainingDataError: The source cannot be opened or read.
        SourceError: The distractor corpus cannot be read.
    """
    once = ENCODED_ONCE.get(config.kind, ())
    seen: set[str] = set()
    texts = []
    roles = list(zip(TEXT_ROLES[config.kind], text_columns(config), strict=True))
    for _, row in open_rows(config.source, "dev").rows:
        for role, column in roles:
            value = row.get(column)
            if not isinstance(value, str) or (role in once and value in seen):
                continue
            if role in once:
                seen.add(value)
            texts.append(value)
    if config.corpus is not None:
        for text in _corpus_passages(config):
            if text not in seen:
                seen.add(text)
                texts.append(text)
    return texts


def _corpus_passages(config: DevSetConfig) -> list[str]:
    """The non-blank texts of a retrieval set's distractor corpus, as read."""
    from skadapt.sources.config import corpus_texts

    assert config.corpus is not None
    return [text for text in corpus_texts(config.corpus) if text.strip()]


def dev_keys(dev: DevSets, language: str) -> set[str]:
    """Normalized dev texts and their sentences (:func:`skadapt.textsample.normalize_text`): what a basis
    must not be fitted on."""
    from skadapt.textsample import normalize_text, split_sentences

    keys: set[str] = set()
    for entry in dev.sets:
        for text in encoded_texts(entry):
            keys.add(normalize_text(text))
            keys.update(normalize_text(s) for s in split_sentences(text, language))
    return keys


def _value(row: dict[str, Any], column: str, role: str, where: str) -> Any:
    read = column_value if role in ("score", "label") else column_text
    return read(row, column, f"dev set: {where}", role, error=TrainingDataError)


@dataclass
class _Examples:
    """A dev set's examples (field -> value) and what reading it counted."""

    items: list[dict[str, Any]]
    rows: int
    dropped: dict[str, int]


def _read(config: DevSetConfig) -> _Examples:
    """The examples of one dev set (nli rows grouped into triplets)."""
    source = open_rows(config.source, "dev")
    rows = list(source.rows)
    if not rows:
        raise TrainingDataError(f"dev set: {config.source} is empty (no rows)")
    if config.kind in LABELS:
        return _labelled(config, rows, source)
    if config.kind in CLASS_KINDS:
        names = source.label_names.get(_column(config, "label"))
        items = [
            {
                "text": _value(row, _column(config, "text"), "text", where),
                "label": _class_label(
                    config, _value(row, _column(config, "label"), "label", where), names, where
                ),
            }
            for where, row in rows
        ]
        return _Examples(items, len(rows), {})
    items = []
    for where, row in rows:
        item = {role: _value(row, _column(config, role), role, where) for role in ROLES[config.kind]}
        if config.kind == "sts":
            item["score"] = _score(config, item["score"], where)
        items.append(item)
    return _Examples(items, len(rows), {})


def _score(config: DevSetConfig, raw: Any, where: str) -> float:
    low, high = config.score_range
    try:
        score = float(raw)
    except (TypeError, ValueError):
        raise TrainingDataError(f"dev set: {where}: score {raw!r} is not a number") from None
    if not low <= score <= high:
        raise TrainingDataError(f"dev set: {where}: score {raw!r} is outside score_range [{low:g}, {high:g}]")
    return (score - low) / (high - low)


def _labelled(config: DevSetConfig, rows: list[tuple[str, dict[str, Any]]], source: RowSource) -> _Examples:
    """rte: one (premise, hypothesis, entailed) example per row; nli: the triplets of each premise."""
    names = source.label_names.get(_column(config, "label"))
    read = [
        (
            _value(row, _column(config, "premise"), "premise", where),
            _value(row, _column(config, "hypothesis"), "hypothesis", where),
            _label(config, _value(row, _column(config, "label"), "label", where), names, where),
        )
        for where, row in rows
    ]
    if config.kind == "rte":
        items = [{"premise": p, "hypothesis": h, "label": int(label == "entailment")} for p, h, label in read]
        return _Examples(items, len(rows), {})
    groups: dict[str, dict[str, list[str]]] = defaultdict(lambda: {label: [] for label in NLI_LABELS})
    for premise, hypothesis, label in read:
        groups[premise][label].append(hypothesis)
    items = []
    reasons = ("neutral", "entailment_without_contradiction", "contradiction_without_entailment")
    dropped = dict.fromkeys((*reasons, "contradiction_unused"), 0)
    for premise, hypotheses in groups.items():
        entailed, contradicted = hypotheses["entailment"], hypotheses["contradiction"]
        dropped["neutral"] += len(hypotheses["neutral"])
        if not contradicted:
            dropped["entailment_without_contradiction"] += len(entailed)
            continue
        if not entailed:
            dropped["contradiction_without_entailment"] += len(contradicted)
            continue
        dropped["contradiction_unused"] += max(0, len(contradicted) - len(entailed))
        for index, positive in enumerate(entailed):
            negative = contradicted[index % len(contradicted)]
            items.append({"anchor": premise, "positive": positive, "negative": negative})
    return _Examples(items, len(rows), {k: v for k, v in dropped.items() if v})


def _overlap(
    config: DevSetConfig, items: list[dict[str, Any]], test_texts: dict[str, list[str]]
) -> tuple[list[bool], dict[str, Any]]:
    """A keep mask over ``items`` and ``{rows, dropped, by_task, examples}`` (see ``overlapping_rows``)."""
    fields = TEXTS[config.kind]
    keep, found = overlapping_rows({"dev": [tuple(item[f] for f in fields) for item in items]}, test_texts)
    return keep["dev"], found["dev"]


def overlap_with_test_texts(config: DevSetConfig, test_texts: dict[str, list[str]]) -> dict[str, Any]:
    """What building the dev set will drop (the preflight's preview): ``{rows, dropped, by_task,
    examples}``, ``rows`` counting its examples (nli: triplets); with a distractor corpus also ``corpus``,
    what is dropped of it for an evaluation test text (``{rows, dropped, by_task, examples}``, ``rows``
    counting its distinct passages that are no positive).

    Raises:
        TrainingDataError: As building it.
    """
    items = _read(config).items
    found = _overlap(config, items, test_texts)[1]
    if config.corpus is not None:
        passages = _new_passages(_corpus_passages(config), [item["positive"] for item in items])[0]
        found["corpus"] = overlapping_rows({"corpus": [(text,) for text in passages]}, test_texts)[1][
            "corpus"
        ]
    return found


def _drop_test_texts(
    config: DevSetConfig, name: str, examples: _Examples, test_texts: dict[str, list[str]] | None
) -> dict[str, Any]:
    """Drop the examples holding an evaluation test text; the count per task (``{rows, by_task}``)."""
    if not test_texts:
        return {"rows": 0, "by_task": {}, "examples": []}
    keep, report = _overlap(config, examples.items, test_texts)
    if report["dropped"]:
        examples.items = [item for item, kept in zip(examples.items, keep, strict=True) if kept]
        by_task = ", ".join(f"{task} {n}" for task, n in report["by_task"].items())
        log.warning(
            "dev set %s (%s): %d of %d examples dropped, their texts are evaluation test texts (%s)",
            name,
            config.source,
            report["dropped"],
            report["rows"],
            by_task,
        )
    if not examples.items:
        raise TrainingDataError(
            f"dev set {config.source}: every example holds an evaluation test text, so it cannot choose "
            "without choosing on the test data; use another dev set"
        )
    return {"rows": report["dropped"], "by_task": report["by_task"], "examples": report["examples"]}


def _training_overlap(
    config: DevSetConfig, items: list[dict[str, Any]], training: TrainingTexts
) -> tuple[list[bool], dict[str, Any]]:
    """A keep mask over ``items`` (False: the example shares a text with the training data) and
    ``{checked, overlapping, by_dataset, by_role, examples}``: an example counts once in ``overlapping``
    and once for each training dataset and role it matches."""
    fields = TEXTS[config.kind]
    owners = iter(training.owners([item[f] for item in items for f in fields]))
    keep: list[bool] = []
    by_dataset: dict[str, int] = {name: 0 for name in training.digests}
    by_role: dict[str, int] = dict.fromkeys(fields, 0)
    examples: list[str] = []
    for item in items:
        matched = {role: next(owners) for role in fields}
        datasets = {name for found in matched.values() for name in found}
        keep.append(not datasets)
        for name in datasets:
            by_dataset[name] += 1
        for role, found in matched.items():
            if found:
                by_role[role] += 1
        if datasets and len(examples) < EXAMPLES:
            examples.append(next(item[role] for role, found in matched.items() if found)[:120])
    report = {
        "checked": len(items),
        "overlapping": keep.count(False),
        "by_dataset": {name: n for name, n in by_dataset.items() if n},
        "by_role": {role: n for role, n in by_role.items() if n},
        "examples": examples,
    }
    return keep, report


def overlap_with_training(
    config: DevSetConfig,
    training: TrainingTexts,
    test_texts: dict[str, list[str]] | None = None,
    action: str = "drop",
) -> dict[str, Any]:
    """What building the dev set will find in the training data (the preflight's preview): its
    ``training_overlap`` report (``checked`` counts the examples left after the evaluation test texts'
    drop) with ``action``.

    Raises:
        TrainingDataError: As building it.
    """
    items = _read(config).items
    if test_texts:
        keep, _ = _overlap(config, items, test_texts)
        items = [item for item, kept in zip(items, keep, strict=True) if kept]
    return {"action": action, **_training_overlap(config, items, training)[1]}


def _drop_training_overlap(
    config: DevSetConfig, name: str, examples: _Examples, training: TrainingTexts | None, action: str
) -> dict[str, Any] | None:
    """Count the examples sharing a text with the training data and, with ``action`` drop, drop them;
    their report (None without ``training``)."""
    if training is None:
        return None
    keep, report = _training_overlap(config, examples.items, training)
    report = {"action": action, **report}
    if not report["overlapping"]:
        return report
    log.warning("dev set %s (%s): %s", name, config.source, overlap_line(report))
    if action == "drop":
        examples.items = [item for item, kept in zip(examples.items, keep, strict=True) if kept]
    if not examples.items:
        datasets = _counts(report["by_dataset"])
        raise TrainingDataError(
            f"dev set {config.source}: every one of its {report['checked']} examples shares a text with the "
            f"fine-tuning training data ({datasets}), so nothing held out is left to choose on; use another "
            "split as the dev set, or set training_overlap: keep in its dev section (finetune.dev / "
            "renorm.dev) to choose on them anyway"
        )
    return report


def overlap_line(report: dict[str, Any]) -> str:
    """One line for a ``training_overlap`` report, e.g. ``"12 of 60 examples share a text with training
    set qa (by role: positive 12): dropped"`` (several sets: ``training sets nli 3, qa 12``)."""
    if not report["overlapping"]:
        return f"0 of {report['checked']} examples share a text with the training data"
    found = report["by_dataset"]
    datasets = f"set {next(iter(found))}" if len(found) == 1 else "sets " + _counts(found)
    what = "dropped" if report["action"] == "drop" else "kept (training_overlap: keep)"
    return (
        f"{report['overlapping']} of {report['checked']} examples share a text with training {datasets} "
        f"(by role: {_counts(report['by_role'])}): {what}"
    )


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items())


def _passage_key(text: str) -> str:
    return folded_words(text) or text


def _new_passages(passages: list[str], positives: list[str]) -> tuple[list[str], int, int]:
    """The distractor ``passages`` that are neither a positive nor a repeat (compared folded), and how
    many were each."""
    taken = {_passage_key(text) for text in positives}
    seen: set[str] = set()
    kept, repeats, positive = [], 0, 0
    for text in passages:
        key = _passage_key(text)
        if key in taken:
            positive += 1
        elif key in seen:
            repeats += 1
        else:
            seen.add(key)
            kept.append(text)
    return kept, repeats, positive


def _distractors(
    config: DevSetConfig, name: str, positives: list[str], test_texts: dict[str, list[str]] | None
) -> tuple[list[str], dict[str, Any]]:
    """A retrieval set's distractor passages (:func:`_new_passages` of its corpus, less the evaluation test
    texts) and their account for the set's report."""
    assert config.corpus is not None
    read = _corpus_passages(config)
    passages, repeats, positive = _new_passages(read, positives)
    contamination: dict[str, Any] = {"rows": 0, "by_task": {}, "examples": []}
    if test_texts and passages:
        keep, found = overlapping_rows({"corpus": [(text,) for text in passages]}, test_texts)
        report = found["corpus"]
        if report["dropped"]:
            passages = [text for text, kept in zip(passages, keep["corpus"], strict=True) if kept]
            by_task = ", ".join(f"{task} {n}" for task, n in report["by_task"].items())
            log.warning(
                "dev set %s (%s): %d of %d distractor passages of %s dropped, they are evaluation test "
                "texts (%s)",
                name,
                config.source,
                report["dropped"],
                report["rows"],
                config.corpus.source,
                by_task,
            )
        contamination = {
            "rows": report["dropped"],
            "by_task": report["by_task"],
            "examples": report["examples"],
        }
    account = {
        "source": config.corpus.source,
        "columns": list(config.corpus.columns),
        "read": len(read),
        "passages": len(passages),
        "repeats": repeats,
        "positives": positive,
        "contamination": contamination,
    }
    return passages, account


def _label_counts(config: DevSetConfig, examples: _Examples) -> dict[str, int]:
    """Texts per label of a clustering/classification set (after the drops), checked: 2 labels at least,
    each with :data:`MIN_PER_LABEL` texts.

    Raises:
        TrainingDataError: Fewer labels or texts than the kind needs.
    """
    counts = Counter(item["label"] for item in examples.items)
    left = len(examples.items)
    after = f" (of the {left} left after the drops)" if left < examples.rows else ""
    if len(counts) < 2:
        merged = f" (label_map {config.label_map} maps the labels read)" if config.label_map else ""
        raise TrainingDataError(
            f"dev set {config.source}: every text{after} has the label {next(iter(counts))!r}{merged}; a "
            f"{config.kind} dev set needs 2 labels at least: use rows of several labels"
        )
    least = MIN_PER_LABEL.get(config.kind, 1)
    few = {label: n for label, n in sorted(counts.items()) if n < least}
    if few:
        raise TrainingDataError(
            f"dev set {config.source}: {len(few)} label(s) with fewer than {least} texts{after} "
            f"({_counts(dict(list(few.items())[:10]))}{', ...' if len(few) > 10 else ''}); classification is "
            f"cross-validated in {least} stratified folds, so each label needs {least} texts: add texts, "
            "merge rare labels into others with label_map, or leave their rows out"
        )
    return dict(sorted(counts.items()))


def build_dev_sets(
    config: DevSets,
    batch_size: int | None = None,
    prompts: dict[str, str] | None = None,
    test_texts: dict[str, list[str]] | None = None,
    training: TrainingTexts | None = None,
) -> list[DevSet]:
    """One evaluator per dev set (named ``<kind>-<n>``), for callers that report each set's score.

    Args:
        config: The dev sets.
        batch_size: Encoding batch size (default: the device's, :func:`skadapt.devices.encode_batch_size`).
        prompts: The model's prompts (see skadapt.prompts).
        test_texts: Evaluation task -> its test texts: examples holding one are dropped (see the module
            docstring); None checks nothing.
        training: The run's training texts: examples sharing one are counted, and dropped unless
            ``config.training_overlap`` is keep; None checks nothing.

    Raises:
        TrainingDataError: Missing/empty column, bad score or label, or an empty dev set.
    """
    held_out = _HeldOut(test_texts, training, config.training_overlap)
    batch = encode_batch_size(batch_size)
    return [
        _build_one(entry, f"{entry.kind}-{index}", batch, prompts or {}, held_out)
        for index, entry in enumerate(config.sets)
    ]


def build_dev_set(
    config: DevSets,
    batch_size: int | None = None,
    prompts: dict[str, str] | None = None,
    test_texts: dict[str, list[str]] | None = None,
    training: TrainingTexts | None = None,
) -> DevSet:
    """Read the dev sets and build their evaluator (arguments as :func:`build_dev_sets`).

    One set is evaluated alone (named ``dev``); several run in sequence (``dev-<kind>-<n>``) and the dev
    score is the mean of their main scores.

    Raises:
        TrainingDataError: Missing/empty column, bad score or label, or an empty dev set.
    """
    held_out = _HeldOut(test_texts, training, config.training_overlap)
    batch = encode_batch_size(batch_size)
    if len(config.sets) == 1:
        return _build_one(config.sets[0], DEV_NAME, batch, prompts or {}, held_out)
    from sentence_transformers.sentence_transformer.evaluation import SequentialEvaluator

    parts = [
        _build_one(entry, f"{DEV_NAME}-{entry.kind}-{index}", batch, prompts or {}, held_out)
        for index, entry in enumerate(config.sets)
    ]
    evaluator = SequentialEvaluator(
        [part.evaluator for part in parts], main_score_function=lambda scores: sum(scores) / len(scores)
    )
    reports = [report for part in parts for report in part.report]
    return DevSet(evaluator, "sequential_score", sum(part.size for part in parts), reports, parts)


@dataclass(frozen=True)
class _HeldOut:
    """What a dev set is kept apart from: the evaluation test texts and the training texts (and what to
    do with the examples sharing a training text)."""

    test_texts: dict[str, list[str]] | None
    training: TrainingTexts | None
    action: str


@functools.cache
def symmetric_triplets() -> type:
    """``TripletEvaluator`` that encodes anchors, positives and negatives alike, with plain ``encode``.

    sentence-transformers 6 encodes a triplet's anchor with ``encode_query`` and the others with
    ``encode_document``, adding the model's query and document prompts (retrieval-style triplets). NLI
    triplets are symmetric and their texts already carry the query prompt: without this, E5's dev triplets
    were scored as "query: query: premise" against "passage: query: hypothesis".
    """
    from sentence_transformers.sentence_transformer.evaluation import TripletEvaluator

    class SymmetricTripletEvaluator(TripletEvaluator):
        def embed_inputs(self, model: Any, sentences: Any, *_: Any, **kwargs: Any) -> Any:
            kwargs.pop("encode_fn_name", None)
            return super().embed_inputs(model, sentences, **kwargs)

    return SymmetricTripletEvaluator


def _build_one(
    config: DevSetConfig, name: str, batch_size: int, prompts: dict[str, str], held_out: _HeldOut
) -> DevSet:
    """One dev set's evaluator, named ``name``."""
    examples = _read(config)
    if not examples.items:
        raise TrainingDataError(
            f"dev set {config.source}: no example made from its {examples.rows} rows (dropped: "
            f"{examples.dropped})"
        )
    contamination = _drop_test_texts(config, name, examples, held_out.test_texts)
    training_overlap = _drop_training_overlap(config, name, examples, held_out.training, held_out.action)
    items = examples.items
    report = {
        "name": name,
        "kind": config.kind,
        "source": config.source,
        "rows": examples.rows,
        "examples": len(items),
        "dropped": examples.dropped,
        "contamination": contamination,
        "training_overlap": training_overlap,
    }

    if config.kind in CLASS_KINDS:
        report["labels"] = _label_counts(config, examples)
        return _texts_evaluator(config, name, items, report, batch_size, role_prompt(prompts, "query"))
    return _pairs_evaluator(config, name, items, report, batch_size, prompts, held_out)


def _texts_evaluator(
    config: DevSetConfig,
    name: str,
    items: list[dict[str, Any]],
    report: dict[str, Any],
    batch_size: int,
    query: str,
) -> DevSet:
    """The evaluator of a set of labelled texts (clustering, classification); the texts get ``query``."""
    if config.kind == "clustering":
        from skadapt.tasks.cluster_dev import cluster_evaluator

        evaluator, metric = cluster_evaluator(), "v_measure"
    else:
        from skadapt.tasks.class_dev import class_evaluator

        evaluator, metric = class_evaluator(), "accuracy"
    texts = [query + item["text"] for item in items]
    labels = [item["label"] for item in items]
    built = evaluator(texts, labels, batch_size=batch_size, name=name, seed=config.seed)
    return DevSet(built, f"{name}_{metric}", len(items), [report])


def _pairs_evaluator(
    config: DevSetConfig,
    name: str,
    items: list[dict[str, Any]],
    report: dict[str, Any],
    batch_size: int,
    prompts: dict[str, str],
    held_out: _HeldOut,
) -> DevSet:
    """The evaluator of a set of pairs, triplets or queries (every kind but clustering and classification)."""
    from sentence_transformers.sentence_transformer.evaluation import (
        BinaryClassificationEvaluator,
        EmbeddingSimilarityEvaluator,
        InformationRetrievalEvaluator,
    )

    query, document = role_prompt(prompts, "query"), role_prompt(prompts, "document")

    def column(role: str, prompt: str = "") -> list[str]:
        return [prompt + item[role] for item in items]

    if config.kind == "sts":
        evaluator = EmbeddingSimilarityEvaluator(
            column("sentence1", query),
            column("sentence2", query),
            [item["score"] for item in items],
            batch_size=batch_size,
            name=name,
            similarity_fn_names=["cosine"],
        )
        return DevSet(evaluator, f"{name}_spearman_cosine", len(items), [report])
    if config.kind in ("triplets", "nli"):  # NLI-style triplets are symmetric: query prompt on all
        evaluator = symmetric_triplets()(
            column("anchor", query),
            column("positive", query),
            column("negative", query),
            name=name,
            batch_size=batch_size,
        )
        return DevSet(evaluator, f"{name}_cosine_accuracy", len(items), [report])
    if config.kind == "rte":
        labels = [item["label"] for item in items]
        if len(set(labels)) < 2:
            raise TrainingDataError(
                f"dev set {config.source}: every example is {'entailed' if labels[0] else 'not entailed'}; "
                "average precision needs both"
            )
        evaluator = BinaryClassificationEvaluator(
            column("premise", query),
            column("hypothesis", query),
            labels,
            name=name,
            batch_size=batch_size,
            similarity_fn_names=["cosine"],
            write_csv=False,
        )
        return DevSet(evaluator, f"{name}_cosine_ap", len(items), [report])
    if config.kind == "bitext":
        from skadapt.tasks.bitext_dev import bitext_evaluator

        evaluator = bitext_evaluator()(
            column("sentence1", query), column("sentence2", query), batch_size=batch_size, name=name
        )
        return DevSet(evaluator, f"{name}_f1", len(items), [report])
    queries: dict[str, str] = {}
    corpus: dict[str, str] = {}
    passage_ids: dict[str, str] = {}
    relevant: dict[str, set[str]] = {}
    for item in items:
        doc_id = passage_ids.setdefault(item["positive"], f"d{len(passage_ids)}")
        corpus[doc_id] = item["positive"]
        query_id = f"q{len(queries)}"
        queries[query_id] = item["query"]
        relevant[query_id] = {doc_id}
    if config.corpus is not None:
        passages, report["corpus"] = _distractors(config, name, list(passage_ids), held_out.test_texts)
        corpus.update((f"x{index}", text) for index, text in enumerate(passages))
    evaluator = InformationRetrievalEvaluator(
        queries,
        corpus,
        relevant,
        batch_size=batch_size,
        name=name,
        query_prompt=query or None,
        corpus_prompt=document or None,
        score_functions=None,
        write_csv=False,
    )
    return DevSet(evaluator, f"{name}_cosine_ndcg@10", len(queries), [report])
