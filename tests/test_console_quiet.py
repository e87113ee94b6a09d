"""A quiet console: known-harmless third-party warnings and library progress bars go to the run's log
only, unless verbose (``SKADAPT_VERBOSE`` / ``--verbose``); skadapt's own warnings always show."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import yaml

from skadapt import console as console_module
from skadapt.console import console_warnings, quiet_libraries, third_party_notice, verbose_console
from tests.support.console_lines import LOSS_DICT, TQDM_BAR, library_lines

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "sk_corpus.txt"


def _record(name: str, message: str) -> logging.LogRecord:
    return logging.LogRecord(name, logging.WARNING, __file__, 1, message, None, None)


def test_known_harmless_notices_are_third_party_only() -> None:
    assert third_party_notice(_record("py.warnings", "x.py:1: TracerWarning: Converting a tensor"))
    assert third_party_notice(_record("transformers.training_args", "`warmup_ratio` is deprecated"))
    assert third_party_notice(_record("root", "Please consider pre-processing before quantization."))
    ordering = "mtime may not be reliable on this filesystem, falling back to numerical ordering"
    assert third_party_notice(_record("transformers.trainer_utils", ordering))
    assert not third_party_notice(_record("skadapt.export", "TracerWarning in our own words"))
    assert not third_party_notice(_record("py.warnings", "x.py:1: UserWarning: something new"))


def test_the_console_drops_them_unless_verbose(monkeypatch: pytest.MonkeyPatch) -> None:
    printed: list[str] = []
    monkeypatch.setattr(console_module.console, "print", lambda text, **_: printed.append(str(text)))
    log = logging.getLogger("transformers.quiet_test")
    with console_warnings(verbose=False):
        warnings.warn("Exporting aten::index operator of advanced indexing", UserWarning, stacklevel=1)
        log.warning("The tokenizer has new PAD/BOS/EOS tokens that differ from the model config")
        logging.getLogger("skadapt.test").warning("a skadapt warning")
        log.warning("an unknown library warning")
    assert printed == [
        "[yellow]warning:[/] a skadapt warning",
        "[yellow]warning:[/] an unknown library warning",
    ]
    printed.clear()
    with console_warnings(verbose=True):
        logging.getLogger("some_library").warning(
            "The tokenizer has new PAD/BOS/EOS tokens that differ from the model config"
        )
    assert printed == [
        "[yellow]warning:[/] The tokenizer has new PAD/BOS/EOS tokens that differ from the model config"
    ]


def test_library_progress_bars_are_off_inside_and_restored_after(monkeypatch: pytest.MonkeyPatch) -> None:
    from transformers.utils import logging as hf_logging

    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    before = logging.getLogger("sentence_transformers").level
    with quiet_libraries(verbose=False):
        from huggingface_hub.utils import are_progress_bars_disabled

        assert os.environ["TQDM_DISABLE"] == "1" and are_progress_bars_disabled()
        assert not hf_logging.is_progress_bar_enabled()
        assert logging.getLogger("transformers").propagate  # into run.log, not straight onto stderr
        assert logging.getLogger("sentence_transformers").level == logging.WARNING
        from tqdm.auto import tqdm

        assert tqdm(range(2), desc="Encoding tokens").disable  # a library bar that does not say
        assert not tqdm(range(2), disable=False).disable  # one that does
    assert "TQDM_DISABLE" not in os.environ and hf_logging.is_progress_bar_enabled()
    assert not tqdm(range(2), file=open(os.devnull, "w")).disable  # noqa: SIM115
    assert logging.getLogger("sentence_transformers").level == before
    with quiet_libraries(verbose=True):  # the bars stay, transformers' records reach run.log all the same
        assert "TQDM_DISABLE" not in os.environ and hf_logging.is_progress_bar_enabled()
        assert logging.getLogger("transformers").propagate
    assert not logging.getLogger("transformers").propagate


def test_verbose_from_the_flag_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKADAPT_VERBOSE", raising=False)
    assert not verbose_console() and verbose_console(True)
    monkeypatch.setenv("SKADAPT_VERBOSE", "1")
    assert verbose_console()
    monkeypatch.setenv("SKADAPT_VERBOSE", "0")
    assert not verbose_console()


def _train(recipe: Path, run_dir: Path, tmp_path: Path, *flags: str) -> tuple[str, str]:
    """``skadapt train RECIPE`` into ``run_dir`` with skadapt's bars on: its console (stdout and stderr
    together) and its run.log."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SKADAPT_CACHE": str(tmp_path / "cache"),
        "SKADAPT_PROGRESS": "1",
        "OMP_NUM_THREADS": "1",
        "COLUMNS": "200",
    }
    for name in ("SKADAPT_VERBOSE", "TQDM_DISABLE"):
        env.pop(name, None)
    command = [sys.executable, "-m", "skadapt", "train", str(recipe), "--no-check"]
    process = subprocess.run(
        [*command, "--set", f"output_dir={run_dir}", *flags],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
    )
    assert process.returncode == 0, process.stdout[-4000:]
    return process.stdout, (run_dir / "run.log").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_real_run_shows_skadapt_lines_only_unless_verbose(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    """A short real run (fine-tuning with an anchor and the plain arm, renorm, evaluate): the console has
    skadapt's stage lines, bars (a training's with its loss), warnings and table, and no tqdm bar, loss
    dict or known-harmless third-party warning; run.log has the losses and those warnings. ``--verbose``
    puts the library's output on the console too."""
    from tests.support.finetune_recipe import tiny_recipe
    from tests.support.suite_fixtures import write_tiny_suite

    data = tiny_recipe(
        tiny_models["unigram"],
        tmp_path / "run",
        max_steps=4,
        save_steps=2,
        plain_arm=True,
        anchor={"corpus": str(CORPUS), "samples": 20, "min_chars": 10},
    )
    data["renorm"] = {"corpus": str(CORPUS), "samples": 40}
    suite = write_tiny_suite(tmp_path / "suite")
    data["evaluate"] = {"tasks": [str(suite)], "models": ["base", "finetune"], "bootstrap": 20}
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(data), encoding="utf-8")

    console, log = _train(recipe, tmp_path / "quiet", tmp_path)
    assert library_lines(console) == [] and "Batches" not in console, console
    assert "PAD/BOS/EOS" in log  # transformers' tokenizer notice
    for stage in ("finetune", "renorm", "evaluate"):
        assert f"stage {stage}: done" in console, console
    assert re.search(r"finetune: loss [\d.e+-]+ .* 4/4 steps", console), console  # the training's bar
    assert "finetune: plain arm" in console and "finetune: anchor targets" in console, console
    assert re.search(r"finetune: step 4: loss [\d.e+-]+, grad_norm", log), log[-3000:]
    assert "finetune: plain arm: step 4: train_runtime" in log, log[-3000:]
    logged = {
        line.split(": ", 1)[1] for line in log.splitlines() if re.match(r"\S+ \S+ WARNING skadapt", line)
    }
    for line in console.splitlines():  # every warning on the console is skadapt's own
        if line.startswith("warning: "):
            assert line.removeprefix("warning: ") in logged, (line, logged)

    console, log = _train(recipe, tmp_path / "verbose", tmp_path, "--verbose")
    shown = library_lines(console)
    assert any(LOSS_DICT.search(line) for line in shown), console
    assert any("PAD/BOS/EOS" in line for line in shown), console
    batches = [line for line in shown if TQDM_BAR.search(line) and "Batches" in line]
    assert batches, console  # sentence-transformers' own bar
    assert "PAD/BOS/EOS" in log


def test_train_has_a_verbose_flag() -> None:
    from typer.testing import CliRunner

    from skadapt.cli import app

    result = CliRunner().invoke(app, ["train", "--help"], env={"COLUMNS": "200"})
    assert "--verbose" in result.output
