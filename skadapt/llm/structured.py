"""How an OpenAI-compatible server takes a JSON schema, and how to find out once per endpoint.

Servers differ: vLLM, Ollama's OpenAI API, llama.cpp's C++ ``llama-server`` and hosted APIs take
``response_format: {"type": "json_schema", ...}``; llama-cpp-python's server rejects that (HTTP 500 with
a pydantic validation message) and takes ``{"type": "json_object", "schema": ...}``; older vLLM takes
``guided_json``, newer ``structured_outputs``. ``auto`` probes: a tiny request whose schema demands a
field no unconstrained model writes (``skadapt_probe: 7``), form after form, until one is *honoured*
(not merely accepted); the same request sent twice tells whether the server honours ``seed``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

StructuredForm = Literal[
    "json_schema", "json_object_schema", "structured_outputs", "guided_json", "prompt_only"
]
FORMS: tuple[str, ...] = (
    "json_schema",
    "json_object_schema",
    "structured_outputs",
    "guided_json",
    "prompt_only",
)
AUTO_ORDER: tuple[str, ...] = ("json_schema", "json_object_schema")
"""What ``auto`` tries, in order, before falling back to ``prompt_only`` (vLLM, Ollama, hosted APIs and
llama-server honour the first; llama-cpp-python the second)."""

PROBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "skadapt_probe": {"type": "integer", "enum": [7]},
        "text": {"type": "string", "minLength": 10, "maxLength": 60},
    },
    "required": ["skadapt_probe", "text"],
    "additionalProperties": False,
}
PROBE_PROMPT = "Write one short sentence about anything you like."
PROBE_SEED = 20_261_124
PROBE_MAX_TOKENS = 128

_FORMAT_WORDS = re.compile(
    r"response_format|json_schema|json_object|guided_json|structured_output|grammar|\bschema\b", re.IGNORECASE
)
_VALIDATION_WORDS = re.compile(
    r"validation error|validationerror|invalid|not supported|unsupported|"
    r"extra (?:fields|inputs) not permitted|input should be|unprocessable",
    re.IGNORECASE,
)
_NOT_REJECTIONS = {401, 403, 404, 408, 409, 429}
"""4xx statuses that say nothing about the request's format (auth, wrong URL, timeouts, rate limits)."""


def request_options(form: str, schema: dict[str, Any] | None) -> dict[str, Any]:
    """The chat-completion arguments that ask for ``schema`` in ``form``.

    Returns ``{"response_format": ...}`` or ``{"extra_body": ...}`` (merged by the caller), or ``{}``.
    """
    if schema is None or form == "prompt_only":
        return {}
    if form == "json_schema":
        return {
            "response_format": {"type": "json_schema", "json_schema": {"name": "output", "schema": schema}}
        }
    if form == "json_object_schema":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if form == "structured_outputs":
        return {"extra_body": {"structured_outputs": {"json": schema}}}
    if form == "guided_json":
        return {"extra_body": {"guided_json": schema}}
    raise ValueError(f"unknown structured-output form {form!r} (one of {', '.join(FORMS)})")


def names_format(message: str) -> bool:
    """Whether an error body names the structured-output request (``response_format``, schema, ...)."""
    return bool(_FORMAT_WORDS.search(message))


def is_format_rejection(status: int, message: str, *, probing: bool = False) -> bool:
    """Whether an HTTP error rejects the structured-output form rather than the request as such.

    A 4xx or 5xx whose body names the response format is one; while probing (the request is otherwise a
    trivial chat completion) a 400 or 422 is one too.
    """
    if status in _NOT_REJECTIONS or status < 400:
        return False
    if names_format(message):
        return True
    return probing and status in (400, 422)


def is_validation_error(status: int, message: str) -> bool:
    """A 5xx that is really a rejected request (a validation message in its body): retrying cannot help."""
    return status >= 500 and bool(_VALIDATION_WORDS.search(message) or names_format(message))


def probe_honoured(text: str | None) -> bool:
    """Whether a probe answer follows :data:`PROBE_SCHEMA` (the server constrained the output)."""
    if not text:
        return False
    try:
        value = json.loads(text.strip(), strict=False)
    except ValueError:
        return False
    return (
        isinstance(value, dict)
        and value.get("skadapt_probe") == 7
        and isinstance(value.get("text"), str)
        and set(value) == {"skadapt_probe", "text"}
    )
