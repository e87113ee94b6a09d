"""The LLM layer: cache keys, per-request seeds, output checks, the OpenAI-compatible backend against a
scripted local server (retries, failures, timeouts, zero requests on a rerun) that imitates how vLLM and
llama.cpp take a JSON schema (the probe, its cost, what is remembered)."""

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
from tests.support.llm_server import Reply, scripted_server, user_message

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
    assert check_language(SOURCE, SLOVAK).ok


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
    assert stats.requests_sent == 9 and stats.answers_requested == 3 and stats.failed_items == 0


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


# ---- structured output per server, rates, request counts ---------------------------------------------------

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


def schema_items(n: int) -> list[GenerationItem]:
    return [
        GenerationItem(f"item{i}", ({"role": "user", "content": f"prompt {i}"},), SCHEMA) for i in range(n)
    ]


def parse(item: GenerationItem, text: str) -> tuple[object, list]:
    value = parse_json_object(text)
    return (None, [value]) if not isinstance(value, dict) else (value, [])


def test_a_server_answering_500_to_json_schema_costs_one_request_then_the_right_form(tmp_path) -> None:
    with scripted_server(lambda body, count: Reply('{"a": 1}'), dialect="llamacpp") as server:
        cache = GenerationCache(tmp_path / "c")
        _, stats = Generator(backend(server.url), cache, SAMPLING, run_seed=1).run(schema_items(4), parse)
        forms = [p.get("response_format", {}).get("type") for p in server.probes]
        # one json_schema probe, answered 500 and not retried; then json_object + schema, honoured; the same
        # request again tells whether the server honours seeds
        assert forms == ["json_schema", "json_object", "json_object"]
        assert [r["response_format"]["type"] for r in server.requests] == ["json_object"] * 4
        assert all(r["response_format"]["schema"] == SCHEMA for r in server.requests)
        assert stats.endpoint["structured"] == "json_object_schema" and stats.endpoint["seed_reproducible"]
        assert stats.probe_requests == 3 and stats.requests_sent == 4 and stats.failed_items == 0
        assert "Structured output: json_object_schema" in stats.markdown()
        # a new run (a new backend, the same cache file) remembers the form: no probe, no request
        probes, hits = len(server.probes), server.hits
        _, again = Generator(backend(server.url), cache, SAMPLING, run_seed=1).run(schema_items(4), parse)
        assert (len(server.probes), server.hits) == (probes, hits)
        assert again.probe_requests == 0 and again.requests_sent == 0 and again.cache_hits == 4


@pytest.mark.parametrize(
    ("dialect", "form", "probes"),
    [("vllm", "json_schema", 2), ("ignores", "prompt_only", 4), ("rejects", "prompt_only", 4)],
)
def test_auto_finds_the_form_each_server_honours(tmp_path, dialect: str, form: str, probes: int) -> None:
    with scripted_server(lambda body, count: Reply('{"a": 1}'), dialect=dialect) as server:
        _, stats = Generator(backend(server.url), GenerationCache(tmp_path / "c"), SAMPLING, run_seed=1).run(
            schema_items(2), parse
        )
    assert stats.endpoint["structured"] == form and len(server.probes) == probes == stats.probe_requests
    sent = [r.get("response_format") for r in server.requests]
    assert (sent == [None, None]) == (form == "prompt_only")


def test_an_explicit_form_is_used_without_trying_others(tmp_path) -> None:
    with scripted_server(lambda body, count: Reply('{"a": 1}'), dialect="vllm") as server:
        chosen = backend(server.url, structured="structured_outputs")
        Generator(chosen, GenerationCache(tmp_path / "c"), SAMPLING, run_seed=1).run(schema_items(1), parse)
    assert server.requests[0]["structured_outputs"] == {"json": SCHEMA}
    assert "response_format" not in server.requests[0] and len(server.probes) == 2
    with scripted_server(lambda body, count: Reply("x"), dialect="llamacpp") as server:
        refused = backend(server.url, structured="json_schema")
        with pytest.raises(LLMUnavailableError, match=r"llm\.structured=json_schema"):
            Generator(refused, GenerationCache(tmp_path / "d"), SAMPLING, run_seed=1).run(
                schema_items(1), parse
            )
        assert len(server.probes) == 1  # a rejection is never retried


def test_a_500_with_a_validation_body_is_not_retried(tmp_path) -> None:
    invalid = "1 validation error: max_tokens Input should be a valid integer"
    with scripted_server(lambda body, count: Reply(status=500, error=invalid)) as server:
        generator = Generator(
            backend(server.url, http_retries=4),
            GenerationCache(tmp_path / "c"),
            SAMPLING,
            run_seed=1,
            attempts=2,
        )
        outcomes, stats = generator.run(echo_items(3), accept_all)
    assert server.hits == 6  # one per item and attempt, not five
    assert "rejected by the server (HTTP 500)" in outcomes[0].reason
    assert stats.requests_sent == stats.answers_requested == 6


def test_a_server_that_ignores_seed_is_reported(tmp_path) -> None:
    with scripted_server(lambda body, count: Reply('{"a": 1}'), seed_ignored=True) as server:
        _, stats = Generator(backend(server.url), GenerationCache(tmp_path / "c"), SAMPLING, run_seed=1).run(
            schema_items(1), parse
        )
    assert stats.endpoint["seed_reproducible"] is False
    assert "seed not honoured" in stats.markdown()


def test_rates_are_shares_of_what_was_checked(tmp_path) -> None:
    with scripted_server(lambda body, count: Reply(status=503)) as server:
        failing = backend(server.url, http_retries=1)
        _, stats = Generator(failing, GenerationCache(tmp_path / "c"), SAMPLING, run_seed=1).run(
            echo_items(3), accept_all
        )
    rates = {row["check"]: row["rate"] for row in stats.error_rates()}
    assert rates["transport"] == 1.0 and rates["broken_json"] is None  # nothing came back to check
    assert stats.answers_requested == 9 and stats.requests_sent == 18  # the retries are counted
    assert "| transport | 9 | 100.0% |" in stats.markdown() and "| empty | 0 | – |" in stats.markdown()


def test_json_with_raw_newlines_parses_and_a_cut_off_answer_is_runaway(tmp_path) -> None:
    assert parse_json_object('{"a": "two\nlines"}'.replace("\\n", "\n")) == {"a": "two\nlines"}

    def script(body: dict, count: int) -> Reply:
        return Reply('{"a": 1', finish_reason="length") if count == 0 else Reply('{"a": 2}')

    with scripted_server(script) as server:
        outcomes, stats = Generator(
            backend(server.url), GenerationCache(tmp_path / "c"), SAMPLING, run_seed=1
        ).run(schema_items(2), parse)
    assert stats.check_failures["runaway_length"] == 2 and stats.check_failures["broken_json"] == 0
    assert all(o.value == {"a": 2} for o in outcomes)
