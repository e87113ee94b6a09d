"""Any OpenAI-compatible chat server (``vllm serve``, Ollama, llama.cpp server, a hosted API) through the
official ``openai`` client: bounded concurrency, timeouts, retries with backoff on 429/5xx (the client's
own, honouring ``Retry-After``), JSON-schema ``response_format`` where the server accepts it, and requests
spread round-robin over several base URLs (a fleet of servers)."""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

from skadapt.llm.types import ChatRequest, ChatResult, LLMUnavailableError

log = logging.getLogger(__name__)
for _name in ("httpx", "httpx2"):  # one INFO line per request otherwise
    logging.getLogger(_name).setLevel(logging.WARNING)


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
    ) -> None:
        if not base_urls:
            raise LLMUnavailableError(
                "llm.base_url is required for the openai backend (e.g. http://127.0.0.1:8000/v1)"
            )
        self.model = model
        self.base_urls = base_urls
        self.api_key = os.environ.get(api_key_env) or "EMPTY"  # local servers take any key
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.http_retries = http_retries
        self.thinking = thinking
        self.use_response_format = True

    def identity(self) -> dict[str, Any]:
        """The model name (server URLs do not change answers, so they are not part of it)."""
        return {"backend": self.name, "model": self.model, "thinking": self.thinking}

    def chat(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Answer the requests concurrently (at most ``concurrency`` in flight)."""
        if not requests:
            return []
        results = asyncio.run(self._chat_all(requests))
        unreachable = [r for r in results if r.meta.get("connection_error")]
        if unreachable and len(unreachable) == len(results):
            raise LLMUnavailableError(
                f"cannot reach the LLM server at {', '.join(self.base_urls)} ({unreachable[0].error}); "
                "start it or fix llm.base_url / --llm-base-url"
            )
        return results

    async def _chat_all(self, requests: list[ChatRequest]) -> list[ChatResult]:
        from openai import AsyncOpenAI

        clients = [
            AsyncOpenAI(
                base_url=url, api_key=self.api_key, timeout=self.timeout_s, max_retries=self.http_retries
            )
            for url in self.base_urls
        ]
        gate = asyncio.Semaphore(self.concurrency)
        try:
            tasks = [
                self._chat_one(clients[index % len(clients)], request, gate)
                for index, request in enumerate(requests)
            ]
            return list(await asyncio.gather(*tasks))
        finally:
            for client in clients:
                await client.close()

    def _arguments(self, request: ChatRequest) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": list(request.messages),
            "temperature": request.sampling.temperature,
            "top_p": request.sampling.top_p,
            "max_tokens": request.sampling.max_tokens,
            "seed": request.seed,
        }
        if request.json_schema is not None and self.use_response_format:
            arguments["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": request.json_schema},
            }
        if self.thinking is not None:
            arguments["extra_body"] = {"chat_template_kwargs": {"enable_thinking": self.thinking}}
        return arguments

    async def _chat_one(self, client: Any, request: ChatRequest, gate: asyncio.Semaphore) -> ChatResult:
        import openai

        async with gate:
            while True:  # at most twice: once more without response_format if the server rejects it
                arguments = self._arguments(request)
                try:
                    response = await client.chat.completions.create(**arguments)
                except openai.BadRequestError as error:
                    if "response_format" not in arguments or "response_format" not in str(error):
                        return ChatResult(None, f"rejected by the server: {error}")
                    log.warning("the LLM server rejects response_format; asking for JSON in the prompt only")
                    self.use_response_format = False
                    continue
                except openai.APIConnectionError as error:  # includes timeouts, after the retries
                    return ChatResult(None, f"{type(error).__name__}: {error}", {"connection_error": True})
                except openai.APIStatusError as error:
                    return ChatResult(None, f"HTTP {error.status_code} after {self.http_retries} retries")
                return _result(response)


def _result(response: Any) -> ChatResult:
    if not response.choices:
        return ChatResult(None, "the server answered with no choices")
    choice = response.choices[0]
    return ChatResult(choice.message.content or "", None, {"finish_reason": choice.finish_reason})
