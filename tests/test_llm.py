"""The LLM layer: cache keys, per-request seeds, output checks, the OpenAI-compatible backend against a
scripted local server (retries, failures, timeouts, zero requests on a rerun)."""

from __future__ import annotations

import json

import pytest

from skadapt.languages import get_language
from skadapt.llm.cache import GenerationCache, request_key
from skadapt.llm.checks import check_text, parse_json_object
from skadapt.llm.generate import GenerationItem, Generator
from skadapt.llm.language_check import check_language
from skadapt.llm.openai_backend import OpenAIBackend
from skadapt.llm.seeds import request_seed
from skadapt.llm.types import ChatRequest, LLMUnavailableError, Sampling
from tests.llm_server import Reply, scripted_server, user_message

SLOVAK = get_language("slk")
SAMPLING = Sampling(temperature=0.7, top_p=1.0, max_tokens=64)
SOURCE = "Vláda v stredu schválila návrh zákona, ktorý má zjednodušiť stavebné konanie pre rodinné domy."
PARAPHRASE = "Návrh zákona, ktorý zjednoduší stavebné konanie pri rodinných domoch, vláda schválila v stredu."


def backend(url: str, **options: object) -> OpenAIBackend:
    settings = {"concurrency": 4, "timeout_s": 5.0, "http_retries": 2} | options
    return OpenAIBackend("scripted", [url], **settings)  # type: ignore[arg-type]


# ---- seeds and cache keys -------------------------------------------------------------------------------


def test_request_seeds_depend_only_on_run_seed_item_and_attempt() -> None:
    assert request_seed(42, "a", 0) == request_seed(42, "a", 0)
    seeds = {
        request_seed(42, "a", 0),
        request_seed(42, "a", 1),
        request_seed(42, "b", 0),
        request_seed(7, "a", 0),
    }
    assert len(seeds) == 4


@pytest.mark.parametrize(
    "change",
    [
        {"seed": 2},
        {"sampling": Sampling(temperature=0.0, top_p=1.0, max_tokens=64)},
        {"sampling": Sampling(temperature=0.7, top_p=0.9, max_tokens=64)},
        {"sampling": Sampling(temperature=0.7, top_p=1.0, max_tokens=65)},
        {"json_schema": {"type": "object"}},
        {"messages": ({"role": "user", "content": "iné"},)},
    ],
)
def test_cache_key_covers_every_request_field(change: dict[str, object]) -> None:
    base = {
        "messages": ({"role": "user", "content": "x"},),
        "sampling": SAMPLING,
        "seed": 1,
        "json_schema": None,
    }
    identity = {"backend": "openai", "model": "m"}
    key = request_key(identity, ChatRequest(**base), "v1")  # type: ignore[arg-type]
    assert key == request_key(identity, ChatRequest(**base), "v1")  # type: ignore[arg-type]
    assert key != request_key(identity, ChatRequest(**(base | change)), "v1")  # type: ignore[arg-type]
    assert key != request_key(identity, ChatRequest(**base), "v2")  # type: ignore[arg-type]
    assert key != request_key({"backend": "openai", "model": "n"}, ChatRequest(**base), "v1")  # type: ignore[arg-type]


def test_cache_is_shared_between_connections(tmp_path) -> None:
    first, second = GenerationCache(tmp_path / "c.sqlite"), GenerationCache(tmp_path / "c.sqlite")
    first.put("k", "text")
    assert second.get_many(["k", "missing"]) == {"k": "text"}
    first.put("k", "other")  # the first answer stays
    assert second.get_many(["k"]) == {"k": "text"}
    first.close()
    second.close()


# ---- output checks --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "check"),
    [
        ("", "empty"),
        ("  …  ", "ellipsis"),
        ("...", "ellipsis"),
        (SOURCE.upper(), "identical"),
        ('{"text": "' + PARAPHRASE + '"}', "json_in_text"),
        ("Here is the paraphrase: " + PARAPHRASE, "reasoning_leak"),
        ("Parafráza: " + PARAPHRASE, "reasoning_leak"),
        ("<think>ok</think> " + PARAPHRASE, "reasoning_leak"),
        ("Vláda.", "truncated"),
        (" ".join([PARAPHRASE] * 6), "runaway_length"),
        # SmolLM2's "Slovak" paraphrase: py3langid calls it Slovak; the letters and the words do not.
        ("Zastupiteľstvo v pondelok v částěi: Mďď, čtámď, čt", "wrong_language"),
        ("Vláda ve středu schválila návrh zákona, který má zjednodušit stavební řízení.", "wrong_language"),
        ("The government approved a bill on Wednesday that simplifies building permits.", "wrong_language"),
    ],
)
def test_each_check_catches_its_error(output: str, check: str) -> None:
    failures = check_text(output, SOURCE, SLOVAK)
    assert check in {f.check for f in failures}, failures


def test_a_good_slovak_paraphrase_passes() -> None:
    assert check_text(PARAPHRASE, SOURCE, SLOVAK) == []
    assert check_language(SOURCE, "slk").ok


