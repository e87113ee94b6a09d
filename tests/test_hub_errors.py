"""Hub refusals told apart from the network, offline mode named, and one commit read per ``hub:`` source.

Against the local Hub (:mod:`tests.support.hub_server`, the real ``huggingface_hub``/``datasets`` code in a
client process): a token that expires mid-stream (401 ``Invalid credentials``), a rate limit (429 with
``Retry-After``, brief or lasting), a data file that goes missing after the read opened (404), and a branch
that moves between the look-up of its commit and the read. Each says what the Hub answered and what to do,
in one line naming the source as given, and never "check your network"; the preflight's gated-dataset
check reports an invalid token and a rate limit instead of passing them. Offline, a ``hub:`` source is one
message naming the offline switch, before any client is called.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets
import pytest

from skadapt.sources import SourceError, iter_texts, read_rows
from tests.support.hub_fixtures import HubClient
from tests.support.hub_server import LocalHub

SHARDS = "skadapt-tests/sharded-corpus"
SPEC = f"hub:{SHARDS}"
TEXTS = [  # two data files of three rows, written by hand
    [
        "Ráno bola na lúkach hustá hmla a slnko ju rozohnalo až okolo deviatej.",
        "Obecné zastupiteľstvo schválilo opravu chodníka pri základnej škole.",
        "Na trhu predávali prvé čerešne za nezvyčajne vysokú cenu.",
    ],
    [
        "Cyklistická trasa popri rieke bude cez víkend pre preteky uzavretá.",
        "Stará mama upiekla na nedeľu makový závin podľa vlastného receptu.",
        "Nemocnica otvorila nové oddelenie pre deti s dýchacími ťažkosťami.",
    ],
]
MOVED = ["Po zmene vetvy main číta tento riadok iba ten, kto číta jej nový commit."]
COMMITS = {"a": "a" * 40, "b": "b" * 40}
FAST_RETRIES = """
import datasets
# datasets retries a stream read 20 times, 5-20 s apart, on top of huggingface_hub's own 5 retries: one
# try, no pause, keeps the test short; the way to the message is the same.
datasets.config.STREAMING_READ_MAX_RETRIES = 1
datasets.config.STREAMING_READ_RETRY_INTERVAL = 0
datasets.config.STREAMING_READ_SERVER_UNAVAILABLE_RETRY_INTERVAL = 0
datasets.config.STREAMING_READ_RATE_LIMIT_RETRY_INTERVAL = 0
from skadapt.sources import SourceError, SourceInterrupted, iter_texts

def read_on(spec, event, state=None):
    '''Read a row, let the test act, read on; the rows read and the error that stopped them, if any.'''
    stream = iter_texts(spec, resume_state=state)
    read = [next(stream)]
    pause(event)
    try:
        read.extend(stream)
    except SourceError as error:
        state = getattr(error, "resume_state", None)
        return read, {"type": type(error).__name__, "message": str(error)}, json.loads(json.dumps(state))
    return read, None, None
"""


def _write(folder: Path, files: dict[str, list[str]]) -> Path:
    for name, texts in files.items():
        rows = "".join(json.dumps({"text": text}, ensure_ascii=False) + "\n" for text in texts)
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(rows, encoding="utf-8")
    (folder / "README.md").write_text("---\nlicense: cc0-1.0\n---\n# Two data files\n", encoding="utf-8")
    return folder


@pytest.fixture
def sharded(hub: LocalHub, tmp_path: Path) -> Any:
    """A dataset of two JSONL data files at commit ``a`` (main), and commit ``b`` (one other file)."""
    names = [f"data/train-0000{i}-of-00002.jsonl" for i in range(2)]
    first = _write(tmp_path / "repo" / COMMITS["a"], dict(zip(names, TEXTS, strict=True)))
    hub.store.add("dataset", SHARDS, COMMITS["a"], first)
    moved = _write(tmp_path / "repo" / COMMITS["b"], {names[0]: MOVED})
    hub.store.add("dataset", SHARDS, COMMITS["b"], moved, refs=())
    yield first / names[1]
    hub.store.repos.pop(("dataset", SHARDS), None)


def _run(client: HubClient, code: str, events: dict[str, Any]) -> dict[str, Any]:
    return client.run(f"import json\nSPEC = {SPEC!r}\n" + FAST_RETRIES + code, events=events, timeout=180)


READ_AND_RESUME = """
read, error, state = read_on(SPEC, "act")
emit("read", read)
emit("error", error)
pause("restore")
if state is not None:
    emit("rest", list(iter_texts(SPEC, resume_state=state)))
