"""Fine-tuning checkpoints on a tiny model: a damaged newest checkpoint is set aside and the rerun resumes
from the previous complete one; a real ``kill -9`` mid-training (``SKADAPT_TEST_FAULTS=1``)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from skadapt.pipeline import run_recipe
from skadapt.recipe import validate_recipe
from skadapt.train.checkpoints import MARKER
from skadapt.train.stage import REPORT, finetune
from tests.support.crash import CrashAt
from tests.support.finetune_recipe import tiny_recipe

STEPS, SAVE_STEPS = 6, 2
"""The short run: checkpoints at steps 2, 4 and 6 (two kept)."""


def _recipe(model: Path, run: Path) -> Any:
    return validate_recipe(tiny_recipe(model, run, max_steps=STEPS, save_steps=SAVE_STEPS))


@pytest.fixture(scope="module")
def interrupted(tiny_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run directory whose fine-tuning stopped after step 5: checkpoints 2 and 4, each complete."""
    run = tmp_path_factory.mktemp("interrupted") / "run"
    with pytest.raises(KeyboardInterrupt):
        run_recipe(
            _recipe(tiny_models["unigram"], run),
            runners={"finetune": lambda ctx: finetune(ctx, callbacks=[CrashAt(5)])},
        )
    [checkpoints] = run.glob(".work/finetune-*/checkpoints")
    assert sorted(p.name for p in checkpoints.glob("checkpoint-*")) == ["checkpoint-2", "checkpoint-4"]
    assert all((p / MARKER).is_file() for p in checkpoints.glob("checkpoint-*"))
    return run


def _truncate(checkpoint: Path) -> str:
    weights = checkpoint / "model.safetensors"
    with weights.open("r+b") as handle:  # what a kill mid-write leaves: the first part of the file
        handle.truncate(weights.stat().st_size // 3)
    return "model.safetensors has "


def _unmark(checkpoint: Path) -> str:
    (checkpoint / MARKER).unlink()  # killed after its files, before its marker
    return "it has no completion marker"


@pytest.mark.slow
@pytest.mark.parametrize("damage", [_truncate, _unmark], ids=["truncated-weights", "no-marker"])
def test_damaged_newest_checkpoint_is_set_aside_and_the_previous_one_resumed(
    damage: Any,
    interrupted: Path,
    tiny_models: dict[str, Path],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    run = tmp_path / "run"
    shutil.copytree(interrupted, run)
    [work] = run.glob(".work/finetune-*")
    newest = work / "checkpoints" / "checkpoint-4"
    what = damage(newest)
    files = sorted(p.relative_to(newest) for p in newest.rglob("*"))

    with caplog.at_level(logging.WARNING, logger="skadapt"):
        [outcome] = run_recipe(_recipe(tiny_models["unigram"], run))
    report = json.loads((outcome.path / REPORT).read_text(encoding="utf-8"))
    assert report["resumed_from"] == "checkpoint-2"
    assert report["steps"] == {"done": STEPS, "planned": STEPS}
    aside = work.with_name(f"{work.name}.checkpoint-4.damaged")
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("skadapt.train")]
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"finetune: checkpoint {newest} cannot be resumed from: {what}")
    assert lines[0].endswith(f"; set aside as {aside} (kept, not deleted)")
    assert (
        lines[1]
        == f"finetune: resuming from the previous complete checkpoint {newest.with_name('checkpoint-2')}"
    )
    assert sorted(p.relative_to(aside) for p in aside.rglob("*")) == files  # the user's data, as it was
    assert not work.exists()  # the stage's scratch went once it completed; the damaged checkpoint stays


