"""Hub sources without the Hub: ``datasets.load_dataset`` answers with local streams.

A pinned revision reaches ``load_dataset``; a connection dropped mid-stream is one ``SourceInterrupted``
naming the source and the rows read, whose ``resume_state`` (``datasets``' resumable streaming state)
continues the read with exactly the rows not yet read.
"""

from __future__ import annotations

import json
from typing import Any

import datasets
import pytest

from skadapt import sources
from skadapt.sources import SourceError, SourceInterrupted, is_network_error, iter_texts, read_rows
from skadapt.tasks.rows import TrainingDataError
from skadapt.train.config import FinetuneDataset
from skadapt.train.datasets import build_task_dataset

TEXTS = [f"Veta číslo {i}." for i in range(12)]
LOCAL_BUILDERS = ("json", "csv", "parquet")


def _fail_once_at(stream: datasets.IterableDataset, failures: list[tuple[int, BaseException]]) -> None:
    """Make the stream's data reading raise each ``(row index, error)`` of ``failures`` once.

    The failure is injected where the data is read (the Arrow tables of a ``to_iterable_dataset``
    stream, cut into one-row tables), as a dropped connection raises inside a Hub stream's reading.
    """
    inner = stream._ex_iterable
    while not hasattr(inner, "generate_tables_fn"):
        inner = inner.ex_iterable
    read = inner.generate_tables_fn

    def flaky(**kwargs: Any):
        for key, table in read(**kwargs):
            for offset in range(len(table)):
                row = table.slice(offset, 1)
                index = row.column("id")[0].as_py()
                if failures and failures[0][0] == index:
                    raise failures.pop(0)[1]
                yield key, row

    inner.generate_tables_fn = flaky


class FakeHub:
    """``datasets.load_dataset`` for Hub ids: a local dataset streamed in shards, failing as told."""

    def __init__(
        self,
        data: datasets.Dataset,
        failures: list[tuple[int, BaseException]] | None = None,
        shards: int = 3,
    ) -> None:
        self.data = data
        self.failures = list(failures or [])
        self.shards = shards
        self.calls: list[dict[str, Any]] = []
        self.real = datasets.load_dataset

    def __call__(self, path: str, name: str | None = None, **kwargs: Any) -> Any:
        if path in LOCAL_BUILDERS:
            return self.real(path, name, **kwargs)
        assert kwargs.pop("streaming") is True
        self.calls.append({"path": path, "name": name, **kwargs})
        stream = self.data.to_iterable_dataset(num_shards=min(self.shards, len(self.data)))
        _fail_once_at(stream, self.failures)
        return stream


def _texts_dataset() -> datasets.Dataset:
    return datasets.Dataset.from_dict({"id": list(range(len(TEXTS))), "text": TEXTS})


