"""The Hugging Face Hub endpoint: one fast probe of whether it can be reached at all.

The Hub clients retry every failed request with back-off (1 s … 16 s), so reading 31 evaluation tasks
from an unreachable endpoint costs a quarter of an hour before the error. One probe answers in seconds;
stages that are about to read many Hub repositories ask it first and report every such repository at
once with the same message.
"""

from __future__ import annotations

import functools
import os
import urllib.error
import urllib.request

from skadapt.errors import SkadaptError

PROBE_TIMEOUT_S = 5.0
ADVICE = "check the network/proxy, or work offline with HF_HUB_OFFLINE=1 and local copies"
"""What to do when the Hub cannot be reached (the preflight's lines and :func:`require_hub` say it)."""
UNREACHABLE_STATUS = frozenset({407, 502, 503, 504})
"""Answers that come from a proxy or gateway, not from the Hub: the Hub is not reached."""


def endpoint() -> str:
    """The Hub endpoint the clients use (``HF_ENDPOINT``, default https://huggingface.co)."""
    from huggingface_hub import constants

    return os.environ.get("HF_ENDPOINT") or constants.ENDPOINT


def offline() -> bool:
    """Whether the Hub clients are in offline mode (``HF_HUB_OFFLINE``/``HF_DATASETS_OFFLINE``)."""
    return offline_switch() is not None


def offline_switch() -> str | None:
    """The variable that puts the Hub clients in offline mode (``HF_HUB_OFFLINE``, else
    ``HF_DATASETS_OFFLINE``) as the user would set it, None when they are online."""
    from huggingface_hub import constants

    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        if os.environ.get(name, "").upper() in ("1", "ON", "YES", "TRUE"):
            return name
    return "HF_HUB_OFFLINE" if constants.HF_HUB_OFFLINE else None


@functools.cache
def _probe(url: str, timeout: float) -> str | None:
    try:
        with urllib.request.urlopen(urllib.request.Request(f"{url}/api/models?limit=1"), timeout=timeout):
            return None
    except urllib.error.HTTPError as error:  # an answer: the Hub is there unless a proxy answered
        if error.code in UNREACHABLE_STATUS:
            return f"{url} answered HTTP {error.code} ({error.reason})"
        return None
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        return f"{url} cannot be reached ({type(reason).__name__}: {reason})"


def unreachable_reason(timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """Why the Hub cannot be reached, or None when it answers (or the clients are offline, reading caches).

    Probed once per process and endpoint (a single request with ``timeout``), never retried.
    """
    if offline():
        return None
    return _probe(endpoint().rstrip("/"), timeout)


class HubUnreachableError(SkadaptError, ConnectionError):
    """The Hub cannot be reached and what is about to run reads from it (:func:`require_hub`)."""


def require_hub(uses: list[str]) -> None:
    """Probe the Hub once (:func:`unreachable_reason`) when something about to run reads from it, before
    anything is loaded: a stage command then stops in seconds with one line, not after the clients' retries.

    Args:
        uses: What reads from the Hub (``evaluate.tasks SlovakSTS``, ``model org/name``); none: no probe.

    Raises:
        HubUnreachableError: The Hub cannot be reached (offline mode reads the caches: never raised).
    """
    reason = unreachable_reason() if uses else None
    if reason is not None:
        what = ", ".join(uses)
        raise HubUnreachableError(
            f"the Hugging Face Hub is unreachable ({reason}), and {what} {'is' if len(uses) == 1 else 'are'} "
            f"read from it; nothing was loaded: {ADVICE}"
        )
