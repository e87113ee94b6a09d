"""Task selection: mteb benchmark names, mteb task names and local suite files -> mteb task objects."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skadapt.errors import SkadaptError
from skadapt.tasks.local_tasks import build_task
from skadapt.tasks.suite import Suite, is_suite_spec, load_suite, suite_texts

if TYPE_CHECKING:
    from mteb.abstasks.abstask import AbsTask


class TaskSelectionError(SkadaptError, ValueError):
    """A task spec that names no mteb benchmark, mteb task or suite file, or a bad dataset mirror."""


def mteb_tasks(spec: str, language: str | None = None) -> list[AbsTask]:
    """The tasks of an mteb benchmark name, or the one task of an mteb task name.

    A benchmark's tasks are taken as the benchmark defines them (its own languages and subsets). A task
    named on its own is restricted to ``language``: a multilingual task keeps only its subsets in that
    language (mteb's ``filter_languages``), so it is scored, and checked for contamination, on them alone.

    Args:
        spec: An mteb benchmark name (``MTEB(slk, v1)``) or task name (``SIB200Classification.v3``).
        language: ISO 639-3 code (``slk``) or code-script (``slk-Latn``); None keeps every subset.

    Raises:
        TaskSelectionError: Neither a benchmark nor a task name; a named task without a subset in
            ``language``.
    """
    import mteb

    try:
        return list(mteb.get_benchmark(spec).tasks)
    except (KeyError, ValueError):
        pass
    try:
        task = mteb.get_task(spec)
    except (KeyError, ValueError) as error:
        similar = re.search(r"[Dd]id you mean:? (.+?)\??$", str(error).strip("'\" "))
        hint = f"; did you mean {similar.group(1)}?" if similar else ""  # mteb's, when it has one
        raise TaskSelectionError(
            f"--tasks {spec!r}: not an mteb benchmark, an mteb task or a suite .yaml file{hint}"
        ) from None
    if language is None:
        return [task]
    try:
        return [task.filter_languages([language])]
    except ValueError:
        languages = task.metadata.languages
        shown = ", ".join(languages[:12]) + (f", ... ({len(languages)})" if len(languages) > 12 else "")
        raise TaskSelectionError(
            f"mteb task {spec}: no subset in language {language!r} (its languages: {shown}); "
            f"choose tasks that cover {language}, or set the language (the recipe's language, --language) "
            "to one the task covers"
        ) from None


def apply_mirror(task: AbsTask, mirror: str | Path) -> AbsTask:
    """Point a built-in task at a local copy of its dataset repository (air-gapped evaluation).

    The directory must hold the files of the task's Hugging Face dataset repository (e.g. made with
    ``hf download DATASET --repo-type dataset --local-dir DIR``); mteb then loads it with
    ``datasets.load_dataset(DIR, ...)`` exactly as it would load the Hub copy.

    Raises:
        TaskSelectionError: The mirror directory does not exist.
    """
    path = Path(mirror).expanduser()
    if not path.is_dir():
        raise TaskSelectionError(
            f"evaluate.dataset_mirrors {task.metadata.name}: {path} is not a directory (a local copy of "
            f"{task.metadata.dataset.get('path')})"
        )
    dataset = {**task.metadata.dataset, "path": str(path.resolve())}
    task.metadata = task.metadata.model_copy(update={"dataset": dataset})
    return task


def select_tasks(
    specs: list[str],
    *,
    language: str,
    mirrors: dict[str, str] | None = None,
    seed: int = 42,
    exclude: list[str] | tuple[str, ...] = (),
) -> list[AbsTask]:
    """Resolve task specs, in order, without duplicates, less the task names in ``exclude``.

    Args:
        specs: mteb benchmark names (``MTEB(slk, v1)``), mteb task names, or suite ``.yaml`` files.
        language: ISO 639-3 code: the language of local tasks that do not declare one, and the language
            mteb task names are restricted to (see :func:`mteb_tasks`; benchmarks are taken as defined).
        mirrors: mteb task name -> local dataset directory.
        seed: Seed of local tasks.
        exclude: Task names to leave out (``evaluate.exclude_tasks``); each must be a selected task.

    Raises:
        TaskSelectionError: Unknown names, a named mteb task without a subset in ``language``, a mirror for
            a task that is not selected, duplicate names, an excluded name that is not selected.
        SuiteError: A malformed suite.
    """
    if not specs:
        raise TaskSelectionError("no tasks given; pass --tasks (an mteb benchmark, task name or suite.yaml)")
    tasks: list[AbsTask] = []
    seen: dict[str, str] = {}
    for spec in specs:
        if is_suite_spec(spec):
            suite = load_suite(spec)
            found = [build_task(entry, suite, language, seed) for entry in suite.tasks]
        else:
            found = mteb_tasks(spec, language)
        for task in found:
            name = task.metadata.name
            if name in seen:
                if seen[name] != spec:
                    raise TaskSelectionError(f"task {name} is selected twice ({seen[name]!r} and {spec!r})")
                continue
            seen[name] = spec
            tasks.append(task)
    for name, mirror in (mirrors or {}).items():
        matches = [t for t in tasks if t.metadata.name == name]
        if not matches:
            raise TaskSelectionError(f"evaluate.dataset_mirrors: {name!r} is not among the selected tasks")
        apply_mirror(matches[0], mirror)
    check_excluded(exclude, [t.metadata.name for t in tasks], specs)
    return [t for t in tasks if t.metadata.name not in exclude]


def check_excluded(exclude: list[str] | tuple[str, ...], names: list[str], specs: list[str]) -> None:
    """Every name of ``evaluate.exclude_tasks`` must be a task of the selection.

    Raises:
        TaskSelectionError: A name that is not among ``names`` (the tasks ``specs`` select).
    """
    unknown = [name for name in exclude if name not in names]
    if unknown:
        raise TaskSelectionError(
            f"evaluate.exclude_tasks: {', '.join(map(repr, unknown))} is not a task of "
            f"{', '.join(specs)} (its tasks: {', '.join(names)})"
        )


def suites_in(specs: list[str]) -> list[Suite]:
    """The local suites among task specs (unreadable ones are skipped)."""
    suites = []
    for spec in specs:
        if is_suite_spec(spec) and Path(spec).is_file():
            try:
                suites.append(load_suite(spec))
            except SkadaptError:
                continue
    return suites


def suite_files(specs: list[str]) -> list[Path]:
    """Suite files and their data files among task specs (stage inputs to fingerprint)."""
    return [path for suite in suites_in(specs) for path in [Path(suite.source), *suite.data_files()]]


def evaluation_texts(specs: list[str], language: str = "en") -> set[str]:
    """Normalized texts, and their sentences, of the local suites among task specs.

    Corpus samples (renormalization, the fine-tuning anchor) drop these so that no evaluation text is
    trained or estimated on.

    Args:
        specs: Evaluation task specs; only local suite files count.
        language: ISO 639-1 code for sentence splitting.
    """
    from skadapt.textsample import normalize_text, split_sentences

    keys: set[str] = set()
    for suite in suites_in(specs):
        for text in suite_texts(suite):
            keys.add(normalize_text(text))
            keys.update(normalize_text(s) for s in split_sentences(text, language))
    return keys


def task_info(task: AbsTask) -> dict[str, Any]:
    """Name, type and main score of a task."""
    meta = task.metadata
    return {"task": meta.name, "type": meta.type, "main_score": meta.main_score}
