"""The Matryoshka tiers ``dims-<d>``: plain sentence-transformers directories giving the parent's vectors
truncated and renormalized (after a renormalization Dense), the dimensions they come from, their errors,
their place in the export report and in the evaluation; the int8 speed spread over rounds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from skadapt.export.config import ExportConfig, FitCorpus
from skadapt.export.corpus import read_corpus
from skadapt.export.dims import BASIS_TEXTS, fit_basis, write_dims_tier
from skadapt.export.int8 import cpu_family
from skadapt.export.onnx import ExportError, int8_file
from skadapt.export.stage import export_tiers, needs_corpus
from skadapt.modeldir import record_matryoshka_dims
from skadapt.sources import CorpusSource
from skadapt.tasks.backends import load_sentence_model, tier_parents
from tests.test_export import TEXTS

pytest.importorskip("onnxruntime")

INT8 = int8_file(cpu_family())  # the exporting machine's CPU family (export.quantization: auto)


def _renormed(base: Path, out: Path) -> Path:
    """``base`` with an R1-style renormalization (Dense with a bias, then Normalize), saved at ``out``."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, Normalize

    model = SentenceTransformer(str(base), device="cpu")
    dim = model.get_embedding_dimension()
    dense = Dense(dim, dim, bias=True, activation_function=torch.nn.Identity())
    with torch.no_grad():
        dense.linear.weight.copy_(torch.eye(dim))
        dense.linear.bias.copy_(-torch.linspace(0.05, 0.3, dim))  # moves the prefix's direction
    renormed = SentenceTransformer(modules=[*list(model), dense, Normalize()], device="cpu")
    renormed.prompts = model.prompts
    renormed.save(str(out))
    return out


