"""The real Hugging Face clients against the local Hub (tests/support/hub_server.py,
tests/support/hub_fixtures.py).

Every client call runs in a subprocess (:class:`tests.support.hub_fixtures.HubClient`) whose ``HF_ENDPOINT``
is the local Hub: ``huggingface_hub``, ``datasets``, ``sentence-transformers``, ``mteb`` and skadapt's readers
do their own HTTP. A request the Hub has no route for fails the test (the ``hub`` fixture).
"""

from __future__ import annotations

import hashlib
import http.client
import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.support.hub_fixtures import (
    E5_ID,
    E5_REVISION,
    FINEWEB2_ID,
    FINEWEB2_REVISION,
    FINEWEB2_TEXTS,
    HF_TOKEN,
    HUB_DATA,
    SKLEP_ID,
    SKLEP_NLI_LABELS,
    SKLEP_REVISION,
    SKLEP_RTE_LABELS,
    HubClient,
    fineweb2_files,
    fineweb2_rows,
    sklep_rows,
    write_fixture_repos,
)
from tests.support.hub_server import HubStore, LocalHub, file_hashes, iter_files

FW = HUB_DATA / "datasets" / FINEWEB2_ID / FINEWEB2_REVISION
SK = HUB_DATA / "datasets" / SKLEP_ID / SKLEP_REVISION
IDS = f"""
FW, FW_REV = {FINEWEB2_ID!r}, {FINEWEB2_REVISION!r}
SK, SK_REV = {SKLEP_ID!r}, {SKLEP_REVISION!r}
E5, E5_REV = {E5_ID!r}, {E5_REVISION!r}
"""
SLK_TRAIN = [text for shard in FINEWEB2_TEXTS["slk_Latn"]["train"] for text in shard]


def test_fixture_folder_matches_its_generator(tmp_path: Path) -> None:
    """The committed FineWeb2 and skLEP files hold what tests/support/hub_fixtures.py writes, and load as
    repositories (other repositories may sit beside them: files only)."""
    import pyarrow.parquet as pq

    written = write_fixture_repos(tmp_path)
    assert sorted(p.relative_to(tmp_path) for p in written) == sorted(
        p.relative_to(HUB_DATA) for repo in (FW, SK) for p in repo.rglob("*") if p.is_file()
    )
    for path in written:
        committed = HUB_DATA / path.relative_to(tmp_path)
        if path.suffix == ".parquet":
            assert pq.read_table(committed).equals(pq.read_table(path)), committed
        else:
            assert committed.read_bytes() == path.read_bytes(), committed
    store = HubStore()
    repos = {(r.repo_type, r.repo_id): r for r in store.load(HUB_DATA)}
    assert repos[("dataset", FINEWEB2_ID)].refs == {"main": FINEWEB2_REVISION}
    assert repos[("dataset", SKLEP_ID)].refs == {"main": SKLEP_REVISION}
    assert sorted(store.get("dataset", FINEWEB2_ID).files(FINEWEB2_REVISION)) == sorted(
        ["README.md", *(path for path, _ in fineweb2_files())]
    )


