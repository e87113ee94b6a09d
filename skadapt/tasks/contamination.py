"""Contamination check: overlap of training texts with the evaluation tasks' test texts.

Texts are compared exactly and as :func:`folded_words` (NFKC, casefold, punctuation and symbols dropped,
whitespace collapsed; a stronger key than :func:`skadapt.textsample.normalize_text`, which only folds case
and whitespace). Folded texts shorter than ``MIN_CHARS`` characters (ids, labels, one-word answers) are
ignored. For each evaluation task the report gives the number of its test texts found among the training
texts and the rate (folded overlap / test texts); the check fails when a task's rate exceeds the threshold.

Test texts come from the recipe's ``evaluate.tasks``:

- a local suite YAML (the evaluation's suite format): every non-id string field of every line of the data
  files a task names (:func:`skadapt.tasks.suite.task_texts`);
- an mteb benchmark or task name: resolved as the evaluation resolves it
  (:func:`skadapt.tasks.selection.mteb_tasks`: a task named on its own keeps only its subsets in the
  recipe's language; ``evaluate.dataset_mirrors`` apply), then :func:`task_test_texts` loads each task's
  data and reads every text of its evaluation splits in the subsets it is scored on: retrieval and
  reranking queries and corpora, pairs, sentences, bitext columns.

An unreachable Hub is found by one probe of the endpoint (:mod:`skadapt.hub`) before the first task is
read, and every task that needs it is reported at once, in seconds, instead of after each task's retries.

The check fails closed. Only unreachable data (no network, offline mode, a dataset that cannot be found:
:func:`is_unreachable`) may leave a task unchecked, and only with ``allow``; then it is logged as a warning
and listed in the report. Any other error while reading a task's data stops the run.
"""

from __future__ import annotations

import importlib
import logging
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from skadapt.errors import SkadaptError
from skadapt.hub import unreachable_reason

if TYPE_CHECKING:
    from mteb.abstasks.abstask import AbsTask

log = logging.getLogger(__name__)

MIN_CHARS = 10
EXAMPLES = 5
ID_MAPS = ("relevant_docs", "top_ranked")
"""Keys of mteb retrieval/reranking split data that map ids to ids (no texts)."""
NOT_TEXT_COLUMNS = ("label", "labels")


class ContaminationError(SkadaptError):
    """Training data overlaps the evaluation test data more than the recipe allows."""


class ContaminationCheckError(SkadaptError):
    """The check cannot read an evaluation task's test data (the run stops: the check fails closed)."""


class UnreachableTestDataError(ContaminationCheckError):
    """An evaluation task's test data cannot be reached and unchecked data is not allowed.

    Its message tells a recipe's user what to change (recipe fields); :meth:`for_command` tells a stage
    command's user, who has neither ``evaluate.dataset_mirrors`` nor ``contamination.allow`` to set.

    Attributes:
        unreachable: Task -> why its data cannot be reached.
    """

    REACHABLE = (
        "Make it reachable (network, HF_TOKEN for gated data, no HF_HUB_OFFLINE/HF_DATASETS_OFFLINE without "
        "a cached copy)"
    )

    def __init__(self, unreachable: dict[str, str], section: str) -> None:
        self.unreachable = dict(unreachable)
        super().__init__(
            f"{self._head()}, so the training data cannot be checked against it. {self.REACHABLE}, point the "
            "task at a local copy with evaluate.dataset_mirrors, leave the task out of the evaluation with "
            f"evaluate.exclude_tasks, or set {section}.contamination.allow: true to go on without checking it"
        )

    def _head(self) -> str:
        details = "; ".join(f"{name} ({reason})" for name, reason in sorted(self.unreachable.items()))
        return f"contamination check: the test data of evaluation task(s) {details} cannot be reached"

    def for_command(self, option: str, allow: str | None = None) -> str:
        """The message for a stage command whose ``option`` names the evaluation tasks; ``allow``: how that
        command lets unchecked data through, if it does."""
        names = ", ".join(sorted(self.unreachable))
        leave = f"leave {names} out of {option} (a local suite, a suite .yaml, is read from disk)"
        allowed = f", or {allow} to go on without checking it" if allow else ""
        return (
            f"{self._head()}, so its test texts cannot be kept apart. {self.REACHABLE}, "
            f"{'' if allow else 'or '}{leave}{allowed}"
        )


