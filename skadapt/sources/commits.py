"""The commit a ``hub:`` source reads, resolved when the read starts and collected for the stage manifest.

A ``hub:`` spec names a revision (``main`` unless ``@REVISION`` pins a branch, tag or commit), and a branch
moves: FineWeb2's ``main`` is super-squashed, so a commit pinned today can disappear. What a read reads is
one commit of it. :func:`resolve_commit` looks it up once, just before the read opens the stream
(``HfApi().dataset_info(repo, revision=...).sha``). A spec pinned to a full 40-hex commit names it already
(the read asks for exactly that commit, or fails), so no look-up is made for it. Offline (``HF_HUB_OFFLINE``)
the commit is the one the local Hub cache last saw the revision at (``refs/<revision>``, which a look-up
online writes as ``huggingface_hub``'s downloads do), else it is recorded as :data:`UNKNOWN_OFFLINE`; a
look-up that fails online is recorded as unknown with its error and warned about, and the read goes on.
The read asks for the commit looked up, not the revision (a branch may move between the look-up and the
read: what is read is what is recorded); a resumed read asks for the commit its state names.

While :func:`reading` is active (the pipeline wraps each stage in it) every resolution is collected, and a
spec is resolved once: a stage records one commit per source, the one its first read started on.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from skadapt.sources.spec import SourceError, SourceSpec, parse_source

log = logging.getLogger("skadapt")

COMMIT_RE = re.compile(r"[0-9a-f]{40}")
UNKNOWN_OFFLINE = "unknown (offline)"
"""What a manifest records as the commit of an unpinned source read offline that the local cache cannot
name."""


@dataclass(frozen=True)
class HubCommit:
    """The commit one ``hub:`` source is read at.

    Attributes:
        spec: The source spec as given.
        repo: The dataset repository id.
        revision: The revision asked for (``main`` when the spec pins none).
        commit: The commit read (40 hex digits), None when it could not be told.
        resolved_by: How it was told: ``pinned`` (the spec names it), ``hub`` (looked up on the Hub),
            ``local cache (offline)``, or why it is unknown (``unknown (offline)``, ``unknown (ERROR)``).
    """

    spec: str
    repo: str
    revision: str
    commit: str | None
    resolved_by: str

    @property
    def pinned(self) -> bool:
        """Whether the spec itself names the commit (``@`` a full 40-hex commit id)."""
        return COMMIT_RE.fullmatch(self.revision) is not None

    def record(self) -> dict[str, str]:
        """The manifest entry: repo, revision asked, commit read (or why it is unknown), how it was told."""
        return {
            "repo": self.repo,
            "revision": self.revision,
            "commit": self.commit or self.resolved_by,
            "resolved_by": self.resolved_by,
        }


@dataclass
class SourceReads:
    """The Hub commits read while :func:`reading` is active, one per source (canonical spec)."""

    commits: dict[str, HubCommit] = field(default_factory=dict)

    def record(self) -> dict[str, dict[str, str]]:
        """Spec as given -> :meth:`HubCommit.record`, for the stage manifest's ``sources``."""
        return {commit.spec: commit.record() for commit in self.commits.values()}


_ACTIVE: contextvars.ContextVar[SourceReads | None] = contextvars.ContextVar("skadapt_reads", default=None)
"""The collection of the running stage (per thread: a thread of its own collects nothing)."""


@contextlib.contextmanager
def reading() -> Iterator[SourceReads]:
    """Collect the commits of the Hub sources read while active (also a decorator); nested, the outer
    collection is used."""
    outer = _ACTIVE.get()
    if outer is not None:
        yield outer
        return
    reads = SourceReads()
    token = _ACTIVE.set(reads)
    try:
        yield reads
    finally:
        _ACTIVE.reset(token)


def note_commit(commit: HubCommit) -> HubCommit:
    """Add a resolution to the active collection (the first one of a spec stays); returns the one kept."""
    reads = _ACTIVE.get()
    if reads is None:
        return commit
    return reads.commits.setdefault(str(parse_source(commit.spec)), commit)


