"""What the LLM stages' plans share: their requests and tokens are counted from their configs and prompts.

Prompt tokens are the real prompts' characters (the stage's own templates, filled with texts of the
average length) at :data:`~skadapt.plan.parts.CHARS_PER_TOKEN`; answer tokens the expected output's.
The LLM's own time depends on its server and model, so it is not estimated: the requests and tokens are
what to size a server by. Retries (``llm.attempts``) come on top for outputs that fail their checks.
"""

from __future__ import annotations

from skadapt.plan.parts import CHARS_PER_TOKEN

LLM_TIME = "LLM time not estimated: it depends on the server and model (size it by requests and tokens)"


def tokens(chars: float) -> int:
    return int(chars / CHARS_PER_TOKEN)