@pytest.fixture(autouse=True)
def online(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stream stands in for the Hub, so the source may open it (offline, a ``hub:`` source refuses to
    open before any client is asked); the commit look-up stays offline (no request leaves the machine)."""
    monkeypatch.setattr(sources.hub, "offline_switch", lambda: None)


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch):
    def install(data: datasets.Dataset | None = None, **options: Any) -> FakeHub:
        fake = FakeHub(data if data is not None else _texts_dataset(), **options)
        monkeypatch.setattr(datasets, "load_dataset", fake)
        return fake

    return install


def test_pinned_revision_reaches_load_dataset(hub) -> None:
    fake = hub()
    assert list(iter_texts("hub:org/corpus:slk_Latn:validation@0a1b2c3")) == TEXTS
    assert fake.calls[-1] == {
        "path": "org/corpus",
        "name": "slk_Latn",
        "split": "validation",
        "revision": "0a1b2c3",
    }
    list(read_rows("hub:org/corpus").rows)
    assert fake.calls[-1] == {"path": "org/corpus", "name": None, "split": "train", "revision": None}


def test_pinned_revision_reaches_training_rows(hub) -> None:
    fake = hub(datasets.Dataset.from_dict({"id": [0], "anchor": ["Kde?"], "positive": ["Tu."]}))
    config = FinetuneDataset.model_validate(
        {"name": "qa", "kind": "pairs", "source": "hub:org/qa:x:train@v1.2"}
    )
    assert len(build_task_dataset(config)) == 1
    assert fake.calls[-1]["revision"] == "v1.2"
    bad = FinetuneDataset.model_validate({"name": "qa", "kind": "pairs", "source": "hub:org/qa@"})
    with pytest.raises(TrainingDataError, match=r"dataset 'qa': 'hub:org/qa@': expected .*empty revision"):
        build_task_dataset(bad)


def test_hub_classlabel_names_are_read(hub) -> None:
    features = datasets.Features(
        {
            "id": datasets.Value("int64"),
            "premise": datasets.Value("string"),
            "hypothesis": datasets.Value("string"),
            "label": datasets.ClassLabel(names=["entailment", "neutral", "contradiction"]),
        }
    )
    rows = {"id": [0, 1], "premise": ["Prší."] * 2, "hypothesis": ["Je mokro.", "Je sucho."], "label": [0, 2]}
    hub(datasets.Dataset.from_dict(rows, features))
    source = read_rows("hub:org/nli")
    assert source.label_names == {"label": ["entailment", "neutral", "contradiction"]}
    config = FinetuneDataset.model_validate({"name": "nli", "kind": "nli", "source": "hub:org/nli"})
    assert build_task_dataset(config).to_hf()[0] == {
        "anchor": "Prší.",
        "positive": "Je mokro.",
        "negative": "Je sucho.",
    }


@pytest.mark.parametrize("shards", [1, 3])
@pytest.mark.parametrize("fail_at", [0, 4, 5, 11])
def test_dropped_connection_resumes_with_exactly_the_rest(hub, shards: int, fail_at: int) -> None:
    hub(failures=[(fail_at, ConnectionError("Connection reset by peer"))], shards=shards)
    stream = iter_texts("hub:org/corpus:cfg@v1")
    read: list[str] = []
    with pytest.raises(SourceInterrupted) as caught:
        for text in stream:
            read.append(text)
    error = caught.value
    assert read == TEXTS[:fail_at]
    assert error.rows == fail_at and error.source == "hub:org/corpus:cfg@v1"
    assert str(error).startswith(f"hub:org/corpus:cfg@v1: the stream broke off after {fail_at:,} rows")
    assert "ConnectionError: Connection reset by peer" in str(error)
    state = json.loads(json.dumps(error.resume_state))  # storable as JSON (e.g. in a checkpoint)
    rest = list(iter_texts("hub:org/corpus:cfg@v1", resume_state=state))
    assert read + rest == TEXTS  # no row twice, none lost


def test_repeated_drops_and_limits_over_resumes(hub) -> None:
    errors = [OSError("read timed out"), TimeoutError("slow"), ConnectionError("reset")]
    hub(failures=[(2, errors[0]), (5, errors[1]), (9, errors[2])])
    read: list[str] = []
    state = None
    interruptions = 0
    while True:
        try:
            for text in iter_texts("hub:org/corpus", max_documents=10, resume_state=state):
                read.append(text)
            break
        except SourceInterrupted as error:
            interruptions += 1
            state = error.resume_state
    assert interruptions == 3
    assert read == TEXTS[:10]  # max_documents counts over the resumed reads


def test_text_stream_state_checkpoints_a_hub_read(hub) -> None:
    hub()
    stream = iter_texts("hub:org/corpus")
    first = [next(stream) for _ in range(7)]
    state = stream.state()
    assert state["documents"] == 7 and state["datasets"] is not None
    assert first + list(iter_texts("hub:org/corpus", resume_state=state)) == TEXTS


def test_rows_resume_and_training_rows_name_the_interruption(hub) -> None:
    data = datasets.Dataset.from_dict(
        {"id": list(range(6)), "anchor": list("abcdef"), "positive": list("ABCDEF")}
    )
    hub(data, failures=[(3, ConnectionError("reset"))])
    source = read_rows("hub:org/qa")
    positions = []
    with pytest.raises(SourceInterrupted) as caught:
        positions.extend(where for where, _ in source.rows)
    assert positions == ["hub:org/qa row 1", "hub:org/qa row 2", "hub:org/qa row 3"]
    resumed = read_rows("hub:org/qa", resume_state=caught.value.resume_state)
    assert [(where, row["anchor"]) for where, row in resumed.rows] == [
        ("hub:org/qa row 4", "d"),
        ("hub:org/qa row 5", "e"),
        ("hub:org/qa row 6", "f"),
    ]
    config = FinetuneDataset.model_validate({"name": "qa", "kind": "pairs", "source": "hub:org/qa"})
    hub(data, failures=[(3, ConnectionError("reset"))])
    with pytest.raises(
        TrainingDataError, match=r"^dataset 'qa': hub:org/qa: the stream broke off after 3 rows"
    ):
        build_task_dataset(config)


def test_other_errors_are_not_taken_for_a_dropped_connection(hub) -> None:
    hub(failures=[(4, KeyError("a bug, not the network"))])
    with pytest.raises(KeyError):
        list(iter_texts("hub:org/corpus"))


def test_network_errors_of_http_clients() -> None:
    base = type("HTTPError", (Exception,), {"__module__": "httpx"})
    read_timeout = type("ReadTimeout", (base,), {"__module__": "httpx"})
    assert is_network_error(read_timeout("timed out"))
    assert is_network_error(ConnectionResetError())
    assert not is_network_error(ValueError("bad row"))


def test_unreachable_hub_names_the_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(*args: Any, **kwargs: Any) -> Any:
        raise ConnectionError("offline")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(SourceError, match=r"^cannot open hub:org/corpus@v1 \(ConnectionError: offline\)"):
        list(iter_texts("hub:org/corpus@v1"))
    with pytest.raises(
        SourceError, match=r"hub:org/corpus::train@v1: resume_state belongs to another source"
    ):
        next(iter_texts("hub:org/corpus@v1", resume_state={"spec": "hub:org/other::train", "documents": 1}))
    assert sources.SourceInterrupted.__mro__[1] is SourceError


def test_missing_hub_column_fails_before_reading(hub) -> None:
    fake = hub(failures=[(0, AssertionError("no row may be read"))])
    with pytest.raises(SourceError, match=r"^hub:org/corpus: no column 'body' \(columns: id, text\)$"):
        next(iter_texts("hub:org/corpus", "body"))
    assert len(fake.calls) == 1
