"""Errors a user can cause and fix; the CLI prints them as one message, without a traceback.

Besides skadapt's own errors, this module explains the failures a user meets while a stage runs -- a full
disk, a missing permission, an unreachable network or Hub -- in one line that keeps the original error's
type and message and says what to do (:func:`describe_error`).
"""

from __future__ import annotations

import errno
import re
from collections.abc import Iterator
from pathlib import Path


class SkadaptError(Exception):
    """Base of user-facing errors: ``str(error)`` is the complete message (what, where, what to do)."""


class UsageError(SkadaptError):
    """A command line the command cannot run as given: a bad option value or argument, an unknown field in
    ``--set``, options that exclude each other, a missing option. The CLI exits 2 (other errors exit 1)."""


class StageFailedError(SkadaptError):
    """A stage failed with an error that is not skadapt's own (a library's, the disk's, the network's).

    The message names the stage, its input model, the sources its config reads and the original error
    (type and message); the traceback is in the run's ``run.log``. The pipeline raises an instance of a
    subclass that also derives from the original error's type where Python allows it, so code that
    catches, say, ``RuntimeError`` around a run still catches it.

    Attributes:
        stage: The stage that failed.
        cause: The original error (also ``__cause__``).
    """

    def __init__(self, message: str, *, stage: str, cause: BaseException) -> None:
        super().__init__(message)
        self.message = message
        self.stage = stage
        self.cause = cause

    def __str__(self) -> str:
        return self.message


LOG_ONLY = {"skadapt_log_only": True}
"""``extra=`` of log records meant for ``run.log`` only (e.g. a traceback whose message the CLI prints)."""

DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
PERMISSION_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
NETWORK_ERRNOS = frozenset(
    {
        errno.ENETUNREACH,
        errno.ENETDOWN,
        errno.ENETRESET,
        errno.ECONNREFUSED,
        errno.ECONNRESET,
        errno.ECONNABORTED,
        errno.EHOSTUNREACH,
        errno.EHOSTDOWN,
        errno.ETIMEDOUT,
    }
)

_NETWORK_PACKAGES = frozenset(
    {"requests", "urllib3", "httpx", "httpx2", "httpcore", "aiohttp", "huggingface_hub", "socket", "ssl"}
)
_NETWORK_CLASSES = frozenset(
    {
        "ConnectionError",
        "ConnectTimeout",
        "ReadTimeout",
        "Timeout",
        "TimeoutException",
        "NewConnectionError",
        "MaxRetryError",
        "ProtocolError",
        "ProxyError",
        "SSLError",
        "TransportError",
        "NetworkError",
        "ConnectError",
        "ClientConnectionError",
        "ServerDisconnectedError",
        "OfflineModeIsEnabled",
        "LocalEntryNotFoundError",  # offline (or Hub unreachable) and not in the local cache
        "gaierror",
    }
)
_HTTP_CLASSES = frozenset({"HTTPError", "HfHubHTTPError", "HTTPStatusError", "ClientResponseError"})

DISK_FULL, PERMISSION, NETWORK, HTTP, NOT_FOUND, OTHER = (
    "disk full",
    "permission",
    "network",
    "http",
    "not found",
    "other",
)
MESSAGE_LIMIT = 400
"""Longest original message kept in a one-line explanation (the full text stays in the log)."""


def _chain(error: BaseException) -> Iterator[BaseException]:
    """The error and the errors it was raised from (``__cause__``, else unsuppressed ``__context__``)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(seen) < 10:
        seen.add(id(current))
        yield current
        if current.__cause__ is not None:
            current = current.__cause__
        elif not current.__suppress_context__:
            current = current.__context__
        else:
            current = None


def _library_classes(error: BaseException) -> Iterator[tuple[str, str]]:
    """(top-level package, class name) of every class of ``error``'s type, builtins included."""
    for cls in type(error).__mro__:
        yield cls.__module__.partition(".")[0].lstrip("_"), cls.__name__


OS_ERROR_CODE = re.compile(r"\(os error (\d+)\)")
"""How libraries written in Rust (safetensors, tokenizers, hf-xet) name an OS error inside their own error's
message: ``I/O error: No space left on device (os error 28)``."""


