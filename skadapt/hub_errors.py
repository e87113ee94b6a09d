"""What a failed Hugging Face Hub request means: a refusal of the Hub (401, 403, 404, 429) or the network.

``huggingface_hub``'s ``HfHubHTTPError`` is an ``OSError``, and ``datasets`` re-raises a rate limit that
outlasted its retries as ``ConnectionError("Server Disconnected")``, so an error's type does not tell a
dropped connection from an answer of the Hub. :func:`hub_refusal` finds the Hub's answer in the error or
the errors it was raised from (``__cause__``/``__context__``); :meth:`HubRefusal.advice` says in one line
what it means and what to do. Answers of a proxy or a Hub that is down (408, 5xx) are no refusal: they
count as the network, as does any error without an answer.

A rate limit on a file read is retried by the clients themselves: ``huggingface_hub`` retries a 429 five
times, each after the ``Retry-After`` it names (+1 s), and ``datasets`` retries a stream read on top of
that; what reaches skadapt has outlasted those retries (an API call such as the preflight's ``auth_check``
is not retried: its 429 is said at once).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from urllib.parse import unquote

COMMIT_RE = re.compile(r"[0-9a-f]{40}")
HUB_PATH_RE = re.compile(r"(hf://)?((datasets|spaces)/)?[\w.-]+/[\w.-]+(@[^/\s]+)?/\S+")
"""A path of ``huggingface_hub``'s file system (``[hf://]datasets/OWNER/NAME@REVISION/FILE``), as the
``FileNotFoundError`` of a file its listing lacks names it."""
NETWORK_STATUS = frozenset({407, 408, 500, 502, 503, 504})
"""Answers of a proxy, a gateway or an unavailable Hub: the network's (the read may resume), no refusal."""


@dataclass(frozen=True)
class HubRefusal:
    """An answer of the Hub that refused a request.

    Attributes:
        status: The HTTP status (404 also for a file the Hub's file system found missing).
        kind: ``token`` (401: the token is invalid), ``gated`` (401/403 of a gated repository),
            ``forbidden`` (another 403), ``repository``/``revision``/``file`` (404: not there),
            ``rate limited`` (429), ``http`` (any other answer).
        message: The Hub's own message (its first line), or the error's.
        retry_after: The seconds a 429 says to wait (``Retry-After``), if it says.
        name: What is missing (the repository, revision or file path), when the answer names it.
    """

    status: int
    kind: str
    message: str
    retry_after: int | None = None
    name: str | None = None

    @property
    def resumable(self) -> bool:
        """Whether a read stopped by it can go on later (once the token, access or rate limit allows)."""
        return self.kind in ("token", "gated", "forbidden", "rate limited")

    def advice(self, page: str | None = None) -> str:
        """One line: what the Hub answered and what to do (``page``: the repository's Hub page, to accept a
        gated repository's conditions on)."""
        at = f" at {page}" if page else " on the dataset's Hub page"
        if self.kind == "token":
            return (
                f"the Hub refused {token_in_use()} (HTTP 401 {self.message}): it is expired, revoked or "
                "mistyped; set a valid HF_TOKEN or log in again with `hf auth login`"
            )
        if self.kind == "gated" and self.status == 401:
            return (
                f"the dataset is gated and no token is given (HTTP 401): accept its conditions{at}, then "
                "give that account's token (HF_TOKEN=hf_... or `hf auth login`)"
            )
        if self.kind in ("gated", "forbidden"):
            return (
                f"the Hub forbids {token_in_use()} access (HTTP 403 {self.message}): accept the dataset's "
                f"conditions{at} with that token's account, or use a token that has access"
            )
        if self.kind == "repository":
            who = token_in_use() if _has_token() else "a user without a token"
            return (
                f"the Hub shows no repository {self.name or 'of that id'} to {who} (HTTP {self.status} "
                f"{self.message}): check the id, or give a token that may see it"
            )
        if self.kind in ("revision", "file"):
            missing = f"no {self.kind} {self.name}" if self.name else f"no such {self.kind}"
            return f"{missing} on the Hub (HTTP 404 {self.message})"
        if self.kind == "rate limited":
            wait = f"Retry-After {self.retry_after} s" if self.retry_after is not None else "no Retry-After"
            later = f"wait {self.retry_after} s" if self.retry_after else "wait a while"
            return (
                f"the Hub rate-limited the requests (HTTP 429, {wait}): {later} and run again, or log in "
                "(`hf auth login`) for a higher limit"
            )
        return f"the Hub answered HTTP {self.status} ({self.message})"


