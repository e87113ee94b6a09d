"""Task builders: recipe dataset entries -> training datasets with fixed columns, prompts and stats.

- ``pairs``: roles anchor, positive[, negative][, answer] -> columns anchor, positive[, negative]; the
  query prompt on the anchor, the document prompt on the others. Rows without an answer are skipped and
  counted (``dropped: {unanswerable: N}``, by design): an empty ``answer`` - a column that is only read,
  never trained on (SQuAD-v2-style ``answers: {text: []}``; a column named ``answer`` or ``answers`` is
  found without mapping it). A row with an answer (or without an answer column) and an empty/None
  positive is lost data, skipped and counted as ``blank``. An empty anchor stays an error.
- ``triplets``: roles anchor, positive, negative (symmetric, NLI-style triplets written as such) -> the
  same columns; query prompt on all three.
- ``nli``: roles premise, hypothesis, label -> columns anchor, positive, negative (triplets); query prompt.
- ``rte``: roles premise, hypothesis, label (skLEP's text1/text2 are found too) -> columns anchor,
  positive (entailment pairs only); query prompt.
- ``sts``: roles sentence1, sentence2, score -> columns sentence1, sentence2, score (scaled from
  ``score_range`` to [0, 1]); query prompt on both.

A dataset's ``columns`` maps a role to its source column when the names differ.

Prompts are data (see :mod:`skadapt.prompts`): each text column has a role, and gets the model's prompt
for it (for E5: ``query: `` / ``passage: ``; symmetric sentence tasks take the query prompt on both
sides, as the evaluation's prompt policy does for STS and pair classification). A dataset's ``prompts``
(training column -> prompt, ``""`` for none) replaces them column by column.

NLI rows become (premise, entailed hypothesis, contradicted hypothesis) triplets: each entailed hypothesis
of a premise is paired with one of that premise's contradicted hypotheses (in turn). Rows are grouped on the
exact premise text (one pass, linear in the rows): an entailed hypothesis whose premise has no contradicted
one is kept as an (anchor, positive) pair, in a second dataset ``<name>_pairs`` (one dataset, one column
layout); neutral rows, contradicted hypotheses without an entailed one and those beyond a premise's
entailed ones are dropped and counted (the stats' ``dropped``, ``premises``, ``triplets``, ``pairs``).
RTE keeps the entailment pairs as positives.

Every kind drops a training example that repeats an earlier one of its dataset (all its columns equal:
the same source row twice), counted as ``duplicate``: it adds no signal, and a pair repeated across a batch
trains at loss 0 (its copies are the in-batch negatives). Blank and duplicate rows above ``MAX_BROKEN_SHARE``
of the rows read refuse the dataset (:class:`TrainingDataError`, with the counts and the source).

Dropped rows: :func:`dropped_share` is the share of a source's rows dropped for a reason that is not the
kind's design (neutral NLI rows, not-entailed RTE rows and unanswerable QA rows are left out by design);
:func:`drop_summary` says it in one line, and the finetune stage warns above ``WARN_SHARE``.

Labels are read through the dataset's ``label_map`` (source label -> name), then the source's ClassLabel
names, then as written.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skadapt.prompts import Role, role_prompt
from skadapt.sources import column_text, column_value, is_blank
from skadapt.tasks.rows import RowSource, TrainingDataError, label_key, open_rows
from skadapt.train.config import PAIRS_SUFFIX

Rows = list[tuple[str, dict[str, Any]]]

if TYPE_CHECKING:
    from datasets import Dataset

    from skadapt.train.config import FinetuneDataset

SOURCE_ROLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # kind -> (required roles, optional roles)
    "pairs": (("anchor", "positive"), ("negative", "answer")),
    "triplets": (("anchor", "positive", "negative"), ()),
    "nli": (("premise", "hypothesis", "label"), ()),
    "rte": (("premise", "hypothesis", "label"), ()),
    "sts": (("sentence1", "sentence2", "score"), ()),
}
ROLE_ALIASES: dict[str, dict[str, str]] = {
    "rte": {"premise": "text1", "hypothesis": "text2"},
    "pairs": {"answer": "answers"},
}
"""Column names tried when a role is not mapped and no column has the role's own name (skLEP RTE, SQuAD)."""
PAIR_ROLES = ("anchor", "positive", "negative")
"""Text roles of pairs/triplets, in training column order (``answer`` is read, not trained on)."""
NLI_LABELS = ("entailment", "neutral", "contradiction")
RTE_LABELS = ("entailment", "not_entailment", "neutral", "contradiction")
BY_DESIGN = frozenset({"neutral", "not_entailment", "unanswerable"})
"""Drop reasons that are the dataset kind's design, not lost data: not counted in :func:`dropped_share`."""
WARN_SHARE = 0.05
"""A source losing more than this share of its rows (by-design drops aside) is a console warning."""
MAX_BROKEN_SHARE = 0.2
"""Above this share of its rows blank or repeated, a source is refused rather than trained on. Real data
has a few (scraped QA with empty passages, STS-style data repeating pairs): dropped, counted, warned about
above ``WARN_SHARE``. A fifth of the rows is a broken file - a failed export, a join that multiplied rows,
a spreadsheet filled down - and what is left is not the dataset the recipe names; refusing costs nothing
(no model is loaded before the datasets are built)."""
SAMPLE_ROWS = 10_000
"""Rows of an nli source the preflight groups (:func:`sample_grouping`)."""