def _truncated(vectors: np.ndarray, dim: int) -> np.ndarray:
    head = vectors[:, :dim].astype(np.float64)
    return head / np.linalg.norm(head, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def dims_export(
    tiny_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path, dict]:
    root = tmp_path_factory.mktemp("dims")
    parent = _renormed(tiny_models["unigram"], root / "parent")
    out = root / "out"
    out.mkdir()
    config = ExportConfig(tiers=["onnx-int8"], dims=[8, 16], speed_texts=18, speed_repeats=3)
    return parent, out, export_tiers(str(parent), out, config, TEXTS)


@pytest.mark.slow
def test_a_dims_tier_is_the_renormalized_parent_truncated_and_normalized_in_plain_sentence_transformers(
    dims_export: tuple[Path, Path, dict],
) -> None:
    from sentence_transformers import SentenceTransformer

    parent, out, report = dims_export
    assert report["tiers"]["dims-16"] == "dims-16" and report["tiers"]["dims-8"] == "dims-8"
    reference = SentenceTransformer(str(parent), device="cpu").encode(TEXTS, prompt="query: ")
    for dim in (16, 8):
        tier = out / f"dims-{dim}"
        modules = json.loads((tier / "modules.json").read_text(encoding="utf-8"))
        assert all(m["type"].startswith("sentence_transformers.models.") for m in modules)
        assert [m["type"].rsplit(".", 1)[1] for m in modules][-4:] == [
            "Dense",
            "Normalize",
            "Dense",
            "Normalize",
        ]
        plain = SentenceTransformer(str(tier), device="cpu")  # no skadapt, no trust_remote_code
        assert plain.get_embedding_dimension() == dim and plain.prompts["query"] == "query: "
        vectors = plain.encode(TEXTS, prompt_name="query")
        assert vectors.shape == (len(TEXTS), dim)
        assert np.abs(vectors - _truncated(reference, dim)).max() < 1e-6
        # not the truncation of the model before its renormalization
        stack = list(SentenceTransformer(str(parent), device="cpu"))[:3]  # Transformer, Pooling, Normalize
        before = SentenceTransformer(modules=stack, device="cpu").encode(TEXTS, prompt="query: ")
        assert np.abs(vectors - _truncated(before, dim)).max() > 1e-3
        # combined with the int8 encoder: the int8 parent's vectors, truncated and normalized
        int8_parent = load_sentence_model(str(out / "model" / "onnx" / INT8)).encode(TEXTS, prompt="query: ")
        int8_tier = load_sentence_model(str(tier / "onnx" / INT8)).encode(TEXTS, prompt="query: ")
        assert np.abs(int8_tier - _truncated(int8_parent, dim)).max() < 1e-6
    assert (out / "dims-8" / "model.safetensors").stat().st_ino == (
        out / "model" / "model.safetensors"
    ).stat().st_ino


@pytest.mark.slow
def test_the_report_gives_bytes_per_vector_and_the_int8_spread_over_rounds(
    dims_export: tuple[Path, Path, dict],
) -> None:
    _, out, report = dims_export
    assert report["dims"]["dims-16"] == {
        "dimension": 16,
        "basis": "first",  # no corpus: truncation
        "bytes_per_vector": 64,
        "size_mb": report["dims"]["dims-16"]["size_mb"],
        "path": "dims-16",
    }
    assert report["dimension"] == 32 and report["dims"]["dims-8"]["bytes_per_vector"] == 32
    assert abs(report["dims"]["dims-8"]["size_mb"] - report["speed"]["pytorch"]["size_mb"]) < 0.05
    assert list(report["speed"]) == ["pytorch", "onnx-int8"]  # a dims tier runs its parent's encoder
    pytorch, int8 = report["speed"]["pytorch"], report["speed"]["onnx-int8"]
    spread = int8["speedup_rounds"]
    # seconds per pass, rounded to 0.1 ms: a few % of a tiny model's pass, hence the relative tolerance
    ratios = [p / i for p, i in zip(pytorch["passes"], int8["passes"], strict=True)]
    # 3 rounds at most, 2 when they already put every int8 finalist on one side of PyTorch's speed
    rounds = report["speed_rounds"]["rounds"]
    assert rounds in (2, 3) and report["speed_rounds"]["max_rounds"] == 3
    assert (rounds == 2) == (report["speed_rounds"]["why"] == "decided")
    assert spread["rounds"] == rounds and spread["min"] <= spread["median"] <= spread["max"]
    assert spread["min"] == pytest.approx(min(ratios), rel=0.05)
    assert spread["max"] == pytest.approx(max(ratios), rel=0.05)
    assert pytorch["speedup_rounds"] == {"min": 1.0, "median": 1.0, "max": 1.0, "rounds": rounds}
    text = (out / "export.md").read_text(encoding="utf-8")
    assert f"| {spread['min']:.2f} / {spread['median']:.2f} / {spread['max']:.2f} |" in text
    assert "| dims-8 | 8 | first | 32 |" in text and "(parent: 128)" in text
    models = {
        "final": str(dims_export[0]),
        "d8": str(out / "dims-8"),
        "i8": str(out / "model" / "onnx" / INT8),
    }
    assert tier_parents(models) == {"d8": "final", "i8": "final"}  # standalone evaluate finds the parent


@pytest.mark.slow
def test_the_dims_default_to_those_the_model_records(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    parent = tmp_path / "parent"
    shutil.copytree(tiny_models["unigram"], parent)
    config = ExportConfig(tiers=["onnx"], speed_texts=6, speed_repeats=1)
    plain = export_tiers(str(parent), tmp_path / "plain", config, TEXTS[:6])
    assert plain["dims"] == {} and set(plain["tiers"]) == {"onnx"}
    record_matryoshka_dims(parent, [32, 16, 8])
    recorded = export_tiers(str(parent), tmp_path / "recorded", config, TEXTS[:6])
    assert list(recorded["dims"]) == ["dims-16", "dims-8"]
    none = export_tiers(str(parent), tmp_path / "none", config.model_copy(update={"dims": []}), TEXTS[:6])
    assert none["dims"] == {}
    tier_config = json.loads(
        (tmp_path / "recorded" / "dims-8" / "config_sentence_transformers.json").read_text()
    )
    assert "matryoshka_dims" not in tier_config and tier_config["prompts"]["query"] == "query: "


@pytest.mark.parametrize(
    ("dims", "message"),
    [
        ([32, 8], r"export.dims \[32, 8\]: 32 is not below the model's dimension 32"),
        ([64], r"64 is not below"),
    ],
)
def test_dims_not_below_the_model_dimension_fail_before_any_onnx_work(
    tiny_models: dict[str, Path], tmp_path: Path, dims: list[int], message: str
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ExportError, match=message):
        export_tiers(str(tiny_models["unigram"]), out, ExportConfig(tiers=["onnx"], dims=dims), TEXTS)
    assert not any(out.iterdir())


def test_config_rejects_repeated_and_non_positive_dims() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=r"a dimension is named twice: \[8, 8\]"):
        ExportConfig(dims=[8, 8])
    with pytest.raises(ValidationError, match="greater than 0"):
        ExportConfig(dims=[0])


def test_the_plan_counts_the_dims_tiers_among_the_evaluated_models(tmp_path: Path) -> None:
    from skadapt.planning import plan_recipe
    from skadapt.recipe import load_recipe

    sets = [f"output_dir={tmp_path / 'run'}", "finetune.matryoshka_dims=[384,256,128,64]"]
    plan = plan_recipe(load_recipe("recipes/demo_sk.yaml", sets))
    tiers = ["onnx-int8", "static", "dims-256", "dims-128", "dims-64"]
    assert plan.stage("evaluate").work["models"] == ["base", "trim", "plain", "finetune", "renorm", *tiers]
    chosen = plan_recipe(load_recipe("recipes/demo_sk.yaml", [*sets, "export.dims=[32]"]))
    assert chosen.stage("evaluate").work["models"][-1] == "dims-32"


def test_the_card_loads_a_dims_tier_with_truncate_dim() -> None:
    from skadapt.publish.tiers import tiers_markdown

    row = {"tier": "dims-128", "file": None, "mean": 70.1, "delta": -0.5, "low": -0.9, "high": -0.1}
    row |= {"texts_per_s": None, "speedup": None, "size_mb": 147.3, "peak_rss_mb": None}
    text = tiers_markdown([row], "org/model")
    assert '`SentenceTransformer("org/model", truncate_dim=128)`, then normalize' in text
    assert "| dims-128 |" in text and "-0.50 [-0.90, -0.10]" in text and "147.3" in text


@pytest.mark.slow
def test_a_dims_tier_loads_in_a_process_where_skadapt_cannot_be_imported(
    dims_export: tuple[Path, Path, dict],
) -> None:
    import subprocess
    import sys

    from sentence_transformers import SentenceTransformer

    parent, out, _ = dims_export
    script = (
        "import json, sys\n"
        "sys.modules['skadapt'] = None  # any import of skadapt fails\n"
        "from sentence_transformers import SentenceTransformer\n"
        "model = SentenceTransformer(sys.argv[1], device='cpu')\n"
        "print(json.dumps(model.encode(json.loads(sys.argv[2]), prompt_name='query').tolist()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(out / "dims-8"), json.dumps(TEXTS)],
        capture_output=True,
        text=True,
        check=False,
        cwd=out,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    vectors = np.asarray(json.loads(done.stdout.strip().splitlines()[-1]))
    reference = SentenceTransformer(str(parent), device="cpu").encode(TEXTS, prompt="query: ")
    assert vectors.shape == (len(TEXTS), 8) and np.abs(vectors - _truncated(reference, 8)).max() < 1e-6


ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "data/demo_sk/train/sts.jsonl"
"""Hand-written Slovak sentence pairs of the demo's training data: the corpus the basis is fitted on."""
HELDOUT = ROOT / "data/demo_sk/train/sts_dev.jsonl"
"""The demo's STS dev set, written apart from the training pairs: never fitted on here."""


def _sentences(path: Path) -> list[str]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return sorted({r["sentence1"] for r in rows} | {r["sentence2"] for r in rows})


def test_the_corpus_basis_is_the_svd_of_the_corpus_embeddings_and_keeps_more_than_truncation(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    """The basis equals numpy's SVD of the stacked prompt encodings (an independent oracle); the tier is the
    projection on its top d rows, normalized, in plain sentence-transformers; on held-out Slovak texts the
    top 8 directions keep more of each embedding than the first 8 components do."""
    from sentence_transformers import SentenceTransformer

    model_dir = tiny_models["unigram"]
    parent = load_sentence_model(str(model_dir))
    texts = _sentences(TRAIN)
    basis = fit_basis(parent, texts)
    dimension = parent.get_embedding_dimension()
    assert basis.vectors.shape == (dimension, dimension)
    assert np.allclose(basis.vectors @ basis.vectors.T, np.eye(dimension), atol=1e-8)  # a rotation
    prompts = sorted(set(parent.prompts.values()))
    assert basis.report["prompts"] == prompts and basis.report["texts"] == min(len(texts), BASIS_TEXTS)
    stacked = np.concatenate([parent.encode(texts[:BASIS_TEXTS], prompt=p) for p in prompts]).astype(float)
    _, singular, oracle = np.linalg.svd(stacked, full_matrices=False)
    for d in (8, 16):  # the same top-d subspace: the principal cosines are all 1
        cosines = np.linalg.svd(oracle[:d] @ basis.vectors[:d].T, compute_uv=False)
        assert cosines.min() > 1 - 1e-6
    assert basis.report["energy_kept"][16] == pytest.approx(
        float(np.sum(singular[:16] ** 2) / np.sum(singular**2)), abs=1e-4
    )
    tier = write_dims_tier(model_dir, tmp_path / "dims-8", 8, dimension, basis)
    assert tier["basis"] == "corpus" and tier["bytes_per_vector"] == 32
    heldout = _sentences(HELDOUT)
    full = parent.encode(heldout, prompt="query: ").astype(float)
    vectors = SentenceTransformer(str(tmp_path / "dims-8"), device="cpu").encode(heldout, prompt_name="query")
    projected = full @ basis.vectors[:8].T
    assert np.abs(vectors - projected / np.linalg.norm(projected, axis=1, keepdims=True)).max() < 1e-5
    kept_basis = float(np.mean(np.sum(projected**2, axis=1)))
    kept_first = float(np.mean(np.sum(full[:, :8] ** 2, axis=1)))
    assert kept_basis > kept_first


def test_the_export_fits_a_corpus_only_for_what_needs_one(tiny_models: dict[str, Path]) -> None:
    model = str(tiny_models["unigram"])  # records no Matryoshka dimensions
    assert needs_corpus(ExportConfig(tiers=["static"]), model)  # the trained static tier
    assert not needs_corpus(ExportConfig(tiers=["static"], static_training=None), model)
    assert needs_corpus(ExportConfig(tiers=["onnx"], dims=[8]), model)
    assert not needs_corpus(ExportConfig(tiers=["onnx"], dims=[8], dims_basis="first"), model)
    assert not needs_corpus(ExportConfig(tiers=["onnx"]), model)  # no dims tier at all


PLAIN_LOAD = (
    "import json, sys\n"
    "sys.modules['skadapt'] = None  # any import of skadapt fails\n"
    "from sentence_transformers import SentenceTransformer\n"
    "texts = json.loads(sys.argv[1])\n"
    "for path in sys.argv[2:]:\n"
    "    model = SentenceTransformer(path, device='cpu')\n"
    "    print(json.dumps(model.encode(texts).tolist()))\n"
)
"""Encode with each model directory given, in a process where skadapt cannot be imported."""


@pytest.mark.slow
def test_the_export_reports_the_corpus_basis_and_its_tiers_load_without_skadapt(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    """One export with a corpus: the trained static tier and the corpus-basis dims tiers, reported, and each
    loading in plain sentence-transformers in a process where skadapt cannot be imported, giving the
    vectors skadapt's own loading gives."""
    import subprocess
    import sys

    model = str(tiny_models["unigram"])
    fit = FitCorpus(sources=[{"source": str(TRAIN), "columns": ["sentence1", "sentence2"]}])
    corpus = read_corpus(
        [CorpusSource(source=str(TRAIN), columns=["sentence1", "sentence2"])],
        fit,
        exclude=set(),
        language="sk",
        seed=0,
    )
    config = ExportConfig(
        tiers=["static"], pca_dims=16, dims=[16, 8], speed_texts=6, speed_repeats=1, corpus=fit
    )
    out = tmp_path / "out"
    out.mkdir()
    report = export_tiers(model, out, config, TEXTS[:6], corpus, 0)
    assert report["static"]["method"] == "trained"
    assert {tier["basis"] for tier in report["dims"].values()} == {"corpus"}
    basis = report["dims_basis"]["bases"]["corpus"]
    assert basis["texts"] == len(corpus.texts) and basis["seconds"] >= 0
    assert [c["chosen"] for c in report["dims_basis"]["choices"]] == ["corpus", "corpus"]  # no dev sets
    text = (out / "export.md").read_text(encoding="utf-8")
    assert f"the top d directions of its embeddings of the corpus: {len(corpus.texts)} corpus texts" in text
    assert "dims-8: corpus (no dev sets: the default basis, not chosen on dev)" in text
    tiers = [out / "static", out / "dims-16", out / "dims-8"]
    done = subprocess.run(
        [sys.executable, "-c", PLAIN_LOAD, json.dumps(TEXTS), *map(str, tiers)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()[-len(tiers) :]
    for tier, line in zip(tiers, lines, strict=True):
        plain = np.asarray(json.loads(line))
        ours = load_sentence_model(str(tier)).encode(TEXTS)
        assert plain.shape == ours.shape and np.abs(plain - ours).max() < 1e-5, tier.name
