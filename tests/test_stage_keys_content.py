"""Stage keys fingerprint contents, not times: ``artifacts.path_fingerprint`` over the digest cache
(``$SKADAPT_CACHE/fingerprints.sqlite``), what that cache trusts, and a damaged or unusable cache.

The end-to-end check (a finished run copied to another directory with every mtime changed skips every
stage) is in tests/test_run_paths.py.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from skadapt import artifacts


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh cache root for each test; the digest cache file in it."""
    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / artifacts.DIGESTS


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files whose bytes are read (the real digest, recorded)."""
    seen: list[str] = []
    real = artifacts.file_sha256

    def recorded(path: Path) -> str:
        seen.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(artifacts, "file_sha256", recorded)
    return seen


def model_dir(root: Path) -> Path:
    """A small directory tree like a model's."""
    (root / "1_Pooling").mkdir(parents=True)
    (root / "config.json").write_text('{"hidden_size": 8}', encoding="utf-8")
    (root / "model.safetensors").write_bytes(bytes(range(256)) * 64)
    (root / "1_Pooling" / "config.json").write_text('{"mode": "mean"}', encoding="utf-8")
    shift_times(root, -3600)  # written an hour ago: settled (artifacts.RACY_S), so its digests are kept
    return root


def shift_times(root: Path, seconds: int = -86_400) -> None:
    """Every file's mtime moved by ``seconds`` (a clone, a ``cp -r``, a restored backup)."""
    for path in [root, *root.rglob("*")]:
        if path.is_file():
            stat = path.stat()
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + seconds * 10**9))


def rewrite_in_place(path: Path, data: bytes) -> None:
    """Overwrite ``path``'s bytes (same inode) and set its mtime back to what it was."""
    stat = path.stat()
    with open(path, "r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_the_same_bytes_at_other_times_or_elsewhere_give_the_same_fingerprint(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "model")
    before = artifacts.path_fingerprint(model)
    file_before = artifacts.path_fingerprint(model / "config.json")
    shift_times(model)
    assert artifacts.path_fingerprint(model) == before
    assert artifacts.path_fingerprint(model / "config.json") == file_before
    copy = tmp_path / "elsewhere" / "renamed"
    shutil.copytree(model, copy)
    shift_times(copy, 3600)
    assert artifacts.path_fingerprint(copy) == before
    assert artifacts.input_fingerprint(str(copy / "config.json")) == file_before


def test_a_change_inside_the_tree_gives_another_fingerprint(tmp_path: Path) -> None:
    model = model_dir(tmp_path / "model")
    before = artifacts.path_fingerprint(model)
    weights = model / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[100] ^= 1
    weights.write_bytes(bytes(data))  # the same size, a new mtime
    changed = artifacts.path_fingerprint(model)
    assert changed != before
    (model / "config.json").rename(model / "config2.json")  # the same bytes under another name
    assert artifacts.path_fingerprint(model) not in (before, changed)


def test_a_file_is_read_once_until_its_size_mtime_or_inode_changes(tmp_path: Path, reads: list[str]) -> None:
    model = model_dir(tmp_path / "model")
    artifacts.path_fingerprint(model)
    assert sorted(reads) == ["config.json", "config.json", "model.safetensors"]
    reads.clear()
    artifacts.path_fingerprint(model)
    assert reads == []
    shift_times(model)  # a new mtime: read again (the fingerprint stays, see above)
    artifacts.path_fingerprint(model)
    assert len(reads) == 3


def test_what_the_cache_trusts_a_rewrite_in_place_with_the_mtime_set_back(
    tmp_path: Path, cache: Path
) -> None:
    """DVC's trade-off: size, mtime and inode unchanged => the kept digest is trusted. A file replaced
    (written elsewhere and renamed over it, as editors and copies do) has a new inode and is read again;
    without the cache the new bytes are seen."""
    model = model_dir(tmp_path / "model")
    weights = model / "model.safetensors"
    before = artifacts.path_fingerprint(model)
    rewrite_in_place(weights, b"\xff" * 16)
    assert artifacts.path_fingerprint(model) == before  # the blind spot
    shutil.copy2(weights, tmp_path / "new")
    os.replace(tmp_path / "new", weights)  # same bytes, size and mtime; a new inode
    after = artifacts.path_fingerprint(model)
    assert after != before
    rewrite_in_place(weights, b"\x00" * 16)
    cache.unlink()
    assert artifacts.path_fingerprint(model) not in (before, after)


def test_a_file_changed_just_now_is_read_again_even_within_one_mtime_tick(tmp_path: Path) -> None:
    """A file fingerprinted within RACY_S of its last change may change again before its mtime moves
    (a coarse file system clock): its digest is not kept, so the change is seen."""
    data = tmp_path / "data.jsonl"
    data.write_text('{"text": "a"}\n', encoding="utf-8")
    now = time.time_ns()
    os.utime(data, ns=(now, now))
    before = artifacts.path_fingerprint(data)
    rewrite_in_place(data, b'{"text": "b"}')  # the same size, inode and mtime
    assert artifacts.path_fingerprint(data) != before


def test_a_damaged_cache_is_made_again(tmp_path: Path, cache: Path, caplog: pytest.LogCaptureFixture) -> None:
    model = model_dir(tmp_path / "model")
    expected = artifacts.path_fingerprint(model)
    cache.write_bytes(b"not a database " * 1000)
    shift_times(model)
    assert artifacts.path_fingerprint(model) == expected
    assert "fingerprint cache" in caplog.text and "made again" in caplog.text
    with sqlite3.connect(cache) as db:  # a working cache again, holding the digests
        assert db.execute("SELECT COUNT(*) FROM digests").fetchone()[0] == 3


def test_an_unusable_cache_root_still_fingerprints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = model_dir(tmp_path / "model")
    expected = artifacts.path_fingerprint(model)
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "a-file" / "cache"))  # no directory can be made
    assert artifacts.path_fingerprint(model) == expected


