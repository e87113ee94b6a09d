"""Upload a folder to the Hugging Face Hub: token, ``create_repo`` + ``upload_folder``, clear failures.

The token comes from the environment (the configured variable, else ``HF_TOKEN``) or the stored
``hf auth login``; it is passed to ``HfApi`` in memory only and never written, logged or put in a message.
Each way the Hub can refuse (no token, no network, offline mode, invalid token, no write access, name
taken, repository or branch missing) ends in one :class:`~skadapt.publish.errors.PublishError` saying
what to do.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skadapt.errors import NETWORK, classify_error, original_error
from skadapt.publish.errors import (
    HubPermissionError,
    HubUnreachableError,
    MissingTokenError,
    PublishError,
    RepoConflictError,
    RepoNotFoundError,
)

log = logging.getLogger("skadapt")

DEFAULT_TOKEN_ENV = "HF_TOKEN"
TOKEN_PAGE = "https://huggingface.co/settings/tokens"


@dataclass(frozen=True)
class UploadResult:
    """Where the upload went.

    Attributes:
        repo_id: The repository.
        repo_type: ``model`` or ``dataset``.
        url: The repository's URL.
        commit_url: The URL of the commit made.
        revision: The branch written to (None: the default branch).
    """

    repo_id: str
    repo_type: str
    url: str
    commit_url: str
    revision: str | None


def resolve_token(token_env: str = DEFAULT_TOKEN_ENV) -> str:
    """The Hub token: ``$token_env``, else ``$HF_TOKEN``, else the stored login.

    Raises:
        MissingTokenError: None of them holds a token.
    """
    for name in dict.fromkeys((token_env, DEFAULT_TOKEN_ENV)):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    from huggingface_hub import get_token

    stored = get_token()
    if stored:
        return stored
    variables = " or ".join(dict.fromkeys((token_env, DEFAULT_TOKEN_ENV)))
    raise MissingTokenError(
        f"no Hugging Face token: set {variables} to a token with write access ({TOKEN_PAGE}) or log in with "
        "`hf auth login`; --dry-run writes the card and lists the files without a token"
    )


def _status(error: BaseException) -> int | None:
    response = getattr(error, "response", None)
    code = getattr(response, "status_code", None)
    return int(code) if isinstance(code, int) else None


def _redact(text: str, token: str | None) -> str:
    return text.replace(token, "***") if token else text


def hub_error(error: BaseException, repo_id: str, repo_type: str, token: str | None) -> PublishError | None:
    """The :class:`PublishError` explaining a Hub failure, or None for an error that is not the Hub's."""
    from huggingface_hub.errors import (
        HFValidationError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    what = f"{repo_type} repository {repo_id}"
    original = _redact(original_error(error), token)
    namespace = repo_id.split("/", 1)[0]
    if isinstance(error, HFValidationError):
        return PublishError(f"--repo-id {repo_id}: not a valid Hub repository id ({original}); use ORG/NAME")
    if isinstance(error, OfflineModeIsEnabled):
        return HubUnreachableError(
            "HF_HUB_OFFLINE is set, so nothing can be uploaded: unset it (and check the network) to publish, "
            "or use --dry-run"
        )
    status = _status(error)
    if isinstance(error, RevisionNotFoundError):
        return RepoNotFoundError(f"{what}: the branch does not exist and was not created ({original})")
    if isinstance(error, RepositoryNotFoundError) or status == 404:
        return RepoNotFoundError(
            f"{what} not found and not created with this token ({original}): check the name, and that the "
            f"token may write to '{namespace}' ({TOKEN_PAGE})"
        )
    if status == 401:
        return HubPermissionError(
            f"the Hub rejected the token for {what} (401 Unauthorized): it is invalid, expired or read-only; "
            f"create a write token at {TOKEN_PAGE}"
        )
    if status == 403:
        return HubPermissionError(
            f"no write access to {what} (403 Forbidden): '{namespace}' is someone else's namespace or the "
            f"token cannot write to it; publish under your own name or an organization you write to, or use "
            f"a token with write access to '{namespace}'"
        )
    if status == 409:
        return RepoConflictError(
            f"{what}: conflict (409: {original}); the name is taken by a repository you cannot write to, or "
            "another upload to it is in progress: choose another --repo-id, or retry later"
        )
    if status is not None:
        return PublishError(f"the Hub refused the upload to {what} (HTTP {status}: {original})")
    kind, culprit = classify_error(error)
    if kind == NETWORK:
        from huggingface_hub import constants

        return HubUnreachableError(
            f"cannot reach the Hugging Face Hub at {constants.ENDPOINT} "
            f"({_redact(original_error(culprit), token)}): check the network and proxy settings; --dry-run "
            "writes the card and lists the files without network"
        )
    return None


def upload_folder(
    folder: Path,
    repo_id: str,
    *,
    token: str,
    repo_type: str = "model",
    private: bool = True,
    revision: str | None = None,
    commit_message: str,
) -> UploadResult:
    """Create the repository if needed (and the branch), then upload ``folder`` in one commit.

    Raises:
        PublishError: The Hub refused or could not be reached (one message per cause).
    """
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    branch = revision if revision and revision != "main" else None
    try:
        repo_url = api.create_repo(repo_id, private=private, exist_ok=True, repo_type=repo_type)
        if branch:
            api.create_branch(repo_id, branch=branch, repo_type=repo_type, exist_ok=True)
        commit: Any = api.upload_folder(
            folder_path=str(folder),
            repo_id=repo_id,
            repo_type=repo_type,
            revision=branch,
            commit_message=commit_message,
        )
    except Exception as error:
        explained = hub_error(error, repo_id, repo_type, token)
        if explained is None:
            raise
        raise explained from None  # the original error's context may hold request headers
    return UploadResult(
        repo_id=repo_id,
        repo_type=repo_type,
        url=str(repo_url),
        commit_url=str(getattr(commit, "commit_url", commit)),
        revision=branch,
    )
