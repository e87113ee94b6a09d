"""A trainer callback that stops a fine-tuning run part-way, as a killed job would."""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback


class CrashAt(TrainerCallback):
    """Raise after ``step`` optimizer steps, like a killed job."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step >= self.step:
            raise KeyboardInterrupt(f"simulated kill at step {state.global_step}")
