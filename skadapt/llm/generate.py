"""Checked generation: cache lookups, one batch per attempt for the items still open, output checks, and
retries with new per-request seeds. A failed item ends recorded as failed with its reasons."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from skadapt.console import progress_group
from skadapt.llm.cache import GenerationCache, request_key
from skadapt.llm.checks import CHECKS, CheckFailure
from skadapt.llm.seeds import request_seed
from skadapt.llm.types import Backend, ChatRequest, Message, Sampling

log = logging.getLogger(__name__)

GREEDY_RETRY_TEMPERATURE = 0.3
"""A greedy request (temperature 0) that failed is retried at ``attempt * 0.3`` (capped at 1): under greedy
decoding a new seed alone would repeat the same output."""
CHUNK = 256
"""Requests sent per backend call (answers are cached after each call, so an interruption loses little)."""

Validator = Callable[["GenerationItem", str], tuple[Any, list[CheckFailure]]]
"""Checks one output of an item: ``(parsed value, failures)``; the value is used only without failures."""


@dataclass(frozen=True)
class GenerationItem:
    """One thing to generate: a stable id (seeds derive from it) and its prompt."""

    id: str
    messages: tuple[Message, ...]
    json_schema: dict[str, Any] | None = None


@dataclass
class ItemOutcome:
    """The end of one item: its accepted value, or the failures of every attempt."""

    id: str
    value: Any = None
    text: str | None = None
    seed: int | None = None
    attempts: int = 0
    failures: list[list[str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether an output passed every check."""
        return self.text is not None

    @property
    def reason(self) -> str:
        """Why the item failed (its last attempt's failures), or ``""``."""
        return "; ".join(self.failures[-1]) if self.failures and not self.ok else ""


