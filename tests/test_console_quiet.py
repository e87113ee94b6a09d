"""A quiet console: known-harmless third-party warnings and library progress bars go to the run's log
only, unless verbose (``SKADAPT_VERBOSE`` / ``--verbose``); skadapt's own warnings always show."""

from __future__ import annotations

import logging
import os
import warnings

import pytest

from skadapt import console as console_module
from skadapt.console import console_warnings, quiet_libraries, third_party_notice, verbose_console


def _record(name: str, message: str) -> logging.LogRecord:
    return logging.LogRecord(name, logging.WARNING, __file__, 1, message, None, None)


def test_known_harmless_notices_are_third_party_only() -> None:
    assert third_party_notice(_record("py.warnings", "x.py:1: TracerWarning: Converting a tensor"))
    assert third_party_notice(_record("transformers.training_args", "`warmup_ratio` is deprecated"))
    assert third_party_notice(_record("root", "Please consider pre-processing before quantization."))
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
    with console_warnings(verbose=True):  # (transformers' own records reach stderr through its handler)
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
    with quiet_libraries(verbose=True):
        assert "TQDM_DISABLE" not in os.environ


def test_verbose_from_the_flag_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKADAPT_VERBOSE", raising=False)
    assert not verbose_console() and verbose_console(True)
    monkeypatch.setenv("SKADAPT_VERBOSE", "1")
    assert verbose_console()
    monkeypatch.setenv("SKADAPT_VERBOSE", "0")
    assert not verbose_console()


def test_train_has_a_verbose_flag() -> None:
    from typer.testing import CliRunner

    from skadapt.cli import app

    result = CliRunner().invoke(app, ["train", "--help"], env={"COLUMNS": "200"})
    assert "--verbose" in result.output
