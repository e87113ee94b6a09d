"""The commit each ``hub:`` source is read at: resolved when read, recorded, keyed, published.

A repository of the local Hub (:mod:`tests.support.hub_server`) gets two commits, ``main`` at the first; a
recipe reads it at ``main`` for trimming and renormalization and skLEP (pinned) for fine-tuning and its dev
set. Between runs ``main`` moves to the second commit, whose texts differ: the manifests and the count cache
name the commit read, the skipped stages say that ``main`` moved, a re-run trim counts again and says
from which commit to which, the card names every commit, and offline the local caches still serve.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from skadapt.cli import app
from skadapt.results import StageManifest
from skadapt.sources import UNKNOWN_OFFLINE, HubCommit, resolve_commit
from skadapt.sources.commits import reading
from tests.support import hub_fixtures
from tests.support.hub_fixtures import RESULT, SKLEP_ID, SKLEP_REVISION, HubClient, client_env
from tests.support.hub_server import LocalHub

MOVING = "skadapt-tests/moving-corpus"
SPEC = f"hub:{MOVING}"
# Two commits of one corpus, written by hand: main moves from the first to the second.
TEXTS = {
    "a": [
        "Na jar sme v záhrade vysadili paradajky, papriku a niekoľko kríkov ríbezlí.",
        "Vlak do Košíc mal pre výluku na trati takmer hodinové meškanie.",
        "Miestna knižnica rozšírila otváracie hodiny aj na sobotné dopoludnie.",
        "Po daždivom týždni sa v lesoch objavilo množstvo dubákov a kuriatok.",
    ],
    "b": [
        "Hokejisti Zvolena vyhrali posledný zápas sezóny až po samostatných nájazdoch.",
        "Pekáreň na rohu ulice predáva čerstvé rožky už od šiestej ráno.",
        "Mestský úrad vyzval obyvateľov, aby triedili odpad aj počas sviatkov.",
        "Cez víkend bude na horách fúkať silný vietor a hrozia snehové jazyky.",
        "Učiteľka chémie pripravila pre žiakov pokus s farebnými plameňmi.",
    ],
}
STS = {"sentence1": "sentence1", "sentence2": "sentence2", "score": "similarity_score"}


def _commit_dir(root: Path, name: str) -> tuple[str, Path]:
    rows = "".join(json.dumps({"text": text}, ensure_ascii=False) + "\n" for text in TEXTS[name])
    commit = hashlib.sha1(rows.encode()).hexdigest()
    folder = root / commit
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "train.jsonl").write_text(rows, encoding="utf-8")
    (folder / "README.md").write_text("---\nlicense: cc0-1.0\n---\n# A corpus whose main moves\n")
    return commit, folder


@pytest.fixture
def moving(hub: LocalHub, tmp_path: Path) -> Iterator[dict[str, str]]:
    """The moving corpus on the local Hub: commits ``a`` (main) and ``b``; removed afterwards."""
    commits = {}
    for name in TEXTS:
        commit, folder = _commit_dir(tmp_path / "moving", name)
        hub.store.add("dataset", MOVING, commit, folder, refs=("main",) if name == "a" else ())
        commits[name] = commit
    yield commits
    hub.store.repos.pop(("dataset", MOVING), None)


def _recipe(run: Path, model: Path) -> dict[str, Any]:
    sklep = f"hub:{SKLEP_ID}:sts:%s@{SKLEP_REVISION}"
    return {
        "name": "moving",
        "language": "slk",
        "base_model": str(model),
        "output_dir": str(run),
        "trim": {"corpus": SPEC, "vocab_size": 60, "parity_documents": 2},
        "finetune": {
            "datasets": [{"name": "sts", "kind": "sts", "source": sklep % "train", "columns": STS}],
            "dev": {"kind": "sts", "source": sklep % "validation", "columns": STS},
            "max_steps": 2,
            "batch_size": 2,
        },
        "renorm": {"corpus": SPEC, "samples": 10, "min_chars": 20, "method": "r2"},
    }


RUNS = """
import json
from pathlib import Path
from skadapt.artifacts import read_manifest
from skadapt.pipeline import run_recipe
from skadapt.recipe import validate_recipe
from skadapt.sources import iter_texts
from skadapt.trim.counting import count_source

recipe = validate_recipe(RECIPE)
run = Path(RECIPE["output_dir"])

def manifests():
    found = {s: read_manifest(run / s) for s in ("trim", "finetune", "renorm")}
    return found | {"counts": json.loads((run / "trim" / "trim_report.json").read_text())["counts"]}

run_recipe(recipe)
emit("first", manifests())
stream = iter_texts(SPEC)
head = [next(stream), next(stream)]
state = json.loads(json.dumps(stream.state()))
pause("move main")
emit("resumed", {"commit": state["commit"], "rest": list(iter_texts(SPEC, resume_state=state))})
emit("again", [o.status for o in run_recipe(recipe)])
run_recipe(recipe, only="trim")
emit("trim again", manifests())
tokenizer = (Path(RECIPE["base_model"]) / "tokenizer.json").read_text(encoding="utf-8")
for spec in (SPEC, SPEC + "@" + COMMITS["a"]):  # counted once online: the offline run reads the cache
    emit("count " + spec, count_source(tokenizer, spec, parity_documents=0).summary())