@dataclass
class GenerationStats:
    """Counts of one generation run: answers asked, HTTP requests, cache hits, failures per check.

    Attributes:
        answers_requested: Answers asked of the backend (one per item and attempt not in the cache).
        requests_sent: Requests the backend made for them, its own retries included (an in-process backend
            makes one per answer).
        probe_requests: Requests spent learning what the endpoint honours (0 when it was remembered).
        endpoint: What the backend settled before generating (structured-output form, seed honoured).
    """

    items: int = 0
    failed_items: int = 0
    outputs_checked: int = 0
    answers_requested: int = 0
    requests_sent: int = 0
    probe_requests: int = 0
    cache_hits: int = 0
    completion_tokens: int = 0
    """Tokens the backend reports it generated for the answers asked (0 where it reports none)."""
    check_failures: Counter[str] = field(default_factory=Counter)
    endpoint: dict[str, Any] = field(default_factory=dict)

    def add(self, other: GenerationStats) -> None:
        """Add another run's counts into these."""
        self.items += other.items
        self.failed_items += other.failed_items
        self.outputs_checked += other.outputs_checked
        self.answers_requested += other.answers_requested
        self.requests_sent += other.requests_sent
        self.probe_requests += other.probe_requests
        self.completion_tokens += other.completion_tokens
        self.cache_hits += other.cache_hits
        self.check_failures.update(other.check_failures)
        self.endpoint = self.endpoint or other.endpoint

    def error_rates(self) -> list[dict[str, Any]]:
        """One row per check: the outputs failing it and their share.

        ``transport`` is a share of the answers asked for (an output that never came cannot be checked);
        every other check is a share of the outputs checked (None when nothing came back).
        """
        asked = self.outputs_checked + self.check_failures["transport"]
        rows = []
        for name in CHECKS:
            total = asked if name == "transport" else self.outputs_checked
            failed = self.check_failures[name]
            rows.append({"check": name, "failed": failed, "rate": failed / total if total else None})
        return rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary with the per-check table."""
        return {
            "items": self.items,
            "failed_items": self.failed_items,
            "outputs_checked": self.outputs_checked,
            "answers_requested": self.answers_requested,
            "requests_sent": self.requests_sent,
            "probe_requests": self.probe_requests,
            "cache_hits": self.cache_hits,
            "completion_tokens": self.completion_tokens,
            "endpoint": self.endpoint,
            "error_rates": self.error_rates(),
        }

    def markdown(self) -> str:
        """The per-check error-rate table in Markdown."""
        retries = self.requests_sent - self.answers_requested
        endpoint = ""
        if self.endpoint.get("structured"):
            endpoint = f" Structured output: {self.endpoint['structured']}"
            if self.endpoint.get("seed_reproducible") is False:
                endpoint += "; the same seeded request got different answers (seed not honoured)"
            endpoint += "."
        lines = [
            f"{self.outputs_checked} outputs checked for {self.items} items; {self.failed_items} items "
            f"failed every attempt; {self.requests_sent} requests sent ({self.answers_requested} answers "
            f"asked, {retries} retries) and {self.probe_requests} probe requests, {self.cache_hits} answers "
            f"from cache.{endpoint}",
            "",
            "Rates: `transport` of the answers asked, every other check of the outputs checked.",
            "",
            "| check | failed outputs | rate |",
            "| --- | ---: | ---: |",
        ]
        lines += [
            f"| {r['check']} | {r['failed']} | {'–' if r['rate'] is None else format(r['rate'], '.1%')} |"
            for r in self.error_rates()
        ]
        return "\n".join(lines)


class Generator:
    """Generates checked outputs for items with one backend and one cache."""

    def __init__(
        self,
        backend: Backend,
        cache: GenerationCache,
        sampling: Sampling,
        *,
        run_seed: int,
        attempts: int = 3,
        template_version: str = "",
    ) -> None:
        self.backend = backend
        self.cache = cache
        self.sampling = sampling
        self.run_seed = run_seed
        self.attempts = attempts
        self.template_version = template_version

    def sampling_for(self, attempt: int) -> Sampling:
        """The sampling of an attempt: the configured one, warmed up on retries of greedy decoding."""
        if attempt == 0 or self.sampling.temperature > 0:
            return self.sampling
        return replace(self.sampling, temperature=min(1.0, GREEDY_RETRY_TEMPERATURE * attempt))

    def run(
        self, items: Sequence[GenerationItem], validate: Validator, label: str = "generating"
    ) -> tuple[list[ItemOutcome], GenerationStats]:
        """Generate every item, at most ``attempts`` tries each; outcomes follow ``items``' order."""
        ids = [item.id for item in items]
        if len(set(ids)) != len(ids):
            raise ValueError("generation item ids must be unique")
        outcomes = {item.id: ItemOutcome(item.id) for item in items}
        stats = GenerationStats(items=len(items))
        facts = self.backend.prepare(self.cache)
        stats.probe_requests = int(facts.get("probe_requests", 0))
        stats.endpoint = {k: v for k, v in facts.items() if k not in ("probe_requests", "remembered")}
        identity = self.backend.identity()
        pending = list(items)
        with progress_group() as group:
            for attempt in range(self.attempts):
                if not pending:
                    break
                bar = group.bar(f"{label} (attempt {attempt + 1})", len(pending), unit="items")
                sampling = self.sampling_for(attempt)
                requests = [
                    ChatRequest(
                        item.messages,
                        sampling,
                        request_seed(self.run_seed, item.id, attempt),
                        item.json_schema,
                    )
                    for item in pending
                ]
                keys = [request_key(identity, r, self.template_version) for r in requests]
                texts, errors, finished = self._answers(requests, keys, stats, bar)
                still_open = []
                for item, request, key in zip(pending, requests, keys, strict=True):
                    outcome = outcomes[item.id]
                    outcome.attempts = attempt + 1
                    text = texts.get(key)
                    if text is None:
                        failures = [CheckFailure("transport", errors.get(key, "no answer"))]
                    else:
                        stats.outputs_checked += 1
                        value, failures = validate(item, text)
                        failures = _cut_off_json(failures, item, finished.get(key), sampling)
                    if failures:
                        stats.check_failures.update({f.check for f in failures})
                        outcome.failures.append([str(f) for f in failures])
                        still_open.append(item)
                    else:
                        outcome.value, outcome.text, outcome.seed = value, text, request.seed
                pending = still_open
        stats.failed_items = len(pending)
        if pending:
            log.warning("%s: %d of %d items failed every attempt", label, len(pending), len(items))
        return [outcomes[i] for i in ids], stats

    def _answers(
        self, requests: list[ChatRequest], keys: list[str], stats: GenerationStats, bar: Any
    ) -> tuple[dict[str, str], dict[str, str], dict[str, str | None]]:
        """Answers, errors and finish reasons by key: from the cache, else from the backend (cached as
        they arrive)."""
        texts = self.cache.get_many(keys)
        finished = {key: meta.get("finish_reason") for key, meta in self.cache.metas(list(texts)).items()}
        stats.cache_hits += sum(key in texts for key in keys)
        bar.advance(sum(key in texts for key in keys))
        errors: dict[str, str] = {}
        missing = [i for i, key in enumerate(keys) if key not in texts]
        for start in range(0, len(missing), CHUNK):
            chunk = missing[start : start + CHUNK]
            results = self.backend.chat([requests[i] for i in chunk])
            stats.answers_requested += len(chunk)
            for index, result in zip(chunk, results, strict=True):
                meta = dict(result.meta)
                stats.requests_sent += int(meta.pop("http_requests", 1))
                stats.completion_tokens += int(meta.get("completion_tokens") or 0)
                if result.text is None:
                    errors[keys[index]] = result.error or "no answer"
                else:
                    texts[keys[index]] = result.text
                    finished[keys[index]] = meta.get("finish_reason")
                    self.cache.put(keys[index], result.text, meta)
            bar.advance(len(chunk))
        return texts, errors, finished


def _cut_off_json(
    failures: list[CheckFailure], item: GenerationItem, finish_reason: str | None, sampling: Sampling
) -> list[CheckFailure]:
    """A JSON answer that stopped at the token limit before it closed ran too long: ``runaway_length``,
    not ``broken_json`` (under constrained decoding it is the only way the JSON can break)."""
    if item.json_schema is None or finish_reason != "length":
        return failures
    return [
        CheckFailure("runaway_length", f"stopped at max_tokens={sampling.max_tokens} before the JSON closed")
        if f.check == "broken_json"
        else f
        for f in failures
    ]
