"""Hub datasets streamed with ``datasets``, resumable; which errors mean the connection failed, and which
are the Hub's refusals (:mod:`skadapt.hub_errors`: a token, gated access, a missing file, a rate limit)."""

from __future__ import annotations

import dataclasses
from typing import Any

from skadapt.hub import endpoint, offline_switch
from skadapt.hub_errors import HubRefusal, hub_refusal
from skadapt.sources.commits import HubCommit, note_commit, resolve_commit
from skadapt.sources.rowsource import Rows, RowSource, label_names
from skadapt.sources.spec import SourceError, SourceInterrupted, SourceSpec, parse_source

PARQUET_EXPORT = "refs/convert/parquet"
"""The Hub's Parquet conversion of a dataset: one folder per config, no loading script. At this revision
the spec's CONFIG names the folder (``load_dataset(..., data_dir=CONFIG)``), which is how a dataset
published with a loading script (that current ``datasets`` refuses to run) still loads, e.g.
``hub:clips/mqa:sk-faq-question:train@refs/convert/parquet``."""
NETWORK_ERRORS = {("httpx", "HTTPError"), ("httpx2", "HTTPError"), ("aiohttp", "ClientError")}
"""(top-level package, class) of the network errors that are not ``OSError`` (requests' errors are)."""


def hub_source(spec: str, parsed: SourceSpec, resume_state: dict[str, Any] | None) -> RowSource:
    """Open a Hub dataset as a stream of rows, continuing after ``resume_state`` when given.

    At :data:`PARQUET_EXPORT` the config names a folder of the conversion (see there). The commit read is
    resolved first (:func:`skadapt.sources.commits.resolve_commit`, collected for the stage manifest),
    kept as ``source.commit`` and read itself, so a branch that moves meanwhile does not change what is
    read (the revision as given only when the look-up failed); a resumed read continues at the commit its
    state names. Offline (``HF_HUB_OFFLINE``/``HF_DATASETS_OFFLINE``) nothing is asked: a stream needs the
    Hub.

    Raises:
        SourceError: Offline mode, the dataset cannot be opened, or the resume state holds no stream state;
            while reading, :class:`SourceInterrupted` when the connection drops or the Hub refuses what a
            later try may get (token, access, rate limit), :class:`SourceError` for a file it lacks.
    """
    import datasets

    if (switch := offline_switch()) is not None:
        raise SourceError(f"{switch}=1 is set: {spec} cannot be read; unset it or use a local copy")
    resumed = (resume_state or {}).get("commit")
    if resume_state and resume_state.get("rows") and isinstance(resumed, str):
        note_commit(HubCommit(spec, parsed.name, parsed.revision or "main", resumed, "resumed read"))
        commit, revision = resumed, resumed
    else:
        commit = resolve_commit(spec).commit
        revision = commit or parsed.revision
    where = {"data_dir": parsed.config} if parsed.revision == PARQUET_EXPORT else {"name": parsed.config}
    try:
        stream = datasets.load_dataset(
            parsed.name, **where, split=parsed.split, streaming=True, revision=revision
        )
    except Exception as error:  # connection, auth, unknown config/split/revision: all end here
        if (refusal := hub_refusal(error)) is not None:
            if refusal.kind == "repository":
                refusal = dataclasses.replace(refusal, name=parsed.name)
            raise SourceError(f"cannot open {spec}: {refusal.advice(_page(parsed))}") from None
        raise SourceError(
            f"cannot open {spec} ({type(error).__name__}: {error}); check the dataset id, config, split "
            "and revision, your network/HF_TOKEN, or use a local file"
        ) from None
    if resume_state and resume_state.get("rows"):
        if not isinstance(resume_state.get("datasets"), dict):
            raise SourceError(f"{spec}: resume_state holds no stream state (it is not from a Hub read)")
        stream.load_state_dict(resume_state["datasets"])
    features = getattr(stream, "features", None)
    source = RowSource(spec, iter(()), label_names(features), list(features) if features else None)
    source.stream = stream
    source.commit = commit
    source.read = resume_state["rows"] if resume_state else 0
    source.rows = _stream_rows(source)
    return source


def is_network_error(error: BaseException) -> bool:
    """Whether an error raised while streaming means the connection failed (worth resuming); an answer of
    the Hub that refuses (:func:`skadapt.hub_errors.hub_refusal`) is not, though ``huggingface_hub``'s
    HTTP errors are ``OSError`` instances."""
    if hub_refusal(error) is not None:
        return False
    if isinstance(error, OSError):  # ConnectionError, TimeoutError, requests/fsspec/hub errors
        return True
    return any((cls.__module__.split(".")[0], cls.__name__) in NETWORK_ERRORS for cls in type(error).__mro__)


def _page(parsed: SourceSpec) -> str:
    """The dataset's page on the Hub (where a gated dataset's conditions are accepted)."""
    return f"{endpoint().rstrip('/')}/datasets/{parsed.name}"


def _stream_rows(source: RowSource) -> Rows:
    """Rows of a Hub stream; a dropped connection or a refusal of the Hub ends them with one
    :class:`SourceInterrupted` (:class:`SourceError` when what is refused will not come back)."""
    iterator = iter(source.stream)
    while True:
        try:
            row = next(iterator)
        except StopIteration:
            return
        except Exception as error:
            if (refusal := hub_refusal(error)) is not None:
                raise _refused(source, refusal) from error
            if not is_network_error(error):
                raise
            raise SourceInterrupted(
                f"{source.spec}: the stream broke off after {source.read:,} rows "
                f"({type(error).__name__}: {error}); check your network and run again "
                f"(the read can resume at row {source.read + 1:,})",
                source=source.spec,
                rows=source.read,
                resume_state=source.state(),
            ) from error
        source.read += 1
        yield f"{source.spec} row {source.read}", dict(row)


def _refused(source: RowSource, refusal: HubRefusal) -> SourceError:
    """The error of a stream the Hub stopped: resumable once the token, access or rate limit allows."""
    stopped = f"{source.spec}: the stream stopped after {source.read:,} rows: "
    advice = refusal.advice(_page(parse_source(source.spec)))
    if not refusal.resumable:
        return SourceError(stopped + advice)
    return SourceInterrupted(
        f"{stopped}{advice} (the read can resume at row {source.read + 1:,})",
        source=source.spec,
        rows=source.read,
        resume_state=source.state(),
    )
