"""What of a captured console is not skadapt's own: the checks of the quiet console and of the demo's
console in the docs (docs/results/demo_console.txt)."""

from __future__ import annotations

import re

from skadapt.console import HARMLESS

TQDM_BAR = re.compile(r"\d+%\|.*\|")
"""A tqdm bar: ``Batches:  50%|█████     | 1/2 [00:00<00:00, 60.33it/s]``."""
LOSS_DICT = re.compile(r"\{'(loss|train_runtime|eval_\w+)'")
"""What transformers' printing callbacks print: ``{'loss': '0.53', 'grad_norm': ...}``."""


def library_lines(console: str) -> list[str]:
    """The lines of ``console`` that are a library's: a tqdm bar, a trainer's loss dict, a known-harmless
    third-party warning (:data:`skadapt.console.HARMLESS`)."""
    return [
        line
        for line in console.replace("\r", "\n").splitlines()
        if TQDM_BAR.search(line) or LOSS_DICT.search(line) or any(piece in line for piece in HARMLESS)
    ]