@pytest.mark.slow
def test_no_complete_checkpoint_left_starts_over(
    interrupted: Path, tiny_models: dict[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    run = tmp_path / "run"
    shutil.copytree(interrupted, run)
    [work] = run.glob(".work/finetune-*")
    _truncate(work / "checkpoints" / "checkpoint-4")
    (work / "checkpoints" / "checkpoint-2" / "trainer_state.json").write_text('{"global_step": 2, "log_h')

    with caplog.at_level(logging.WARNING, logger="skadapt"):
        [outcome] = run_recipe(_recipe(tiny_models["unigram"], run))
    report = json.loads((outcome.path / REPORT).read_text(encoding="utf-8"))
    assert report["resumed_from"] is None and report["steps"]["done"] == STEPS
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("skadapt.train")]
    assert len(lines) == 3 and "checkpoint-2 cannot be resumed from: trainer_state.json has" in lines[1]
    assert (
        lines[2]
        == f"finetune: no complete checkpoint is left in {work / 'checkpoints'}: training starts over"
    )
    assert sorted(p.name for p in run.glob(".work/*.damaged")) == [
        f"{work.name}.checkpoint-2.damaged",
        f"{work.name}.checkpoint-4.damaged",
    ]


@pytest.mark.slow
def test_a_damaged_checkpoint_that_cannot_be_set_aside_is_one_clear_error(
    interrupted: Path, tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    """The scratch's parent is immutable (``chattr +i``: tests run as root, where chmod blocks nothing)."""
    from skadapt.train.checkpoints import CheckpointError

    run = tmp_path / "run"
    shutil.copytree(interrupted, run)
    [work] = run.glob(".work/finetune-*")
    newest = work / "checkpoints" / "checkpoint-4"
    _unmark(newest)
    if subprocess.run(["chattr", "+i", str(work.parent)], capture_output=True, check=False).returncode:
        pytest.skip("chattr +i is not available here (needs root and a file system that supports it)")
    try:
        with pytest.raises(CheckpointError) as raised:
            run_recipe(_recipe(tiny_models["unigram"], run))
    finally:
        subprocess.run(["chattr", "-i", str(work.parent)], check=True)
    aside = work.with_name(f"{work.name}.checkpoint-4.damaged")
    assert str(raised.value) == (
        f"checkpoint {newest} cannot be resumed from (it has no completion marker ({MARKER}): its save did "
        "not finish (the run was stopped while writing it), or an older skadapt wrote it) nor set aside as "
        f"{aside} (PermissionError: Operation not permitted); move it out of {newest.parent} by hand and run "
        "the same command again"
    )
    assert (newest / "model.safetensors").is_file() and not (run / "finetune").exists()  # nothing lost


def _skadapt(recipe: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "OMP_NUM_THREADS": "1"}
    with log.open("wb") as handle:
        return subprocess.Popen(
            [sys.executable, "-m", "skadapt", "train", str(recipe), "--no-check"],
            stdout=handle,
            stderr=subprocess.STDOUT,
            env=env,
        )


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("SKADAPT_TEST_FAULTS") != "1",
    reason="a real kill -9 mid-checkpoint in a child process (~30 s); run with SKADAPT_TEST_FAULTS=1",
)
def test_kill_9_while_a_checkpoint_is_written_then_rerun_finishes(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    import yaml

    steps = 60
    data = tiny_recipe(tiny_models["unigram"], tmp_path / "run", max_steps=steps, save_steps=SAVE_STEPS)
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    child = _skadapt(recipe, tmp_path / "killed.log")
    target = None
    deadline = time.monotonic() + 120
    while child.poll() is None and time.monotonic() < deadline:  # the third checkpoint's directory appears
        found = list((tmp_path / "run").glob(".work/finetune-*/checkpoints/checkpoint-6"))
        if found:
            target = found[0]
            os.kill(child.pid, signal.SIGKILL)  # mid-write: the directory exists, its files are coming
            break
        time.sleep(0.0005)
    child.wait(timeout=60)
    assert target is not None and child.returncode == -signal.SIGKILL, (tmp_path / "killed.log").read_text()
    complete = (target / MARKER).is_file()

    rerun = _skadapt(recipe, tmp_path / "rerun.log")
    rerun.wait(timeout=300)
    output = (tmp_path / "rerun.log").read_text(encoding="utf-8")
    assert rerun.returncode == 0, output
    assert "Traceback" not in output
    report = json.loads((tmp_path / "run" / "finetune" / REPORT).read_text(encoding="utf-8"))
    assert report["steps"]["done"] == steps
    if complete:  # the kill came after the marker: that checkpoint is whole and resumed from
        assert report["resumed_from"] == "checkpoint-6"
    else:
        assert report["resumed_from"] == "checkpoint-4", output
        assert f"{target} cannot be resumed from" in output
        assert list((tmp_path / "run" / ".work").glob("*.checkpoint-6.damaged"))