def _errno_of(error: BaseException) -> int | None:
    """The OS error code of ``error``: an OSError's ``errno``, else the ``(os error N)`` its message names."""
    if isinstance(error, OSError):
        return error.errno
    try:
        found = OS_ERROR_CODE.search(str(error))
    except Exception:  # an error whose message cannot be made
        return None
    return int(found.group(1)) if found else None


def _kind_of(error: BaseException) -> str:
    code = _errno_of(error)
    if code in DISK_FULL_ERRNOS:
        return DISK_FULL
    if isinstance(error, PermissionError) or code in PERMISSION_ERRNOS:
        return PERMISSION
    if isinstance(error, ConnectionError) or code in NETWORK_ERRNOS:
        return NETWORK
    classes = list(_library_classes(error))
    if any(pkg in _NETWORK_PACKAGES and name in _NETWORK_CLASSES for pkg, name in classes):
        return NETWORK
    if any(pkg in _NETWORK_PACKAGES and name in _HTTP_CLASSES for pkg, name in classes):
        return HTTP
    if isinstance(error, FileNotFoundError):
        return NOT_FOUND
    return OTHER


def classify_error(error: BaseException) -> tuple[str, BaseException]:
    """What kind of failure ``error`` is, and the error in its chain that tells.

    The kinds are ``DISK_FULL`` (errno ENOSPC/EDQUOT), ``PERMISSION``, ``NETWORK`` (connection errors,
    errno ENETUNREACH/ECONNREFUSED/..., requests/urllib3/httpx connection errors, huggingface_hub offline
    errors), ``HTTP`` (the server answered with an error status), ``NOT_FOUND`` (a missing local file) and
    ``OTHER``. A library error raised from one of these (``raise ... from``) is classified by its cause; one
    whose message names an OS error (a Rust library's ``(os error 28)``) by that error's code.
    """
    fallback: tuple[str, BaseException] | None = None
    for link in _chain(error):
        kind = _kind_of(link)
        if kind in (DISK_FULL, PERMISSION, NETWORK, HTTP):
            return kind, link
        if fallback is None:
            fallback = (kind, link)
    return fallback or (OTHER, error)


def original_error(error: BaseException) -> str:
    """``Type: message`` of an error on one line (whitespace collapsed, long messages cut)."""
    text = " ".join(str(error).split())
    if len(text) > MESSAGE_LIMIT:
        text = text[: MESSAGE_LIMIT - 1] + "…"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def describe_error(
    error: BaseException, *, output: str | Path | None = None, output_option: str = "--out"
) -> str:
    """One line for the user: what went wrong (with the original type and message) and what to do.

    Args:
        error: The error.
        output: What was being written, named when the disk is full and the error has no file name.
        output_option: The setting that chooses where output goes (``output_dir`` in recipes).
    """
    kind, culprit = classify_error(error)
    original = original_error(error)
    if culprit is not error:
        original = f"{original}, caused by {original_error(culprit)}"
    filename = getattr(culprit, "filename", None)
    if kind == DISK_FULL:
        target = filename or output or "the output"
        return f"disk full while writing {target} ({original}): free space or point {output_option} elsewhere"
    if kind == PERMISSION and _errno_of(culprit) == errno.EROFS:
        where = f" at {filename}" if filename else ""
        return f"read-only file system{where} ({original}): point {output_option} to a writable one"
    if kind == PERMISSION:
        where = f" on {filename}" if filename else ""
        return (
            f"permission denied{where} ({original}): make it readable/writable for this user or point "
            f"{output_option} elsewhere"
        )
    if kind == NETWORK:
        return (
            f"network error ({original}): check the connection (and proxy settings); to work offline, set "
            "HF_HUB_OFFLINE=1 and use local files or models/datasets already in the Hugging Face cache"
        )
    if kind == HTTP:
        return (
            f"the server refused the request ({original}): check the model/dataset name, that you have "
            "access to it, and HF_TOKEN"
        )
    if kind == NOT_FOUND and filename:
        return f"file not found: {filename} ({original})"
    return original
