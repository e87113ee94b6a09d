"""What a backend is asked and what it answers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from skadapt.errors import SkadaptError

Message = dict[str, str]
"""One chat message: ``{"role": "system" | "user" | "assistant", "content": ...}``."""


class LLMUnavailableError(SkadaptError):
    """The LLM cannot be used at all (server unreachable, backend not installed, model not found).

    Attributes:
        problem: What is wrong.
        field: The ``llm`` field whose value to fix (``base_url``), when one is to blame.
        action: What to do about it, before the field's name (``start it or fix``).
    """

    def __init__(self, problem: str, field: str | None = None, action: str = "fix") -> None:
        self.problem, self.field, self.action = problem, field, action
        super().__init__(self.message())

    def message(self, where: str | None = None) -> str:
        """The message, naming the field as ``where`` (default: ``llm.FIELD / --llm-FIELD``)."""
        if self.field is None:
            return self.problem
        where = where or f"llm.{self.field} / --llm-{self.field.replace('_', '-')}"
        return f"{self.problem}; {self.action} {where}"


@dataclass(frozen=True)
class Sampling:
    """Sampling parameters of one request (all of them are part of the cache key)."""

    temperature: float
    top_p: float
    max_tokens: int


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion to make.

    Attributes:
        messages: The conversation, ending with the user's message.
        sampling: Temperature, top_p and the token limit.
        seed: The request's own seed (derived from the run seed, the item and the attempt).
        json_schema: When set, the answer must be JSON following this schema (constrained where the
            backend supports it).
    """

    messages: tuple[Message, ...]
    sampling: Sampling
    seed: int
    json_schema: dict[str, Any] | None = None


@dataclass
class ChatResult:
    """A backend's answer to one request: the text, or the error that stopped it after retries."""

    text: str | None
    error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


class Backend(Protocol):
    """Generates answers to a batch of chat requests; one result per request, in order."""

    name: str
    model: str

    def prepare(self, cache: Any) -> dict[str, Any]:
        """Settle what the backend needs to know before keys are computed (an HTTP server's
        structured-output form, remembered in ``cache``); returns ``{"structured", ...,
        "probe_requests"}``."""
        ...

    def identity(self) -> dict[str, Any]:
        """What identifies the model behind the answers (name, revision, file, structured-output form)
        for cache keys."""
        ...

    def chat(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Answer every request; a request that fails gets a result with ``error`` set."""
        ...