def resolve_commit(spec: str | SourceSpec, *, collect: bool = True) -> HubCommit:
    """The commit a ``hub:`` source reads now (see the module docstring); never raises for the Hub's sake.

    Args:
        spec: A ``hub:`` source spec.
        collect: Take the resolution of the active :func:`reading` collection when it has one for the spec,
            and add a new one to it. False: look it up anew, outside any collection.

    Raises:
        SourceError: ``spec`` is not a ``hub:`` spec.
    """
    parsed = spec if isinstance(spec, SourceSpec) else parse_source(spec)
    if parsed.kind != "hub":
        raise SourceError(f"{spec}: not a hub: source, it has no commit")
    given = spec.strip() if isinstance(spec, str) else str(parsed)
    reads = _ACTIVE.get() if collect else None
    if reads is not None and (known := reads.commits.get(str(parsed))) is not None:
        return known
    revision = parsed.revision or "main"
    commit = _lookup(given, parsed.name, revision)
    return note_commit(commit) if collect else commit


def model_commit(repo: str, revision: str = "main") -> HubCommit:
    """The commit of Hub model ``repo`` a stage loaded (looked up as for a ``hub:`` dataset, in the model
    cache offline): a recipe's ``base_model`` given as a Hub id is a Hub read too."""
    return _lookup(repo, repo, revision, repo_type="model")


def model_at_commit(repo: str, revision: str = "main") -> tuple[HubCommit, str | None]:
    """The commit of Hub model ``repo`` (:func:`model_commit`) and its local directory at that commit,
    downloaded to the Hub cache once; load the directory, not the id, so that what is loaded is the commit
    recorded even if the branch moves meanwhile. The directory is None when the commit is unknown or its
    files cannot be had (the caller loads the id, whose error then says why)."""
    found = model_commit(repo, revision)
    if found.commit is None:
        return found, None
    from huggingface_hub import snapshot_download

    try:
        return found, snapshot_download(repo, revision=found.commit)
    except Exception as error:  # offline without the files, unreachable, auth: the loader says so
        log.warning("%s: cannot download commit %s (%s)", repo, found.commit, _said(error))
        return found, None


def _said(error: BaseException) -> str:
    """An error in one line: the Hub's refusal (:mod:`skadapt.hub_errors`) or its type and first line."""
    from skadapt.hub_errors import hub_refusal

    refusal = hub_refusal(error)
    return refusal.advice() if refusal else f"{type(error).__name__}: {error}".splitlines()[0]


def _lookup(spec: str, repo: str, revision: str, repo_type: str = "dataset") -> HubCommit:
    from skadapt.hub import offline

    if COMMIT_RE.fullmatch(revision):
        return HubCommit(spec, repo, revision, revision, "pinned")
    if offline():
        cached = cached_commit(repo, revision, repo_type)
        how = "local cache (offline)" if cached else UNKNOWN_OFFLINE
        return HubCommit(spec, repo, revision, cached, how)
    from huggingface_hub import HfApi

    try:
        sha = HfApi().repo_info(repo, revision=revision, repo_type=repo_type).sha
    except Exception as error:  # unreachable, unknown repo/revision, auth: the read itself will say
        why = type(error).__name__
        log.warning("%s: cannot look up the commit %s is at (%s)", spec, revision, _said(error))
        return HubCommit(spec, repo, revision, None, f"unknown ({why})")
    if not sha or not COMMIT_RE.fullmatch(sha):
        return HubCommit(spec, repo, revision, None, "unknown (the Hub named no commit)")
    _cache_ref(repo, revision, sha, repo_type)
    return HubCommit(spec, repo, revision, sha, "hub")


def _cache_ref(repo: str, revision: str, commit: str, repo_type: str) -> None:
    """Write ``refs/<revision>`` of the local Hub cache, as ``huggingface_hub``'s downloads do: a read at
    the commit itself writes no ref, and offline :func:`cached_commit` names the commit read from it. A
    cache that cannot be written is left as it is."""
    path = _cache_folder(repo, repo_type) / "refs" / revision
    try:
        if path.is_file() and path.read_text(encoding="utf-8").strip() == commit:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_text(commit, encoding="utf-8")
        temporary.replace(path)
    except (OSError, UnicodeDecodeError) as error:
        log.debug("cannot note commit %s of %s in the Hub cache: %s", commit, repo, error)


def _cache_folder(repo: str, repo_type: str) -> Path:
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    return Path(constants.HF_HUB_CACHE) / repo_folder_name(repo_id=repo, repo_type=repo_type)


def cached_commit(repo: str, revision: str, repo_type: str = "dataset") -> str | None:
    """The commit the local Hub cache last saw ``revision`` of ``repo`` at (its ``refs/`` file), if any:
    what ``huggingface_hub`` itself resolves a branch to offline."""
    ref = _cache_folder(repo, repo_type) / "refs" / revision
    try:
        commit = ref.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return commit if COMMIT_RE.fullmatch(commit) else None