class _PunctuationToSpace(dict[int, str]):
    """A ``str.translate`` table: punctuation and symbols (Unicode categories P*, S*) to a space, every
    other character to itself; filled as characters are first met."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        value = " " if unicodedata.category(char)[0] in "PS" else char
        self[code] = value
        return value


_PUNCTUATION_TO_SPACE = _PunctuationToSpace()


def folded_words(text: str) -> str:
    """The words of ``text``: NFKC, case-folded, punctuation and symbols dropped, single spaces.

    The contamination check's loose match key: ``"PETER, včera — auto!"`` and ``"peter včera auto"`` are
    the same text. (One ``str.translate`` pass: the check folds every training and test text, ~150 million
    characters for the Slovak recipe.)
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(text.translate(_PUNCTUATION_TO_SPACE).split())


def _is_id(name: Any) -> bool:
    key = str(name).casefold()
    return key in ("id", "ids", "_id", "docid", "qid", "pid") or key.endswith(("_id", "-id", "_ids", "-ids"))


def _text_feature(feature: Any) -> bool:
    """Whether a ``datasets`` feature holds strings (a string value, or lists/structs of them)."""
    if isinstance(feature, dict):
        return any(_text_feature(f) for f in feature.values())
    if getattr(feature, "dtype", None) in ("string", "large_string"):
        return True
    inner = getattr(feature, "feature", None)
    return inner is not None and _text_feature(inner)


def _strings(value: Any) -> Iterator[str]:
    """Texts inside mteb task data: HF datasets (text columns), mappings, lists; ids and labels skipped."""
    from datasets import Dataset

    if isinstance(value, str):
        yield value
    elif isinstance(value, Dataset):
        for column, feature in value.features.items():
            if _is_id(column) or column in NOT_TEXT_COLUMNS or not _text_feature(feature):
                continue
            if getattr(feature, "dtype", None) in ("string", "large_string"):
                yield from (item for item in value[column] if isinstance(item, str))
            else:  # lists or structs of strings (legacy clustering, reranking)
                for item in value[column]:
                    yield from _strings(item)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if not _is_id(key) and key not in ID_MAPS and key not in NOT_TEXT_COLUMNS:
                yield from _strings(item)
    elif isinstance(value, Sequence) and not isinstance(value, bytes):  # lists, tuples, datasets' Column
        for item in value:
            yield from _strings(item)


def task_test_texts(task: AbsTask) -> list[str]:
    """Every text of an mteb task's evaluation splits, in the subsets the task is scored on.

    Loads the task's data (``task.load_data()``: may need the Hub) and reads, per subset in
    ``task.hf_subsets`` (those left by a language filter) and split in ``task.eval_splits``, what mteb's
    evaluation reads: retrieval/reranking queries and corpus, STS/pair sentences, classification and
    clustering texts, bitext sentences (the language columns of parallel bitext tasks); an aggregate
    task's texts are those of its tasks.

    Raises:
        Exception: Whatever loading the data raises; KeyError when a subset or split is missing.
    """
    if getattr(task, "is_aggregate", False):  # e.g. CQADupstackRetrieval: the texts of its tasks
        return [text for sub in task.metadata.tasks for text in task_test_texts(sub)]
    task.load_data()
    convert = getattr(task, "convert_v1_dataset_format_to_v2", None)
    if callable(convert):  # retrieval tasks in mteb's v1 layout (self.corpus/queries/relevant_docs)
        convert(num_proc=None)
    data = task.dataset
    if data is None:
        raise ValueError("load_data() left no dataset")
    texts: list[str] = []
    if getattr(task, "parallel_subsets", False):  # bitext: one dataset per split, a column per language
        columns = {lang for pair in task.hf_subsets for lang in pair.split("-")}
        for split in task.eval_splits:
            part = data[split]
            texts.extend(_strings(part.select_columns(sorted(columns & set(part.column_names)))))
        return texts
    for subset in task.hf_subsets or list(data):
        for split in task.eval_splits:
            part = data[split] if subset not in data and subset == "default" else data[subset][split]
            texts.extend(_strings(part))
    return texts


