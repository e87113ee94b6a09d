"""A scripted OpenAI-compatible chat server on 127.0.0.1 for tests: every request is counted and logged,
and a script decides each answer (text, HTTP status, delay)."""

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


@dataclass
class Reply:
    """One scripted answer: the assistant's text, or an HTTP error status; optionally after a delay."""

    text: str = ""
    status: int = 200
    delay: float = 0.0


Script = Callable[[dict[str, Any], int], Reply]
"""(request body, how many times this same prompt was asked before) -> reply."""


@dataclass
class ScriptedServer:
    """The running server: its URL and every request it received."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def hits(self) -> int:
        """Requests received (retries included)."""
        return len(self.requests)


def user_message(body: dict[str, Any]) -> str:
    """The last user message of a chat request."""
    return next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")


@contextmanager
def scripted_server(script: Script) -> Iterator[ScriptedServer]:
    """Serve ``/v1/chat/completions`` with ``script`` until the block ends."""
    lock = threading.Lock()
    asked: dict[str, int] = {}
    server_state = ScriptedServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompt = user_message(body)
            with lock:
                server_state.requests.append(body)
                count = asked.get(prompt, 0)
                asked[prompt] = count + 1
            reply = script(body, count)
            time.sleep(reply.delay)
            if reply.status != 200:
                payload = json.dumps({"error": {"message": "scripted failure", "type": "server_error"}})
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
                                "finish_reason": "stop",
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
