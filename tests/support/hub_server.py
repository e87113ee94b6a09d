"""A local Hugging Face Hub for tests: the part of the Hub HTTP API that ``huggingface_hub``,
``datasets``, ``transformers``/``sentence-transformers`` and ``mteb`` use to resolve, list, stream and
download repositories.

Repositories are directories of files (:class:`HubStore`): a repository is a type (``model``/``dataset``),
an id and commits (40-hex revision -> directory), plus refs (branch/tag name -> commit). A store is
filled from a folder laid out as::

    ROOT/datasets/OWNER/NAME/<40-hex commit>/...files...
    ROOT/datasets/OWNER/NAME/refs.json         {"main": "<commit>"}  (optional with a single commit)
    ROOT/datasets/OWNER/NAME/settings.json     {"gated": "auto"}  (optional: the repository's settings)
    ROOT/models/OWNER/NAME/<40-hex commit>/...files...

or with :meth:`HubStore.add` (e.g. a model directory built by a test). Adding a repository is writing files.

:class:`LocalHub` serves a store over HTTP on 127.0.0.1 (a free port) from background threads:

- ``GET /api/{models,datasets}/OWNER/NAME[/revision/REV]`` - repo info (``sha``, ``siblings``, ``cardData``;
  ``blobs=true`` adds sizes, blob ids and LFS info);
- ``GET /api/{type}s/OWNER/NAME/tree/REV[/PATH]`` - tree listing (``recursive``, ``expand``), paginated
  with a ``Link: <...>; rel="next"`` header past :attr:`LocalHub.page_size` entries (50 with ``expand``);
- ``POST /api/{type}s/OWNER/NAME/paths-info/REV`` - info of the given ``paths`` (form-encoded);
- ``GET /api/{type}s/OWNER/NAME/refs`` and ``.../commits/REV`` - branches/tags and the one commit;
- ``GET /api/agent-harnesses`` - the (empty) registry ``huggingface_hub`` fetches for its user agent;
- ``GET|HEAD /OWNER/NAME/resolve/REV/PATH`` (models) and ``/datasets/OWNER/NAME/resolve/REV/PATH`` - a file,
  with ``ETag`` (git blob id), ``X-Repo-Commit``, ``Content-Length``, ``Accept-Ranges`` and HTTP range
  reads (206/416). LFS files (by suffix, as a default ``.gitattributes`` tracks them, or > 10 MB) are
  answered as the real Hub does: ``302`` to a CDN (a second server on another port, so another origin)
  with ``X-Linked-Etag`` (sha256) and ``X-Linked-Size``; the CDN serves ``/lfs/SHA256`` with ranges.

A gated repository (``settings.json`` ``{"gated": "auto" | "manual"}``, or :attr:`HubRepo.gated`) is
answered as the Hub answers it: its info (``"gated": "auto"``), tree and paths-info are public; its files
(``resolve``) and ``GET /api/{type}s/OWNER/NAME/auth-check`` answer 401 with ``X-Error-Code: GatedRepo``
without a token (``Authorization: Bearer ...``) and 403 with a token of :attr:`LocalHub.denied_tokens`
(a user who has not accepted the terms); any other token opens it (``huggingface_hub`` raises
``GatedRepoError`` for both refusals; ``datasets`` says "You must be authenticated" for the 401 and
"Visit the dataset page ... to ask for access" for the 403).

Errors are the Hub's: 404 with ``{"error": ...}`` and ``X-Error-Code: RepoNotFound`` / ``RevisionNotFound``
/ ``EntryNotFound`` (with ``X-Repo-Commit`` for a missing file), which ``huggingface_hub`` maps to its
exceptions. A request no route answers is logged in :attr:`LocalHub.unexpected` (and answered 404), as is
an error of the server itself (answered 500), so that gaps in the emulation are visible.

An outage (:meth:`LocalHub.outage`) makes both servers answer 503, rate-limit (429 with ``Retry-After``),
reset connections or stop listening (connections refused), from now on or from the first request whose path
contains a trigger string (e.g. the second data file of a stream), for good or for a number of requests;
:meth:`LocalHub.restore` ends it. A token of :attr:`LocalHub.invalid_tokens` (expired or revoked) is
refused by every Hub route as the Hub refuses it: 401 ``Invalid credentials in Authorization header``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

import yaml

REPO_TYPES = {"models": "model", "datasets": "dataset"}
"""URL segment -> repository type."""
COMMIT_RE = re.compile(r"[0-9a-f]{40}")
LFS_SUFFIXES = frozenset(
    (  # noqa: SIM905 (one list, readable)
        ".arrow .bin .bz2 .ckpt .gguf .gz .h5 .joblib .model .msgpack .npy .npz .onnx .ot .parquet .pb "
        ".pickle .pkl .pt .pth .safetensors .tar .tflite .tgz .wasm .xz .zip .zst"
    ).split()
)
"""Suffixes the Hub's default ``.gitattributes`` stores in LFS."""
LFS_MIN_SIZE = 10 * 1024 * 1024
COMMIT_DATE = "2025-01-01T00:00:00.000Z"
CHUNK = 1024 * 1024
OUTAGE_MODES = ("503", "429", "reset", "down")
INVALID_CREDENTIALS = "Invalid credentials in Authorization header"
"""The Hub's 401 message for a token it does not know (expired, revoked, mistyped)."""
RATE_LIMITED = "You have exceeded our hourly quotas for action 'resolve'. Retry later."
"""A 429 message of the Hub's kind."""
CONTROL_HEADER = "X-Local-Hub"
"""Header on every answer of the local Hub (``hub`` or ``cdn``)."""