@dataclass
class TaskDataset:
    """One built training dataset.

    Attributes:
        name: The recipe name of the dataset.
        kind: pairs, nli, rte or sts.
        loss: The loss name from the recipe.
        columns: Training column names in order (text columns, then ``score`` for sts).
        data: Column -> values.
        prompts: Training column -> prompt (text columns only).
        stats: Rows read, rows kept, rows dropped and why (the rows of the recipe entry: on the entry's
            first dataset; its ``<name>_pairs`` dataset has its own examples and drops only).
        entry: The recipe dataset it was built from (its name, but for ``<name>_pairs``).
    """

    name: str
    kind: str
    loss: str
    columns: list[str]
    data: dict[str, list[Any]]
    prompts: dict[str, str]
    stats: dict[str, Any] = field(default_factory=dict)
    prompt_roles: dict[str, Role] = field(default_factory=dict)
    entry: str = ""

    def __post_init__(self) -> None:
        self.entry = self.entry or self.name

    def resolve_prompts(self, model_prompts: dict[str, str]) -> None:
        """Give the columns without a recipe prompt the model's prompt for their role ('' if none)."""
        for column, role in self.prompt_roles.items():
            self.prompts[column] = role_prompt(model_prompts, role)
        self.prompt_roles = {}

    def __len__(self) -> int:
        return len(self.data[self.columns[0]]) if self.columns else 0

    @property
    def text_columns(self) -> list[str]:
        """Columns holding texts (everything but the score or distillation label)."""
        return [c for c in self.columns if c not in ("score", "label")]

    def rows(self) -> list[tuple[str, ...]]:
        """The texts of each row, in text-column order."""
        return list(zip(*(self.data[c] for c in self.text_columns), strict=True))

    def keep_rows(self, keep: list[bool], reason: str) -> int:
        """Keep the rows where ``keep`` is True; the others are counted in ``stats["dropped"][reason]``."""
        dropped = keep.count(False)
        if dropped:
            self.data = {
                c: [v for v, k in zip(values, keep, strict=True) if k] for c, values in self.data.items()
            }
            counts = self.stats.setdefault("dropped", {})
            counts[reason] = counts.get(reason, 0) + dropped
            if "examples" in self.stats:
                self.stats["examples"] -= dropped
        return dropped

    def texts(self) -> list[str]:
        """All training texts of the dataset (with repeats)."""
        return [text for column in self.text_columns for text in self.data[column]]

    def to_hf(self) -> Dataset:
        """The dataset as a ``datasets.Dataset`` with columns in training order."""
        from datasets import Dataset

        return Dataset.from_dict({column: self.data[column] for column in self.columns})


