"""Each test file's seconds in a reference run, for the order the workers take the files in
(``tests/durations.json``, read by ``tests/conftest.py``).

Refresh after a full run that wrote a JUnit file::

    .venv/bin/pytest -n 2 --dist loadfile --junitxml=/tmp/tests.xml ... && \
        .venv/bin/python -m tests.support.durations /tmp/tests.xml
"""

from __future__ import annotations

import collections
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

FILE = Path(__file__).resolve().parents[1] / "durations.json"


def file_seconds(junit: Path) -> dict[str, float]:
    """Test file (``tests/test_x.py``) -> the seconds of its tests (setup, call and teardown) in ``junit``."""
    seconds: collections.Counter[str] = collections.Counter()
    for case in ET.parse(junit).getroot().iter("testcase"):
        module = case.get("classname", "")
        seconds[module.replace(".", "/") + ".py"] += float(case.get("time") or 0)
    return {name: round(value, 1) for name, value in sorted(seconds.items())}


def read() -> dict[str, float]:
    """The recorded seconds per file ({} without the file)."""
    return json.loads(FILE.read_text(encoding="utf-8")) if FILE.is_file() else {}


if __name__ == "__main__":
    FILE.write_text(json.dumps(file_seconds(Path(sys.argv[1])), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {FILE}")
