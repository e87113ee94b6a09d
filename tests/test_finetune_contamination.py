"""Contamination check: exact/folded overlap, threshold, mteb task data per subset and split, fails closed."""

from __future__ import annotations

import importlib
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skadapt.tasks.contamination import (
    ContaminationCheckError,
    ContaminationError,
    contamination_report,
    folded_words,
    task_test_texts,
)
from skadapt.tasks.local_tasks import build_task
from skadapt.tasks.suite import load_suite
from skadapt.textsample import normalize_text
from tests.support.suite_fixtures import SENTENCES, write_tiny_suite
from tests.test_task_language import ENGLISH, dev_text, multilingual_task, register


def make_suite(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    rows = [
        {"sentence1": "Peter včera kúpil nové auto.", "sentence2": "Mária išla k moru.", "score": 4},
        {"sentence1": "Na trhu predávajú ovocie.", "sentence2": "Zajtra bude pršať celý deň.", "score": 1},
    ]
    (tmp_path / "data" / "sts_test.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "tasks:\n  - name: LocalSTS\n    type: STS\n    data: data/sts_test.jsonl\n", encoding="utf-8"
    )
    return suite


def test_folded_words_is_stronger_than_the_sampling_key() -> None:
    text = "  PETER, včera   kúpil — nové ａｕｔｏ!! "
    assert folded_words(text) == "peter včera kúpil nové auto"
    assert normalize_text(text) == "peter, včera kúpil — nové ａｕｔｏ!!"  # case and whitespace only


def test_folded_words_matches_its_per_character_definition_on_every_code_point() -> None:
    """The one-pass translate equals the definition: NFKC, casefold, each P*/S* character a space, runs of
    whitespace one space, stripped — checked on every Unicode code point between letters."""
    import re
    import unicodedata

    def definition(text: str) -> str:
        text = unicodedata.normalize("NFKC", text).casefold()
        text = "".join(" " if unicodedata.category(ch)[0] in "PS" else ch for ch in text)
        return re.sub(r"\s+", " ", text).strip()

    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for start in range(0, len(points), 4096):
        text = " Ab".join(points[start : start + 4096]) + ", x "
        assert folded_words(text) == definition(text), hex(start)


def test_exact_and_normalised_overlap(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    train = ["Peter včera kúpil nové auto.", "NA TRHU predávajú ovocie", "Úplne iná veta o počasí."]
    report = contamination_report(train, [str(suite)], threshold=0.6, allow=False)
    task = report["tasks"]["LocalSTS"]
    assert (task["test_texts"], task["exact"], task["normalized"]) == (4, 1, 2)
    assert task["rate"] == 0.5 and report["status"] == "checked"


def test_over_threshold_stops_unless_allowed(tmp_path: Path) -> None:
    suite = make_suite(tmp_path)
    train = ["Peter včera kúpil nové auto."]
    with pytest.raises(ContaminationError, match=r"LocalSTS: 1/4 test texts .*contamination.allow"):
        contamination_report(train, [str(suite)], threshold=0.1, allow=False)
    report = contamination_report(train, [str(suite)], threshold=0.1, allow=True)
    assert report["over_threshold"] == ["LocalSTS"]


def test_unreadable_suite_stops(tmp_path: Path) -> None:
    with pytest.raises(ContaminationCheckError, match=r"evaluation suite .*missing.yaml.*not found"):
        contamination_report(["Nejaká veta na tréning."], [str(tmp_path / "missing.yaml")], 0.0, allow=True)


# --- the mteb path: task objects, subsets and splits -------------------------------------------------


def test_local_suite_tasks_as_mteb_tasks_give_every_evaluated_text(tmp_path: Path) -> None:
    """skadapt's own local tasks as mteb task objects: queries and corpus, reranking, the test split only."""
    suite = load_suite(write_tiny_suite(tmp_path))
    tasks = {entry.name: build_task(entry, suite, "slk") for entry in suite.tasks}
    queries, documents = {a for a, _, _ in SENTENCES}, {b for _, b, _ in SENTENCES}
    assert {t for t in task_test_texts(tasks["TinyRetrieval"]) if t} == queries | documents
    assert set(task_test_texts(tasks["TinyRerank"])) == queries | documents
    assert set(task_test_texts(tasks["TinySTS"])) == queries | documents
    assert set(task_test_texts(tasks["TinyBitext"])) == queries | documents
    topics = task_test_texts(tasks["TinyTopics"])
    assert topics and all(t.endswith(" Naozaj.") for t in topics)  # the test file, not the train file
    assert len(set(task_test_texts(tasks["TinyClusters"]))) == 12  # the texts; labels are not texts


@pytest.mark.parametrize("task_type", ["STS", "Retrieval"])
def test_multilingual_mteb_task_checks_the_evaluated_subsets_and_splits(
    task_type: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local multilingual mteb task behind an mteb task name: the same path as a built-in task."""
    name = f"LocalMulti{task_type}"
    register(monkeypatch, name, multilingual_task(task_type, name))
    slovak = [a for a, _, _ in SENTENCES] + [b for _, b, _ in SENTENCES]
    english = [a for a, _, _ in ENGLISH] + [b for _, b, _ in ENGLISH]
    train = [*slovak[:5], *english[:5], dev_text("sk", 0), dev_text("en", 0)]

    every = contamination_report(train, [name], threshold=1.0, allow=False)["tasks"][name]
    assert (every["test_texts"], every["normalized"]) == (40, 10)  # both subsets, test split only

    slk = contamination_report(train, [name], threshold=1.0, allow=False, language="slk")["tasks"][name]
    assert (slk["test_texts"], slk["normalized"]) == (20, 5)  # the Slovak subset alone
    assert {folded_words(t) for t in slovak[:5]} >= set(slk["examples"])

    with pytest.raises(ContaminationCheckError, match=rf"{name}: no subset in language 'ces'"):
        contamination_report(train, [name], threshold=1.0, allow=True, language="ces")


# --- fails closed ------------------------------------------------------------------------------------


def failing_task(name: str, error: BaseException) -> type:
    """A registered mteb task whose data loading raises ``error``."""
    cls = multilingual_task("STS", name)

    def load_data(self: Any, num_proc: int | None = None, **kwargs: Any) -> None:
        raise error

    cls.load_data = load_data  # type: ignore[attr-defined]
    return cls


def _requests_error() -> BaseException:
    import requests

    return requests.exceptions.ConnectionError("Max retries exceeded with url: /datasets/x")


def _httpx_error() -> BaseException:
    """huggingface_hub's HTTP client: httpx, or httpx2 from huggingface_hub 2."""
    for name in ("httpx2", "httpx"):
        try:
            return importlib.import_module(name).ConnectError("[Errno -2] Name or service not known")
        except ImportError:
            continue
    pytest.skip("neither httpx nor httpx2 is installed")


def _offline_error() -> BaseException:
    from huggingface_hub.errors import OfflineModeIsEnabled

    return OfflineModeIsEnabled("Cannot reach https://huggingface.co: offline mode is enabled.")


def _missing_dataset() -> BaseException:
    from datasets.exceptions import DatasetNotFoundError

    return DatasetNotFoundError("Dataset 'nobody/nothing' doesn't exist on the Hub or cannot be accessed.")


def _wrapped_connection_error() -> BaseException:
    error = RuntimeError("loader failed")
    error.__cause__ = ConnectionError("Couldn't reach 'x' on the Hub")
    return error


UNREACHABLE: dict[str, Callable[[], BaseException]] = {
    "connection": lambda: ConnectionError("Couldn't reach 'mteb/x' on the Hub (LocalEntryNotFoundError)"),
    "requests": _requests_error,
    "httpx": _httpx_error,
    "hf-offline": _offline_error,
    "dataset-not-found": _missing_dataset,
    "raised-from-connection-error": _wrapped_connection_error,
}


@pytest.mark.parametrize("kind", sorted(UNREACHABLE))
def test_unreachable_data_stops_unless_allowed(
    kind: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    register(monkeypatch, "Faraway", failing_task("Faraway", UNREACHABLE[kind]()))
    with pytest.raises(ContaminationCheckError, match=r"task\(s\) Faraway .*dataset_mirrors.*allow: true"):
        contamination_report(["Nejaká veta na tréning."], ["Faraway"], threshold=0.0, allow=False)
    with caplog.at_level(logging.WARNING, logger="skadapt.tasks.contamination"):
        report = contamination_report(["Nejaká veta na tréning."], ["Faraway"], threshold=0.0, allow=True)
    assert report["status"] == "unreachable" and list(report["unreachable"]) == ["Faraway"]
    assert "Faraway NOT CHECKED" in caplog.text


@pytest.mark.parametrize(
    "error", [ValueError("bad column 'sentence3'"), KeyError("test"), TypeError("'NoneType' is not iterable")]
)
def test_any_other_error_stops_even_when_allowed(error: Exception, monkeypatch: pytest.MonkeyPatch) -> None:
    register(monkeypatch, "Broken", failing_task("Broken", error))
    kind = type(error).__name__
    with pytest.raises(ContaminationCheckError, match=rf"evaluation task Broken: .*failed \({kind}: "):
        contamination_report(["Nejaká veta na tréning."], ["Broken"], threshold=0.0, allow=True)


def test_offline_builtin_task_stops_unless_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A built-in mteb task offline (no cached copy): unchecked only with allow, and then reported."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(ContaminationCheckError, match=r"SlovakSTS .*cannot be reached.*allow: true"):
        contamination_report(["Nejaká veta na tréning."], ["SlovakSTS"], threshold=0.0, allow=False)
    report = contamination_report(["Nejaká veta na tréning."], ["SlovakSTS"], threshold=0.0, allow=True)
    assert report["status"] == "unreachable" and "SlovakSTS" in report["unreachable"]


def test_partly_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    register(monkeypatch, "Faraway", failing_task("Faraway", ConnectionError("no network")))
    suite = make_suite(tmp_path)
    report = contamination_report(["Nejaká veta na tréning."], [str(suite), "Faraway"], 0.0, allow=True)
    assert report["status"] == "partly checked" and list(report["tasks"]) == ["LocalSTS"]


def test_unknown_task_name_stops() -> None:
    with pytest.raises(ContaminationCheckError, match=r"NoSuchTaskXYZ.*not an mteb benchmark"):
        contamination_report(["Nejaká veta na tréning."], ["NoSuchTaskXYZ"], threshold=0.0, allow=True)


def _contaminated_recipe(tmp_path: Path, action: str) -> Any:
    """Training data with known overlaps: two STS rows and one QA row reuse test sentences of LocalSTS."""
    from skadapt.recipe import validate_recipe

    suite = make_suite(tmp_path)
    pairs = [
        ("Peter včera kúpil nové auto.", "Dnes ráno pršalo v Košiciach.", 3),
        ("Výlet do Tatier sa vydaril.", "zajtra bude PRŠAŤ celý deň", 1),
        ("Kniha leží na stole v obývačke.", "Na stole je položená kniha.", 5),
    ]
    sts = [{"sentence1": a, "sentence2": b, "score": score} for a, b, score in pairs]
    qa = [
        {"question": "Čo predávajú na trhu?", "passage": "Na trhu predávajú ovocie."},
        {"question": "Kde leží Bratislava?", "passage": "Bratislava leží na brehu Dunaja pri hranici."},
    ]
    for name, rows in (("sts", sts), ("qa", qa)):
        (tmp_path / f"{name}.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
    return validate_recipe(
        {
            "name": "c",
            "language": "slk",
            "base_model": "m",
            "finetune": {
                "datasets": [
                    {"name": "sts", "kind": "sts", "source": str(tmp_path / "sts.jsonl")},
                    {
                        "name": "qa",
                        "kind": "pairs",
                        "source": str(tmp_path / "qa.jsonl"),
                        "columns": {"anchor": "question", "positive": "passage"},
                    },
                ],
                "contamination": {"action": action},
            },
            "evaluate": {"tasks": [str(suite)]},
        }
    )


def test_drop_removes_exactly_the_overlapping_rows(tmp_path: Path) -> None:
    from skadapt.train.stage import _contamination, build_datasets

    recipe = _contaminated_recipe(tmp_path, "drop")
    datasets = build_datasets(recipe.finetune)
    report, _ = _contamination(recipe.run_facts(), recipe.finetune, datasets)
    sts, qa = datasets
    assert sts.data["sentence1"] == ["Kniha leží na stole v obývačke."] and len(qa) == 1
    assert qa.data["anchor"] == ["Kde leží Bratislava?"]
    assert report["action"] == "drop"
    assert report["dropped"]["sts"] == {
        "rows": 3,
        "dropped": 2,
        "by_task": {"LocalSTS": 2},
        "examples": ["Peter včera kúpil nové auto.", "zajtra bude PRŠAŤ celý deň"],
    }
    assert report["dropped"]["qa"]["dropped"] == 1 and report["dropped"]["qa"]["by_task"] == {"LocalSTS": 1}
    assert sts.stats["dropped"]["contamination"] == 2 and sts.stats["examples"] == 1
    assert report["tasks"]["LocalSTS"]["normalized"] == 0 and report["over_threshold"] == []


def test_stop_names_the_count_and_the_drop_option(tmp_path: Path) -> None:
    from skadapt.train.stage import _contamination, build_datasets

    recipe = _contaminated_recipe(tmp_path, "stop")
    datasets = build_datasets(recipe.finetune)
    with pytest.raises(ContaminationError, match=r"LocalSTS: 3/4 test texts .*contamination\.action: drop"):
        _contamination(recipe.run_facts(), recipe.finetune, datasets)
    assert [len(d) for d in datasets] == [3, 2]  # nothing dropped


@pytest.fixture
def hub_online(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Offline mode off and the Hub endpoint pointed at ``url`` (the probe is cached per endpoint)."""
    from huggingface_hub import constants

    from skadapt import hub

    def point(url: str) -> None:
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setenv("HF_HUB_OFFLINE", "0")
        monkeypatch.setenv("HF_DATASETS_OFFLINE", "0")
        monkeypatch.setenv("HF_ENDPOINT", url)
        hub._probe.cache_clear()

    yield point
    hub._probe.cache_clear()


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_unreachable_hub_is_found_by_one_probe_for_every_task(hub_online: Callable[[str], None]) -> None:
    """No network: the 31 SkMTEB tasks are reported at once, in seconds, not after each task's retries."""
    import time

    hub_online(f"http://127.0.0.1:{_closed_port()}")
    start = time.perf_counter()
    with pytest.raises(
        ContaminationCheckError, match=r"SlovakSTS \(the Hugging Face Hub is unreachable"
    ) as error:
        contamination_report(["Nejaká veta na tréning."], ["MTEB(slk, v1)"], threshold=0.01, allow=False)
    assert time.perf_counter() - start < 15
    assert str(error.value).count("the Hugging Face Hub is unreachable") == 31
    report = contamination_report(["Nejaká veta na tréning."], ["MTEB(slk, v1)"], threshold=0.01, allow=True)
    assert report["status"] == "unreachable" and len(report["unreachable"]) == 31


def test_a_broken_proxy_counts_as_unreachable(hub_online: Callable[[str], None]) -> None:
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    requests: list[str] = []

    class BadGateway(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            self.send_error(502, "Bad Gateway")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), BadGateway)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        hub_online(f"http://127.0.0.1:{server.server_address[1]}")
        with pytest.raises(ContaminationCheckError, match=r"answered HTTP 502"):
            contamination_report(["Nejaká veta."], ["SlovakSTS", "SlovakRTE"], threshold=0.01, allow=False)
        assert requests == ["/api/models?limit=1"]  # one probe for both tasks, nothing retried
    finally:
        server.shutdown()