def default_prompt_roles(kind: str, columns: list[str]) -> dict[str, Role]:
    """Default prompt role per training text column of a dataset kind (see the module docstring)."""
    if kind == "pairs":
        return {column: "query" if column == "anchor" else "document" for column in columns}
    return {column: "query" for column in columns if column != "score"}


def _resolve_columns(config: FinetuneDataset, first_row: dict[str, Any], where: str) -> dict[str, str]:
    """Role -> source column for the dataset, checked against the first row."""
    required, optional = SOURCE_ROLES[config.kind]
    unknown = sorted(set(config.columns) - set(required) - set(optional))
    if unknown:
        raise TrainingDataError(
            f"dataset {config.name!r}: columns has unknown role(s) {', '.join(unknown)} for kind "
            f"{config.kind!r}; roles are {', '.join(required + optional)}"
        )
    aliases = ROLE_ALIASES.get(config.kind, {})
    resolved: dict[str, str] = {}
    for role in required + optional:
        if role in config.columns:
            resolved[role] = config.columns[role]
        elif role in first_row:
            resolved[role] = role
        elif aliases.get(role) in first_row:
            resolved[role] = aliases[role]
        elif role in required:
            raise TrainingDataError(
                f"dataset {config.name!r}: {where}: no column for {role!r} (columns: "
                f"{', '.join(map(str, first_row))}); map it with columns: {{{role}: COLUMN}}"
            )
    return resolved


def _text(row: dict[str, Any], column: str, role: str, dataset: str, where: str) -> str:
    return column_text(row, column, f"dataset {dataset!r}: {where}", role, error=TrainingDataError)


def _field(row: dict[str, Any], column: str, role: str, dataset: str, where: str) -> Any:
    return column_value(row, column, f"dataset {dataset!r}: {where}", role, error=TrainingDataError)


def _no_answer(row: dict[str, Any], columns: dict[str, str]) -> str | None:
    """Why a pairs row is not trained on: ``unanswerable`` (a blank answer: by design), ``blank`` (a blank
    positive: lost data), else None (a missing column is not blank: it errs)."""
    for role, reason in (("answer", "unanswerable"), ("positive", "blank")):
        if role in columns and columns[role] in row and is_blank(row[columns[role]]):
            return reason
    return None


def _label(
    row: dict[str, Any],
    column: str,
    config: FinetuneDataset,
    names: list[str] | None,
    allowed: tuple[str, ...],
    where: str,
) -> str:
    raw = _field(row, column, "label", config.name, where)
    key = str(raw)
    if key in config.label_map:
        label = config.label_map[key]
    elif names is not None and isinstance(raw, int) and 0 <= raw < len(names):
        label = names[raw]
    else:
        label = key
    label = label_key(label)
    if label not in allowed:
        hint = f"label_map {config.label_map}" if config.label_map else "no label_map"
        raise TrainingDataError(
            f"dataset {config.name!r}: {where}: unknown label {raw!r} in column {column!r} ({hint}); "
            f"map every source label to one of {', '.join(allowed)} with label_map"
        )
    return label


def _score(row: dict[str, Any], column: str, config: FinetuneDataset, where: str) -> float:
    raw = _field(row, column, "score", config.name, where)
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise TrainingDataError(
            f"dataset {config.name!r}: {where}: score {raw!r} in column {column!r} is not a number"
        ) from None
    low, high = config.score_range
    if math.isnan(value) or not low <= value <= high:
        raise TrainingDataError(
            f"dataset {config.name!r}: {where}: score {raw!r} in column {column!r} is outside "
            f"score_range [{low:g}, {high:g}]; fix the row or set score_range"
        )
    return (value - low) / (high - low)


