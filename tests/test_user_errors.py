"""Users see what happens: progress with throughput, warnings on the console while a run goes, and one
clear message (stage, input, original error, what to do) when a stage fails, with no partial artifact."""

from __future__ import annotations

import errno
import functools
import io
import logging
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

import skadapt.api
from skadapt.artifacts import read_manifest
from skadapt.cli import app
from skadapt.errors import LOG_ONLY, SkadaptError, StageFailedError
from skadapt.pipeline import run_recipe
from skadapt.recipe import validate_recipe
from skadapt.stage import StageContext
from tests.support.tiny_models import FIXTURE_TEXTS

runner = CliRunner()


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "cache"))
    for name in ("SKADAPT_PROGRESS", "SKADAPT_DEBUG", "TTY_COMPATIBLE", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def captured_console(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """The stderr console replaced by a wide, non-terminal console writing into a buffer."""
    buffer = io.StringIO()
    monkeypatch.setattr("skadapt.console.console", Console(file=buffer, width=200))
    return buffer


def _flat(text: str) -> str:
    return " ".join(text.split())


# ------------------------------------------------------------------------------------------------ progress


def test_parity_check_shows_progress_with_throughput(
    tiny_models: dict[str, Path], captured_console: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skadapt.trim.parity import check_parity

    model = tiny_models["unigram"]
    quiet = check_parity(model, model, FIXTURE_TEXTS)  # not a terminal: no progress
    assert captured_console.getvalue() == ""
    monkeypatch.setenv("SKADAPT_PROGRESS", "1")
    shown = check_parity(model, model, FIXTURE_TEXTS, batch_size=4)
    text = _flat(captured_console.getvalue())
    n = len(FIXTURE_TEXTS)
    assert "parity check: original model" in text and "parity check: trimmed model" in text
    assert text.count(f"{n}/{n} texts") == 2  # every batch of both models was counted
    assert "texts/s" in text
    assert shown.summary() == quiet.summary()  # progress does not change the embeddings


def test_evaluation_shows_progress_per_model_with_throughput(
    tiny_models: dict[str, Path],
    captured_console: io.StringIO,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from skadapt.tasks.runner import evaluate_model
    from skadapt.tasks.selection import select_tasks
    from tests.support.suite_fixtures import SENTENCES, write_tiny_suite

    suite = write_tiny_suite(tmp_path / "suite")
    tasks = [t for t in select_tasks([str(suite)], language="slk") if t.metadata.type == "STS"]
    monkeypatch.setenv("SKADAPT_PROGRESS", "1")
    evaluate_model(str(tiny_models["wordpiece"]), "tiny", tasks, cache_dir=None)
    text = _flat(captured_console.getvalue())
    assert "evaluated tiny" in text and "1/1 tasks" in text
    assert f"{2 * len(SENTENCES)} texts" in text and "texts/s" in text


def _trim_recipe(tmp_path: Path, model: Path, *, vocab_size: int) -> Path:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(FIXTURE_TEXTS[:3]) + "\n", encoding="utf-8")
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        f"name: tiny\nlanguage: slk\nbase_model: {model}\noutput_dir: {tmp_path / 'run'}\n"
        f"trim: {{corpus: {corpus}, vocab_size: {vocab_size}, workers: 1}}\n",
        encoding="utf-8",
    )
    return recipe


def test_train_shows_progress_and_warnings_on_a_terminal(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    """A real trim whose vocab_size exceeds what the corpus supports: it warns, and parity shows progress."""
    recipe = _trim_recipe(tmp_path, tiny_models["wordpiece"], vocab_size=250)
    result = runner.invoke(
        app, ["train", str(recipe), "--no-check"], env={"TTY_COMPATIBLE": "1", "COLUMNS": "200"}
    )  # stubbed stages over made-up inputs: no preflight
    assert result.exit_code == 0, result.output
    text = _flat(result.stderr)
    assert "parity check: original model" in text and "parity check: trimmed model" in text
    assert "texts/s" in text
    assert text.count("the corpus supports only") == 1
    assert "warning:" in text


def test_train_off_a_terminal_is_quiet_but_warns_once(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    recipe = _trim_recipe(tmp_path, tiny_models["wordpiece"], vocab_size=250)
    result = runner.invoke(app, ["train", str(recipe), "--no-check"])
    assert result.exit_code == 0, result.output
    text = _flat(result.stderr)
    assert "parity check" not in text  # no progress bars in logs and pipes
    assert text.count("warning: the corpus supports only") == 1  # on the console, while the run goes
    log = (tmp_path / "run" / "run.log").read_text()
    assert "WARNING skadapt.trim: the corpus supports only" in log  # and still in run.log


# ------------------------------------------------------------------------------------------------ warnings


def _recipe_file(tmp_path: Path) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(
        "name: demo\nlanguage: slk\nbase_model: base-model-id\n"
        f"output_dir: {tmp_path / 'run'}\n"
        "trim: {corpus: corpus.txt, vocab_size: 100}\n"
        "finetune: {datasets: [{name: qa, kind: pairs, source: qa.jsonl}]}\n",
        encoding="utf-8",
    )
    return path


def _ok(ctx: StageContext) -> dict:
    (ctx.out_dir / "artifact.txt").write_text(f"{ctx.stage} from {ctx.input_model}")
    return {}


def _train_with(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **runners: object):
    """``skadapt train`` on a two-stage recipe whose stage runners are given (run_recipe's runners= hook)."""
    stages = {"trim": _ok, "finetune": _ok, **runners}
    monkeypatch.setattr(skadapt.api, "run_stages", functools.partial(run_recipe, runners=stages))
    return runner.invoke(app, ["train", str(_recipe_file(tmp_path)), "--no-check"])  # stubbed stages


def test_stage_warnings_reach_the_console_once_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def noisy(ctx: StageContext) -> dict:
        log = logging.getLogger("skadapt.trim")
        for _ in range(3):
            log.warning("only %d sentences in the corpus", 7)
        log.info("an info line stays in run.log")
        log.warning("a traceback for run.log only", extra=LOG_ONLY)
        for _ in range(2):
            warnings.warn("a library is unhappy about padding", UserWarning, stacklevel=1)
        return _ok(ctx)

    showwarning = warnings.showwarning
    result = _train_with(monkeypatch, tmp_path, trim=noisy)
    assert result.exit_code == 0, result.output
    text = _flat(result.stderr)
    assert text.count("warning: only 7 sentences in the corpus") == 1
    assert text.count("a library is unhappy about padding") == 1
    assert "UserWarning" in text
    assert "an info line" not in text and "run.log only" not in text
    log = (tmp_path / "run" / "run.log").read_text()
    assert "only 7 sentences" in log and "an info line stays in run.log" in log
    assert "a library is unhappy about padding" in log  # python warnings are logged too
    assert warnings.showwarning is showwarning  # capture undone after the run
    assert not [h for h in logging.getLogger().handlers if type(h).__name__ == "ConsoleWarnings"]


# -------------------------------------------------------------------------------------------------- errors


def _httpx():
    """The httpx flavour huggingface_hub uses (httpx2 for huggingface_hub 2.x, httpx for 1.x)."""
    for name in ("httpx2", "httpx"):
        try:
            return __import__(name)
        except ImportError:
            continue
    pytest.skip("neither httpx2 nor httpx is installed")


def _requests_error() -> Exception:
    requests = pytest.importorskip("requests")
    return requests.exceptions.ConnectionError("Max retries exceeded")


def _hub_offline() -> Exception:
    from huggingface_hub.errors import OfflineModeIsEnabled

    return OfflineModeIsEnabled("HF_HUB_OFFLINE is set")


def _hub_not_found() -> Exception:
    from huggingface_hub.errors import RepositoryNotFoundError

    httpx = _httpx()
    response = httpx.Response(404, request=httpx.Request("GET", "https://huggingface.co/api/models/x/y"))
    return RepositoryNotFoundError("404 Repository Not Found for url", response=response)


def _chained() -> Exception:
    try:
        raise ConnectionError("Connection reset by peer")
    except ConnectionError as cause:
        error = ValueError("could not fetch the dataset")
        error.__cause__ = cause
        return error


ERRORS = [  # (id, make the error, parts of the message)
    ("ValueError", lambda: ValueError("bad thing"), ["ValueError: bad thing"]),
    ("KeyError", lambda: KeyError("text"), ["KeyError: 'text'"]),
    ("RuntimeError", lambda: RuntimeError("shape mismatch"), ["RuntimeError: shape mismatch"]),
    (
        "ENOSPC",
        lambda: OSError(errno.ENOSPC, "No space left on device"),
        ["disk full while writing", "No space left on device", "free space or point output_dir elsewhere"],
    ),
    (
        "permission",
        lambda: PermissionError(errno.EACCES, "Permission denied", "/data/runs/x"),
        ["permission denied on /data/runs/x", "PermissionError"],
    ),
    ("ConnectionError", lambda: ConnectionError("Connection refused"), ["network error", "ConnectionError"]),
    (
        "ENETUNREACH",
        lambda: OSError(errno.ENETUNREACH, "Network is unreachable"),
        ["network error", "unreachable"],
    ),
    ("ECONNREFUSED", lambda: OSError(errno.ECONNREFUSED, "Connection refused"), ["network error", "refused"]),
    ("requests", _requests_error, ["network error", "Max retries exceeded"]),
    ("httpx", lambda: _httpx().ConnectError("All connection attempts failed"), ["network error"]),
    ("hub-offline", _hub_offline, ["network error", "HF_HUB_OFFLINE"]),
    ("hub-404", _hub_not_found, ["the server refused the request", "HF_TOKEN"]),
    ("chained", _chained, ["network error", "could not fetch the dataset", "reset by peer"]),
]


@pytest.mark.parametrize(("make", "expected"), [pytest.param(m, e, id=i) for i, m, e in ERRORS])
def test_failing_stage_is_one_message_naming_stage_and_input(
    make: Callable[[], Exception], expected: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    error = make()

    def broken(ctx: StageContext) -> dict:
        (ctx.out_dir / "model.safetensors").write_bytes(b"half written")
        raise error

    result = _train_with(monkeypatch, tmp_path, finetune=broken)
    assert result.exit_code == 1, result.output
    text = _flat(result.output)
    assert text.count("error:") == 1, text
    run = tmp_path / "run"
    assert f"stage finetune failed (input model {run / 'trim'}; datasets[0].source: qa.jsonl)" in text
    for part in expected:
        assert part in text, (part, text)
    assert f"the traceback is in {run / 'run.log'}" in text
    assert "Traceback" not in result.output
    assert not (run / "finetune").exists()  # no partial artifact
    assert not [p for p in run.iterdir() if ".tmp-" in p.name]
    assert read_manifest(run / "trim") is not None  # the finished stage stays
    log = (run / "run.log").read_text()
    assert "Traceback" in log and "stage finetune failed" in log  # nothing lost for debugging


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="needs /dev/full (the device)")
def test_full_disk_is_one_message_even_when_run_log_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes to /dev/full fail with ENOSPC: the stage's output and run.log itself."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.log").symlink_to("/dev/full")

    def writes(ctx: StageContext) -> dict:
        (ctx.out_dir / "model.safetensors").write_bytes(b"half written")
        with open("/dev/full", "w") as full:
            full.write("weights")
        return {}

    result = _train_with(monkeypatch, tmp_path, trim=writes)
    assert result.exit_code == 1, result.output
    text = _flat(result.output)
    assert text.count("error:") == 1, text
    assert "Traceback" not in result.output and "Logging error" not in result.output
    stage = "stage trim failed (input model base-model-id; corpus: corpus.txt)"
    assert f"{stage}: disk full while writing {run / 'trim'}" in text
    assert not (run / "trim").exists() and not [p for p in run.iterdir() if ".tmp-" in p.name]


def test_pipeline_wraps_library_errors_and_passes_its_own_through(tmp_path: Path) -> None:
    recipe = validate_recipe(
        {
            "name": "demo",
            "language": "slk",
            "base_model": "base-model-id",
            "output_dir": str(tmp_path / "run"),
            "trim": {"corpus": "corpus.txt", "extra_corpus": "wordfreq:en"},
        }
    )
    original = ValueError("bad thing")

    def raising(error: BaseException):
        def run(ctx: StageContext) -> dict:
            raise error

        return {"trim": run}

    with pytest.raises(StageFailedError) as caught:
        run_recipe(recipe, runners=raising(original))
    failure = caught.value
    assert isinstance(failure, ValueError) and isinstance(failure, SkadaptError)  # `except ValueError` works
    assert failure.stage == "trim" and failure.cause is original and failure.__cause__ is original
    assert str(failure).startswith(
        "stage trim failed (input model base-model-id; corpus: corpus.txt; extra_corpus: wordfreq:en): "
        "ValueError: bad thing"
    )

    disk = OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(OSError) as caught_os:
        run_recipe(recipe, runners=raising(disk))
    assert caught_os.value.errno == errno.ENOSPC and isinstance(caught_os.value, StageFailedError)

    own = SkadaptError("trim.corpus: cannot read it")
    with pytest.raises(SkadaptError) as caught_own:
        run_recipe(recipe, runners=raising(own))
    assert caught_own.value is own  # skadapt's own errors already say what to do

    interrupt = KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt) as caught_interrupt:
        run_recipe(recipe, runners=raising(interrupt))
    assert caught_interrupt.value is interrupt
    assert not (tmp_path / "run" / "trim").exists()


def test_standalone_command_disk_full_is_one_message(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*args: object, **kwargs: object) -> dict:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("skadapt.trim.stage.trim_model", full)  # what the stage runs
    out = tmp_path / "out"
    model = tiny_models["unigram"]
    result = runner.invoke(app, ["trim", str(model), "--corpus", "c.txt", "--out", str(out)])
    assert result.exit_code == 1, result.output
    text = _flat(result.output)
    assert text.count("error:") == 1 and "Traceback" not in result.output
    assert f"skadapt trim failed (model {model}; corpus c.txt)" in text
    assert f"disk full while writing {out}" in text and "point --out elsewhere" in text
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]


@pytest.mark.skipif(not Path("/dev/full").is_char_device(), reason="needs /dev/full (the device)")
def test_a_full_disk_in_a_rust_library_is_named_as_one(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A library written in Rust (tokenizers, safetensors) reports a full disk in its own error type whose
    message ends "(os error 28)": the command names it as a full disk, with its --out, as an OSError."""
    from tokenizers import Tokenizer

    model = tiny_models["unigram"]

    def saves(*args: object, **kwargs: object) -> dict:
        Tokenizer.from_file(str(model / "tokenizer.json")).save("/dev/full")  # a real ENOSPC
        return {}

    monkeypatch.setattr("skadapt.trim.stage.trim_model", saves)  # what the stage runs
    out = tmp_path / "out"
    result = runner.invoke(app, ["trim", str(model), "--corpus", "c.txt", "--out", str(out)])
    assert result.exit_code == 1, result.output
    text = _flat(result.output)
    assert text.count("error:") == 1 and "Traceback" not in result.output
    assert (
        f"disk full while writing {out} (Exception: No space left on device (os error 28)): free space or "
        "point --out elsewhere"
    ) in text
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


def test_standalone_command_library_error_is_one_message_unless_debugging(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> dict:
        raise ValueError("bad thing")

    monkeypatch.setattr("skadapt.trim.stage.trim_model", broken)
    args = ["trim", str(tiny_models["unigram"]), "--corpus", "c.txt", "--out", str(tmp_path / "out")]
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    text = _flat(result.output)
    assert text.count("error:") == 1 and "ValueError: bad thing" in text and "SKADAPT_DEBUG=1" in text
    debug = runner.invoke(app, args, env={"SKADAPT_DEBUG": "1"})
    assert isinstance(debug.exception, ValueError)  # the traceback, for a bug report


def test_standalone_evaluate_network_error_is_one_message(
    tiny_models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    httpx = _httpx()

    def offline(*args: object, **kwargs: object) -> None:
        raise httpx.ConnectError("[Errno 101] Network is unreachable")

    monkeypatch.setattr("skadapt.evaluate.stage.run_evaluation", offline)
    result = runner.invoke(app, ["evaluate", str(tiny_models["unigram"]), "--tasks", "SlovakSTS"])
    assert result.exit_code == 1, result.output
    text = _flat(result.output)
    assert text.count("error:") == 1 and "Traceback" not in result.output
    assert "skadapt evaluate failed" in text and "tasks SlovakSTS" in text
    assert "network error (ConnectError: [Errno 101] Network is unreachable)" in text
