"""An output directory that is a file, lies under a file or is read-only is named in one line by the
preflight and by the run; a stage that would write over its own input is refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
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