def _rows(source: RowSource, config: FinetuneDataset) -> tuple[Rows, dict[str, str]]:
    """The rows to build from and the role -> column map (resolved on the first row).

    With ``max_samples``, pairs and sts stop reading once that many usable rows were read (a pairs row
    without an answer or a positive does not count); nli/rte read everything, as their rows do not map one
    to one.
    """
    rows_iter = iter(source.rows)
    first = next(rows_iter, None)
    if first is None:
        raise TrainingDataError(f"dataset {config.name!r}: {config.source} is empty (no rows)")
    columns = _resolve_columns(config, first[1], first[0])
    rows, usable = [], 0
    limit = config.max_samples if config.kind in ("pairs", "sts") else None
    for item in itertools.chain([first], rows_iter):
        rows.append(item)
        usable += not (config.kind == "pairs" and _no_answer(item[1], columns))
        if limit is not None and usable >= limit:
            break
    return rows, columns


def check_first_row(config: FinetuneDataset) -> str:
    """Preflight of one recipe dataset: the source opens, its first row has the mapped columns, and
    every ClassLabel name of an nli/rte label column maps to a known label (through ``label_map``).

    Returns:
        What was found, e.g. ``"columns premise, hypothesis, label; labels entailment, neutral, ..."``.

    Raises:
        TrainingDataError: The source cannot be opened, is empty, lacks a column, or has a label name that
            neither is a known label nor is mapped by ``label_map``.
    """
    source = open_rows(config.source, config.name)
    first = next(iter(source.rows), None)
    if first is None:
        raise TrainingDataError(f"dataset {config.name!r}: {config.source} is empty (no rows)")
    columns = _resolve_columns(config, first[1], first[0])
    missing = [f"{role} -> {column!r}" for role, column in columns.items() if column not in first[1]]
    if missing:
        raise TrainingDataError(
            f"dataset {config.name!r}: {first[0]}: no column for {', '.join(missing)} (columns: "
            f"{', '.join(map(str, first[1]))}); fix columns: in the recipe"
        )
    found = f"columns {', '.join(columns.values())}"
    if config.kind not in ("nli", "rte"):
        return found
    allowed = NLI_LABELS if config.kind == "nli" else RTE_LABELS
    names = source.label_names.get(columns["label"])
    if names is None:  # labels as written: check the first row's
        _label(first[1], columns["label"], config, None, allowed, first[0])
        return f"{found}; labels written as values (no ClassLabel names)"
    for index, name in enumerate(names):
        label = config.label_map.get(str(index), name)  # as _label reads an integer label
        if label_key(label) not in allowed:
            hint = f"label_map {config.label_map}" if config.label_map else "no label_map"
            raise TrainingDataError(
                f"dataset {config.name!r}: ClassLabel name {name!r} (label {index}) of column "
                f"{columns['label']!r} is not one of {', '.join(allowed)} ({hint}); map it with label_map"
            )
    return f"{found}; labels {', '.join(names)}"


def sample_grouping(config: FinetuneDataset, rows: int = SAMPLE_ROWS) -> str:
    """How the first ``rows`` rows of an nli source group, e.g. ``"first 10,000 rows: 3,334 premises ->
    3,300 triplets, 30 pairs; dropped 0.1% of 6,666 rows (...); by design, not counted: 3,334 neutral"``.

    Raises:
        TrainingDataError: As :func:`build_task_datasets` on those rows.
    """
    source = open_rows(config.source, config.name)
    sample = RowSource(source.spec, itertools.islice(source.rows, rows), source.label_names)
    stats = build_task_datasets(config.model_copy(update={"max_samples": None}), sample)[0].stats
    line, warn = drop_summary(stats)
    if warn:
        line += f" - more than {WARN_SHARE:.0%}: check the source"
    return (
        f"first {stats['rows_read']:,} rows: {stats['premises']:,} premises -> {stats['triplets']:,} "
        f"triplets, {stats['pairs']:,} pairs; {line}"
    )