def _unreachable_types() -> tuple[type[BaseException], ...]:
    """Exceptions that mean the data cannot be reached (network, offline mode, a dataset not found)."""
    types: list[type[BaseException]] = [ConnectionError, TimeoutError]  # datasets: "Couldn't reach ..."
    try:
        import requests

        types += [requests.exceptions.ConnectionError, requests.exceptions.Timeout]
    except ImportError:  # pragma: no cover
        pass
    for client in ("httpx", "httpx2"):  # huggingface_hub's HTTP client (httpx2 from huggingface_hub 2)
        try:
            module = importlib.import_module(client)
        except ImportError:
            continue
        types += [module.NetworkError, module.TimeoutException]
    try:
        from huggingface_hub import errors as hub

        types += [
            hub.OfflineModeIsEnabled,  # HF_HUB_OFFLINE
            hub.RepositoryNotFoundError,  # also gated repositories without access
            hub.RevisionNotFoundError,
            hub.EntryNotFoundError,  # also LocalEntryNotFoundError: not in the offline cache
        ]
    except ImportError:  # pragma: no cover
        pass
    try:
        from datasets.exceptions import DataFilesNotFoundError, DatasetNotFoundError

        types += [DatasetNotFoundError, DataFilesNotFoundError]
    except ImportError:  # pragma: no cover
        pass
    return tuple(types)


def is_unreachable(error: BaseException) -> bool:
    """Whether an error (or an error it was raised from) means the data cannot be reached, not a bug."""
    types = _unreachable_types()
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, types):
            return True
        seen.add(id(current))
        current = current.__cause__
    return False


def _reason(error: BaseException) -> str:
    return f"{type(error).__name__}: {str(error)[:300]}"