"""

OFFLINE = """
import json
from pathlib import Path
from skadapt.sources import SourceError, iter_texts, resolve_commit
from skadapt.trim.counting import count_source

found = {}
tokenizer = (Path(MODEL) / "tokenizer.json").read_text(encoding="utf-8")
for spec in (SPEC, SPEC + "@" + COMMITS["a"]):
    found["count " + spec] = count_source(tokenizer, spec, parity_documents=0).summary()
found["resolved"] = resolve_commit(SPEC).record()
found["never read"] = resolve_commit("hub:skadapt-tests/never-read").record()
try:
    next(iter_texts("hub:skadapt-tests/never-read"))
except SourceError as error:
    found["read error"] = str(error)
print(RESULT + json.dumps(["found", found]))
"""


def _offline(client: HubClient, code: str) -> dict[str, Any]:
    """Run ``code`` with the client's caches and offline mode on (HubClient's prelude insists on online)."""
    env = client_env(client.hub, client.home) | {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=hub_fixtures.REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-4000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT)]
    return dict([json.loads(line[len(RESULT) :]) for line in lines])


def _counts_meta(home: Path) -> list[dict[str, Any]]:
    files = (home / "skadapt" / "counts").glob("*.json")
    return [
        json.loads(p.read_text())
        for p in files
        if not p.name.endswith((".commit.json",)) and ".sample-" not in p.name
    ]


@pytest.mark.slow
def test_commits_are_recorded_keyed_warned_and_published(
    hub_client: HubClient, hub: LocalHub, moving: dict[str, str], tmp_path: Path, tiny_models: dict[str, Path]
) -> None:
    a, b = moving["a"], moving["b"]
    run = tmp_path / "run"
    recipe = _recipe(run, tiny_models["unigram"])
    code = f"RECIPE = {recipe!r}\nSPEC = {SPEC!r}\nCOMMITS = {moving!r}\n" + RUNS
    repo = hub.store.repos[("dataset", MOVING)]
    result = hub_client.run(code, events={"move main": lambda: repo.refs.update(main=b)}, timeout=600)

    # (b) every stage's manifest names the commit of each Hub source it read
    first = result["first"]
    at_a = {"repo": MOVING, "revision": "main", "commit": a, "resolved_by": "hub"}
    assert first["trim"]["sources"] == {SPEC: at_a}
    pinned = {"repo": SKLEP_ID, "revision": SKLEP_REVISION, "commit": SKLEP_REVISION, "resolved_by": "pinned"}
    dev = f"hub:{SKLEP_ID}:sts:validation@{SKLEP_REVISION}"
    assert first["finetune"]["sources"] == {f"hub:{SKLEP_ID}:sts:train@{SKLEP_REVISION}": pinned, dev: pinned}
    assert first["renorm"]["sources"] == {SPEC: at_a, dev: pinned}  # renorm chooses on the dev set
    counted = first["counts"]
    assert counted["commit"] == a and counted["documents"] == len(TEXTS["a"])

    # a read interrupted before main moved resumes at the commit it started on
    assert result["resumed"] == {"commit": a, "rest": TEXTS["a"][2:]}

    # (a) main moved: the finished stages are kept (their recipe did not change) but say so; a re-run trim
    # counts the new commit, records it and names both commits
    assert result["again"] == ["skipped"] * 3
    log = (run / "run.log").read_text(encoding="utf-8")
    for stage in ("trim", "renorm"):
        assert (
            f"stage {stage} is up to date with its recipe, but {SPEC}: main has moved from commit {a} to {b}"
            in log
        )
    assert "stage finetune is up to date with its recipe, but" not in log  # skLEP is pinned
    again = result["trim again"]
    assert again["trim"]["sources"] == {SPEC: at_a | {"commit": b}}
    recount = again["counts"]
    assert recount["commit"] == b and recount["documents"] == len(TEXTS["b"]) and not recount["cached"]
    assert recount["fingerprint"] != counted["fingerprint"]
    assert (
        f"{SPEC}: main has moved from commit {a} to {b} since it was last counted; counting it again" in log
    )
    keyed = {m["source"]["spec"]: m["source"].get("commit") for m in _counts_meta(hub_client.home)}
    assert {
        m["source"].get("commit") for m in _counts_meta(hub_client.home) if "@" not in m["source"]["spec"]
    } == {a, b}
    assert keyed[f"{SPEC}::train@{a}"] is None  # a pinned spec names its commit: no second one in the key

    # offline: the branch is at the commit the local Hub cache saw last, and both counts come from the cache;
    # a source never read is recorded as unknown, and reading it is one clear error
    names = {"RESULT": RESULT, "SPEC": SPEC, "COMMITS": moving, "MODEL": str(tiny_models["unigram"])}
    found = _offline(hub_client, "".join(f"{k} = {v!r}\n" for k, v in names.items()) + OFFLINE)["found"]
    for spec, commit in ((SPEC, b), (f"{SPEC}@{a}", a)):
        online, offline = result[f"count {spec}"], found[f"count {spec}"]
        assert (
            offline["cached"]
            and offline["fingerprint"] == online["fingerprint"]
            and offline["commit"] == commit
        )
    assert found["resolved"] == at_a | {"commit": b, "resolved_by": "local cache (offline)"}
    assert found["never read"]["commit"] == UNKNOWN_OFFLINE
    assert found["read error"] == (
        "HF_HUB_OFFLINE=1 is set: hub:skadapt-tests/never-read cannot be read; unset it or use a local copy"
    )

    # (c) the card names the commit of every Hub source read (trim read b after the move, renorm a)
    published = CliRunner().invoke(app, ["publish", str(run), "--repo-id", "me/moving", "--dry-run"])
    assert published.exit_code == 0, published.output
    card = (run / "publish" / "upload" / "README.md").read_text(encoding="utf-8")
    assert "## Data read from the Hub" in card
    assert f"| `{SPEC}` | trim | `main` | `{b}` |" in card
    assert f"| `{SPEC}` | renorm | `main` | `{a}` |" in card
    sklep = f"`{SKLEP_REVISION}` | `{SKLEP_REVISION}` |"
    assert f"| `hub:{SKLEP_ID}:sts:train@{SKLEP_REVISION}` | finetune | {sklep}" in card
    assert f"| `{dev}` | finetune, renorm | {sklep}" in card
    assert f"`{SPEC}` at commit `{b}`" in card  # the trim section's corpus


def test_offline_resolution_never_looks_up_and_never_raises(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Offline: a pinned commit as it is, a branch from the local Hub cache's refs, else unknown."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    commit = "0123456789abcdef0123456789abcdef01234567"
    assert resolve_commit(f"hub:org/data:cfg:train@{commit}").record() == {
        "repo": "org/data",
        "revision": commit,
        "commit": commit,
        "resolved_by": "pinned",
    }
    assert resolve_commit("hub:org/data").record()["commit"] == UNKNOWN_OFFLINE
    refs = tmp_path / "datasets--org--data" / "refs"
    refs.mkdir(parents=True)
    (refs / "main").write_text(commit)
    found = resolve_commit("hub:org/data:cfg")
    assert (found.commit, found.resolved_by, found.pinned) == (commit, "local cache (offline)", False)
    (refs / "v1").write_text("not a commit")
    assert resolve_commit("hub:org/data@v1").commit is None


def test_a_stage_reads_one_commit_per_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside one collection a spec is resolved once (every read of a stage reads the same commit); the
    collection is what the manifest records."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    refs = tmp_path / "datasets--org--data" / "refs"
    refs.mkdir(parents=True)
    first, second = "1" * 40, "2" * 40
    (refs / "main").write_text(first)
    with reading() as reads:
        assert resolve_commit("hub:org/data").commit == first
        (refs / "main").write_text(second)
        with reading() as inner:  # nested: the same collection
            assert inner is reads and resolve_commit("hub:org/data::train").commit == first
    assert resolve_commit("hub:org/data").commit == second  # outside: looked up again
    manifest = StageManifest.parse({"stage": "trim", "status": "complete", "sources": reads.record()})
    assert manifest.sources == {
        "hub:org/data": {
            "repo": "org/data",
            "revision": "main",
            "commit": first,
            "resolved_by": "local cache (offline)",
        }
    }
    assert isinstance(reads.commits["hub:org/data::train"], HubCommit)
    with pytest.raises(ValueError, match="not a hub: source"):
        resolve_commit("corpus.txt")


def test_card_section_names_each_commit_read_and_says_when_unknown() -> None:
    from skadapt.publish.sections import hub_sources_section
    from skadapt.results import StageManifest

    def manifests(**stages: dict[str, Any]) -> dict[str, StageManifest]:
        return {s: StageManifest(stage=s, status="complete", **fields) for s, fields in stages.items()}

    known = {"repo": "org/c", "revision": "main", "commit": "a" * 40, "resolved_by": "hub"}
    unknown = {"repo": "org/c", "revision": "main", "commit": UNKNOWN_OFFLINE, "resolved_by": UNKNOWN_OFFLINE}
    lines = hub_sources_section(
        manifests(
            trim={"sources": {"hub:org/c": known}},
            finetune={"sources": {}},
            renorm={"sources": {"hub:org/c": unknown}},
            evaluate={},
        )
    )
    assert lines[0] == "## Data read from the Hub"
    assert f"| `hub:org/c` | trim | `main` | `{'a' * 40}` |" in lines
    assert "| `hub:org/c` | renorm | `main` | unknown (offline) |" in lines
    assert hub_sources_section(manifests(trim={"sources": {}}, evaluate={})) == []
    model = {"repo": "org/model", "revision": "main", "commit": "b" * 40, "resolved_by": "hub"}
    with_model = hub_sources_section(
        manifests(**{s: {"sources": {}, "base_model_source": model} for s in ("trim", "evaluate")})
    )
    assert f"| `org/model (base model)` | trim, evaluate | `main` | `{'b' * 40}` |" in with_model
