"""``<run_dir>/run.log``: every stage's log lines and failure tracebacks."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path


class _RunLog(logging.FileHandler):
    """``run.log``: best effort, so that a full disk ends a run with the stage's error, not logging's."""

    def handleError(self, record: logging.LogRecord) -> None:
        """Drop a record that cannot be written (no "--- Logging error ---" traceback on the console)."""

    def close(self) -> None:
        """Close; a flush failing on a full disk is not the error to report."""
        with contextlib.suppress(OSError):
            super().close()


def setup_run_log(run_dir: Path) -> logging.Handler:
    handler = _RunLog(run_dir / "run.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().addHandler(handler)
    if logging.getLogger().level > logging.INFO or logging.getLogger().level == logging.NOTSET:
        logging.getLogger().setLevel(logging.INFO)
    return handler
