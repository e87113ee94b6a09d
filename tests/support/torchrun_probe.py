"""``skadapt`` under torchrun with probes on every rank (tests only):
``python -m tests.support.torchrun_probe ARGS``.

- Every model weights write (``PreTrainedModel.save_pretrained``: sentence-transformers saves, the trimmed
  transformer, training checkpoints) and every stage manifest appends ``RANK<TAB>KIND<TAB>PATH`` to
  ``$SKADAPT_PROBE_LOG`` (kinds: ``model``, ``manifest``), so a test can prove who wrote what.
- With ``$SKADAPT_PROBE_HANG`` set to a directory, each rank stops at its first training checkpoint: once the
  checkpoint is saved it writes ``rank<R>.pid`` (its process id) there and sleeps, so the test can kill the
  launch mid-training at a known point.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

LOG = "SKADAPT_PROBE_LOG"
HANG = "SKADAPT_PROBE_HANG"


def _rank() -> str:
    return os.environ.get("RANK", "0")


def record(kind: str, path: Any) -> None:
    """Append one write to the probe log (one short line, so concurrent appends do not interleave)."""
    with open(os.environ[LOG], "a", encoding="utf-8") as handle:
        handle.write(f"{_rank()}\t{kind}\t{path}\n")


def _install_recorders() -> None:
    from transformers import PreTrainedModel

    from skadapt import artifacts

    save_pretrained = PreTrainedModel.save_pretrained
    write_json = artifacts.write_json

    def recording_save_pretrained(self: Any, path: Any, *args: Any, **kwargs: Any) -> Any:
        record("model", path)
        return save_pretrained(self, path, *args, **kwargs)

    def recording_write_json(path: Path, data: Any) -> None:
        if Path(path).name == artifacts.MANIFEST:
            record("manifest", path)
        write_json(path, data)

    PreTrainedModel.save_pretrained = recording_save_pretrained  # type: ignore[method-assign]
    artifacts.write_json = recording_write_json


def _install_hang(directory: Path) -> None:
    from transformers import TrainerCallback

    import skadapt.train.stage as stage

    class HangAfterFirstCheckpoint(TrainerCallback):
        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            (directory / f"rank{_rank()}.pid").write_text(f"{os.getpid()} {state.global_step}")
            while True:
                time.sleep(1)

    train = stage.train

    def hanging_train(*args: Any, callbacks: list[Any] | None = None, **kwargs: Any) -> Any:
        if len(args) > 6:  # finetune passes callbacks positionally
            *args, callbacks = args  # type: ignore[assignment]
        return train(*args, [*(callbacks or []), HangAfterFirstCheckpoint()], **kwargs)

    stage.train = hanging_train  # type: ignore[assignment]


def main() -> None:
    """Install the probes, then run ``skadapt`` with this process's arguments."""
    import runpy

    _install_recorders()
    if os.environ.get(HANG):
        _install_hang(Path(os.environ[HANG]))
    sys.argv = ["skadapt", *sys.argv[1:]]
    runpy.run_module("skadapt", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
