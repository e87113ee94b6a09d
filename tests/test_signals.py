"""Stop signals: Ctrl-C (SIGINT) and SIGTERM end a command the same way -- one line on the console and in
run.log saying where it stopped and what is kept, exit 130 / 143, a rerun that resumes -- even when a
library swallows the signal where it lands.

The moments: a real ``skadapt train`` (trim + finetune on a tiny model, 12 steps, a checkpoint every 4)
receives a real signal at a seeded random moment: a point the run announces (its first line, a stage
starting, a checkpoint saved) and a random delay after it, so that the moments fall in every part of the
run whatever the machine's load. An episode sends both signals, in a seeded order, each to a rerun of the
same command (which resumes the previous one), and then reruns it to the end. One episode by default (each
run is a process paying torch's import: the suite's time); ``SKADAPT_TEST_FAULTS=1`` runs 20 episodes, 20
moments per signal; ``SKADAPT_TEST_FAULT_MOMENTS=N`` runs N.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from skadapt.cli import app
from tests.support.finetune_recipe import tiny_recipe
from tests.support.tiny_models import FIXTURE_TEXTS

ROOT = Path(__file__).resolve().parents[1]
MOMENTS = int(
    os.environ.get("SKADAPT_TEST_FAULT_MOMENTS")
    or (20 if os.environ.get("SKADAPT_TEST_FAULTS") == "1" else 1)
)
"""Moments per signal (= episodes)."""
PROCESS_TIMEOUT_S = 300
STAGES = ("trim", "finetune")


@dataclass(frozen=True)
class Moment:
    """``delay`` seconds after ``marker`` shows (in ``source``: the console, or run.log)."""

    source: str
    marker: str
    delay: float

    def __str__(self) -> str:
        return f"{self.delay:.2f}s after {self.marker!r}"


def _moment(rng: random.Random, pending: list[str], checkpointed: bool) -> Moment:
    """A moment while the run still has work: before or in a pending stage, or after a checkpoint (when the
    run will save one: a resumed training saves no checkpoint it resumed from)."""
    choices = [Moment("console", "run ", rng.uniform(0, 0.3))]
    if "trim" in pending:
        choices.append(Moment("log", "stage trim: running", rng.uniform(0, 0.5)))
    if "finetune" in pending:
        choices.append(Moment("log", "stage finetune: running", rng.uniform(0, 0.3)))
        if not checkpointed:
            choices.append(Moment("log", "Saving model checkpoint to", rng.uniform(0, 0.1)))
    return rng.choice(choices)


@dataclass
class Run:
    """One ``skadapt train`` process: its exit code, its console (stderr) and what it added to run.log."""

    code: int
    console: str
    log: str

    def interrupted_line(self) -> str:
        lines = [line for line in self.console.splitlines() if line.startswith("interrupted by ")]
        assert len(lines) == 1, self.console[-3000:]
        return lines[0]


def _train(
    recipe: Path, run_dir: Path, env: dict[str, str], signum: int | None, moment: Moment | None
) -> Run:
    """Run ``skadapt train RECIPE --no-check``; send ``signum`` at ``moment``."""
    log = run_dir / "run.log"
    start = log.stat().st_size if log.is_file() else 0
    stderr = recipe.parent / "stderr.txt"
    with stderr.open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "skadapt", "train", str(recipe), "--no-check"],
            cwd=recipe.parent,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        try:
            if signum is not None and moment is not None:
                source = stderr if moment.source == "console" else log
                deadline = time.monotonic() + PROCESS_TIMEOUT_S
                while moment.marker not in _text(source, start if source == log else 0):
                    assert process.poll() is None, f"the run ended before {moment}"
                    assert time.monotonic() < deadline, f"no {moment.marker!r} in {source}"
                    time.sleep(0.02)
                time.sleep(moment.delay)
                assert process.poll() is None, f"the run ended before {moment}"
                process.send_signal(signum)
            try:
                code = process.wait(PROCESS_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
                process.wait(30)
                pytest.fail(f"the run hung after {moment}: {_text(stderr, 0)[-6000:]}")
        finally:
            if process.poll() is None:
                process.kill()
    return Run(code, stderr.read_text(encoding="utf-8", errors="replace"), _text(log, start))


def _text(path: Path, start: int) -> str:
    if not path.is_file():
        return ""
    with path.open("rb") as file:
        file.seek(start)
        return file.read().decode("utf-8", errors="replace")


def _kept(line: str, run_dir: Path) -> list[str]:
    """The finished stages an interrupted run's line says it keeps."""
    found = re.search(rf"finished stages kept in {re.escape(str(run_dir))}: ([^;]+);", line)
    assert found, line
    return [] if found[1] == "none" else found[1].split(", ")


