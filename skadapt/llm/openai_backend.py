"""Any OpenAI-compatible chat server (``vllm serve``, Ollama, llama.cpp's servers, a hosted API) through
the official ``openai`` client: bounded concurrency, timeouts, requests spread round-robin over several
base URLs (a fleet), and the JSON schema sent in the form the server honours (``llm.structured``; ``auto``
probes once per endpoint and the answer is kept in the generation cache, see :mod:`skadapt.llm.structured`).

Retries are this module's own, not the client's (``max_retries=0``): 429, 408, 409, 5xx and connection
errors are retried with backoff (honouring ``Retry-After``), but a 5xx whose body is a validation message
(llama-cpp-python answers a request it cannot parse with 500) is not, and every HTTP request made, retries
included, is counted."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
from dataclasses import dataclass
from typing import Any

from skadapt.llm.structured import (
    AUTO_ORDER,
    PROBE_MAX_TOKENS,
    PROBE_PROMPT,
    PROBE_SCHEMA,
    PROBE_SEED,
    is_format_rejection,
    is_validation_error,
    probe_honoured,
    request_options,
)
from skadapt.llm.types import ChatRequest, ChatResult, LLMUnavailableError, Sampling

log = logging.getLogger(__name__)
for _name in ("httpx", "httpx2"):  # one INFO line per request otherwise
    logging.getLogger(_name).setLevel(logging.WARNING)

RETRYABLE = {408, 409, 429}
MAX_RETRY_AFTER_S = 60.0


@dataclass
class _Outcome:
    """One request after its retries: the answer or the error, and how many HTTP requests it took."""

    text: str | None = None
    finish_reason: str | None = None
    completion_tokens: int | None = None
    error: str | None = None
    http_requests: int = 0
    rejected: bool = False
    connection_error: bool = False


class OpenAIBackend:
    """Chat completions from one or more OpenAI-compatible servers."""

    name = "openai"

    def __init__(
        self,
        model: str,
        base_urls: list[str],
        *,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        timeout_s: float = 120.0,
        http_retries: int = 4,
        thinking: bool | None = False,
        structured: str = "auto",
    ) -> None:
        if not base_urls:
            raise LLMUnavailableError(
                "the openai backend needs the server's URL (e.g. http://127.0.0.1:8000/v1)", "base_url", "set"
            )
        self.model = model
        self.base_urls = base_urls
        self.api_key = os.environ.get(api_key_env) or "EMPTY"  # local servers take any key
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.http_retries = http_retries
        self.thinking = thinking
        self.structured = structured
        self.facts: dict[str, Any] | None = None
        self._cache: Any = None

    # ---- what the server honours -------------------------------------------------------------------------

    @property
    def form(self) -> str:
        """The structured-output form requests use (probed on first use under ``auto``)."""
        if self.facts is None:
            self.prepare(None)
        assert self.facts is not None
        return str(self.facts["structured"])

    def identity(self) -> dict[str, Any]:
        """Model, thinking switch and the structured-output form (server URLs do not change answers)."""
        return {"backend": self.name, "model": self.model, "thinking": self.thinking, "structured": self.form}

    def _fact_key(self) -> str:
        return json.dumps(
            {"urls": sorted(self.base_urls), "model": self.model, "structured": self.structured},
            sort_keys=True,
        )

    def prepare(self, cache: Any) -> dict[str, Any]:
        """Settle the structured-output form and whether the server honours seeds.

        Remembered facts (in this process, else in ``cache``) cost nothing; otherwise the endpoint is
        probed (one request per form tried, plus one repeat for the seed check).

        Returns:
            ``{"structured", "setting", "honoured", "seed_reproducible", "probe_requests", "remembered"}``;
            ``probe_requests`` is 0 unless this call probed.
        """
        if cache is not None:
            self._cache = cache
        if self.facts is not None:
            return {**self.facts, "probe_requests": 0, "remembered": True}
        remembered = cache.get_fact(self._fact_key()) if cache is not None else None
        if remembered is not None:
            self.facts = remembered
            return {**remembered, "probe_requests": 0, "remembered": True}
        facts = asyncio.run(self._probe())
        self.facts = {k: v for k, v in facts.items() if k != "probe_requests"}
        if cache is not None:
            cache.put_fact(self._fact_key(), self.facts)
        return {**facts, "remembered": False}

    async def _probe(self) -> dict[str, Any]:
        client = self._client(self.base_urls[0])
        forms = AUTO_ORDER if self.structured == "auto" else (self.structured,)
        sent = 0
        chosen, honoured, first = "prompt_only", False, None
        try:
            for form in forms:
                outcome = await self._send(client, self._probe_arguments(form), probing=True)
                sent += outcome.http_requests
                self._raise_if_unusable(outcome)
                if outcome.rejected and self.structured != "auto":
                    raise LLMUnavailableError(
                        f"llm.structured={form}: {outcome.error}; use `auto` or another form"
                    )
                if outcome.rejected:
                    log.info("the LLM server rejects structured output as %s: %s", form, outcome.error)
                    continue
                honoured = probe_honoured(outcome.text)
                if honoured or self.structured != "auto":
                    chosen, first = form, outcome
                    break
            if first is None:  # nothing honoured under auto: ask in the prompt only
                first = await self._send(client, self._probe_arguments("prompt_only"), probing=True)
                sent += first.http_requests
                self._raise_if_unusable(first)
            again = await self._send(client, self._probe_arguments(chosen), probing=True)
            sent += again.http_requests
        finally:
            await client.close()
        seed_reproducible = None if again.text is None or first.text is None else again.text == first.text
        if self.structured != "auto" and not honoured and chosen != "prompt_only":
            log.warning(
                "llm.structured=%s: the server accepts it but did not constrain the output to the schema",
                chosen,
            )
        if seed_reproducible is False:
            log.warning(
                "the LLM server at %s does not reproduce answers: the same seeded request got two different "
                "answers (it ignores `seed`, or its answers depend on its state, e.g. llama.cpp's prompt "
                "cache); only the generation cache makes a rerun reproducible",
                self.base_urls[0],
            )
        log.info(
            "LLM server %s: structured output as %s (%d probe requests)", self.base_urls[0], chosen, sent
        )
        return {
            "structured": chosen,
            "setting": self.structured,
            "honoured": honoured,
            "seed_reproducible": seed_reproducible,
            "probe_requests": sent,
        }

    def _raise_if_unusable(self, outcome: _Outcome) -> None:
        if outcome.connection_error:
            raise LLMUnavailableError(
                f"cannot reach the LLM server at {', '.join(self.base_urls)} ({outcome.error})",
                "base_url",
                "start it or fix",
            )
        if outcome.error and not outcome.rejected:
            raise LLMUnavailableError(
                f"the LLM server at {self.base_urls[0]} fails a one-line chat request for model "
                f"{self.model!r}: {outcome.error}"
            )

    def _probe_arguments(self, form: str) -> dict[str, Any]:
        request = ChatRequest(
            ({"role": "user", "content": PROBE_PROMPT},),
            Sampling(temperature=1.0, top_p=1.0, max_tokens=PROBE_MAX_TOKENS),
            PROBE_SEED,
            PROBE_SCHEMA,
        )
        return self._arguments(request, form)

    # ---- requests ----------------------------------------------------------------------------------------

    def chat(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Answer the requests concurrently (at most ``concurrency`` in flight).

        ``meta["http_requests"]`` of each result counts the HTTP requests it took, retries included.
        """
        if not requests:
            return []
        form = self.form
        results = asyncio.run(self._chat_all(requests, form))
        unreachable = [r for r in results if r.meta.get("connection_error")]
        if unreachable and len(unreachable) == len(results):
            raise LLMUnavailableError(
                f"cannot reach the LLM server at {', '.join(self.base_urls)} ({unreachable[0].error})",
                "base_url",
                "start it or fix",
            )
        if any(r.meta.get("rejected") for r in results):
            log.warning(
                "the LLM server now rejects structured output as %s; the next run probes it again", form
            )
            if self._cache is not None:
                self._cache.forget_fact(self._fact_key())
        return results

    def _client(self, url: str) -> Any:
        from openai import AsyncOpenAI

        return AsyncOpenAI(base_url=url, api_key=self.api_key, timeout=self.timeout_s, max_retries=0)

    async def _chat_all(self, requests: list[ChatRequest], form: str) -> list[ChatResult]:
        clients = [self._client(url) for url in self.base_urls]
        gate = asyncio.Semaphore(self.concurrency)

        async def one(index: int, request: ChatRequest) -> ChatResult:
            async with gate:
                outcome = await self._send(clients[index % len(clients)], self._arguments(request, form))
            meta: dict[str, Any] = {"http_requests": outcome.http_requests}
            if outcome.text is None:
                if outcome.connection_error:
                    meta["connection_error"] = True
                if outcome.rejected:
                    meta["rejected"] = True
                return ChatResult(None, outcome.error or "no answer", meta)
            meta.update(finish_reason=outcome.finish_reason, completion_tokens=outcome.completion_tokens)
            return ChatResult(outcome.text, None, meta)

        try:
            return list(await asyncio.gather(*(one(i, r) for i, r in enumerate(requests))))
        finally:
            for client in clients:
                await client.close()

    def _arguments(self, request: ChatRequest, form: str) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": list(request.messages),
            "temperature": request.sampling.temperature,
            "top_p": request.sampling.top_p,
            "max_tokens": request.sampling.max_tokens,
            "seed": request.seed,
        }
        extra_body: dict[str, Any] = {}
        if self.thinking is not None:
            extra_body["chat_template_kwargs"] = {"enable_thinking": self.thinking}
        options = request_options(form, request.json_schema)
        extra_body.update(options.pop("extra_body", {}))
        arguments.update(options)
        if extra_body:
            arguments["extra_body"] = extra_body
        return arguments

    async def _send(self, client: Any, arguments: dict[str, Any], *, probing: bool = False) -> _Outcome:
        """One chat completion with retries; a rejected structured-output form is never retried."""
        import openai

        structured = "response_format" in arguments or bool(
            set(arguments.get("extra_body", {})) & {"structured_outputs", "guided_json"}
        )
        for attempt in range(self.http_retries + 1):
            last, sent = attempt == self.http_retries, attempt + 1
            try:
                response = await client.chat.completions.create(**arguments)
            except openai.APIStatusError as error:
                status, message = error.status_code, _error_text(error)
                if structured and is_format_rejection(status, message, probing=probing):
                    return _Outcome(
                        error=f"the server rejects the structured-output request (HTTP {status}): {message}",
                        http_requests=sent,
                        rejected=True,
                    )
                if is_validation_error(status, message) or not (status in RETRYABLE or status >= 500):
                    return _Outcome(
                        error=f"rejected by the server (HTTP {status}): {message}", http_requests=sent
                    )
                if last:
                    return _Outcome(
                        error=f"HTTP {status} after {self.http_retries} retries: {message}",
                        http_requests=sent,
                    )
                await asyncio.sleep(_delay(attempt, error.response.headers))
            except openai.APIConnectionError as error:  # includes timeouts
                if last:
                    return _Outcome(
                        error=f"{type(error).__name__}: {error}", http_requests=sent, connection_error=True
                    )
                await asyncio.sleep(_delay(attempt, None))
            else:
                if not response.choices:
                    return _Outcome(error="the server answered with no choices", http_requests=sent)
                choice = response.choices[0]
                tokens = getattr(response.usage, "completion_tokens", None)
                return _Outcome(
                    choice.message.content or "", choice.finish_reason, tokens, http_requests=sent
                )
        raise AssertionError("unreachable")


def _error_text(error: Any) -> str:
    """The server's error message (the body's ``error.message`` where there is one), shortened."""
    body = getattr(error, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = body["error"].get("message")
    text = str(message or error).replace("\n", " ")
    return text[:300]


def _delay(attempt: int, headers: Any) -> float:
    """Seconds before the next try: the server's ``Retry-After`` if sane, else jittered backoff."""
    if headers is not None:
        for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
            value = headers.get(name)
            try:
                seconds = float(value) * scale if value is not None else None
            except ValueError:
                seconds = None
            if seconds is not None and 0 <= seconds <= MAX_RETRY_AFTER_S:
                return seconds
    return min(0.5 * 2**attempt, 8.0) * (1 - 0.25 * random.random())
