"""A run owns its output directory: a second run on it is refused at once (real processes, real signals),
a lock left by a killed run is taken over, and an output directory that is a file, lies under a file or is
read-only is named in one line by the preflight and by the run."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skadapt.cli import app
from tests.support.tiny_models import FIXTURE_TEXTS

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]
WAIT_S = 120.0
"""Longest wait for a child to reach a point of its run (it imports torch first)."""


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def project(tmp_path: Path, tiny_models: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    """A corpus and a one-stage (trim) recipe of the tiny model into ``run``, in ``tmp_path``."""
    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "cache"))
    (tmp_path / "corpus.txt").write_text("\n".join(FIXTURE_TEXTS) + "\n", encoding="utf-8")
    (tmp_path / "recipe.yaml").write_text(
        f"name: tiny\nlanguage: slk\nbase_model: {tiny_models['unigram']}\noutput_dir: {tmp_path / 'run'}\n"
        f"trim: {{corpus: {tmp_path / 'corpus.txt'}, vocab_size: 150, workers: 1, parity_documents: 4}}\n",
        encoding="utf-8",
    )
    return tmp_path


def _skadapt(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", "SKADAPT_PROGRESS": "0"}
    return subprocess.Popen(
        [sys.executable, "-m", "skadapt", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen[str]]]:
    """Child processes, killed if the test leaves them running (a stopped one is continued first)."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for child in started:
        if child.poll() is None:
            child.send_signal(signal.SIGCONT)
            child.kill()
            child.wait()