def test_summaries_and_expansions() -> None:
    longer = PARAPHRASE + " Opozícia návrh kritizovala, podľa nej prinesie viac byrokracie pre obce."
    assert {f.check for f in check_text(longer, SOURCE, SLOVAK, summarises=True)} == {"longer_summary"}
    short = "Vláda schválila zákon."
    assert check_text(short, SOURCE, SLOVAK, summarises=True) == []
    assert check_text(" ".join([PARAPHRASE] * 6), SOURCE, SLOVAK, expands=True) == []


def test_json_answers_are_parsed_or_named_broken() -> None:
    assert parse_json_object('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_object('{"a": 1').check == "broken_json"  # type: ignore[union-attr]
    assert parse_json_object("[1, 2]").check == "broken_json"  # type: ignore[union-attr]
    assert parse_json_object('Sure! {"a": 1}').check == "reasoning_leak"  # type: ignore[union-attr]


# ---- the openai backend against a scripted server ---------------------------------------------------------


def echo_items(n: int) -> list[GenerationItem]:
    return [GenerationItem(f"item{i}", ({"role": "user", "content": f"prompt {i}"},)) for i in range(n)]


def accept_all(item: GenerationItem, text: str) -> tuple[str, list]:
    return text, []


def test_server_errors_are_retried_then_answered(tmp_path) -> None:
    def script(body: dict, count: int) -> Reply:
        return Reply(status=500) if count < 2 else Reply(f"answer to {user_message(body)}")

    with scripted_server(script) as server:
        generator = Generator(backend(server.url), GenerationCache(tmp_path / "c"), SAMPLING, run_seed=1)
        outcomes, stats = generator.run(echo_items(3), accept_all)
    assert [o.value for o in outcomes] == [f"answer to prompt {i}" for i in range(3)]
    assert server.hits == 9  # two 500s and one success per item: the client retried with backoff
    assert stats.requests_sent == 3 and stats.failed_items == 0


def test_persistent_failures_are_recorded_not_raised(tmp_path) -> None:
    def script(body: dict, count: int) -> Reply:
        if user_message(body) == "prompt 1":
            return Reply(status=503)
        if user_message(body) == "prompt 2":
            return Reply("late", delay=3.0)  # beyond the 1 s timeout
        return Reply("fine")

    with scripted_server(script) as server:
        slow = backend(server.url, timeout_s=1.0, http_retries=1)
        generator = Generator(slow, GenerationCache(tmp_path / "c"), SAMPLING, run_seed=1, attempts=2)
        outcomes, stats = generator.run(echo_items(3), accept_all)
    assert outcomes[0].ok and not outcomes[1].ok and not outcomes[2].ok
    assert "transport: HTTP 503" in outcomes[1].reason
    assert "transport" in outcomes[2].reason and "Timeout" in outcomes[2].reason
    assert stats.check_failures["transport"] == 4 and stats.failed_items == 2


def test_an_unreachable_server_is_one_clear_error(tmp_path) -> None:
    with scripted_server(lambda body, count: Reply("x")) as server:
        url = server.url
    generator = Generator(backend(url, http_retries=0), GenerationCache(tmp_path / "c"), SAMPLING, run_seed=1)
    with pytest.raises(LLMUnavailableError, match="cannot reach the LLM server"):
        generator.run(echo_items(2), accept_all)


def test_failed_checks_retry_with_new_seeds_and_a_rerun_sends_nothing(tmp_path) -> None:
    def script(body: dict, count: int) -> Reply:
        return Reply("{broken" if count == 0 else json.dumps({"ok": body["seed"]}))

    def parse(item: GenerationItem, text: str) -> tuple[object, list]:
        value = parse_json_object(text)
        return (None, [value]) if not isinstance(value, dict) else (value, [])

    with scripted_server(script) as server:
        cache = GenerationCache(tmp_path / "c")
        first, stats = Generator(backend(server.url), cache, SAMPLING, run_seed=5).run(echo_items(4), parse)
        hits = server.hits
        second, again = Generator(backend(server.url), cache, SAMPLING, run_seed=5).run(echo_items(4), parse)
        assert server.hits == hits  # the rerun sent zero requests
    assert hits == 8 and stats.check_failures["broken_json"] == 4
    assert [o.value for o in first] == [o.value for o in second]
    assert all(o.attempts == 2 and o.seed == request_seed(5, o.id, 1) for o in first)
    seeds = [r["seed"] for r in server.requests]
    assert len(set(seeds)) == 8  # every item and attempt had its own seed
    assert again.requests_sent == 0 and again.cache_hits == 8


def test_greedy_retries_change_the_temperature(tmp_path) -> None:
    seen: list[float] = []

    def script(body: dict, count: int) -> Reply:
        seen.append(body["temperature"])
        return Reply("bad")

    greedy = Sampling(temperature=0.0, top_p=1.0, max_tokens=8)
    with scripted_server(script) as server:
        generator = Generator(
            backend(server.url), GenerationCache(tmp_path / "c"), greedy, run_seed=1, attempts=3
        )
        outcomes, _ = generator.run(echo_items(1), lambda item, text: (None, [parse_json_object(text)]))
    assert seen == [0.0, 0.3, 0.6]
    assert outcomes[0].reason.startswith("broken_json")