def _checks_resume(run: Run, kept: list[str], checkpoint: str | None) -> None:
    """The rerun skipped the stages kept and, when it got to the training, resumed from the checkpoint
    named (a rerun stopped before that names the checkpoint again: see the test)."""
    for stage in kept:
        assert f"stage {stage}: up to date, skipped" in run.log, (stage, run.log[-3000:])
    if checkpoint is not None and (run.code == 0 or "finetune: resuming from" in run.log):
        assert f"finetune: resuming from {checkpoint}" in run.log, run.log[-3000:]
    resumed = f", resumed from {checkpoint}" if f"finetune: resuming from {checkpoint}" in run.log else ""
    print(f"  rerun (exit {run.code}): reused {', '.join(kept) or 'nothing'}{resumed}")


@pytest.fixture
def recipe(tmp_path: Path, tiny_models: dict[str, Path]) -> Path:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"text": t}) + "\n" for t in FIXTURE_TEXTS), encoding="utf-8")
    data = tiny_recipe(tiny_models["unigram"], tmp_path / "run", epochs=1)  # 12 steps, a checkpoint every 4
    data["trim"] = {"corpus": str(corpus), "vocab_size": 150, "workers": 1, "parity_documents": 5}
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SKADAPT_CACHE": str(tmp_path / "cache"),
        "SKADAPT_PROGRESS": "0",
        "OMP_NUM_THREADS": "1",
        "COLUMNS": "300",
        "PYTHONFAULTHANDLER": "1",
    }


@pytest.mark.slow
@pytest.mark.parametrize("episode", range(MOMENTS))
def test_each_signal_stops_the_run_where_it_is_and_a_rerun_resumes(
    episode: int, recipe: Path, tmp_path: Path
) -> None:
    """SIGINT and SIGTERM at seeded moments: exit 130 / 143, the line (console and run.log) naming where
    it stopped and what is kept, and a rerun of the same command that reuses it and finishes."""
    rng = random.Random(f"signals-{episode}")
    run_dir, env = tmp_path / "run", _env(tmp_path)
    signals = rng.sample([signal.SIGINT, signal.SIGTERM], 2)
    kept: list[str] = []
    checkpoint: str | None = None
    rerun = False  # whether the next run resumes an interrupted one
    for signum in signals:
        pending = [stage for stage in STAGES if not (run_dir / stage / "manifest.json").is_file()]
        if not pending:  # the previous signal came after the last stage: resume, then start afresh
            run = _train(recipe, run_dir, env, None, None)
            assert run.code == 0, run.console[-3000:]
            _checks_resume(run, kept, checkpoint)
            kept, checkpoint, pending, rerun = [], None, list(STAGES), False
            shutil.rmtree(run_dir)
        moment = _moment(rng, pending, checkpoint is not None)
        run = _train(recipe, run_dir, env, signum, moment)
        name = signal.Signals(signum).name
        assert run.code == 128 + signum, (name, str(moment), run.code, run.console[-3000:])
        line = run.interrupted_line()
        print(f"episode {episode}: {name} {moment}: exit {run.code}: {line}")
        assert line.startswith(f"interrupted by {name}")
        assert line.endswith("run the same command again to resume")
        assert "Traceback" not in run.console and "Exception ignored" not in run.console, run.console[-3000:]
        if line.startswith(f"interrupted by {name}: skadapt train stopped;"):  # before the run began (a slow
            continue  # start): nothing of it to keep or name; the stages and checkpoint named before stand
        assert line.startswith(f"interrupted by {name} ")
        assert line in run.log, (line, run.log[-3000:])
        if rerun:
            _checks_resume(run, kept, checkpoint)
        kept, rerun = _kept(line, run_dir), True
        assert all((run_dir / stage / "manifest.json").is_file() for stage in kept)
        during = re.search(r" during stage (\w+);", line)
        if during:
            assert during[1] not in kept and not (run_dir / during[1]).exists()
        resumes = re.search(r"finetune resumes from its checkpoint (\S+);", line)
        assert resumes or not (checkpoint and during and during[1] == "finetune"), line  # still there
        checkpoint = resumes[1] if resumes else None
        if checkpoint is not None:
            assert (Path(checkpoint) / "trainer_state.json").is_file()
    run = _train(recipe, run_dir, env, None, None)
    assert run.code == 0, run.console[-3000:]
    _checks_resume(run, kept, checkpoint)
    assert all((run_dir / stage / "manifest.json").is_file() for stage in STAGES)