class HubFixtureError(ValueError):
    """A fixture folder that does not describe repositories (a bad commit name, refs to nowhere)."""


@dataclass(frozen=True)
class HubFile:
    """One file of a commit: where it lies and the ids the Hub reports for it."""

    path: str
    source: Path
    size: int
    blob_id: str
    sha256: str
    lfs: bool

    def entry(self, commit: str | None = None, *, siblings: bool = False) -> dict[str, Any]:
        """The file as a tree/paths-info entry (or, ``siblings``, as a repo-info sibling)."""
        if siblings:
            lfs = {"sha256": self.sha256, "size": self.size, "pointerSize": 134} if self.lfs else None
            return {"rfilename": self.path, "size": self.size, "blobId": self.blob_id, "lfs": lfs}
        entry: dict[str, Any] = {"type": "file", "oid": self.blob_id, "size": self.size, "path": self.path}
        if self.lfs:
            entry["lfs"] = {"oid": self.sha256, "size": self.size, "pointerSize": 134}
        if commit is not None:
            entry["lastCommit"] = {"id": commit, "title": "Local Hub fixture", "date": COMMIT_DATE}
        return entry


_HASHES: dict[tuple[str, int, int], tuple[str, str]] = {}
_HASH_LOCK = threading.Lock()


def file_hashes(path: Path) -> tuple[str, str]:
    """``(git blob id, sha256)`` of a file, cached by path, size and modification time."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    with _HASH_LOCK:
        if key in _HASHES:
            return _HASHES[key]
    blob = hashlib.sha1(b"blob %d\0" % stat.st_size)
    sha256 = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            blob.update(chunk)
            sha256.update(chunk)
    hashes = (blob.hexdigest(), sha256.hexdigest())
    with _HASH_LOCK:
        _HASHES[key] = hashes
    return hashes


def is_lfs(path: str, size: int) -> bool:
    """Whether the Hub would store the file in LFS (default ``.gitattributes`` suffixes, or large)."""
    return Path(path).suffix.lower() in LFS_SUFFIXES or size > LFS_MIN_SIZE


def _tree_id(path: str, children: list[str]) -> str:
    return hashlib.sha1(("tree " + path + "\0" + "\0".join(children)).encode()).hexdigest()


@dataclass
class HubRepo:
    """A repository: commits (revision -> directory of files) and refs (name -> commit).

    Files are read from the directory at each request (fixtures are small; hashes are cached), so a
    directory may be filled after the repository was added.
    """

    repo_type: str
    repo_id: str
    commits: dict[str, Path] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)
    gated: str | bool = False
    """``False``, or the Hub's gating mode (``"auto"``: terms accepted on the page; ``"manual"``)."""

    def commit(self, revision: str) -> str | None:
        """The commit a revision (ref name or full commit id) names, None if none."""
        if revision in self.refs:
            return self.refs[revision]
        return revision if revision in self.commits else None

    def files(self, commit: str) -> dict[str, HubFile]:
        """Path in repo -> file, for every file of the commit (hidden ``.cache`` folders skipped)."""
        root = self.commits[commit]
        files = {}
        for source in sorted(root.rglob("*")):
            relative = source.relative_to(root).as_posix()
            if not source.is_file() or relative.startswith(".cache/") or "/.cache/" in relative:
                continue
            blob_id, sha256 = file_hashes(source)
            size = source.stat().st_size
            files[relative] = HubFile(relative, source, size, blob_id, sha256, is_lfs(relative, size))
        return files

    def folders(self, files: dict[str, HubFile]) -> dict[str, list[str]]:
        """Folder path -> paths directly in it, for every folder of a commit's files (root is ``""``)."""
        folders: dict[str, list[str]] = {"": []}
        for path in files:
            parts = path.split("/")
            for depth in range(1, len(parts)):
                folder = "/".join(parts[:depth])
                if folder not in folders:
                    folders[folder] = []
                    folders["/".join(parts[: depth - 1])].append(folder)
            folders["/".join(parts[:-1])].append(path)
        return folders


