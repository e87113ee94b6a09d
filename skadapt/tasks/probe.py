"""What the preflight checks of evaluation tasks and dev sets before any stage runs."""

from __future__ import annotations

from skadapt.sources.probe import commit_note
from skadapt.tasks.config import DevSetConfig


def probe_task(spec: str, language: str | None) -> str:
    """Resolve an evaluation task spec (a local suite, or mteb tasks with ``language``, if any).

    Raises:
        SkadaptError: The spec names no task, or none with the language.
    """
    from skadapt.tasks.selection import mteb_tasks
    from skadapt.tasks.suite import is_suite_spec, load_suite

    if is_suite_spec(spec):
        return f"local suite, {len(load_suite(spec).tasks)} tasks"
    tasks = mteb_tasks(spec, language)
    return f"{len(tasks)} mteb task(s)" + (f" with {language}" if language else "")


def probe_excluded(specs: list[str], exclude: list[str], language: str | None) -> str:
    """Check that every excluded task is a task of ``specs``; how many tasks the averages keep.

    Raises:
        SkadaptError: An excluded name is no task of ``specs`` (with a did-you-mean).
    """
    from skadapt.tasks.selection import check_excluded, select_tasks

    names = [t.metadata.name for t in select_tasks(specs, language=language)]
    check_excluded(exclude, names, specs)
    return f"averages over {len(names) - len(exclude)} of {len(names)} tasks"


def probe_dev(entry: DevSetConfig) -> str:
    """Read a dev set's first row as its builder reads it, then count its examples: the smallest difference
    between two models a set of its kind and size detects (:func:`skadapt.tasks.dev_power.size_line`).

    Raises:
        SkadaptError: The source does not open, its first row lacks a column or a label, or a later row
            cannot be read as its builder reads it.
    """
    from skadapt.tasks.dev import check_first_row, count_examples
    from skadapt.tasks.dev_power import size_line

    found = check_first_row(entry)
    return f"{found}; {size_line(entry.kind, count_examples(entry))}{commit_note(entry.source)}"
