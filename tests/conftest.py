"""Quiet threads and offline Hugging Face clients for every test; the shared fixtures come from
:mod:`tests.support.fixtures`."""

from __future__ import annotations

import os

import pytest

from tests.support import durations

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The export's speed rounds time passes of at least 2 s each (skadapt/export/speed.py): the tests check how
# the rounds run and are recorded, not the figures, so a tenth of a second does (every export is faster).
os.environ.setdefault("SKADAPT_SPEED_MIN_PASS_S", "0.1")
# A pytest-xdist worker starts with COLUMNS=80, which would fix the consoles' width when skadapt.console is
# imported; the tests set the width they need per command (CliRunner's env).
os.environ.pop("COLUMNS", None)

pytest_plugins = ["tests.support.fixtures"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that asks for the real multilingual-e5-small is a ``real_model`` test (``make test-fast``
    leaves those out), whether or not it says so itself.

    The files run longest first, by their seconds in a reference run (``tests/durations.json``; a file not
    in it counts as 20 s when it has a ``slow`` test, else 2 s), each file's tests in their own order: with
    ``--dist loadfile --no-loadscope-reorder`` (``make test``) the workers share out the long files first
    and the shortest come last, so that neither waits long for the other at the end (xdist's default order
    puts the files with the fewest tests, such as a single 2-minute recipe run, last; a worker takes its
    next file while its last tests run, so a long file taken late kept the other worker idle for minutes).
    """
    for item in items:
        if "e5_small" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.real_model)
    slow_files = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}
    recorded = durations.read()

    def seconds(item: pytest.Item) -> float:
        file = item.nodeid.split("::")[0]
        return recorded.get(file, 20.0 if file in slow_files else 2.0)

    items.sort(key=lambda item: -seconds(item))  # stable: a file's tests keep their order