class HubStore:
    """The repositories a :class:`LocalHub` serves, by ``(type, id)``."""

    def __init__(self) -> None:
        self.repos: dict[tuple[str, str], HubRepo] = {}

    def add(
        self,
        repo_type: str,
        repo_id: str,
        revision: str,
        directory: Path,
        refs: tuple[str, ...] = ("main",),
    ) -> HubRepo:
        """Serve ``directory`` as commit ``revision`` (40 hex digits) of a repository, ``refs`` naming it."""
        if repo_type not in REPO_TYPES.values():
            raise HubFixtureError(
                f"{repo_id}: repo type {repo_type!r} is not one of {list(REPO_TYPES.values())}"
            )
        if not COMMIT_RE.fullmatch(revision):
            raise HubFixtureError(f"{repo_id}: revision {revision!r} is not a 40-hex commit id")
        repo = self.repos.setdefault((repo_type, repo_id), HubRepo(repo_type, repo_id))
        repo.commits[revision] = Path(directory)
        repo.refs.update(dict.fromkeys(refs, revision))
        return repo

    def load(self, root: Path) -> list[HubRepo]:
        """Add every repository of a fixture folder (``ROOT/{datasets,models}/OWNER/NAME/<commit>/``).

        Raises:
            HubFixtureError: A repository folder without commits, a non-commit folder name, several commits
                without ``refs.json``, or a ref to a commit that is not there.
        """
        loaded = []
        for segment, repo_type in REPO_TYPES.items():
            for folder in sorted(p for p in (root / segment).glob("*/*") if p.is_dir()):
                repo_id = folder.relative_to(root / segment).as_posix()
                commits = sorted(p for p in folder.iterdir() if p.is_dir())
                for commit in commits:
                    if not COMMIT_RE.fullmatch(commit.name):
                        raise HubFixtureError(
                            f"{commit}: a commit folder must be named by a 40-hex commit id"
                        )
                refs_file = folder / "refs.json"
                if refs_file.is_file():
                    refs = json.loads(refs_file.read_text(encoding="utf-8"))
                elif len(commits) == 1:
                    refs = {"main": commits[0].name}
                else:
                    raise HubFixtureError(f"{folder}: {len(commits)} commits and no refs.json naming main")
                for commit in commits:
                    names = tuple(name for name, target in refs.items() if target == commit.name)
                    self.add(repo_type, repo_id, commit.name, commit, refs=names)
                repo = self.repos.get((repo_type, repo_id))
                if repo is None or set(refs.values()) - set(repo.commits):
                    raise HubFixtureError(f"{folder}: refs.json names a commit that is not there, or none")
                settings_file = folder / "settings.json"
                if settings_file.is_file():
                    repo.gated = json.loads(settings_file.read_text(encoding="utf-8")).get("gated", False)
                loaded.append(repo)
        return loaded

    def get(self, repo_type: str, repo_id: str) -> HubRepo | None:
        """The repository, None if there is none."""
        return self.repos.get((repo_type, repo_id))


@dataclass(frozen=True)
class HubRequest:
    """One request the local Hub answered (``server`` is ``hub`` or ``cdn``)."""

    server: str
    method: str
    path: str
    status: int
    range: str | None = None