def build_task_dataset(
    config: FinetuneDataset, source: RowSource | None = None, model_prompts: dict[str, str] | None = None
) -> TaskDataset:
    """The one training dataset of a recipe entry (see :func:`build_task_datasets`).

    Raises:
        TrainingDataError: As :func:`build_task_datasets`, or the entry builds two datasets (an nli entry
            with pairs): use :func:`build_task_datasets`.
    """
    datasets = build_task_datasets(config, source, model_prompts)
    if len(datasets) != 1:
        names = ", ".join(d.name for d in datasets)
        raise TrainingDataError(f"dataset {config.name!r} builds {len(datasets)} datasets ({names})")
    return datasets[0]


def build_task_datasets(
    config: FinetuneDataset, source: RowSource | None = None, model_prompts: dict[str, str] | None = None
) -> list[TaskDataset]:
    """Read and convert one recipe dataset: one training dataset, or for nli the triplets and the pairs
    (``<name>_pairs``, entailed hypotheses without a contradicted one), each only when not empty.

    Args:
        config: The recipe entry.
        source: Rows to use instead of opening ``config.source`` (tests, already opened sources).
        model_prompts: The model's prompts, filling the columns the recipe sets no prompt for; None
            leaves them to :meth:`TaskDataset.resolve_prompts` once the model is loaded.

    Raises:
        TrainingDataError: Missing column, empty text, unknown label, score outside ``score_range``, or an
            empty result; the message names the dataset, the row and the field.
    """
    source = source or open_rows(config.source, config.name)
    rows, columns = _rows(source, config)
    builders = {"pairs": _build_pairs, "triplets": _build_pairs, "nli": _build_nli, "rte": _build_rte}
    builder = builders.get(config.kind, _build_sts)
    parts, stats = builder(rows, columns, config, source)
    parts = _capped(_without_duplicates(parts, stats), config.max_samples)
    roles = default_prompt_roles(config.kind, list(parts[0]))
    for column in config.prompts or {}:
        if column not in roles:
            raise TrainingDataError(
                f"dataset {config.name!r}: prompts has {column!r}, not a text column of kind "
                f"{config.kind!r} (columns: {', '.join(roles)})"
            )
    if not any(_size(data) for data in parts):
        raise TrainingDataError(
            f"dataset {config.name!r}: no training examples left from {config.source} "
            f"({stats.get('dropped', {}) or 'all rows dropped'})"
        )
    stats.update(rows_read=len(rows), source_columns=columns)
    _refuse_broken(config, stats)
    datasets = []
    for index, data in enumerate(parts):
        if not _size(data):
            continue
        name = config.name if index == 0 else config.name + PAIRS_SUFFIX
        own = stats if not datasets else {}
        dataset = _task_dataset(config, name, data, {**own, "examples": _size(data)})
        if model_prompts is not None:
            dataset.resolve_prompts(model_prompts)
        datasets.append(dataset)
    return datasets


def _without_duplicates(
    parts: list[dict[str, list[Any]]], stats: dict[str, Any]
) -> list[dict[str, list[Any]]]:
    """Each part without the examples that repeat an earlier one (every column equal), counted in
    ``stats["dropped"]["duplicate"]``."""
    kept_parts, repeated = [], 0
    for data in parts:
        seen: set[tuple[Any, ...]] = set()
        keep = []
        for example in zip(*data.values(), strict=True):
            keep.append(example not in seen)
            seen.add(example)
        repeated += keep.count(False)
        kept_parts.append(
            {c: [v for v, k in zip(values, keep, strict=True) if k] for c, values in data.items()}
        )
    if repeated:
        stats.setdefault("dropped", {})["duplicate"] = repeated
    return kept_parts