def token_in_use() -> str:
    """Which token the clients send, as the user set it: ``HF_TOKEN``, else the one `hf auth login` saved."""
    return "the token in HF_TOKEN" if os.environ.get("HF_TOKEN") else "the token saved by `hf auth login`"


def _has_token() -> bool:
    from huggingface_hub import get_token

    return get_token() is not None


def hub_refusal(error: BaseException) -> HubRefusal | None:
    """The Hub's refusal behind ``error`` (or an error it was raised from), None when the Hub did not refuse
    (the network failed, the Hub is unavailable, or it is no Hub error). Only an I/O error (``OSError``,
    which the clients' HTTP and file errors are) or an HTTP answer is looked into: another error raised
    while one of those was handled stays what it is."""
    if not isinstance(error, OSError) and getattr(error, "response", None) is None:
        return None
    seen: set[int] = set()
    current: BaseException | None = error
    missing: FileNotFoundError | None = None
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        response = getattr(current, "response", None)
        status = getattr(response, "status_code", None)
        if isinstance(status, int) and status >= 400:
            return None if status in NETWORK_STATUS else _refusal(current, response, status)
        if isinstance(current, FileNotFoundError) and missing is None:
            missing = current
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    if missing is not None and type(missing).__name__ == "DatasetNotFoundError":  # datasets' own 404
        return HubRefusal(404, "repository", _first_line(missing))
    path = str(missing.filename or missing).strip("'\"") if missing is not None else ""
    if HUB_PATH_RE.fullmatch(path):  # the Hub's file system: a path it does not find (its listing said so)
        return HubRefusal(404, "file", "not found", name=path.removeprefix("hf://"))
    return None


def _refusal(error: BaseException, response: object, status: int) -> HubRefusal:
    headers = getattr(response, "headers", None) or {}
    code = headers.get("X-Error-Code")
    message = headers.get("X-Error-Message") or _first_line(error)
    if status == 429:
        after = headers.get("Retry-After", "")
        return HubRefusal(429, "rate limited", message, int(after) if after.isdigit() else None)
    if code == "GatedRepo":
        return HubRefusal(status, "gated", message)
    if status == 401 and code != "RepoNotFound" and "Invalid credentials" in message:
        return HubRefusal(401, "token", message)
    if status == 403:
        return HubRefusal(403, "forbidden", message)
    if status in (401, 404):  # the Hub answers 401 for a repository it will not show (missing or private)
        url = str(getattr(getattr(response, "request", None), "url", "") or getattr(response, "url", ""))
        kind = {"RevisionNotFound": "revision", "EntryNotFound": "file"}.get(code or "", "repository")
        return HubRefusal(status, kind, message, name=_named(kind, url, error))
    return HubRefusal(status, "http", message)


def _named(kind: str, url: str, error: BaseException) -> str | None:
    """The repository, revision or file a 404 is about, from the error's fields or the request URL."""
    if kind == "repository" and getattr(error, "repo_id", None):
        return str(error.repo_id)  # type: ignore[attr-defined]
    path = url.split("?", 1)[0]
    for marker in ("/resolve/", "/revision/", "/tree/", "/paths-info/"):
        if marker in path:
            revision, _, file = (unquote(part) for part in path.split(marker, 1)[1].partition("/"))
            if kind == "revision":
                return revision
            if kind == "file" and file:
                return f"{file} at {'commit' if COMMIT_RE.fullmatch(revision) else 'revision'} {revision}"
    return None


def _first_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__
