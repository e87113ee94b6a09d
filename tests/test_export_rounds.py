"""The export's cheap decisions first: int8 variants ranked on agreement, dev-scored in that order only
until the finalists pass the bar, only the finalists timed; speed rounds that stop once the figures decide,
or at a budget. Fast: no model is loaded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from skadapt.export import speed
from skadapt.export.int8 import MAX_DEV_LOSS, Made, Variant, choose, pick_finalists
from skadapt.results.export import Int8Candidate

# the demo's five variants (runs/demo_sk, AMD EPYC avx512_vnni): dev x100 and agreement, parent 82.11
DEMO = [
    ("dynamic", 81.59, 0.9622, 2.83),
    ("dynamic-gather-fp32", 81.67, 0.9622, 3.38),
    ("dynamic-gather-fp32-per-tensor", 79.91, 0.9291, 3.42),
    ("dynamic-gather-fp32-7-bit", 81.76, 0.9508, 2.84),
    ("static-qdq", 76.00, 0.8163, 2.45),
]
PARENT = 82.11


def _made(rows: list[tuple[str, float, float, float]]) -> list[Made]:
    variant = Variant(name="x", method="dynamic", per_channel=True, reduce_range=False)
    return [
        Made(variant=variant.model_copy(update={"name": name}), path=Path(name), dev=None, agreement=agree)
        for name, _, agree, _ in rows
    ]


def _candidates(made: list[Made], rows: list[tuple[str, float, float, float]]) -> list[Int8Candidate]:
    return [
        Int8Candidate(
            name=name,
            settings="",
            speedup=speedup if item.finalist else None,
            dev=item.dev,
            agreement=agree,
        )
        for item, (name, _, agree, speedup) in zip(made, rows, strict=True)
    ]


def test_finalists_are_the_best_agreeing_within_the_bar_and_the_choice_is_unchanged() -> None:
    made = _made(DEMO)
    scored: list[str] = []

    def score(i: int) -> float:
        scored.append(DEMO[i][0])
        return DEMO[i][1]

    finalists = pick_finalists(made, PARENT, 2, score)
    assert [f.variant.name for f in finalists] == ["dynamic-gather-fp32", "dynamic-gather-fp32-7-bit"]
    # the tie at 0.9622 goes to the earlier variant, as choose() breaks it; it fails the bar by 0.02
    assert scored == ["dynamic", "dynamic-gather-fp32", "dynamic-gather-fp32-7-bit"]
    assert [m.dev is None for m in made] == [False, False, True, False, True]
    everything = [Int8Candidate(name=n, settings="", speedup=s, dev=d, agreement=a) for n, d, a, s in DEMO]
    before = choose(everything, PARENT, "avx512_vnni", "1000 dev texts")
    after = choose(_candidates(made, DEMO), PARENT, "avx512_vnni", "1000 dev texts")
    assert before.kept == after.kept == "dynamic-gather-fp32" and after.worth is True


def test_the_runner_up_is_kept_when_the_first_finalist_is_not_faster() -> None:
    rows = [(n, d, a, 0.9 if n == "dynamic-gather-fp32" else s) for n, d, a, s in DEMO]
    made = _made(rows)
    pick_finalists(made, PARENT, 2, lambda i: rows[i][1])
    assert choose(_candidates(made, rows), PARENT, "avx2", "dev").kept == "dynamic-gather-fp32-7-bit"


def test_fewer_passing_than_finalists_fill_up_on_agreement_and_none_untimed_is_kept() -> None:
    rows = [(n, PARENT - MAX_DEV_LOSS - 1, a, s) for n, _, a, s in DEMO]  # none within the bar
    made = _made(rows)
    finalists = pick_finalists(made, PARENT, 2, lambda i: rows[i][1])
    assert [f.variant.name for f in finalists] == ["dynamic", "dynamic-gather-fp32"]
    choice = choose(_candidates(made, rows), PARENT, "avx2", "dev")
    assert choice.kept == "dynamic" and choice.worth is False
    # without dev sets the finalists are the best-agreeing ones, nothing scored
    plain = _made(DEMO)
    assert [f.variant.name for f in pick_finalists(plain, None, 2)] == ["dynamic", "dynamic-gather-fp32"]


def test_ratios_clear_of_one() -> None:
    assert speed.ratios_clear_of([1.0, 1.1], [3.0, 3.2])  # 3x faster in both rounds
    assert speed.ratios_clear_of([3.0, 3.2], [1.0, 1.1])  # slower in both
    assert not speed.ratios_clear_of([1.0, 3.0], [1.2, 2.0])  # faster, then slower
    assert not speed.ratios_clear_of([1.0], [3.0])  # one round decides nothing


class _FakeWorker:
    """A measuring process that answers at once: pass seconds from a table per label."""

    table: ClassVar[dict[str, list[float]]] = {}
    clock: ClassVar[list[float]] = [0.0]

    def __init__(self, ref: str, texts_file: Path, batch_size: int, threads: int) -> None:
        self.ref = ref
        self.calls = 0

    def ask(self, command: str) -> dict[str, Any]:
        if command == "load":
            return {"load_s": 0.1, "rounds": 1}
        if command == "pass":
            self.calls += 1
            seconds = self.table[self.ref][self.calls - 1]
            self.clock[0] += seconds
            return {"seconds": seconds}
        return {"peak_rss_mb": 1.0, "pid": 1}

    def close(self) -> None:
        pass


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setattr(speed, "_Worker", _FakeWorker)
    monkeypatch.setattr(speed.time, "perf_counter", lambda: _FakeWorker.clock[0])
    _FakeWorker.clock[0] = 0.0
    texts = tmp_path / "texts.json"
    texts.write_text(json.dumps(["a", "b"]), encoding="utf-8")
    return texts


def test_rounds_stop_once_decided(fake: Path) -> None:
    _FakeWorker.table = {"pt": [8.0] * 5, "int8": [3.0, 2.5, 2.4, 2.4, 2.4]}
    stopped: dict[str, Any] = {}

    def decided(passes: dict[str, list[float]]) -> bool:
        return speed.ratios_clear_of(passes["int8"], passes["pt"])

    rows = speed.measure_models(
        {"pt": "pt", "int8": "int8"}, fake, 2, 5, 1, min_repeats=2, decided=decided, stopped=stopped
    )
    assert stopped == {"rounds": 2, "max_rounds": 5, "budget_s": None, "seconds": 21.5, "why": "decided"}
    assert rows["int8"]["passes"] == [3.0, 2.5] and rows["int8"]["seconds"] == 2.5


def test_rounds_stop_at_the_budget_or_run_them_all(fake: Path) -> None:
    _FakeWorker.table = {"pt": [8.0] * 4, "int8": [9.0, 7.0, 9.0, 7.0]}  # never clear of 1
    stopped: dict[str, Any] = {}
    speed.measure_models(
        {"pt": "pt", "int8": "int8"},
        fake,
        2,
        4,
        1,
        min_repeats=2,
        budget_s=40.0,
        decided=lambda p: speed.ratios_clear_of(p["int8"], p["pt"]),
        stopped=stopped,
    )
    assert (stopped["rounds"], stopped["why"]) == (3, "budget")
    _FakeWorker.clock[0] = 0.0
    speed.measure_models({"pt": "pt", "int8": "int8"}, fake, 2, 4, 1, stopped=stopped)
    assert (stopped["rounds"], stopped["why"]) == (4, "rounds")  # no min_repeats: every round, as before
