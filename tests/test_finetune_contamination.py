"""Contamination check: exact/normalised overlap with local suite test texts, unreachable tasks, threshold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skadapt.train.contamination import ContaminationError, contamination_report, normalize


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


def test_normalize() -> None:
    assert normalize("  PETER, včera   kúpil — nové auto!! ") == "peter včera kúpil nové auto"


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


def test_unreachable_mteb_task_is_reported_not_raised() -> None:
    report = contamination_report(["Nejaká veta na tréning."], ["NoSuchTaskXYZ"], threshold=0.0, allow=False)
    assert report["status"] == "unreachable"
    assert "NoSuchTaskXYZ" in report["unreachable"]