def _refuse_broken(config: FinetuneDataset, stats: dict[str, Any]) -> None:
    """Refuse a source whose blank and repeated rows are above ``MAX_BROKEN_SHARE`` of its rows."""
    dropped, rows = stats.get("dropped", {}), stats["rows_read"]
    blank, repeated = dropped.get("blank", 0), dropped.get("duplicate", 0)
    if rows and (blank + repeated) / rows > MAX_BROKEN_SHARE:
        raise TrainingDataError(
            f"dataset {config.name!r}: {config.source}: {blank + repeated:,} of {rows:,} rows "
            f"({(blank + repeated) / rows:.0%}) are blank ({blank:,} without a positive) or repeat an "
            f"earlier row ({repeated:,}), more than {MAX_BROKEN_SHARE:.0%}: the file looks broken; fix the "
            "source (fill or remove the blank rows, remove the repeats)"
        )


def _size(data: dict[str, list[Any]]) -> int:
    return len(next(iter(data.values()), []))


def _capped(parts: list[dict[str, list[Any]]], limit: int | None) -> list[dict[str, list[Any]]]:
    """At most ``limit`` examples over all parts, the first part first."""
    if limit is None:
        return parts
    capped = []
    for data in parts:
        capped.append({column: values[:limit] for column, values in data.items()})
        limit -= _size(capped[-1])
    return capped


def _task_dataset(
    config: FinetuneDataset, name: str, data: dict[str, list[Any]], stats: dict[str, Any]
) -> TaskDataset:
    """One training dataset with the recipe's prompts (the other text columns get the model's, later)."""
    roles = default_prompt_roles(config.kind, list(data))
    prompts = {column: prompt for column, prompt in (config.prompts or {}).items() if column in roles}
    roles = {column: role for column, role in roles.items() if column not in prompts}
    dataset = TaskDataset(
        name, config.kind, str(config.loss), list(data), data, prompts, stats, entry=config.name
    )
    dataset.prompt_roles = roles
    return dataset


def dropped_share(stats: dict[str, Any]) -> tuple[int, int]:
    """(rows dropped, rows it could use) of a built dataset's source; by-design drops count in neither."""
    dropped = stats.get("dropped", {})
    by_design = sum(n for reason, n in dropped.items() if reason in BY_DESIGN)
    lost = sum(n for reason, n in dropped.items() if reason not in BY_DESIGN)
    return lost, stats.get("rows_read", 0) - by_design


def drop_summary(stats: dict[str, Any]) -> tuple[str, bool]:
    """One line on a source's dropped rows, and whether their share is above ``WARN_SHARE``.

    E.g. ``"dropped 7.1% of 33,000 rows (2,345 contradiction_without_entailment); by design, not counted:
    130,900 neutral"``.
    """
    lost, usable = dropped_share(stats)
    dropped = stats.get("dropped", {})
    share = lost / usable if usable else 0.0
    reasons = ", ".join(f"{n:,} {r}" for r, n in dropped.items() if r not in BY_DESIGN) or "none"
    line = f"dropped {share:.1%} of {usable:,} rows ({reasons})"
    designed = ", ".join(f"{n:,} {r}" for r, n in dropped.items() if r in BY_DESIGN)
    if designed:
        line += f"; by design, not counted: {designed}"
    return line, share > WARN_SHARE


Built = tuple[list[dict[str, list[Any]]], dict[str, Any]]
"""The column data of each training dataset an entry builds (nli: triplets, then pairs), and the stats."""


