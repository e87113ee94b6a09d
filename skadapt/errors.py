"""Errors a user can cause and fix; the CLI prints them as one message, without a traceback."""

from __future__ import annotations


class SkadaptError(Exception):
    """Base of user-facing errors: ``str(error)`` is the complete message (what, where, what to do)."""


class StageNotAvailableError(SkadaptError):
    """The recipe or command asks for a stage this version of skadapt does not implement (exit code 2)."""