def _child(trim: str) -> str:
    """A ``skadapt train`` process whose trim stage runs ``trim`` (the body of ``trim(ctx)``) and whose
    renorm stage records that it ran (in ``sys.argv[2]``)."""
    return textwrap.dedent(
        """
        import functools, gc, hashlib, operator, os, signal, sys, threading, time, weakref
        from dataclasses import replace
        from pathlib import Path

        from regex import _regex_core

        from skadapt import stages
        from skadapt.cli import app
        from skadapt.results import TrimSummary

        def trim(ctx):
        {trim}
            (ctx.out_dir / "trimmed").write_text("the stage ran to its end")
            return TrimSummary.of({{}})

        def renorm(ctx):
            Path(sys.argv[2]).write_text("renorm ran")
            return {{}}

        stages.BY_NAME["trim"] = replace(stages.BY_NAME["trim"], run=trim)
        stages.BY_NAME["renorm"] = replace(stages.BY_NAME["renorm"], run=renorm)
        app(["train", sys.argv[1], "--no-check"], prog_name="skadapt")
        """
    ).format(trim=textwrap.indent(textwrap.dedent(trim), "    "))


# A library the stop hits where it cannot pass it on: the run still stops before the next stage, and the
# process still exits. The signal is sent inside a real regex finaliser (regex's Group.__del__, the one
# that swallowed Ctrl-C during trim): a weakref's callback sends it as the garbage collector clears the
# weakrefs, from C (os.killpg, which, unlike os.kill, does not run the handler itself), so the handler
# runs in the first finaliser called next. The stage also leaves a thread waiting for good, as a thread
# pool's worker started just before a stop does: it would hold the interpreter's exit.
SWALLOWED = """
    class Sender(weakref.ref):
        send = staticmethod(functools.partial(os.killpg, 0, signal.SIGINT))

    class Anchor:
        pass

    gc.collect()
    gc.disable()
    anchor = Anchor()
    anchor.cycle = anchor
    for number in range(100):
        group = _regex_core.Group(None, number, None)
        group.cycle = group  # only the garbage collector frees it
    sender = Sender(anchor, operator.methodcaller("send"))
    del anchor, group
    gc.collect()  # the weakref callback sends the signal; Group.__del__ runs next
    gc.enable()
    threading.Thread(target=threading.Event().wait, name="left waiting").start()
"""
SWALLOWING_RUN = _child(SWALLOWED)
"""The child of the finaliser test (grace 1 s: many times what the run needs to say where it stopped)."""

# A library that takes every Ctrl-C and goes on: the second one ends the process at once.
SWALLOWED_TWICE = """
    threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()
    threading.Timer(0.6, os.kill, (os.getpid(), signal.SIGINT)).start()
    for _ in range(300):
        try:
            time.sleep(0.1)
        except BaseException:
            pass
"""

# SIGTERM while the main thread is in a long call in C (a tokenizer's batch, a collective waiting for a
# rank that is gone, here PBKDF2): Python cannot run the handler before the call returns.
HELD_IN_C = """
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM)).start()
    hashlib.pbkdf2_hmac("sha256", b"key", b"salt", 2**31 - 1)  # minutes in C, the GIL released
"""


