"""`llm select`: two scripted candidate LLMs with known error patterns are measured, judged crossover and
ranked correctly, with error tables, judge scores with intervals and runtime."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from skadapt.choose import Candidate, markdown, select
from skadapt.languages import get_language
from skadapt.llm.config import LLMConfig
from tests.llm_server import Reply, scripted_server, user_message
from tests.suite_fixtures import SENTENCES
from tests.test_robustness import script as careful_rewriter
from tests.test_synth_sts import GOOD as SYNTH_GOOD

SLOVAK = get_language("slk")
TEXTS = sorted({s for pair in SENTENCES for s in pair[:2]})[:12]
GOOD_MARK = "Tak to hovoria správy."


def _judge(prompt: str) -> Reply | None:
    """Both candidates judge alike: a rewrite that kept the text (the careful rewriter's mark) is 4.5,
    anything else 1."""
    if not prompt.startswith("Rate how similar in meaning"):
        return None
    rewrite = re.search(r"<text_b>\n(.*)\n</text_b>", prompt, re.S)
    return Reply(json.dumps({"score": 4.5 if rewrite and GOOD_MARK in rewrite.group(1) else 1.0}))


def good(body: dict, count: int) -> Reply:
    prompt = user_message(body)
    if "Text: " not in prompt and _judge(prompt) is None:  # a synthetic-STS request: six good variants
        return Reply(SYNTH_GOOD)
    return _judge(prompt) or careful_rewriter(body, count)


def sloppy(body: dict, count: int) -> Reply:
    """A third of the texts answered in English (wrong_language), a third returned unchanged (identical), a
    third turned into another Slovak sentence (passes the checks; the judges rate it 1)."""
    prompt = user_message(body)
    judged = _judge(prompt)
    if judged is not None:
        return judged
    if "Text: " not in prompt:  # a synthetic-STS request: JSON cut off
        return Reply('{"0": {"sentence": "Archeológovia')
    text = prompt.rsplit("Text: ", 1)[1]
    kind = sum(map(ord, text)) % 3
    if kind == 0:
        return Reply("The weather was nice and we went for a walk.")
    return Reply(text if kind == 1 else "Včera večer sme sa dlho rozprávali o počasí na horách.")


def _candidate(name: str, url: str, cache: Path) -> Candidate:
    return Candidate(name=name, llm=LLMConfig(backend="openai", model=name, base_url=url, cache=str(cache)))


def test_select_ranks_by_errors_then_crossover_judge(tmp_path: Path) -> None:
    with scripted_server(good) as a, scripted_server(sloppy) as b:
        candidates = [
            _candidate("sloppy", b.url, tmp_path / "c"),
            _candidate("careful", a.url, tmp_path / "c"),
        ]
        report = select(
            candidates, TEXTS, ["paraphrase"], SLOVAK, seed=7, sts_sources=4, top_k=2, resamples=200
        )
    ranking = {row["name"]: row for row in report["ranking"]}
    assert report["chosen"] == "careful" and [r["name"] for r in report["ranking"]] == ["careful", "sloppy"]
    careful, sloppy_row = ranking["careful"], ranking["sloppy"]
    assert careful["total_error_rate"] < sloppy_row["total_error_rate"]
    assert {"wrong_language", "identical"} <= set(sloppy_row["per_task"]["paraphrase"]["checks"])
    assert careful["per_task"]["synthetic_sts"]["items"] == 4  # synthetic STS measured on the same sample
    assert sloppy_row["per_task"]["synthetic_sts"]["total_error_rate"] == 1.0
    assert careful["per_task"]["synthetic_sts"]["total_error_rate"] < 1.0
    # crossover: each judged only by the other
    assert careful["judge"]["judges"] == ["sloppy"] and sloppy_row["judge"]["judges"] == ["careful"]
    assert careful["judge"]["mean"] == 4.5 and careful["judge"]["ci"] == [4.5, 4.5]
    assert sloppy_row["judge"]["mean"] < careful["judge"]["mean"]
    assert careful["seconds"] > 0 and careful["requests"] > 0
    text = markdown(report)
    assert "**Chosen: careful**" in text and "wrong_language" in text and "[95% CI]" in text


def test_cli_writes_the_report(tmp_path: Path) -> None:
    from skadapt.cli import app

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    with scripted_server(good) as a, scripted_server(sloppy) as b:
        cache = tmp_path / "c"
        (tmp_path / "candidates.yaml").write_text(
            "candidates:\n"
            f"  - {{name: careful, llm: {{model: careful, base_url: '{a.url}', cache: '{cache}'}}}}\n"
            f"  - {{name: sloppy, llm: {{model: sloppy, base_url: '{b.url}', cache: '{cache}'}}}}\n",
            encoding="utf-8",
        )
        args = [
            "llm",
            "select",
            str(tmp_path / "candidates.yaml"),
            "--language",
            "slk",
            "--source",
            str(texts),
            "--sts-sources",
            "0",
        ]
        result = CliRunner().invoke(
            app, [*args, "--transforms", "paraphrase", "--out", str(tmp_path / "sel")]
        )
    assert result.exit_code == 0, result.output
    assert "Chosen: careful" in result.output
    saved = json.loads((tmp_path / "sel" / "llm_select.json").read_text())
    assert saved["chosen"] == "careful" and (tmp_path / "sel" / "llm_select.md").is_file()