def _wait_until(child: subprocess.Popen[str], reached: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not reached():
        assert child.poll() is None, f"the child ended first:\n{child.communicate()[0]}"
        assert time.monotonic() < deadline, "the child did not get there in time"
        time.sleep(0.05)


@pytest.mark.slow
def test_a_second_run_is_refused_at_once_and_the_first_finishes(
    project: Path, children: list[subprocess.Popen[str]]
) -> None:
    """Two `skadapt train` on one output_dir: the second, started while the first is in its trim stage
    (stopped there by SIGSTOP, so the timing is certain), exits 1 at once naming the first's pid and start;
    a preflight (`--check`) takes no lock; the first, continued, finishes."""
    run = project / "run"
    first = _skadapt(["train", "recipe.yaml", "--no-check"], project)
    children.append(first)
    _wait_until(first, lambda: (run / ".work").is_dir())  # its trim stage has started: it holds the run
    first.send_signal(signal.SIGSTOP)
    start = time.monotonic()
    second = subprocess.run(
        [sys.executable, "-m", "skadapt", "train", "recipe.yaml", "--no-check"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    refused_in = time.monotonic() - start
    text = _flat(second.stdout + second.stderr)
    assert second.returncode == 1, text
    assert "stage trim: running" not in text  # refused before any stage
    holder = json.loads((run / ".skadapt.lock.json").read_text())
    assert holder["pid"] == first.pid and holder["command"] == "skadapt train recipe.yaml --no-check"
    assert (
        f"error: output_dir {run} is in use by another skadapt run (pid {first.pid} on {holder['host']}, "
        f"started {holder['started']}: skadapt train recipe.yaml --no-check); wait for it to finish or "
        "point output_dir elsewhere"
    ) in text
    assert refused_in < WAIT_S / 2
    check = runner.invoke(app, ["train", str(project / "recipe.yaml"), "--check"], env={"COLUMNS": "200"})
    assert check.exit_code == 0, check.output  # read-only: no lock taken
    first.send_signal(signal.SIGCONT)
    output, _ = first.communicate(timeout=WAIT_S)
    assert first.returncode == 0, output
    manifest = json.loads((run / "trim" / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert not [p.name for p in run.iterdir() if p.name.startswith((".skadapt", ".trim"))]  # lock, temp gone


HOLD = """
import sys, time
from pathlib import Path
from skadapt.outputs import out_lock, owned
out = Path(sys.argv[1])
with owned(out_lock(out), out, "--out"):
    print("held", flush=True)
    time.sleep(600)
"""
"""Holds a stage command's lock on --out (argv[1]) as the command does, until it is killed."""


def test_a_lock_left_by_a_killed_run_is_taken_over(
    project: Path,
    tiny_models: dict[str, Path],
    children: list[subprocess.Popen[str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A process holding `skadapt trim`'s --out: the command is refused, naming it; killed by SIGKILL (no
    clean-up), it leaves its lock and details behind: the next command takes the lock over, says whose
    it was, and finishes."""
    out = project / "trimmed"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    children.append(holder)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n", holder.communicate()[0]
    args = ["trim", str(tiny_models["unigram"]), "--corpus", str(project / "corpus.txt"), "--out", str(out)]
    args += ["--vocab-size", "150", "--workers", "1", "--parity-documents", "4"]
    refused = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert refused.exit_code == 1, refused.output
    assert f"error: --out {out} is in use by another skadapt run (pid {holder.pid} on " in _flat(
        refused.output
    )
    holder.kill()
    holder.wait()
    assert (project / ".trimmed.lock.json").is_file()  # killed: nothing cleaned up
    with caplog.at_level(logging.WARNING, logger="skadapt"):
        result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    taken = [r.getMessage() for r in caplog.records if "taking over the lock" in r.getMessage()]
    assert len(taken) == 1, taken
    assert taken[0].startswith(f"--out {out}: taking over the lock of a run that is no longer running (pid ")
    assert f"(pid {holder.pid} on " in taken[0] and ", started " in taken[0]
    assert (out / "trim_report.json").is_file()
    assert not [p.name for p in project.iterdir() if p.name.startswith(".trimmed")]  # lock and scratch gone


# ----------------------------------------------------------------- an output directory that cannot be written


@pytest.mark.parametrize("where", ["file", "under a file"])
def test_an_output_dir_that_cannot_be_a_directory_is_one_line(project: Path, where: str) -> None:
    blocker = project / "taken"
    blocker.write_text("a person's file\n", encoding="utf-8")
    output_dir = blocker if where == "file" else blocker / "run"
    recipe = project / "recipe.yaml"
    text = recipe.read_text(encoding="utf-8").replace(str(project / "run"), str(output_dir))
    recipe.write_text(text, encoding="utf-8")
    what = "is a file" if where == "file" else f"cannot be made: {blocker} is a file"
    line = f"output_dir {output_dir} {what}, not a directory; point output_dir elsewhere"

    check = runner.invoke(app, ["train", str(recipe), "--check"], env={"COLUMNS": "200"})
    assert check.exit_code == 1, check.output
    problems = [x for x in check.output.splitlines() if x.startswith("problem: ")]
    assert problems == [f"problem: output_dir {output_dir}: {line.removeprefix(f'output_dir {output_dir} ')}"]

    run = runner.invoke(app, ["train", str(recipe), "--no-check"], env={"COLUMNS": "200"})
    assert run.exit_code == 1, run.output
    assert _flat(run.output) == f"error: {line}"  # one line, and no log announced that cannot exist
    assert blocker.read_text(encoding="utf-8") == "a person's file\n"


@pytest.mark.parametrize("layout", ["base model in a stage directory", "output_dir is the base model"])
def test_a_stage_that_would_write_over_its_own_input_is_refused(project: Path, layout: str) -> None:
    """A recipe whose trim stage directory is its base model (a model an earlier run made), or whose
    output_dir is the base model's directory: refused in one line, the model untouched."""
    model = project / "run" / "trim" if layout.startswith("base") else project / "model"
    shutil.copytree(Path(_recipe_value(project, "base_model")), model)
    weights = (model / "model.safetensors").read_bytes()
    run = project / "run" if layout.startswith("base") else model
    recipe = project / "recipe.yaml"
    text = recipe.read_text(encoding="utf-8").replace(_recipe_value(project, "base_model"), str(model))
    recipe.write_text(text.replace(f"output_dir: {project / 'run'}", f"output_dir: {run}"), encoding="utf-8")
    how = "is" if layout.startswith("base") else "lies inside"
    result = runner.invoke(app, ["train", str(recipe), "--no-check"], env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    assert (
        f"error: stage trim's directory {run / 'trim'} {how} its base model {model}: writing it would "
    ) in _flat(result.output)
    assert "point output_dir elsewhere" in _flat(result.output)
    assert (model / "model.safetensors").read_bytes() == weights
    assert not [p for p in run.iterdir() if p.name.startswith((".skadapt", ".trim"))]


def _recipe_value(project: Path, field: str) -> str:
    for line in (project / "recipe.yaml").read_text(encoding="utf-8").splitlines():
        if line.startswith(f"{field}: "):
            return line.removeprefix(f"{field}: ")
    raise KeyError(field)


def _unshare() -> str | None:
    """Why a private mount namespace with its own tmpfs cannot be made here (None: it can)."""
    if shutil.which("unshare") is None:
        return "no unshare command"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o ro,size=16k tmpfs /mnt"],
        capture_output=True,
        text=True,
    )
    return None if probe.returncode == 0 else f"cannot mount a tmpfs: {probe.stderr.strip()}"


def test_an_output_dir_on_a_read_only_mount_is_one_line(tmp_path: Path) -> None:
    """A real read-only file system (a tmpfs mounted ro in a private mount namespace: root writes through
    chmod, not through a read-only mount): the write test fails and says so, for the preflight (which makes
    nothing) and for the run (which makes the directory)."""
    reason = _unshare()
    if reason is not None:
        pytest.skip(f"needs a private mount namespace (unshare -m, mount -t tmpfs): {reason}")
    mount = tmp_path / "ro"
    mount.mkdir()
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from skadapt.outputs import OutputPathError, writable_dir\n"
        "for create in (False, True):\n"
        "    try:\n"
        "        writable_dir(Path(sys.argv[1]) / 'run', 'output_dir', create=create)\n"
        "    except OutputPathError as error:\n"
        "        print(error)\n"
    )
    mounted = 'mount -t tmpfs -o ro,size=16k tmpfs "$1" && exec "$2" -c "$3" "$1"'
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", mounted, "sh", str(mount), sys.executable, script],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    errno30 = "(OSError: [Errno 30] Read-only file system: "
    run = mount / "run"
    lead, fix = f"output_dir {run} is not a writable directory: read-only file system at", "point output_dir"
    assert done.stdout.splitlines() == [
        f"{lead} {mount} {errno30}'{mount}'): {fix} to a writable one",  # the preflight's: nothing made
        f"{lead} {run} {errno30}'{run}'): {fix} to a writable one",  # the run's: making it fails
    ]


MOUNTS_ENV = "SKADAPT_TEST_MOUNTS"
MOUNTED_CLI = """
import json, sys
from typer.testing import CliRunner
from skadapt.cli import app
runs = [CliRunner().invoke(app, args, env={"COLUMNS": "200"}) for args in json.loads(sys.argv[1])]
print(json.dumps([[run.exit_code, " ".join(run.output.split())] for run in runs]))
"""
"""Runs skadapt commands in one process (one start-up for all), each as the command line does."""


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get(MOUNTS_ENV),
    reason=f"a fresh skadapt process trimming a model (~7 s); set {MOUNTS_ENV}=1 to run it",
)
def test_a_full_disk_and_a_read_only_mount_under_the_commands(
    project: Path, tiny_models: dict[str, Path]
) -> None:
    """Real file systems in a private mount namespace: a 64 KiB tmpfs that the trimmed model does not fit
    (safetensors fails with "os error 28" in its own error type) and a read-only tmpfs. Each is one line
    with what to do: from the stage command, the preflight and the run."""
    reason = _unshare()
    if reason is not None:
        pytest.skip(f"needs a private mount namespace (unshare -m, mount -t tmpfs): {reason}")
    full, read_only = project / "full", project / "ro"
    full.mkdir()
    read_only.mkdir()
    recipe = project / "recipe.yaml"
    recipe.write_text(recipe.read_text().replace(str(project / "run"), str(read_only / "run")))
    trim = ["trim", str(tiny_models["unigram"]), "--corpus", str(project / "corpus.txt")]
    trim += ["--vocab-size", "150", "--workers", "1", "--parity-documents", "4"]
    runs = [
        [*trim, "--out", str(full / "out")],
        [*trim, "--out", str(read_only / "out")],
        ["train", str(recipe), "--check"],
        ["train", str(recipe), "--no-check"],
    ]
    mounts = 'mount -t tmpfs -o size=64k tmpfs "$1" && mount -t tmpfs -o ro,size=16k tmpfs "$2"'
    shell = ["sh", "-c", f'{mounts} && exec "$3" -c "$4" "$5"', "sh", str(full), str(read_only)]
    done = subprocess.run(
        ["unshare", "-m", *shell, sys.executable, MOUNTED_CLI, json.dumps(runs)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert done.returncode == 0, done.stderr
    (disk, disk_out), (out_ro, out_ro_out), (check, check_out), (run, run_out) = json.loads(done.stdout)
    assert disk == 1 and disk_out.count("error: skadapt trim failed") == 1, disk_out
    assert f"disk full while writing {full / 'out'} (SafetensorError: " in disk_out
    assert "No space left on device (os error 28)): free space or point --out elsewhere" in disk_out
    errno30 = "(OSError: [Errno 30] Read-only file system: "
    assert out_ro == 1, out_ro_out
    assert (
        f"error: --out {read_only / 'out'} is not a writable directory: read-only file system at {read_only} "
        f"{errno30}'{read_only}'): point --out to a writable one"
    ) in out_ro_out
    assert check == 1, check_out
    assert (
        f"problem: output_dir {read_only / 'run'}: is not a writable directory: read-only file system at "
        f"{read_only} {errno30}'{read_only}'): point output_dir to a writable one"
    ) in check_out
    assert run == 1, run_out
    assert run_out == (
        f"error: output_dir {read_only / 'run'} is not a writable directory: read-only file system at "
        f"{read_only / 'run'} {errno30}'{read_only / 'run'}'): point output_dir to a writable one"
    )