def test_a_locked_cache_is_passed_over(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, reads: list[str]
) -> None:
    model = model_dir(tmp_path / "model")
    expected = artifacts.path_fingerprint(model)
    shift_times(model)
    monkeypatch.setattr(artifacts, "DIGEST_TIMEOUT_S", 0.1)
    other = sqlite3.connect(cache, timeout=0)
    other.execute("BEGIN EXCLUSIVE")  # another process writing for longer than the timeout
    reads.clear()
    assert artifacts.path_fingerprint(model) == expected
    assert len(reads) == 3
    other.rollback()
    other.close()
    reads.clear()
    assert artifacts.path_fingerprint(model) == expected
    assert len(reads) == 3  # the digests read under the lock were not kept: read again, kept now
    reads.clear()
    artifacts.path_fingerprint(model)
    assert reads == []


def _fingerprint_many(root: str, cache_root: str) -> list[str]:
    os.environ["SKADAPT_CACHE"] = cache_root
    return [artifacts.path_fingerprint(path) for path in sorted(Path(root).iterdir())]


def test_several_processes_share_the_cache(tmp_path: Path, cache: Path) -> None:
    root = tmp_path / "files"
    root.mkdir()
    for index in range(40):
        (root / f"{index:02}.txt").write_text(f"text {index}\n" * (index + 1), encoding="utf-8")
    shift_times(root)
    expected = [artifacts.file_sha256(path) for path in sorted(root.iterdir())]
    expected = [artifacts.hash_json([[".", digest]]) for digest in expected]
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        results = pool.starmap(_fingerprint_many, [(str(root), str(cache.parent))] * 4)
    assert results == [expected] * 4
    with sqlite3.connect(cache) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT COUNT(*) FROM digests").fetchone()[0] == 40
