"""`llm select`: two scripted candidate LLMs with known error patterns are measured, judged crossover and
ranked correctly, with error tables, judge scores with intervals and runtime."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from skadapt.choose import Candidate, markdown, select
from skadapt.languages import get_language
from skadapt.llm.config import LLMConfig
from tests.support.llm_server import Reply, scripted_server, user_message
from tests.support.suite_fixtures import SENTENCES
from tests.support.synth_llm import GOOD as SYNTH_GOOD
from tests.test_robustness import script as careful_rewriter

SLOVAK = get_language("slk")
TEXTS = sorted({s for pair in SENTENCES for s in pair[:2]})[:12]
LONG_TEXTS = sorted({f"{a.rstrip('.')}, a tiež {b[0].lower()}{b[1:]}" for a, b, *_ in SENTENCES})
LONG_TEXTS = [text for text in LONG_TEXTS if len(text) >= 40][:8]
"""One sentence each, long enough for `llm select`'s sample (40-300 characters)."""
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
    texts.write_text("\n".join(LONG_TEXTS) + "\n", encoding="utf-8")
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
    assert saved["texts"] == len(LONG_TEXTS) and "best judge score" in saved["reason"]


def test_a_source_without_sentences_to_sample_is_an_error(tmp_path: Path) -> None:
    from skadapt.cli import app

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")  # every sentence under 40 characters
    candidates = _candidates_file(tmp_path, "{name: a, llm: {model: a}}", "{name: b, llm: {model: b}}")
    args = ["llm", "select", str(candidates), "--language", "slk", "--source", str(texts)]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "sel")], env={"COLUMNS": "300"})
    assert result.exit_code == 1
    assert f"--source {texts}: no sentence of 40-300 characters" in " ".join(result.output.split())
    assert not (tmp_path / "sel").exists()


# ------------------------------------------------------------------------ what the user is told when it fails


def _unrated(script: Callable[[dict, int], Reply]) -> Callable[[dict, int], Reply]:
    """The script, except that every judge request gets an answer that is no rating."""

    def answer(body: dict, count: int) -> Reply:
        if user_message(body).startswith("Rate how similar in meaning"):
            return Reply("I would rather not rate this.")
        return script(body, count)

    return answer


def test_without_any_judge_result_the_choice_says_so(tmp_path: Path) -> None:
    with scripted_server(_unrated(good)) as a, scripted_server(_unrated(sloppy)) as b:
        candidates = [
            _candidate("sloppy", b.url, tmp_path / "c"),
            _candidate("careful", a.url, tmp_path / "c"),
        ]
        report = select(candidates, TEXTS, ["paraphrase"], SLOVAK, seed=7, top_k=2, resamples=50)
    assert all(row["judge"]["mean"] is None and row["judge"]["unrated"] > 0 for row in report["ranking"])
    assert report["chosen"] == "careful"  # the lower total error rate
    text = markdown(report)
    assert "nan" not in report["reason"] and "nan" not in text
    assert "best judge score" not in report["reason"]
    assert "no judge result exists" in report["reason"] and "the lowest total error rate" in report["reason"]


def _candidates_file(tmp_path: Path, *entries: str) -> Path:
    path = tmp_path / "candidates.yaml"
    path.write_text("candidates:\n" + "".join(f"  - {entry}\n" for entry in entries), encoding="utf-8")
    return path


def _select(tmp_path: Path, candidates: Path) -> object:
    from skadapt.cli import app

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(LONG_TEXTS) + "\n", encoding="utf-8")
    args = ["llm", "select", str(candidates), "--language", "slk", "--source", str(texts)]
    args += ["--sts-sources", "0", "--transforms", "paraphrase", "--out", str(tmp_path / "sel")]
    return CliRunner().invoke(app, args, env={"COLUMNS": "300"})


def test_a_typo_in_the_candidates_file_lists_the_allowed_fields(tmp_path: Path) -> None:
    candidates = _candidates_file(
        tmp_path,
        "{nmae: a, llm: {model: a, base_url: 'http://127.0.0.1:9/v1'}}",
        "{name: b, llm: {modle: b}}",
    )
    result = _select(tmp_path, candidates)
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert f"{candidates}: invalid candidates" in text
    assert "candidates.0.nmae: unknown field; did you mean 'name'? Allowed: name, llm" in text
    assert "candidates.1.llm.modle: unknown field; did you mean 'model'? Allowed: backend, model," in text


def test_an_unreachable_candidate_is_named_with_its_field(tmp_path: Path) -> None:
    with scripted_server(good) as a:
        candidates = _candidates_file(
            tmp_path,
            f"{{name: careful, llm: {{model: careful, base_url: '{a.url}', cache: '{tmp_path / 'c'}'}}}}",
            "{name: gone, llm: {model: gone, base_url: 'http://127.0.0.1:9/v1', http_retries: 0}}",
        )
        result = _select(tmp_path, candidates)
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "candidate 'gone': cannot reach the LLM server at http://127.0.0.1:9/v1" in text
    assert f"start it or fix candidates[1].llm.base_url in {candidates}" in text
    assert "--llm-base-url" not in text and not (tmp_path / "sel").exists()


def test_an_existing_out_is_refused_before_any_request(tmp_path: Path) -> None:
    """``--out`` onto a non-empty directory is refused before the source is read or any candidate asked
    (it used to be refused after all the generation and judging)."""
    from skadapt.cli import app

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(LONG_TEXTS) + "\n", encoding="utf-8")
    (tmp_path / "sel").mkdir()
    (tmp_path / "sel" / "kept.md").write_text("a person's notes\n", encoding="utf-8")
    with scripted_server(good) as a, scripted_server(sloppy) as b:
        candidates = _candidates_file(
            tmp_path, f"{{name: a, llm: {{model: a, base_url: '{a.url}', cache: '{tmp_path / 'c'}'}}}}",
            f"{{name: b, llm: {{model: b, base_url: '{b.url}', cache: '{tmp_path / 'c'}'}}}}",
        )  # fmt: skip
        args = ["llm", "select", str(candidates), "--language", "slk", "--source", str(texts)]
        result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "sel")], env={"COLUMNS": "300"})
        asked = len(a.requests) + len(a.probes) + len(b.requests) + len(b.probes)
    assert result.exit_code == 1, result.output
    refused = f"{tmp_path / 'sel'} already exists and is not empty; choose another --out or pass --overwrite"
    assert refused in " ".join(result.output.split())
    assert asked == 0 and (tmp_path / "sel" / "kept.md").read_text() == "a person's notes\n"
