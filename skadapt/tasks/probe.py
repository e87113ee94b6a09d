"""What the preflight checks of evaluation tasks and dev sets before any stage runs."""

from __future__ import annotations

from skadapt.sources.probe import commit_note
from skadapt.tasks.config import DevSetConfig


def probe_task(spec: str, language: str) -> str:
    """Resolve an evaluation task spec (a local suite, or mteb tasks with ``language``).

    Raises:
        SkadaptError: The spec names no task, or none with the language.
    """
    from skadapt.tasks.selection import mteb_tasks
    from skadapt.tasks.suite import is_suite_spec, load_suite

    if is_suite_spec(spec):
        return f"local suite, {len(load_suite(spec).tasks)} tasks"
    tasks = mteb_tasks(spec, language)
    return f"{len(tasks)} mteb task(s) with {language}"


def probe_excluded(specs: list[str], exclude: list[str], language: str) -> str:
    """Check that every excluded task is a task of ``specs``; how many tasks the averages keep.

    Raises:
        SkadaptError: An excluded name is no task of ``specs`` (with a did-you-mean).
    """
    from skadapt.tasks.selection import check_excluded, select_tasks

    names = [t.metadata.name for t in select_tasks(specs, language=language)]
    check_excluded(exclude, names, specs)
    return f"averages over {len(names) - len(exclude)} of {len(names)} tasks"


def probe_dev(entry: DevSetConfig) -> str:
    """Read a dev set's first row as its builder reads it.

    Raises:
        SkadaptError: The source does not open, or its first row lacks a column or a label.
    """
    from skadapt.tasks.dev import check_first_row

    return check_first_row(entry) + commit_note(entry.source)