def _build_pairs(rows: Rows, columns: dict[str, str], config: FinetuneDataset, source: RowSource) -> Built:
    roles = [role for role in PAIR_ROLES if role in columns]
    data: dict[str, list[Any]] = {role: [] for role in roles}
    dropped: dict[str, int] = {}
    for where, row in rows:
        texts = {"anchor": _text(row, columns["anchor"], "anchor", config.name, where)}
        if config.kind == "pairs":
            for role in ("positive", "answer"):  # a missing column is an error, a blank one is no answer
                if role in columns:
                    _field(row, columns[role], role, config.name, where)
            reason = _no_answer(row, columns)
            if reason is not None:
                dropped[reason] = dropped.get(reason, 0) + 1
                continue
        for role in roles[1:]:
            texts[role] = _text(row, columns[role], role, config.name, where)
        for role in roles:
            data[role].append(texts[role])
    return [data], {"dropped": dropped}


def _build_sts(rows: Rows, columns: dict[str, str], config: FinetuneDataset, source: RowSource) -> Built:
    data: dict[str, list[Any]] = {"sentence1": [], "sentence2": [], "score": []}
    for where, row in rows:
        data["sentence1"].append(_text(row, columns["sentence1"], "sentence1", config.name, where))
        data["sentence2"].append(_text(row, columns["sentence2"], "sentence2", config.name, where))
        data["score"].append(_score(row, columns["score"], config, where))
    return [data], {}


def _labelled(
    rows: Rows, columns: dict[str, str], config: FinetuneDataset, source: RowSource, allowed: tuple[str, ...]
) -> Iterator[tuple[str, str, str]]:
    """(premise, hypothesis, label name) per row."""
    names = source.label_names.get(columns["label"])
    for where, row in rows:
        premise = _text(row, columns["premise"], "premise", config.name, where)
        hypothesis = _text(row, columns["hypothesis"], "hypothesis", config.name, where)
        yield premise, hypothesis, _label(row, columns["label"], config, names, allowed, where)


def _build_rte(rows: Rows, columns: dict[str, str], config: FinetuneDataset, source: RowSource) -> Built:
    data: dict[str, list[Any]] = {"anchor": [], "positive": []}
    dropped = 0
    for premise, hypothesis, label in _labelled(rows, columns, config, source, RTE_LABELS):
        if label == "entailment":
            data["anchor"].append(premise)
            data["positive"].append(hypothesis)
        else:
            dropped += 1
    return [data], {"dropped": {"not_entailment": dropped} if dropped else {}}


def _build_nli(rows: Rows, columns: dict[str, str], config: FinetuneDataset, source: RowSource) -> Built:
    """Triplets of the premises with entailed and contradicted hypotheses, pairs of those with entailed
    ones only; one pass over the rows (grouped in a dict on the premise text), one over the premises."""
    groups: dict[str, dict[str, list[str]]] = defaultdict(lambda: {label: [] for label in NLI_LABELS})
    for premise, hypothesis, label in _labelled(rows, columns, config, source, NLI_LABELS):
        groups[premise][label].append(hypothesis)
    triplets: dict[str, list[Any]] = {"anchor": [], "positive": [], "negative": []}
    pairs: dict[str, list[Any]] = {"anchor": [], "positive": []}
    dropped = dict.fromkeys(("neutral", "contradiction_without_entailment", "contradiction_unused"), 0)
    for premise, hypotheses in groups.items():
        dropped["neutral"] += len(hypotheses["neutral"])
        entailed, contradicted = hypotheses["entailment"], hypotheses["contradiction"]
        if not entailed:
            dropped["contradiction_without_entailment"] += len(contradicted)
        elif not contradicted:
            pairs["anchor"] += [premise] * len(entailed)
            pairs["positive"] += entailed
        else:
            dropped["contradiction_unused"] += max(0, len(contradicted) - len(entailed))
            for index, positive in enumerate(entailed):
                triplets["anchor"].append(premise)
                triplets["positive"].append(positive)
                triplets["negative"].append(contradicted[index % len(contradicted)])
    counts = {"premises": len(groups), "triplets": len(triplets["anchor"]), "pairs": len(pairs["anchor"])}
    return [triplets, pairs], {"dropped": {k: v for k, v in dropped.items() if v}, **counts}