def _two_stage_recipe(tmp_path: Path, model: Path) -> Path:
    data = {
        "name": "swallowed",
        "language": "slk",
        "base_model": str(model),
        "output_dir": str(tmp_path / "run"),
        "trim": {"corpus": "wordfreq:sk"},
        "renorm": {"corpus": "wordfreq:sk", "select": "method"},
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _run_child(
    tmp_path: Path, model: Path, child: str, *, grace: str | None = None, **popen: Any
) -> tuple[int, str, str]:
    """Run ``child`` (a :func:`_child` script) on the two-stage recipe: its exit code, console and run.log.
    ``grace``: ``SKADAPT_STOP_GRACE_S``; ``popen``: more options of :func:`subprocess.run`."""
    recipe = _two_stage_recipe(tmp_path, model)
    env = _env(tmp_path) if grace is None else {**_env(tmp_path), "SKADAPT_STOP_GRACE_S": grace}
    process = subprocess.run(
        [sys.executable, "-c", child, str(recipe), str(tmp_path / "renorm-ran")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        **popen,
    )
    return process.returncode, process.stderr, (tmp_path / "run" / "run.log").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_signal_a_library_swallows_or_hangs_on_still_stops_the_run(
    tmp_path: Path, tiny_models: dict[str, Path]
) -> None:
    """SIGINT inside regex's Group.__del__ (Python can only print it there): the stage goes on to its
    end, then the run stops, exit 130, before the next stage; the console and run.log say what happened;
    a thread the stage left waiting does not keep the process from exiting."""
    ran = tmp_path / "renorm-ran"
    code, console, log = _run_child(
        tmp_path,
        tiny_models["unigram"],
        SWALLOWING_RUN,
        grace="1",
        start_new_session=True,  # its own process group: the signal reaches it alone
    )
    swallowed = (
        "SIGINT reached regex._regex_core.Group.__del__, a finaliser, which cannot pass it on: the run stops "
        "when its current stage ends; press Ctrl-C again to stop at once"
    )
    line = f"interrupted by SIGINT after stage trim; finished stages kept in {tmp_path / 'run'}: trim;"
    assert code == 130, console
    assert swallowed in console and swallowed in log, console
    assert line in console and line in log, console
    assert "Exception ignored" not in console
    held = "interrupted by SIGINT: still running 1 s after it (held outside Python, or by a thread)"
    assert f"{held}, exiting at once" in console  # the thread left waiting held the exit
    assert (tmp_path / "run" / "trim" / "trimmed").is_file()
    assert not ran.exists() and not (tmp_path / "run" / "renorm").exists()


def test_a_stage_that_catches_the_stop_does_not_keep_the_run_going(
    tmp_path: Path, tiny_models: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real SIGINT (to this process, whose handlers the command owns while it runs) inside a stage that
    catches BaseException and goes on: the run stops after the stage, exit 130, before the next one."""
    from skadapt import stages
    from skadapt.results import TrimSummary

    def swallowing(ctx: Any) -> TrimSummary:
        with contextlib.suppress(BaseException):  # what a careless library does
            os.kill(os.getpid(), signal.SIGINT)
        return TrimSummary.of({})

    def renorm(ctx: Any) -> Any:
        raise AssertionError("the run went on after the stop")

    monkeypatch.setitem(stages.BY_NAME, "trim", replace(stages.BY_NAME["trim"], run=swallowing))
    monkeypatch.setitem(stages.BY_NAME, "renorm", replace(stages.BY_NAME["renorm"], run=renorm))
    result = CliRunner().invoke(
        app, ["train", str(_two_stage_recipe(tmp_path, tiny_models["unigram"])), "--no-check"]
    )
    line = f"interrupted by SIGINT after stage trim; finished stages kept in {tmp_path / 'run'}: trim;"
    assert result.exit_code == 130, result.output
    assert line in result.output and line in (tmp_path / "run" / "run.log").read_text(encoding="utf-8")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # given back after the command


@pytest.mark.parametrize("swallow", [False, True])
def test_a_stage_command_stops_the_same_way(
    tmp_path: Path, tiny_models: dict[str, Path], monkeypatch: pytest.MonkeyPatch, swallow: bool
) -> None:
    """``skadapt trim`` (a one-stage run through the pipeline) receiving SIGINT in its stage: exit 130 and
    one line: nothing was written to --out; or, when the stage swallowed it, the output is complete."""

    def trimmed(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except BaseException:
            if not swallow:
                raise
        return {}

    monkeypatch.setattr("skadapt.trim.stage.trim_model", trimmed)
    out = tmp_path / "out"
    args = ["trim", str(tiny_models["unigram"]), "--corpus", "wordfreq:sk", "--out", str(out)]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "300"})
    assert result.exit_code == 130, result.output
    if swallow:
        assert (
            f"interrupted by SIGINT after stage trim finished: its output {out} is complete" in result.output
        )
        assert out.is_dir()
    else:
        assert (
            f"interrupted by SIGINT during stage trim; nothing was written to {out}; trim had saved no "
            "checkpoint yet; run the same command again to resume"
        ) in " ".join(result.output.split())
        assert not out.exists()


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("SKADAPT_TEST_FAULTS") != "1", reason="one more process; SKADAPT_TEST_FAULTS=1 runs it"
)
def test_a_signal_while_held_in_c_still_ends_the_run(tmp_path: Path, tiny_models: dict[str, Path]) -> None:
    """SIGTERM while the stage is in a C call that does not return for minutes: the watchdog ends the run
    its grace after the signal, exit 143, with the line on the console and in run.log."""
    code, console, log = _run_child(tmp_path, tiny_models["unigram"], _child(HELD_IN_C), grace="0.5")
    line = (
        "interrupted by SIGTERM: still running 0.5 s after it (held outside Python, or by a thread), exiting "
        "at once; finished stages are kept: run the same command again to resume"
    )
    assert code == 143, console
    assert line in console and line in log, console
    assert not (tmp_path / "run" / "trim").exists()


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("SKADAPT_TEST_FAULTS") != "1", reason="one more process; SKADAPT_TEST_FAULTS=1 runs it"
)
def test_a_second_signal_while_stopping_exits_at_once(tmp_path: Path, tiny_models: dict[str, Path]) -> None:
    """Two SIGINTs into a stage that takes both and goes on: the second exits at once, 130, saying so on
    the console and in run.log; the stage is not taken for finished, the next stage never starts."""
    ran = tmp_path / "renorm-ran"
    code, console, log = _run_child(tmp_path, tiny_models["unigram"], _child(SWALLOWED_TWICE))
    line = (
        "interrupted by SIGINT: again while stopping, exiting at once; finished stages are kept: run the "
        "same command again to resume"
    )
    assert code == 130, console
    assert line in console and line in log, console
    assert "Exception ignored" not in console, console
    assert not (tmp_path / "run" / "trim").exists() and not ran.exists()