def collect_test_texts(
    tasks: Iterable[str],
    *,
    language: str | None = None,
    mirrors: dict[str, str] | None = None,
    exclude: Iterable[str] = (),
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Test texts per evaluation task, and the tasks whose data is unreachable (with the reason).

    Args:
        tasks: Evaluation task specs: suite ``.yaml`` files, mteb benchmark or task names.
        language: The recipe's language (ISO 639-3): mteb tasks named on their own are checked on their
            subsets in it, as the evaluation scores them; None checks every subset.
        mirrors: mteb task name -> local dataset directory (``evaluate.dataset_mirrors``).
        exclude: Task names the evaluation leaves out (``evaluate.exclude_tasks``): not read.

    Raises:
        ContaminationCheckError: A suite cannot be read, a name resolves to no task, or reading a task's
            data fails for any reason but unreachable data.
    """
    from skadapt.tasks.selection import apply_mirror, mteb_tasks
    from skadapt.tasks.suite import is_suite_spec, load_suite, task_texts

    texts: dict[str, list[str]] = {}
    unreachable: dict[str, str] = {}
    excluded = set(exclude)
    for spec in tasks:
        if is_suite_spec(spec):
            try:
                found = task_texts(load_suite(spec))
            except (SkadaptError, OSError) as error:
                raise ContaminationCheckError(
                    f"contamination check: evaluation suite {spec}: {error}"
                ) from None
            for name, found_texts in found.items():
                texts.setdefault(name, []).extend(found_texts)
            continue
        try:
            resolved = mteb_tasks(spec, language)
            for task in resolved:
                if task.metadata.name in (mirrors or {}):
                    apply_mirror(task, (mirrors or {})[task.metadata.name])
        except SkadaptError as error:
            raise ContaminationCheckError(f"contamination check: {error}") from None
        for task in resolved:
            name = task.metadata.name
            if name in texts or name in unreachable or name in excluded:
                continue
            hub_down = None if name in (mirrors or {}) else unreachable_reason()
            if hub_down is not None:  # one probe, not the clients' retries for every task
                unreachable[name] = f"the Hugging Face Hub is unreachable: {hub_down}"
                continue
            try:
                texts[name] = task_test_texts(task)
            except Exception as error:
                if not is_unreachable(error):
                    raise ContaminationCheckError(
                        f"contamination check: evaluation task {name}: reading its test data failed "
                        f"({_reason(error)}). Fix the task or its data (dataset_mirrors); "
                        "contamination.allow skips only unreachable data, not errors"
                    ) from error
                unreachable[name] = _reason(error)
    return texts, unreachable


def check_overlap(train_texts: Iterable[str], test_texts: dict[str, list[str]]) -> dict[str, Any]:
    """Exact and folded (:func:`folded_words`) overlap per test task.

    Returns:
        ``{"train_texts", "tasks": {task: {test_texts, exact, normalized, rate, examples}}, "max_rate"}``;
        ``normalized`` counts the task's folded test texts found among the folded training texts.
    """
    train: set[str] = set()
    train_folded: set[str] = set()
    for text in train_texts:  # each text folded once
        key = folded_words(text)
        if len(key) >= MIN_CHARS:
            train.add(text)
            train_folded.add(key)
    tasks: dict[str, Any] = {}
    for name, texts in test_texts.items():
        keys = {t: folded_words(t) for t in set(texts)}
        unique = {t for t, key in keys.items() if len(key) >= MIN_CHARS}
        exact = sorted(t for t in unique if t in train)
        folded = {keys[t] for t in unique}
        found = sorted(n for n in folded if n in train_folded)
        rate = len(found) / len(folded) if folded else 0.0
        tasks[name] = {
            "test_texts": len(folded),
            "exact": len(exact),
            "normalized": len(found),
            "rate": round(rate, 6),
            "examples": [text[:120] for text in found[:EXAMPLES]],
        }
    max_rate = max((task["rate"] for task in tasks.values()), default=0.0)
    return {"train_texts": len(train), "tasks": tasks, "max_rate": max_rate}


def _status(checked: dict[str, list[str]], unreachable: dict[str, str]) -> str:
    if checked and unreachable:
        return "partly checked"
    if checked:
        return "checked"
    return "unreachable" if unreachable else "no evaluation tasks"


def gather_test_texts(
    eval_tasks: list[str],
    allow: bool,
    *,
    language: str | None = None,
    mirrors: dict[str, str] | None = None,
    section: str = "finetune",
    exclude: Iterable[str] = (),
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """The evaluation tasks' test texts (less ``exclude``), failing closed on unreachable data unless
    ``allow``.

    Raises:
        UnreachableTestDataError: A task's data is unreachable and ``allow`` is False.
        ContaminationCheckError: Reading a task's data fails otherwise (whatever ``allow`` says).
    """
    test_texts, unreachable = collect_test_texts(
        eval_tasks, language=language, mirrors=mirrors, exclude=exclude
    )
    if unreachable and not allow:
        raise UnreachableTestDataError(unreachable, section)
    for name, reason in sorted(unreachable.items()):
        log.warning(
            "contamination check: evaluation task %s NOT CHECKED, its test data is unreachable (%s); "
            "going on because %s.contamination.allow is true",
            name,
            reason,
            section,
        )
    return test_texts, unreachable


def overlapping_rows(
    rows: Mapping[str, list[tuple[str, ...]]], test_texts: dict[str, list[str]]
) -> tuple[dict[str, list[bool]], dict[str, Any]]:
    """Training rows any of whose texts occurs in the test texts (exactly or folded), per dataset.

    Returns:
        ``(keep, report)``: dataset -> a keep mask over its rows, and ``{dataset: {rows, dropped,
        by_task: {task: rows}, examples}}`` (a row matching several tasks counts for each of them).
    """
    owners: dict[str, set[str]] = {}
    for task, texts in test_texts.items():
        for text in texts:
            folded = folded_words(text)
            if len(folded) >= MIN_CHARS:
                owners.setdefault(folded, set()).add(task)
    keep: dict[str, list[bool]] = {}
    report: dict[str, Any] = {}
    for name, dataset_rows in rows.items():
        mask, by_task, examples = [], {}, []
        for row in dataset_rows:
            tasks = set().union(*(owners.get(folded_words(text), set()) for text in row if text))
            mask.append(not tasks)
            for task in tasks:
                by_task[task] = by_task.get(task, 0) + 1
            if tasks and len(examples) < EXAMPLES:
                examples.append(next(t for t in row if owners.get(folded_words(t)))[:120])
        keep[name] = mask
        report[name] = {
            "rows": len(mask),
            "dropped": mask.count(False),
            "by_task": dict(sorted(by_task.items())),
            "examples": examples,
        }
    return keep, report


def judge_overlap(
    train_texts: Iterable[str],
    test_texts: dict[str, list[str]],
    unreachable: dict[str, str],
    threshold: float,
    allow: bool,
    *,
    section: str = "finetune",
) -> dict[str, Any]:
    """The overlap report (:func:`check_overlap`) with the verdict against ``threshold``.

    Raises:
        ContaminationError: A task's overlap rate exceeds ``threshold`` and ``allow`` is False.
    """
    report = check_overlap(train_texts, test_texts)
    report.update(
        threshold=threshold,
        allow=allow,
        unreachable=unreachable,
        status=_status(test_texts, unreachable),
    )
    over = {name: task for name, task in report["tasks"].items() if task["rate"] > threshold}
    report["over_threshold"] = sorted(over)
    if over and not allow:
        details = "; ".join(
            f"{name}: {task['normalized']}/{task['test_texts']} test texts in the training data "
            f"({task['rate']:.2%}), e.g. {task['examples'][0]!r}"
            for name, task in sorted(over.items())
        )
        raise ContaminationError(
            f"training data overlaps the evaluation test data above contamination.threshold "
            f"{threshold:.2%}: {details}. Set {section}.contamination.action: drop to train without the "
            f"overlapping rows, remove those texts from the training data, or set "
            f"{section}.contamination.allow: true to train anyway"
        )
    return report


def contamination_report(
    train_texts: Iterable[str],
    eval_tasks: list[str],
    threshold: float,
    allow: bool,
    *,
    language: str | None = None,
    mirrors: dict[str, str] | None = None,
    section: str = "finetune",
) -> dict[str, Any]:
    """Run the check for the recipe's evaluation tasks (:func:`gather_test_texts`, then
    :func:`judge_overlap`).

    Args:
        train_texts: Every training text.
        eval_tasks: The recipe's ``evaluate.tasks``.
        threshold: Highest allowed overlap rate per task.
        allow: Train anyway: over the threshold, or with tasks whose data is unreachable (left unchecked,
            logged as a warning and listed under ``unreachable``).
        language: The recipe's language (see :func:`collect_test_texts`).
        mirrors: The recipe's ``evaluate.dataset_mirrors``.
        section: The recipe section whose ``contamination`` settings apply (named in messages).

    Raises:
        ContaminationCheckError: see :func:`gather_test_texts`.
        ContaminationError: see :func:`judge_overlap`.
    """
    test_texts, unreachable = gather_test_texts(
        eval_tasks, allow, language=language, mirrors=mirrors, section=section
    )
    return judge_overlap(train_texts, test_texts, unreachable, threshold, allow, section=section)