"""


def test_a_token_revoked_mid_stream_names_the_token_and_the_read_resumes(
    hub: LocalHub, sharded: Path, tmp_path: Path
) -> None:
    client = HubClient(hub, tmp_path / "client", token="hf_expiring")
    result = _run(
        client,
        READ_AND_RESUME,
        {"act": lambda: hub.invalid_tokens.add("hf_expiring"), "restore": hub.invalid_tokens.clear},
    )
    error = result["error"]
    assert error is not None and error["type"] == "SourceInterrupted", result
    message = error["message"]
    stopped = f"{SPEC}: the stream stopped after {len(result['read']):,} rows: "
    assert message.startswith(f"{stopped}the Hub refused the token in HF_TOKEN (HTTP 401 "), message
    assert "Invalid credentials" in message and "`hf auth login`" in message
    assert "network" not in message and "\n" not in message
    assert message.endswith(f"(the read can resume at row {len(result['read']) + 1:,})")
    assert result["read"] + result["rest"] == TEXTS[0] + TEXTS[1]  # resumed once the token is good again
    assert any(r.status == 401 for r in hub.requests)


def test_a_data_file_missing_mid_stream_is_named_not_a_dropped_connection(
    hub: LocalHub, sharded: Path, tmp_path: Path
) -> None:
    events = {"act": sharded.unlink, "restore": lambda: None}
    result = _run(HubClient(hub, tmp_path / "client"), READ_AND_RESUME, events)
    error = result["error"]
    assert error is not None and error["type"] == "SourceError", result  # nothing to resume: it is gone
    message = error["message"]
    stopped = f"{SPEC}: the stream stopped after {len(result['read']):,} rows: "
    assert message.startswith(f"{stopped}no file data/train-00001-of-00002.jsonl at commit "), message
    assert "data/train-00001-of-00002.jsonl" in message and "HTTP 404" in message
    assert "network" not in message and "resume" not in message and "\n" not in message
    assert result["read"] == TEXTS[0]


OPENS = """
for spec in (SPEC, "hub:skadapt-tests/no-such-dataset"):
    try:
        next(iter_texts(spec))
    except SourceError as error:
        emit(spec, str(error))
"""


@pytest.mark.parametrize("token", ["hf_expired", None])
def test_a_refused_open_names_the_token_or_the_missing_dataset(
    hub: LocalHub, sharded: Path, tmp_path: Path, token: str | None
) -> None:
    """An invalid token is refused at the first request (401 ``Invalid credentials``): one line naming
    HF_TOKEN, whatever the read; without one, a dataset the Hub does not show is named."""
    hub.invalid_tokens.add("hf_expired")
    result = _run(HubClient(hub, tmp_path / "client", token=token), OPENS, {})
    missing = "hub:skadapt-tests/no-such-dataset"
    if token is not None:
        for spec in (SPEC, missing):
            refused = f"cannot open {spec}: the Hub refused the token in HF_TOKEN (HTTP 401 "
            assert result[spec].startswith(refused), result[spec]
            assert "`hf auth login`" in result[spec] and "\n" not in result[spec]
    else:
        assert SPEC not in result  # it opens
        assert result[missing].startswith(
            f"cannot open {missing}: the Hub shows no repository skadapt-tests/no-such-dataset to a user "
            "without a token (HTTP "
        ), result[missing]


RATE_LIMITS = (
    """
import time
start = time.perf_counter()
emit("brief", {"texts": list(iter_texts(SPEC)), "seconds": time.perf_counter() - start})
"""
    + READ_AND_RESUME
)


def test_a_rate_limit_is_waited_out_when_brief_and_named_when_it_lasts(
    hub: LocalHub, sharded: Path, tmp_path: Path
) -> None:
    """A brief 429 (two answers, ``Retry-After: 1``) is retried after the wait it names and the read
    completes; a lasting one outlasts the clients' retries and says so, with its Retry-After."""
    hub.outage("429", trigger="train-00001", retry_after=1, requests=2)
    result = _run(
        HubClient(hub, tmp_path / "client"),
        RATE_LIMITS,
        {"act": lambda: hub.outage("429", trigger="train-00001", retry_after=0), "restore": hub.restore},
    )
    brief = result["brief"]
    assert brief["texts"] == TEXTS[0] + TEXTS[1] and brief["seconds"] >= 2 * 1  # Retry-After honoured
    error = result["error"]
    assert error is not None and error["type"] == "SourceInterrupted", result
    message = error["message"]
    stopped = f"{SPEC}: the stream stopped after {len(result['read']):,} rows: "
    assert message.startswith(f"{stopped}the Hub rate-limited the requests (HTTP 429, Retry-After 0 s)")
    assert "network" not in message and "\n" not in message
    assert result["read"] + result["rest"] == TEXTS[0] + TEXTS[1]


