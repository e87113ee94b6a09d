"""What can go wrong while publishing, each with a message that says what to do."""

from __future__ import annotations

from skadapt.errors import SkadaptError


class PublishError(SkadaptError):
    """Something to publish is missing or malformed, or the Hub refused it."""


class MissingTokenError(PublishError):
    """No Hugging Face token in the environment or the stored login."""


class HubUnreachableError(PublishError):
    """The Hub cannot be reached (no network, proxy, offline mode)."""


class HubPermissionError(PublishError):
    """The token is invalid, or has no write access to the repository's namespace (401/403)."""


class RepoConflictError(PublishError):
    """The repository name is taken or conflicts with an existing repository (409)."""


class RepoNotFoundError(PublishError):
    """The repository (or branch) does not exist and could not be created with this token."""