class _HubError(Exception):
    def __init__(self, status: int, code: str | None, message: str, commit: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.commit = status, code, message, commit


HOSTS = {"hub": "127.0.0.1", "cdn": "127.0.0.2"}
"""Where the Hub and its CDN listen: two loopback hosts, as the real Hub's CDN is another host."""


class LocalHub:
    """A Hugging Face Hub emulation on 127.0.0.1 serving a :class:`HubStore` (see the module docstring).

    Attributes:
        store: The repositories served.
        url: The Hub endpoint (``HF_ENDPOINT``), e.g. ``http://127.0.0.1:43817``.
        cdn_url: The LFS CDN the Hub redirects LFS files to: another host (``127.0.0.2``; the Hub:
            ``127.0.0.1``;
            both loopback), as the real CDN is another host, so that a client that follows
            redirects within the Hub's host (huggingface_hub >= 1.30) stops at the redirect, whose headers
            carry the file's metadata.
        requests: Every request answered, in order.
        unexpected: ``"METHOD PATH"`` of the requests no route answered (gaps of the emulation).
        page_size: Tree entries per page (the Hub's 1000; 50 with ``expand``).
        lfs_redirect: Whether LFS files are redirected to the CDN (else served by the Hub itself).
        denied_tokens: Tokens that have not accepted the terms of the gated repositories (answered 403).
        invalid_tokens: Tokens the Hub does not know (expired, revoked): every Hub route answers 401.
    """

    def __init__(self, store: HubStore, *, page_size: int = 1000, lfs_redirect: bool = True) -> None:
        self.store = store
        self.page_size = page_size
        self.lfs_redirect = lfs_redirect
        self.requests: list[HubRequest] = []
        self.unexpected: list[str] = []
        self.denied_tokens: set[str] = set()
        self.invalid_tokens: set[str] = set()
        self._lfs: dict[str, Path] = {}
        self._lock = threading.Lock()
        self._outage: str | None = None
        self._trigger: str | None = None
        self._retry_after: int | None = None
        self._left: int | None = None
        self._servers: dict[str, _Server] = {}
        self._ports: dict[str, int] = {}
        self._down = False
        self._hooks: list[tuple[str, Callable[[], object]]] = []
        self.url = ""
        self.cdn_url = ""

    # -- lifecycle -------------------------------------------------------------------------------------

    def start(self) -> LocalHub:
        """Start the Hub and its CDN on free ports, each in a daemon thread."""
        for role in ("hub", "cdn"):
            self._serve(role, 0)
        self.url = f"http://127.0.0.1:{self._ports['hub']}"
        self.cdn_url = f"http://{HOSTS['cdn']}:{self._ports['cdn']}"
        return self

    def _serve(self, role: str, port: int) -> None:
        server = _Server((HOSTS[role], port), _Handler)
        server.hub, server.role = self, role
        threading.Thread(target=server.serve_forever, name=f"local-{role}", daemon=True).start()
        self._servers[role] = server
        self._ports[role] = server.server_port

    def stop(self) -> None:
        """Stop both servers."""
        for server in self._servers.values():
            server.shutdown()
            server.server_close()
            server.drop_connections()
        self._servers.clear()

    def __enter__(self) -> LocalHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- outages ---------------------------------------------------------------------------------------

    def outage(
        self,
        mode: str = "503",
        *,
        trigger: str | None = None,
        retry_after: int | None = 0,
        requests: int | None = None,
    ) -> None:
        """Make both servers fail every request, now or from the first one whose path contains ``trigger``.

        Args:
            mode: ``"503"`` (Service Unavailable, with ``Retry-After: retry_after`` unless None), ``"429"``
                (Too Many Requests: rate limited, with ``Retry-After`` likewise), ``"reset"`` (connections
                are accepted, then closed with a TCP reset, no answer) or ``"down"``
                (the Hub is unreachable: open connections are reset, new ones refused).
            trigger: Start the outage at the first request whose decoded path contains this (that request
                fails too, reset for ``down``); None starts it now.
            retry_after: Seconds in the 503's ``Retry-After`` (huggingface_hub waits that + 1 s per retry
                instead of its exponential backoff: 0 keeps tests fast).
            requests: End the outage after this many failed requests (None: not before :meth:`restore`).
        """
        if mode not in OUTAGE_MODES:
            raise ValueError(f"outage mode {mode!r}: use one of {OUTAGE_MODES}")
        with self._lock:
            self._outage, self._trigger, self._retry_after = mode, trigger, retry_after
            self._left = requests
        if mode == "down" and trigger is None:
            self._go_down()

    def restore(self) -> None:
        """End the outage (and forget a pending trigger); a Hub that was down listens again, same ports."""
        with self._lock:
            self._outage = self._trigger = self._left = None
            down, self._down = self._down, False
        if down:
            for role in ("hub", "cdn"):
                self._serve(role, self._ports[role])

    def _failing(self, path: str) -> str | None:
        with self._lock:
            if self._outage is None:
                return None
            if self._trigger is not None:
                if self._trigger not in path:
                    return None
                self._trigger = None
            mode = self._outage
            if self._left is not None:
                self._left -= 1
                if self._left <= 0:
                    self._outage = self._left = None
            return mode

    def _go_down(self) -> None:
        with self._lock:
            if self._down:
                return
            self._down = True
        for server in self._servers.values():
            server.shutdown()
            server.server_close()
            server.drop_connections()

    # -- what tests inspect ----------------------------------------------------------------------------

    def served(self, fragment: str = "", method: str | None = None) -> list[HubRequest]:
        """The requests answered whose path contains ``fragment`` (and of ``method``)."""
        return [r for r in self.requests if fragment in r.path and method in (None, r.method)]

    def clear_log(self) -> None:
        """Forget the requests seen so far (and the hooks not run yet)."""
        self.requests.clear()
        self.unexpected.clear()
        self._hooks.clear()

    def after_request(self, fragment: str, action: Callable[[], object]) -> None:
        """Run ``action`` once, right after the Hub answers the first request whose decoded path contains
        ``fragment`` (e.g. move a branch between the look-up of its commit and the read that follows)."""
        with self._lock:
            self._hooks.append((fragment, action))

    def _after(self, path: str) -> None:
        with self._lock:
            due = [hook for hook in self._hooks if hook[0] in path]
            self._hooks = [hook for hook in self._hooks if hook not in due]
        for _, action in due:
            action()

    # -- answers ---------------------------------------------------------------------------------------

    def _repo(self, repo_type: str, repo_id: str) -> HubRepo:
        repo = self.store.get(repo_type, repo_id)
        if repo is None:
            raise _HubError(404, "RepoNotFound", "Repository not found")
        return repo

    def _commit(self, repo: HubRepo, revision: str) -> str:
        commit = repo.commit(revision)
        if commit is None:
            raise _HubError(404, "RevisionNotFound", f"Invalid rev id: {revision}")
        return commit

    def check_access(self, repo: HubRepo, authorization: str | None) -> None:
        """Refuse a gated repository's content as the Hub does: 401 without a token, 403 for a token that
        has not accepted its terms (:attr:`denied_tokens`)."""
        if not repo.gated:
            return
        token = (authorization or "").removeprefix("Bearer ").strip()
        kind = repo.repo_type
        if not token:
            raise _HubError(
                401,
                "GatedRepo",
                f"Access to {kind} {repo.repo_id} is restricted. You must have access to it and be "
                "authenticated to access it. Please log in.",
            )
        if token in self.denied_tokens:
            page = f"https://huggingface.co/{'datasets/' if kind == 'dataset' else ''}{repo.repo_id}"
            raise _HubError(
                403,
                "GatedRepo",
                f"Access to {kind} {repo.repo_id} is restricted and you are not in the authorized list. "
                f"Visit {page} to ask for access.",
            )

    def repo_info(self, repo: HubRepo, revision: str, query: dict[str, list[str]]) -> dict[str, Any]:
        """The ``/api/{type}s/ID[/revision/REV]`` answer."""
        commit = self._commit(repo, revision)
        files = repo.files(commit)
        blobs = query.get("blobs", ["false"])[0].lower() == "true"
        siblings = [f.entry(siblings=True) if blobs else {"rfilename": f.path} for f in files.values()]
        card = _card_data(files.get("README.md"))
        info: dict[str, Any] = {
            "_id": hashlib.sha1(f"{repo.repo_type}/{repo.repo_id}".encode()).hexdigest()[:24],
            "id": repo.repo_id,
            "author": repo.repo_id.split("/")[0],
            "sha": commit,
            "lastModified": COMMIT_DATE,
            "createdAt": COMMIT_DATE,
            "private": False,
            "gated": repo.gated,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": list(card.get("tags") or []),
            "cardData": card,
            "siblings": siblings,
            "usedStorage": sum(f.size for f in files.values()),
        }
        if repo.repo_type == "model":
            info["modelId"] = repo.repo_id
            info["library_name"] = card.get("library_name") or (
                "sentence-transformers" if "modules.json" in files else "transformers"
            )
            if "config.json" in files:
                config = json.loads(files["config.json"].source.read_text(encoding="utf-8"))
                info["config"] = {k: config[k] for k in ("architectures", "model_type") if k in config}
        return info

    def tree(
        self, repo: HubRepo, revision: str, path: str, query: dict[str, list[str]]
    ) -> tuple[list[dict[str, Any]], int | None]:
        """One page of the ``tree`` answer and the offset of the next page (None on the last)."""
        commit = self._commit(repo, revision)
        files = repo.files(commit)
        folders = repo.folders(files)
        path = path.strip("/")
        recursive = query.get("recursive", ["false"])[0].lower() == "true"
        expand = query.get("expand", ["false"])[0].lower() == "true"
        if path in files:
            entries = [path]
        elif path in folders:
            entries = []
            pending = list(folders[path])
            while pending:
                child = pending.pop(0)
                entries.append(child)
                if recursive and child in folders:
                    pending[0:0] = folders[child]
        else:
            raise _HubError(404, "EntryNotFound", f"{path} does not exist on {revision!r}", commit)
        start = int(base64.urlsafe_b64decode(query["cursor"][0]).decode()) if "cursor" in query else 0
        size = min(self.page_size, 50) if expand else self.page_size
        page = [
            self._entry(p, files, folders, commit if expand else None) for p in entries[start : start + size]
        ]
        return page, start + size if start + size < len(entries) else None

    def paths_info(
        self, repo: HubRepo, revision: str, paths: list[str], expand: bool
    ) -> list[dict[str, Any]]:
        """The ``paths-info`` answer: the entries of the paths that exist."""
        commit = self._commit(repo, revision)
        files = repo.files(commit)
        folders = repo.folders(files)
        found = [p.strip("/") for p in paths if p.strip("/") in files or p.strip("/") in folders]
        return [self._entry(p, files, folders, commit if expand else None) for p in found]

    @staticmethod
    def _entry(
        path: str, files: dict[str, HubFile], folders: dict[str, list[str]], commit: str | None
    ) -> dict[str, Any]:
        if path in files:
            return files[path].entry(commit)
        entry: dict[str, Any] = {
            "type": "directory",
            "oid": _tree_id(path, folders[path]),
            "size": 0,
            "path": path,
        }
        if commit is not None:
            entry["lastCommit"] = {"id": commit, "title": "Local Hub fixture", "date": COMMIT_DATE}
        return entry

    def resolve(self, repo: HubRepo, revision: str, path: str) -> tuple[HubFile, str]:
        """The file a ``resolve`` URL names and its commit."""
        commit = self._commit(repo, revision)
        file = repo.files(commit).get(path)
        if file is None:
            raise _HubError(404, "EntryNotFound", "Entry not found", commit)
        return file, commit

    def lfs_url(self, file: HubFile) -> str:
        """The CDN URL of an LFS file (remembered so that the CDN can serve it)."""
        with self._lock:
            self._lfs[file.sha256] = file.source
        return f"{self.cdn_url}/lfs/{file.sha256}?{urlencode({'filename': Path(file.path).name})}"

    def lfs_blob(self, sha256: str) -> Path | None:
        """The file behind a CDN URL, None if the Hub never redirected to it."""
        with self._lock:
            return self._lfs.get(sha256)


def _card_data(readme: HubFile | None) -> dict[str, Any]:
    """The YAML front matter of a README (the Hub's ``cardData``), ``{}`` without one."""
    if readme is None:
        return {}
    text = readme.source.read_text(encoding="utf-8")
    match = re.match(r"---\s*\n(.*?)\n---\s*\n", text, re.DOTALL)
    data = yaml.safe_load(match.group(1)) if match else None
    return data if isinstance(data, dict) else {}


class _Server(ThreadingHTTPServer):
    """One listening server; it knows its open connections, to reset them when the Hub goes down."""

    daemon_threads = True
    hub: LocalHub
    role: str

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """Reset every open connection."""
        with self.connections_lock:
            connections = list(self.connections)
        for connection in connections:
            _reset_socket(connection)


def _parse_range(header: str | None, size: int) -> tuple[int, int] | str | None:
    """``(start, end)`` (inclusive) of a ``bytes=`` Range header: None without one, ``"invalid"`` when
    unsatisfiable."""
    if not header:
        return None
    match = re.fullmatch(r"\s*bytes=(\d*)-(\d*)\s*", header)
    if not match or (not match.group(1) and not match.group(2)):
        return None  # a form the Hub ignores (e.g. several ranges): the whole file
    first, last = match.groups()
    if first:
        start, end = int(first), min(int(last), size - 1) if last else size - 1
    else:
        start, end = max(size - int(last), 0), size - 1
    if start >= size or start > end:
        return "invalid"
    return start, end


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # the request log replaces stderr lines
        pass

    def do_GET(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    # -- dispatch --------------------------------------------------------------------------------------

    def _handle(self) -> None:
        hub, role = self.server.hub, self.server.role
        split = urlsplit(self.path)
        segments = [unquote(s) for s in split.path.split("/")[1:]]
        query = parse_qs(split.query)
        body = self._read_body()
        self._range = self.headers.get("Range")
        try:
            self._answer(hub, role, segments, query, body)
        finally:
            hub._after("/" + "/".join(segments))  # as served() sees it

    def _answer(
        self, hub: LocalHub, role: str, segments: list[str], query: dict[str, list[str]], body: bytes
    ) -> None:
        failing = hub._failing("/".join(segments))
        if failing in ("reset", "down"):
            self._log(0)
            self.close_connection = True
            _reset_socket(self.connection)
            if failing == "down":
                hub._go_down()
            return
        if failing in ("503", "429"):
            headers = {} if hub._retry_after is None else {"Retry-After": str(hub._retry_after)}
            if failing == "429":
                headers["X-Error-Message"] = RATE_LIMITED
            message = "The local Hub is unavailable (test outage)" if failing == "503" else RATE_LIMITED
            self._json(int(failing), {"error": message}, headers)
            return
        try:
            if role == "hub" and self._token() in hub.invalid_tokens:
                raise _HubError(401, None, INVALID_CREDENTIALS)
            if role == "cdn":
                self._cdn(segments)
            else:
                self._route(segments, query, body)
        except _HubError as error:
            headers = {"X-Error-Message": error.message}
            if error.code:
                headers["X-Error-Code"] = error.code
            if error.commit:
                headers["X-Repo-Commit"] = error.commit
            self._json(error.status, {"error": error.message}, headers)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as error:  # a bug of the emulation: visible in the test, answered like the Hub's 500
            hub.unexpected.append(f"{self.command} {self.path}: server error {error!r}")
            self._json(500, {"error": f"local Hub error: {error!r}"})

    def _route(self, segments: list[str], query: dict[str, list[str]], body: bytes) -> None:
        hub, method = self.server.hub, self.command
        if method == "GET" and segments == ["api", "agent-harnesses"]:  # huggingface_hub's agent detection
            self._json(200, {"standardEnvVars": [], "harnesses": {}})
            return
        if method == "GET" and len(segments) == 2 and segments[0] == "api" and segments[1] in REPO_TYPES:
            # repository search (``list_models``/``list_datasets``; skadapt's reachability probe asks for 1)
            kind = REPO_TYPES[segments[1]]
            limit = int(query.get("limit", ["1000"])[0])
            found = [
                {"id": r.repo_id, "_id": r.repo_id} for r in hub.store.repos.values() if r.repo_type == kind
            ]
            self._json(200, found[:limit])
            return
        if len(segments) >= 4 and segments[0] == "api" and segments[1] in REPO_TYPES:
            repo = hub._repo(REPO_TYPES[segments[1]], "/".join(segments[2:4]))
            rest = segments[4:]
            if method == "GET" and not rest:
                self._json(200, hub.repo_info(repo, "main", query))
                return
            if method == "GET" and len(rest) == 2 and rest[0] == "revision":
                self._json(200, hub.repo_info(repo, rest[1], query))
                return
            if method == "GET" and len(rest) >= 2 and rest[0] == "tree":
                page, following = hub.tree(repo, rest[1], "/".join(rest[2:]), query)
                headers = {}
                if following is not None:
                    cursor = base64.urlsafe_b64encode(str(following).encode()).decode()
                    params = {k: v[0] for k, v in query.items() if k != "cursor"} | {"cursor": cursor}
                    link = f"{hub.url}{urlsplit(self.path).path}?{urlencode(params)}"
                    headers["Link"] = f'<{link}>; rel="next"'
                self._json(200, page, headers)
                return
            if method == "POST" and len(rest) == 2 and rest[0] == "paths-info":
                form = parse_qs(body.decode("utf-8"))
                expand = form.get("expand", ["False"])[0].lower() == "true"
                self._json(200, hub.paths_info(repo, rest[1], form.get("paths", []), expand))
                return
            if method == "GET" and rest == ["auth-check"]:  # huggingface_hub's ``auth_check``
                hub.check_access(repo, self.headers.get("Authorization"))
                self._json(200, {})
                return
            if method == "GET" and rest == ["refs"]:
                branches = [
                    {"name": name, "ref": f"refs/heads/{name}", "targetCommit": commit}
                    for name, commit in sorted(repo.refs.items())
                ]
                self._json(200, {"branches": branches, "tags": [], "converts": []})
                return
            if method == "GET" and len(rest) == 2 and rest[0] == "commits":
                commit = hub._commit(repo, rest[1])
                entry = {
                    "id": commit,
                    "title": "Local Hub fixture",
                    "message": "",
                    "authors": [{"user": "local-hub"}],
                    "date": COMMIT_DATE,
                }
                self._json(200, [entry])
                return
        resolve = self._resolve_target(segments)
        if resolve is not None and method in ("GET", "HEAD"):
            repo_type, repo_id, revision, path = resolve
            self._resolve(hub._repo(repo_type, repo_id), revision, path)
            return
        hub.unexpected.append(f"{method} {self.path}")
        self._json(404, {"error": f"local Hub: no route for {method} {self.path}"})

    @staticmethod
    def _resolve_target(segments: list[str]) -> tuple[str, str, str, str] | None:
        if len(segments) >= 6 and segments[0] == "datasets" and segments[3] == "resolve":
            return "dataset", "/".join(segments[1:3]), segments[4], "/".join(segments[5:])
        if (
            len(segments) >= 5
            and segments[0] not in ("api", "datasets", "spaces")
            and segments[2] == "resolve"
        ):
            return "model", "/".join(segments[0:2]), segments[3], "/".join(segments[4:])
        return None

    def _resolve(self, repo: HubRepo, revision: str, path: str) -> None:
        hub = self.server.hub
        hub.check_access(repo, self.headers.get("Authorization"))
        file, commit = hub.resolve(repo, revision, path)
        headers = {"X-Repo-Commit": commit, "ETag": f'"{file.blob_id}"'}
        if file.lfs:
            headers |= {
                "ETag": f'"{file.sha256}"',
                "X-Linked-Etag": f'"{file.sha256}"',
                "X-Linked-Size": str(file.size),
            }
            if hub.lfs_redirect:
                headers["Location"] = hub.lfs_url(file)
                self._send(302, b"", headers)
                return
        self._content(file.source, file.size, headers)

    def _cdn(self, segments: list[str]) -> None:
        hub = self.server.hub
        source = hub.lfs_blob(segments[1]) if len(segments) == 2 and segments[0] == "lfs" else None
        if source is None or self.command not in ("GET", "HEAD"):
            hub.unexpected.append(f"{self.command} cdn {self.path}")
            self._send(404, b"NoSuchKey", {"Content-Type": "text/plain"})
            return
        self._content(source, source.stat().st_size, {"ETag": f'"{segments[1]}"'})

    # -- responses -------------------------------------------------------------------------------------

    def _content(self, source: Path, size: int, headers: dict[str, str]) -> None:
        """A file's bytes, whole (200) or the asked range (206, 416 if unsatisfiable)."""
        headers = {"Accept-Ranges": "bytes", "Content-Type": "application/octet-stream", **headers}
        asked = _parse_range(self._range, size)
        if asked == "invalid":
            self._send(416, b"", headers | {"Content-Range": f"bytes */{size}"})
            return
        status, (start, end) = (200, (0, size - 1)) if asked is None else (206, asked)
        if status == 206:
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
        length = end - start + 1 if size else 0
        self._log(status)
        self.send_response(status)
        for name, value in {**self._common(), **headers, "Content-Length": str(length)}.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command == "HEAD" or not length:
            return
        with source.open("rb") as handle:
            handle.seek(start)
            left = length
            while left > 0:
                chunk = handle.read(min(CHUNK, left))
                if not chunk:
                    break
                self.wfile.write(chunk)
                left -= len(chunk)

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(data, ensure_ascii=False).encode("utf-8")
        self._send(status, body, {"Content-Type": "application/json; charset=utf-8", **(headers or {})})

    def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
        self._log(status)
        self.send_response(status)
        for name, value in {**self._common(), **headers, "Content-Length": str(len(body))}.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _common(self) -> dict[str, str]:
        return {CONTROL_HEADER: self.server.role, "Date": formatdate(usegmt=True)}

    def _log(self, status: int) -> None:
        path = unquote(urlsplit(self.path).path)
        self.server.hub.requests.append(HubRequest(self.server.role, self.command, path, status, self._range))

    def _token(self) -> str:
        return (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""


def _reset_socket(connection: socket.socket) -> None:
    """Close a connection with a TCP reset."""
    try:
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def iter_files(directory: Path) -> Iterator[tuple[str, bytes]]:
    """``(relative path, bytes)`` of every file under a directory, sorted (to compare downloads)."""
    for path in sorted(directory.rglob("*")):
        if path.is_file() and ".cache" not in path.relative_to(directory).parts:
            yield path.relative_to(directory).as_posix(), path.read_bytes()