MOVES = """
from skadapt.sources import resolve_commit
from skadapt.sources.commits import cached_commit, reading

with reading() as reads:
    looked_up = resolve_commit(SPEC).commit
    pause("move main")
    texts = list(iter_texts(SPEC))
emit("read", {"looked up": looked_up, "texts": texts, "recorded": reads.record()[SPEC]["commit"]})
emit("cache names", cached_commit(SHARDS, "main"))
"""


def test_the_commit_recorded_is_the_commit_read_when_the_branch_moves_in_between(
    hub: LocalHub, sharded: Path, tmp_path: Path
) -> None:
    repo = hub.store.repos[("dataset", SHARDS)]
    result = _run(
        HubClient(hub, tmp_path / "client"),
        f"SHARDS = {SHARDS!r}\n" + MOVES,
        {"move main": lambda: repo.refs.update(main=COMMITS["b"])},
    )
    read = result["read"]
    assert read["looked up"] == read["recorded"] == COMMITS["a"]
    assert read["texts"] == TEXTS[0] + TEXTS[1]  # commit a's texts, not those main moved to
    assert result["cache names"] == COMMITS["a"]  # offline, the branch is at the commit read


@pytest.mark.parametrize("switch", ["HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"])
def test_offline_mode_is_named_at_once_and_no_client_is_asked(
    monkeypatch: pytest.MonkeyPatch, switch: str
) -> None:
    from huggingface_hub import constants

    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(name, "1" if name == switch else "0")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", switch == "HF_HUB_OFFLINE")

    def asked(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no Hub client may be asked offline")

    monkeypatch.setattr(datasets, "load_dataset", asked)
    expected = f"{switch}=1 is set: hub:org/corpus:cfg cannot be read; unset it or use a local copy"
    with pytest.raises(SourceError) as caught:
        next(iter_texts("hub:org/corpus:cfg"))
    assert str(caught.value) == expected
    with pytest.raises(SourceError) as caught:
        read_rows("hub:org/corpus:cfg")
    assert str(caught.value) == expected


GATED = """
from skadapt.preflight import gated_checks
from skadapt.recipe import validate_recipe

recipe = validate_recipe(RECIPE)
for event in EVENTS:
    pause(event)
    emit(event, [[c.input, c.checked, c.problem] for c in gated_checks(recipe)])
"""


def test_the_gated_check_reports_an_invalid_token_a_rate_limit_and_an_unreachable_hub(
    hub: LocalHub, tmp_path: Path, tiny_models: dict[str, Path]
) -> None:
    """The check used to take any answer but "gated" for "none gated": an expired token and a rate limit
    passed the preflight. Each is a problem now, as is a Hub that resets the check's connections."""
    from tests.support.hub_fixtures import FINEWEB2_ID, FINEWEB2_REVISION

    recipe = {
        "name": "gated-check",
        "language": "slk",
        "base_model": str(tiny_models["unigram"]),
        "output_dir": str(tmp_path / "run"),
        "trim": {"corpus": f"hub:{FINEWEB2_ID}:slk_Latn:train@{FINEWEB2_REVISION}", "vocab_size": 60},
        "evaluate": None,
    }
    events = {
        "fine": hub.restore,
        "expired": lambda: hub.invalid_tokens.add("hf_expiring"),
        "rate limited": lambda: (
            hub.invalid_tokens.clear(),
            hub.outage("429", trigger="auth-check", retry_after=7),
        ),
        "reset": lambda: hub.outage("reset", trigger="auth-check"),
    }
    client = HubClient(hub, tmp_path / "client", token="hf_expiring")
    code = f"RECIPE = {recipe!r}\nEVENTS = {list(events)!r}\n" + GATED
    result = client.run(code, events=events, timeout=180)
    assert result["fine"] == [["Hub datasets", "1 repositories, none gated beyond the credentials", None]]
    for event, expected in [
        ("expired", ["the Hub refused the token in HF_TOKEN (HTTP 401 ", "`hf auth login`"]),
        ("rate limited", ["the Hub rate-limited the requests (HTTP 429, Retry-After 7 s", "wait 7 s"]),
        ("reset", ["the Hub cannot be reached", "check the network"]),
    ]:
        checks = result[event]
        assert len(checks) == 1 and checks[0][2] is not None, (event, checks)
        assert all(part in checks[0][2] for part in expected), (event, checks)
        assert f"{FINEWEB2_ID} (read by trim.corpus)" in checks[0][2], (event, checks)


MODEL = "skadapt-tests/moving-model"
RUN_TRIM = """
from skadapt.pipeline import run_recipe
from skadapt.recipe import validate_recipe

emit("ran", [outcome.status for outcome in run_recipe(validate_recipe(RECIPE))])
"""


def test_a_hub_base_model_is_read_at_the_commit_recorded_when_its_branch_moves(
    hub: LocalHub, tmp_path: Path, tiny_models: dict[str, Path]
) -> None:
    """The base model's ``main`` moves right after its commit is first looked up: the stage reads the
    commit its manifest records (its download at that commit), not the branch's new commit."""
    model = tiny_models["unigram"]
    repo = hub.store.add("model", MODEL, COMMITS["a"], model)
    hub.store.add("model", MODEL, COMMITS["b"], model, refs=())
    hub.after_request(f"/api/models/{MODEL}/revision/main", lambda: repo.refs.update(main=COMMITS["b"]))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(TEXTS[0] + TEXTS[1] + MOVED) + "\n", encoding="utf-8")
    run = tmp_path / "run"
    recipe = {
        "name": "moving-model",
        "language": "slk",
        "base_model": MODEL,
        "output_dir": str(run),
        "trim": {"corpus": str(corpus), "vocab_size": 60, "parity_documents": 2},
        "evaluate": None,
    }
    try:
        result = HubClient(hub, tmp_path / "client").run(f"RECIPE = {recipe!r}\n" + RUN_TRIM, timeout=300)
    finally:
        hub.store.repos.pop(("model", MODEL), None)
    assert result["ran"] == ["ran"]
    manifest = json.loads((run / "trim" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["base_model_source"] == {
        "repo": MODEL,
        "revision": "main",
        "commit": COMMITS["a"],
        "resolved_by": "hub",
    }
    assert Path(manifest["models"]["base"]).parts[-2:] == ("snapshots", COMMITS["a"])  # the commit read
    assert repo.refs["main"] == COMMITS["b"]  # the branch did move


def _http_error(status: int, headers: dict[str, str] | None = None) -> Exception:
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    request = httpx2.Request("GET", "http://hub.test/datasets/org/data/resolve/main/data/x.jsonl")
    return HfHubHTTPError(
        f"{status} error", response=httpx2.Response(status, headers=headers, request=request)
    )


def test_what_counts_as_a_refusal_and_what_as_the_network() -> None:
    """The answer is found behind datasets' ``ConnectionError`` (a rate limit that outlasted its retries);
    a 503 stays the network's; an error raised while a refusal was handled stays what it is."""
    from skadapt.hub_errors import hub_refusal
    from skadapt.sources import is_network_error

    try:
        raise ConnectionError("Server Disconnected") from _http_error(429, {"Retry-After": "3"})
    except ConnectionError as error:
        refusal = hub_refusal(error)
        assert refusal is not None and (refusal.kind, refusal.retry_after) == ("rate limited", 3)
        assert not is_network_error(error)
    unavailable = _http_error(503)
    assert hub_refusal(unavailable) is None and is_network_error(unavailable)
    try:
        try:
            raise _http_error(404, {"X-Error-Code": "EntryNotFound"})
        except OSError:
            raise KeyError("a bug while handling it") from None
    except KeyError as error:
        assert hub_refusal(error) is None and not is_network_error(error)
    try:
        try:
            raise _http_error(404, {"X-Error-Code": "EntryNotFound"})
        except OSError:
            raise ValueError("another error meanwhile")  # noqa: B904 (the point: an implicit context)
    except ValueError as error:
        assert hub_refusal(error) is None
    listing = hub_refusal(FileNotFoundError(f"datasets/org/data@{COMMITS['a']}/data/x.jsonl"))
    assert listing is not None and listing.kind == "file"  # the Hub file system's own, without an answer
    assert hub_refusal(FileNotFoundError("Couldn't find any data file at /x, check your connection")) is None
    missing = hub_refusal(_http_error(404, {"X-Error-Code": "EntryNotFound"}))
    assert missing is not None and missing.name == "data/x.jsonl at revision main"