def _http(hub: LocalHub, method: str, target: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """One plain HTTP request (a path on the Hub, or a URL) with no client library, no redirect followed."""
    url = urlsplit(target if target.startswith("http://") else hub.url + target)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    try:
        connection.request(method, f"{url.path}?{url.query}" if url.query else url.path, headers=headers)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def test_resolve_headers_ranges_redirects_and_errors_over_plain_http(hub: LocalHub) -> None:
    """The server's HTTP details, without a client library in between."""
    readme, parquet = FW / "README.md", FW / "data/slk_Latn/train/000_00000.parquet"
    base = f"/datasets/{FINEWEB2_ID}/resolve"
    status, headers, body = _http(hub, "HEAD", f"{base}/main/README.md")
    assert (status, body) == (200, b"")
    assert headers["ETag"] == f'"{file_hashes(readme)[0]}"' and headers["X-Repo-Commit"] == FINEWEB2_REVISION
    assert headers["Content-Length"] == str(readme.stat().st_size) and headers["Accept-Ranges"] == "bytes"
    size = readme.stat().st_size
    status, headers, body = _http(hub, "GET", f"{base}/{FINEWEB2_REVISION}/README.md", Range="bytes=-10")
    assert (status, headers["Content-Range"], body) == (
        206,
        f"bytes {size - 10}-{size - 1}/{size}",
        readme.read_bytes()[-10:],
    )
    status, headers, _ = _http(hub, "GET", f"{base}/main/README.md", Range=f"bytes={size}-")
    assert (status, headers["Content-Range"]) == (416, f"bytes */{size}")
    # An LFS file: 302 to the CDN (another origin) with the linked ETag and size; the CDN serves ranges.
    status, headers, _ = _http(hub, "HEAD", f"{base}/main/data/slk_Latn/train/000_00000.parquet")
    sha256 = file_hashes(parquet)[1]
    assert status == 302 and headers["Location"].startswith(f"{hub.cdn_url}/lfs/{sha256}?")
    assert (headers["X-Linked-Etag"], headers["X-Linked-Size"]) == (
        f'"{sha256}"',
        str(parquet.stat().st_size),
    )
    status, _, body = _http(hub, "GET", headers["Location"], Range="bytes=0-3")
    assert (status, body) == (206, b"PAR1")
    hub.lfs_redirect = False
    status, headers, body = _http(hub, "GET", f"{base}/main/data/slk_Latn/train/000_00000.parquet")
    assert (status, headers["X-Linked-Etag"], body) == (200, f'"{sha256}"', parquet.read_bytes())
    # The Hub's errors, and a request no route answers (logged as a gap).
    status, headers, body = _http(hub, "GET", f"{base}/main/missing.txt")
    assert (status, headers["X-Error-Code"], headers["X-Repo-Commit"]) == (
        404,
        "EntryNotFound",
        FINEWEB2_REVISION,
    )
    assert json.loads(body) == {"error": "Entry not found"}
    assert _http(hub, "GET", "/api/datasets/nobody/nothing")[1]["X-Error-Code"] == "RepoNotFound"
    assert (
        _http(hub, "GET", f"/api/datasets/{FINEWEB2_ID}/revision/v0")[1]["X-Error-Code"] == "RevisionNotFound"
    )
    assert _http(hub, "GET", "/api/spaces/some/space")[0] == 404
    assert hub.unexpected == ["GET /api/spaces/some/space"]
    hub.unexpected.clear()
    # Outages: 503 with Retry-After, then connections reset.
    hub.outage("503")
    status, headers, _ = _http(hub, "GET", "/api/datasets/nobody/nothing")
    assert (status, headers["Retry-After"]) == (503, "0")
    hub.outage("reset")
    with pytest.raises(OSError):
        _http(hub, "GET", f"/api/datasets/{FINEWEB2_ID}")


def test_repo_info_tree_and_paths_info(hub_client: HubClient) -> None:
    result = hub_client.run(
        IDS
        + """
from huggingface_hub import HfApi
api = HfApi()
info = api.dataset_info(FW, revision=FW_REV)
emit("sha", [info.sha, api.dataset_info(FW).sha, api.repo_info(SK, repo_type="dataset").sha])
emit("siblings", [s.rfilename for s in info.siblings])
emit("configs", {c["config_name"]: c["data_files"] for c in info.card_data["configs"]})
emit("files", api.list_repo_files(FW, repo_type="dataset", revision=FW_REV))
tree = api.list_repo_tree(FW, "data/slk_Latn", repo_type="dataset", revision=FW_REV, recursive=True)
emit("tree", [[e.path, type(e).__name__] for e in tree])
paths = ["README.md", "data/slk_Latn/train/000_00001.parquet", "data/slk_Latn", "data/nothing.parquet"]
found = api.get_paths_info(FW, paths, repo_type="dataset", revision=FW_REV)
emit("paths", [[e.path, getattr(e, "size", None), getattr(e, "blob_id", None),
                e.lfs.sha256 if getattr(e, "lfs", None) else None] for e in found])
blobs = api.dataset_info(SK, revision=SK_REV, files_metadata=True)
emit("sizes", {s.rfilename: [s.size, s.blob_id, s.lfs] for s in blobs.siblings})
"""
    )
    assert result["sha"] == [FINEWEB2_REVISION, FINEWEB2_REVISION, SKLEP_REVISION]
    files = sorted(p.relative_to(FW).as_posix() for p in FW.rglob("*") if p.is_file())
    assert sorted(result["siblings"]) == sorted(result["files"]) == files
    assert result["configs"]["slk_Latn"] == [
        {"split": "train", "path": "data/slk_Latn/train/*"},
        {"split": "test", "path": "data/slk_Latn/test/*"},
    ]
    assert result["tree"] == [
        ["data/slk_Latn/test", "RepoFolder"],
        ["data/slk_Latn/test/000_00000.parquet", "RepoFile"],
        ["data/slk_Latn/train", "RepoFolder"],
        ["data/slk_Latn/train/000_00000.parquet", "RepoFile"],
        ["data/slk_Latn/train/000_00001.parquet", "RepoFile"],
    ]
    shard = FW / "data/slk_Latn/train/000_00001.parquet"
    blob, sha256 = file_hashes(shard)
    readme_blob, _ = file_hashes(FW / "README.md")
    assert result["paths"] == [
        ["README.md", (FW / "README.md").stat().st_size, readme_blob, None],
        ["data/slk_Latn/train/000_00001.parquet", shard.stat().st_size, blob, sha256],
        ["data/slk_Latn", None, None, None],
    ]
    nli = SK / "nli/train.json"
    assert result["sizes"]["nli/train.json"] == [nli.stat().st_size, file_hashes(nli)[0], None]


def test_tree_listing_is_paginated(hub_client: HubClient, hub: LocalHub) -> None:
    hub.page_size = 4
    result = hub_client.run(
        IDS
        + 'from huggingface_hub import HfApi\nemit("files", HfApi().list_repo_files(FW, repo_type="dataset"))'
    )
    assert len(result["files"]) == 8
    entries = 8 + 10  # files + folders (data, 3 languages, 6 splits)
    assert len(hub.served("/tree/main", "GET")) == -(-entries // 4)


def test_hf_hub_download_headers_bytes_and_range_reads(hub_client: HubClient, hub: LocalHub) -> None:
    result = hub_client.run(
        IDS
        + """
from huggingface_hub import HfFileSystem, get_hf_file_metadata, hf_hub_download, hf_hub_url
files = [("lfs", "data/slk_Latn/train/000_00000.parquet", FW_REV), ("text", "README.md", "main")]
for name, path, revision in files:
    meta = get_hf_file_metadata(hf_hub_url(FW, path, repo_type="dataset", revision=revision))
    emit(name, {"etag": meta.etag, "commit": meta.commit_hash, "size": meta.size, "location": meta.location,
                "file": hf_hub_download(FW, path, repo_type="dataset", revision=revision)})
remote = f"datasets/{FW}@{FW_REV}/data/ces_Latn/test/000_00000.parquet"
with HfFileSystem().open(remote, "rb", block_size=16) as f:
    f.seek(4)
    emit("range", f.read(12).hex())
"""
    )
    parquet, readme = FW / "data/slk_Latn/train/000_00000.parquet", FW / "README.md"
    lfs, text = result["lfs"], result["text"]
    assert lfs["etag"] == file_hashes(parquet)[1] == hashlib.sha256(parquet.read_bytes()).hexdigest()
    assert text["etag"] == file_hashes(readme)[0]  # the git blob id of a regular file
    assert lfs["commit"] == text["commit"] == FINEWEB2_REVISION
    assert (lfs["size"], text["size"]) == (parquet.stat().st_size, readme.stat().st_size)
    assert lfs["location"].startswith(hub.cdn_url + "/lfs/")  # LFS files redirect to the CDN
    assert text["location"] == f"{hub.url}/datasets/{FINEWEB2_ID}/resolve/main/README.md"
    for meta, source in [(lfs, parquet), (text, readme)]:
        assert f"/snapshots/{FINEWEB2_REVISION}/" in meta["file"]
        assert Path(meta["file"]).read_bytes() == source.read_bytes()
    assert bytes.fromhex(result["range"]) == (FW / "data/ces_Latn/test/000_00000.parquet").read_bytes()[4:16]
    ranged = [r for r in hub.served("/lfs/", "GET") if r.status == 206]
    assert ranged and all(r.server == "cdn" and r.range.startswith("bytes=") for r in ranged)


def test_unknown_repo_revision_and_file_raise_the_hub_errors(hub_client: HubClient) -> None:
    result = hub_client.run(
        IDS
        + """
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import RemoteEntryNotFoundError, RepositoryNotFoundError, RevisionNotFoundError
api = HfApi()
calls = {
    "repo": lambda: api.dataset_info("nobody/nothing"),
    "repo_type": lambda: api.model_info(FW),
    "revision": lambda: api.dataset_info(FW, revision="0" * 40),
    "tree_revision": lambda: list(api.list_repo_tree(FW, repo_type="dataset", revision="v9.9")),
    "download_repo": lambda: hf_hub_download("nobody/nothing", "README.md", repo_type="dataset"),
    "download_revision": lambda: hf_hub_download(FW, "README.md", repo_type="dataset", revision="no-branch"),
    "download_file": lambda: hf_hub_download(FW, "data/no.parquet", repo_type="dataset", revision=FW_REV),
    "tree_path": lambda: list(api.list_repo_tree(FW, "nowhere", repo_type="dataset")),
}
for name, call in calls.items():
    try:
        call()
    except (RepositoryNotFoundError, RevisionNotFoundError, RemoteEntryNotFoundError) as error:
        emit(name, type(error).__name__)
"""
    )
    assert result == {
        "repo": "RepositoryNotFoundError",
        "repo_type": "RepositoryNotFoundError",
        "revision": "RevisionNotFoundError",
        "tree_revision": "RevisionNotFoundError",
        "download_repo": "RepositoryNotFoundError",
        "download_revision": "RevisionNotFoundError",
        "download_file": "RemoteEntryNotFoundError",
        "tree_path": "RemoteEntryNotFoundError",
    }


GATED_CODE = """
import os
from datasets import load_dataset
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import GatedRepoError

NLI, NLI_REV = "natalia-nk/NLI-SK-annotated", "79914f425b59d8b9fabb6d38c37f6d81f9723f46"
api = HfApi()
emit("gated", api.dataset_info(NLI, revision=NLI_REV).gated)  # the info is public
emit("files", len(api.list_repo_files(NLI, repo_type="dataset")))  # so is the listing
for name, call in {
    "auth_check": lambda: api.auth_check(NLI, repo_type="dataset"),
    "download": lambda: hf_hub_download(NLI, "README.md", repo_type="dataset", revision=NLI_REV),
}.items():
    try:
        call()
        emit(name, "opened")
    except GatedRepoError as error:
        emit(name, [error.response.status_code, str(error).splitlines()[-1]])
try:
    rows = load_dataset(NLI, revision=NLI_REV, split="test")
    emit("load_dataset", len(rows))
except Exception as error:
    emit("load_dataset", f"{type(error).__name__}: {error}")
"""


@pytest.mark.parametrize("token", [None, "denied", "granted"])
def test_a_gated_repo_needs_a_token_that_accepted_its_terms(
    hub: LocalHub, tmp_path: Path, token: str | None
) -> None:
    """As the Hub: info and listing are public; files and auth-check answer GatedRepo 401 without a token and
    403 for a token that has not accepted the terms, which huggingface_hub raises as GatedRepoError and
    datasets words as the Hub's; a token with access opens the repository."""
    hub.denied_tokens.add("hf_denied")
    given = {"denied": "hf_denied", "granted": HF_TOKEN}.get(token or "")
    result = HubClient(hub, tmp_path, token=given).run(GATED_CODE)
    assert result["gated"] == "auto" and result["files"] > 1
    if token == "granted":
        assert result["auth_check"] == result["download"] == "opened" and result["load_dataset"] > 0
        return
    status = 401 if token is None else 403
    assert result["auth_check"][0] == result["download"][0] == status, result
    assert "Access to dataset natalia-nk/NLI-SK-annotated is restricted" in result["download"][1]
    expected = "You must be authenticated" if token is None else "Visit the dataset page"
    assert "is a gated dataset on the Hub" in result["load_dataset"] and expected in result["load_dataset"]


def test_snapshot_download_of_the_model_repo(hub_client: HubClient, hub_e5: Path) -> None:
    result = hub_client.run(
        IDS + 'from huggingface_hub import snapshot_download\nemit("path", snapshot_download(E5))'
    )
    path = Path(result["path"])
    assert path.name == E5_REVISION
    assert list(iter_files(path)) == list(iter_files(hub_e5))


def test_load_dataset_streams_fineweb2(hub_client: HubClient, hub: LocalHub) -> None:
    result = hub_client.run(
        IDS
        + """
import datasets
stream = datasets.load_dataset(FW, "slk_Latn", split="train", streaming=True, revision=FW_REV)
emit("features", {name: str(feature) for name, feature in stream.features.items()})
emit("train", list(stream))
emit("test", list(datasets.load_dataset(FW, "ukr_Cyrl", split="test", streaming=True, revision=FW_REV)))
emit("ces", list(datasets.load_dataset(FW, "ces_Latn", revision="main")["train"]["text"]))
"""
    )
    assert result["train"] == fineweb2_rows("slk_Latn", "train", 0) + fineweb2_rows("slk_Latn", "train", 1)
    assert result["test"] == fineweb2_rows("ukr_Cyrl", "test", 0)
    assert result["ces"] == FINEWEB2_TEXTS["ces_Latn"]["train"][0]
    assert result["features"]["language_score"] == "Value('float64')"
    assert result["features"]["minhash_cluster_size"] == "Value('int64')"
    streamed = [r for r in hub.served("/lfs/", "GET") if r.status == 206]
    assert len(streamed) >= 2  # parquet is read with HTTP range requests, through the LFS redirect


def test_load_dataset_sklep_has_classlabel_names(hub_client: HubClient) -> None:
    result = hub_client.run(
        IDS
        + """
import datasets
nli = datasets.load_dataset(SK, "nli", split="train", revision=SK_REV)
emit("nli_names", nli.features["label"].names)
emit("nli", nli.to_list())
rte = datasets.load_dataset(SK, "rte", split="test", streaming=True)
emit("rte_names", rte.features["label"].names)
emit("rte", list(rte))
for config in ("question-answering", "sts"):
    data = datasets.load_dataset(SK, config, revision=SK_REV)
    emit(config, {split: data[split].to_list() for split in data})
"""
    )
    assert result["nli_names"] == SKLEP_NLI_LABELS
    assert result["rte_names"] == SKLEP_RTE_LABELS
    assert result["nli"] == sklep_rows("nli", "train")
    assert result["rte"] == sklep_rows("rte", "test")
    qa = result["question-answering"]
    assert sorted(qa) == ["test", "train", "validation"]
    assert qa["train"] == sklep_rows("question-answering", "train")
    assert [row["sentence1"] for row in result["sts"]["test"]] == [
        r["sentence1"] for r in sklep_rows("sts", "test")
    ]


@pytest.mark.slow
def test_skadapt_readers_and_recipe_datasets_through_the_hub(hub_client: HubClient) -> None:
    result = hub_client.run(
        IDS
        + """
from skadapt.recipe import load_recipe
from skadapt.sources import iter_texts, read_rows
from skadapt.train.datasets import build_task_dataset
emit("texts", list(iter_texts(f"hub:{FW}:slk_Latn:train@{FW_REV}", "text")))
source = read_rows(f"hub:{SK}:nli:train@{SK_REV}")
emit("label_names", source.label_names)
emit("rows", [row for _, row in source.rows])
recipe = load_recipe("recipes/e5_sk_small.yaml")
emit("built", {d.name: [d.source, build_task_dataset(d).stats["examples"]] for d in recipe.finetune.datasets})
from skadapt.tasks.dev import build_dev_sets, check_first_row
emit("dev_checked", [check_first_row(s) for s in recipe.finetune.dev.sets])
built = build_dev_sets(recipe.finetune.dev)
emit("dev", [[r["source"], r["rows"], r["examples"]] for d in built for r in d.report])
"""
    )
    assert result["texts"] == SLK_TRAIN
    assert result["label_names"] == {"label": SKLEP_NLI_LABELS}
    assert result["rows"] == sklep_rows("nli", "train")
    # The recipe's four skLEP sources at mteb's pinned revision: QA pairs, NLI triplets (one per premise),
    # RTE entailment pairs, STS pairs.
    assert {name: examples for name, (_, examples) in result["built"].items()} == {
        "skquad": 3,
        "nli": 3,
        "rte": 2,
        "sts": 4,
    }
    assert all(source.endswith(f"@{SKLEP_REVISION}") for source, _ in result["built"].values())
    # The recipe's dev sets: skLEP's validation splits at the same pin, NLI/RTE labels through their
    # ClassLabel names; rows read -> examples (QA: questions; NLI: one triplet per premise).
    validation = {
        config: len(sklep_rows(config, "validation"))
        for config in ("question-answering", "sts", "nli", "rte")
    }
    assert result["dev"] == [
        [f"hub:{SKLEP_ID}:{config}:validation@{SKLEP_REVISION}", rows, examples]
        for config, rows, examples in [
            ("question-answering", validation["question-answering"], 4),
            ("sts", validation["sts"], 6),
            ("nli", validation["nli"], 3),
            ("rte", validation["rte"], 4),
        ]
    ]
    assert result["dev_checked"][2].endswith(f"labels {', '.join(SKLEP_NLI_LABELS)}")
    assert result["dev_checked"][3].endswith(f"labels {', '.join(SKLEP_RTE_LABELS)}")


@pytest.mark.slow
def test_outages_fail_the_open_or_interrupt_the_stream_and_the_read_resumes(
    hub_client: HubClient, hub: LocalHub
) -> None:
    """503s before a read: the source fails to open (SourceError, nothing read). 503s from the second data
    file on: SourceInterrupted after the first file's rows; its resume state then reads exactly the rest."""
    result = hub_client.run(
        IDS
        + """
import json
import datasets
# datasets retries a dropped stream 20 times, 20 s apart (after huggingface_hub's own 5 retries): one
# try, no pause, keeps the test short; the way to SourceInterrupted is the same.
datasets.config.STREAMING_READ_MAX_RETRIES = 1
datasets.config.STREAMING_READ_RETRY_INTERVAL = 0
datasets.config.STREAMING_READ_SERVER_UNAVAILABLE_RETRY_INTERVAL = 0
from skadapt.sources import SourceError, SourceInterrupted, iter_texts
spec = f"hub:{FW}:slk_Latn:train@{FW_REV}"
pause("outage")
try:
    next(iter_texts(spec))
except SourceInterrupted:
    emit("opened", "SourceInterrupted")
except SourceError as error:
    emit("opened", str(error))
pause("outage from the second file")
read = []
try:
    for text in iter_texts(spec):
        read.append(text)
except SourceInterrupted as error:
    emit("interrupted", {"rows": error.rows, "source": error.source, "message": str(error)})
    state = json.loads(json.dumps(error.resume_state))
emit("read", read)
pause("restore")
emit("rest", list(iter_texts(spec, resume_state=state)))
""",
        events={
            "outage": lambda: hub.outage("503"),
            "outage from the second file": lambda: hub.outage(
                "503", trigger="slk_Latn/train/000_00001.parquet"
            ),
            "restore": hub.restore,
        },
    )
    spec = f"hub:{FINEWEB2_ID}:slk_Latn:train@{FINEWEB2_REVISION}"
    assert result["opened"].startswith(f"cannot open {spec} (")
    first, second = FINEWEB2_TEXTS["slk_Latn"]["train"]
    assert result["read"] == first
    interrupted = result["interrupted"]
    assert interrupted["rows"] == len(first)
    assert interrupted["source"] == spec
    assert interrupted["message"].startswith(f"{spec}: the stream broke off after 3 rows")
    assert result["rest"] == second  # exactly the rows not read yet
    assert any(r.status == 503 and "000_00001" in r.path for r in hub.requests)


def test_hub_down_serves_cached_files_until_it_is_back(hub_client: HubClient, hub: LocalHub) -> None:
    """The Hub unreachable (connections refused): a file cached at ``main`` still resolves, from the cache;
    once the Hub is back, clients reach it again."""
    seen: dict[str, int] = {}

    def down() -> None:
        hub.outage("down")
        seen["requests"] = len(hub.requests)

    result = hub_client.run(
        IDS
        + """
from huggingface_hub import hf_hub_download
cached = hf_hub_download(FW, "README.md", repo_type="dataset")
pause("down")
emit("cached", hf_hub_download(FW, "README.md", repo_type="dataset") == cached)
""",
        events={"down": down},
    )
    assert result == {"cached": True}
    assert len(hub.requests) == seen["requests"]  # nothing reached the Hub while it was down
    hub.restore()
    again = HubClient(hub, hub_client.home / "again")
    assert again.run(
        IDS + 'from huggingface_hub import HfApi\nemit("sha", HfApi().dataset_info(SK).sha)'
    ) == {"sha": SKLEP_REVISION}


@pytest.mark.slow
def test_sentence_transformer_loads_the_model_from_the_hub(
    hub_client: HubClient, hub_e5: Path, hub: LocalHub
) -> None:
    result = hub_client.run(
        IDS
        + f"""
from sentence_transformers import SentenceTransformer
texts = ["Bratislava je hlavné mesto Slovenska.", "Zajtra bude pršať."]
model = SentenceTransformer(E5, device="cpu")
local = SentenceTransformer({str(hub_e5)!r}, device="cpu")
hub_vectors, local_vectors = model.encode(texts), local.encode(texts)
emit("shape", list(hub_vectors.shape))
emit("difference", float(abs(hub_vectors - local_vectors).max()))
emit("prompts", model.prompts)
"""
    )
    assert result["shape"] == [2, 32]
    assert result["difference"] < 1e-6
    assert result["prompts"]["query"] == "query: "
    assert hub.served(f"/{E5_ID}/resolve/", "GET") and hub.served("/lfs/", "GET")  # weights via the CDN


@pytest.mark.slow
def test_mteb_slovak_rte_loads_skleps_pinned_revision(hub_client: HubClient, hub: LocalHub) -> None:
    """mteb's SlovakRTE reads skLEP's ``rte`` config at the revision mteb pins."""
    result = hub_client.run(
        """
import mteb
task = mteb.get_task("SlovakRTE")
emit("dataset", task.metadata.dataset)
task.load_data()
test = task.dataset["test"][0]
emit("test", {key: list(test[key]) for key in ("sentence1", "sentence2", "labels")})
"""
    )
    assert result["dataset"] == {"path": SKLEP_ID, "revision": SKLEP_REVISION, "name": "rte"}
    rows = sklep_rows("rte", "test")
    assert result["test"] == {
        "sentence1": [r["text1"] for r in rows],
        "sentence2": [r["text2"] for r in rows],
        "labels": [1 if r["label_text"] == "entailment" else 0 for r in rows],
    }
    assert hub.served(f"/datasets/{SKLEP_ID}/resolve/{SKLEP_REVISION}/rte/test.json", "GET")
