"""A scripted OpenAI-compatible chat server on 127.0.0.1 for tests: every request is counted and logged,
and a script decides each answer (text, HTTP status, delay).

The server imitates how real servers treat a JSON schema (``dialect``): ``vllm`` honours
``response_format: json_schema`` and the ``structured_outputs``/``guided_json`` extras; ``llamacpp``
answers ``json_schema`` with HTTP 500 and a pydantic validation body (as llama-cpp-python's server does)
and honours ``{"type": "json_object", "schema": ...}``; ``ignores`` accepts every form and constrains
nothing; ``rejects`` answers any ``response_format`` with 400. skadapt's probe requests (the probe prompt) are
answered by the server itself, the way the dialect would constrain them, and logged
apart (``probes``), so scripts and request counts see only the generation requests."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from skadapt.llm.structured import PROBE_PROMPT


@dataclass
class Reply:
    """One scripted answer: the assistant's text, or an HTTP error status (with ``error`` as the body's
    message); optionally after a delay."""

    text: str = ""
    status: int = 200
    delay: float = 0.0
    finish_reason: str = "stop"
    error: str = "scripted failure"


Script = Callable[[dict[str, Any], int], Reply]
"""(request body, how many times this same prompt was asked before) -> reply."""


@dataclass
class ScriptedServer:
    """The running server: its URL and every request it received."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    probes: list[dict[str, Any]] = field(default_factory=list)

    @property
    def hits(self) -> int:
        """Generation requests received (retries included, probes not)."""
        return len(self.requests)

    @property
    def total_hits(self) -> int:
        """Every request received, probes included."""
        return len(self.requests) + len(self.probes)


LLAMACPP_500 = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "
    "\"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
)


def _schema_form(body: dict[str, Any]) -> str | None:
    """Which structured-output form a request uses (None: none)."""
    response_format = body.get("response_format")
    if isinstance(response_format, dict):
        if response_format.get("type") == "json_schema":
            return "json_schema"
        if response_format.get("type") == "json_object":
            return "json_object_schema" if "schema" in response_format else "json_object"
    for extra in ("structured_outputs", "guided_json"):
        if extra in body:
            return extra
    return None


def _rejection(dialect: str, form: str | None) -> tuple[int, str] | None:
    if form is None:
        return None
    if dialect == "llamacpp" and form == "json_schema":
        return 500, LLAMACPP_500
    if dialect == "rejects" and form.startswith("json"):
        return 400, "response_format is not supported by this server"
    return None


def _honours(dialect: str, form: str | None) -> bool:
    if dialect == "vllm":
        return form in ("json_schema", "structured_outputs", "guided_json")
    if dialect == "llamacpp":
        return form == "json_object_schema"
    return False


def _is_probe(body: dict[str, Any]) -> bool:
    return user_message(body) == PROBE_PROMPT


def _probe_answer(body: dict[str, Any], honoured: bool, seed_ignored: bool, count: int) -> str:
    """What a model would write to the probe: the schema's object when constrained, prose otherwise."""
    seed = body.get("seed", 0) + (count if seed_ignored else 0)
    text = f"Sentence number {seed} about the sea."
    return json.dumps({"skadapt_probe": 7, "text": text}) if honoured else text


def user_message(body: dict[str, Any]) -> str:
    """The last user message of a chat request."""
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


@contextmanager
def scripted_server(
    script: Script, *, dialect: str = "vllm", seed_ignored: bool = False
) -> Iterator[ScriptedServer]:
    """Serve ``/v1/chat/completions`` with ``script`` until the block ends.

    Args:
        script: Decides each generation request's answer.
        dialect: How the server treats a JSON schema: ``vllm``, ``llamacpp``, ``ignores`` or ``rejects``.
        seed_ignored: Answer the same seeded probe differently each time (a server that ignores ``seed``).
    """
    lock = threading.Lock()
    asked: dict[str, int] = {}
    server_state = ScriptedServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompt = user_message(body)
            probe = _is_probe(body)
            with lock:
                (server_state.probes if probe else server_state.requests).append(body)
                count = asked.get(prompt, 0)
                asked[prompt] = count + 1
            form = _schema_form(body)
            rejection = _rejection(dialect, form)
            if rejection is not None:
                reply = Reply(status=rejection[0])
                message = rejection[1]
            elif probe:
                reply = Reply(_probe_answer(body, _honours(dialect, form), seed_ignored, count))
            else:
                reply = script(body, count)
                message = reply.error
            time.sleep(reply.delay)
            if reply.status != 200:
                kind = "internal_server_error" if reply.status >= 500 else "invalid_request_error"
                payload = json.dumps({"error": {"message": message, "type": kind}})
                self.send_response(reply.status)
                self.send_header("retry-after-ms", "10")
            else:
                payload = json.dumps(
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": reply.text},
                                "finish_reason": reply.finish_reason,
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                )
                self.send_response(200)
            data = payload.encode()
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client timed out
                self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    server_state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server_state
    finally:
        httpd.shutdown()
        httpd.server_close()
