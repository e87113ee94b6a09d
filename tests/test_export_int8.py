"""The int8 tier: real onnxruntime variants, each loadable; the choice on dev (faster than the parent and
within 0.5 dev points, else marked); the plain wording of a slower tier in the export report and the card;
one measuring process per model for all speed rounds."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from skadapt.export.int8 import MAX_DEV_LOSS, choose, cpu_family, cpu_flags, make_variants, variants
from skadapt.results import ExportReport
from skadapt.results.export import Int8Candidate
from skadapt.tasks.backends import load_sentence_model

pytest.importorskip("onnxruntime")

TEXTS = [
    "Prší a fúka vietor.",
    "Zajtra bude slnečno a teplo, povedal meteorológ v rannom vysielaní.",
    "Hokejisti vyhrali.",
    "Električka ide do centra mesta každých desať minút.",
    "Most je nový.",
    "Radnica na námestí je najstaršou budovou v meste.",
]
CORPUS = [f"Veta číslo {i} hovorí o meste, počasí a doprave." for i in range(40)]


@pytest.fixture(scope="module")
def made(tiny_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    """Every variant of the tiny model's fp32 export, scored on a small STS dev set."""
    from skadapt.export.onnx import copy_model_dir, export_fp32
    from skadapt.modeldir import finalize_model_dir
    from skadapt.tasks.config import DevSets

    root = tmp_path_factory.mktemp("int8")
    model_dir = root / "model"
    copy_model_dir(tiny_models["unigram"], model_dir)
    finalize_model_dir(model_dir)  # the portable module names, as the export stage writes them
    model = load_sentence_model(str(model_dir))
    fp32 = model_dir / "onnx" / "model.onnx"
    inputs = export_fp32(model, fp32)
    dev_file = root / "sts_dev.jsonl"
    rows = [{"sentence1": CORPUS[i], "sentence2": TEXTS[i % 6], "score": i % 6} for i in range(24)]
    dev_file.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    dev = DevSets(sets=[{"kind": "sts", "source": str(dev_file), "score_range": [0, 5]}])
    found = make_variants(model, fp32, inputs, "avx512_vnni", corpus_texts=CORPUS, dev=dev, batch_size=8)
    return model_dir, found


def test_every_variant_is_a_real_onnxruntime_quantization(made: tuple[Path, object]) -> None:
    import onnx

    _, found = made
    names = [item.variant.name for item in found.made]
    assert names == [
        "dynamic",
        "dynamic-gather-fp32",
        "dynamic-gather-fp32-per-tensor",
        "dynamic-gather-fp32-7-bit",
        "static-qdq",
    ]
    for item in found.made:
        graph = onnx.load(str(item.path)).graph
        ops = {node.op_type for node in graph.node}
        int8 = [
            t for t in graph.initializer if t.data_type in (onnx.TensorProto.INT8, onnx.TensorProto.UINT8)
        ]
        assert int8, item.variant.name
        float_tables = [
            t for t in graph.initializer if t.data_type == onnx.TensorProto.FLOAT and len(t.dims) == 2
        ]
        gathered = {n.input[0] for n in graph.node if n.op_type == "Gather"}
        if item.variant.gather_int8:  # the embedding tables quantized: no fp32 table feeds a Gather
            assert not gathered & {t.name for t in float_tables}, item.variant.name
        else:
            assert gathered & {t.name for t in float_tables}, item.variant.name
        if item.variant.method == "static":
            assert {"QuantizeLinear", "DequantizeLinear"} <= ops
        else:
            assert ops & {"DynamicQuantizeLinear", "MatMulInteger", "DynamicQuantizeMatMul"}
        scales = [
            t for t in graph.initializer if t.name.endswith("_scale") and len(t.dims) == 1 and t.dims[0] > 1
        ]
        assert bool(scales) == item.variant.per_channel, item.variant.name
    assert found.parent_dev is not None and all(item.dev is not None for item in found.made)
    assert found.agreement_texts == "30 dev texts"  # 24 distinct first sentences, 6 distinct second ones
    assert all(0.9 < item.agreement <= 1.0 + 1e-9 for item in found.made)


def test_every_variant_loads_and_encodes_close_to_its_parent(made: tuple[Path, object]) -> None:
    model_dir, found = made
    parent = load_sentence_model(str(model_dir)).encode(TEXTS)
    for item in found.made:
        own = load_sentence_model(str(item.path)).encode(TEXTS)
        cosine = (own * parent).sum(1) / (np.linalg.norm(own, axis=1) * np.linalg.norm(parent, axis=1))
        assert cosine.min() > 0.9, item.variant.name


@pytest.mark.skipif(
    not os.environ.get("SKADAPT_PLAIN_PYTHON"),
    reason="needs SKADAPT_PLAIN_PYTHON: a Python with sentence-transformers[onnx] (optimum) and no skadapt",
)
def test_plain_sentence_transformers_onnx_backend_loads_every_variant(
    made: tuple[Path, object], tmp_path: Path
) -> None:
    """``SentenceTransformer(dir, backend="onnx", model_kwargs={"file_name": ...})`` in a Python without
    skadapt loads each variant and gives skadapt's embeddings (the tokenizer class named for transformers 4,
    as in tests/test_export.py)."""
    import shutil

    model_dir, found = made
    plain = tmp_path / "model"
    shutil.copytree(model_dir, plain)
    config = plain / "tokenizer_config.json"
    config.write_text(
        json.dumps({**json.loads(config.read_text()), "tokenizer_class": "PreTrainedTokenizerFast"}),
        encoding="utf-8",
    )
    files = [f"onnx/{item.path.name}" for item in found.made]
    script = (
        "import json, sys\n"
        "from sentence_transformers import SentenceTransformer\n"
        "for name in json.loads(sys.argv[2]):\n"
        "    m = SentenceTransformer(sys.argv[1], backend='onnx', model_kwargs={'file_name': name})\n"
        "    print(json.dumps(m.encode(json.loads(sys.argv[3])).tolist()))\n"
    )
    done = subprocess.run(
        [os.environ["SKADAPT_PLAIN_PYTHON"], "-c", script, str(plain), json.dumps(files), json.dumps(TEXTS)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()[-len(files) :]
    for item, line in zip(found.made, lines, strict=True):
        ours = load_sentence_model(str(item.path)).encode(TEXTS)
        assert np.abs(np.asarray(json.loads(line)) - ours).max() < 1e-4, item.variant.name


def _candidate(name: str, speedup: float, dev: float | None, agreement: float) -> Int8Candidate:
    return Int8Candidate(name=name, settings="", speedup=speedup, dev=dev, agreement=agreement)


def test_the_choice_keeps_the_best_agreeing_faster_variant_within_the_dev_margin() -> None:
    candidates = [
        _candidate("slower-but-faithful", 0.85, 70.0, 0.999),
        _candidate("too-lossy", 1.9, 70.0 - MAX_DEV_LOSS - 0.01, 0.998),
        _candidate("fast-ok", 1.6, 69.8, 0.990),
        _candidate("faster-less-faithful", 2.1, 69.9, 0.980),
    ]
    choice = choose(candidates, 70.0, "avx2", "90 dev texts")
    assert choice.kept == "fast-ok" and choice.worth is True
    assert "1.60x" in choice.reason and "-0.20 dev points" in choice.reason


def test_a_tier_with_no_faster_variant_is_marked_not_worth_deploying() -> None:
    slower = [_candidate("a", 0.85, 70.0, 0.99), _candidate("b", 0.95, 70.0, 0.98)]
    choice = choose(slower, 70.0, "avx512_vnni", "dev")
    assert choice.kept == "a" and choice.worth is False and "slower" in choice.reason
    lossy = [_candidate("a", 1.5, 69.0, 0.99), _candidate("b", 1.7, 69.4, 0.97)]
    choice = choose(lossy, 70.0, "avx512_vnni", "dev")
    assert choice.kept == "a" and choice.worth is False
    assert "1.00 dev points below its parent" in choice.reason
    unjudged = choose([_candidate("a", 1.5, None, 0.99)], None, "avx2", "40 export corpus texts")
    assert unjudged.worth is None and "not judged on dev" in unjudged.reason


def _report(speedup: float, worth: bool | None = False) -> ExportReport:
    choice = choose([_candidate("dynamic", speedup, 70.0, 0.99)], 70.0, "avx512_vnni", "dev")
    return ExportReport.parse(
        {
            "parent": "finetune",
            "tiers": {"onnx-int8": "model/onnx/model_qint8_avx512_vnni.onnx", "static": "static"},
            "speed": {
                "pytorch": {"texts_per_s": 100.0, "speedup": 1.0, "size_mb": 147.3, "threads": 16},
                "onnx-int8": {"texts_per_s": 85.0, "speedup": speedup, "size_mb": 39.7, "threads": 16},
                "static": {"texts_per_s": 2800.0, "speedup": 28.0, "size_mb": 12.0, "threads": 16},
            },
            "machine": {"cpu": "Intel(R) Xeon(R) Platinum 8480+", "cores": 16, "family": "avx512_vnni"},
            "int8": choice.as_json(),
        }
    )


def test_the_export_report_says_plainly_when_a_tier_is_slower() -> None:
    from skadapt.export.stage import markdown

    report = _report(0.85)
    notes = report.deploy_notes()
    assert notes["onnx-int8"] == (
        "onnx-int8: 0.85x of the PyTorch model on this machine (Intel(R) Xeon(R) Platinum 8480+, 16 cores, "
        "16 threads): slower, not worth deploying here"
    )
    assert "static" not in notes
    data = report.as_json() | {"parity": {"texts": 10, "fp32_max_abs_delta": 1e-7}, "settings": {}}
    data["settings"] = {"batch_size": 32, "speed_repeats": 3}
    for row in data["speed"].values():
        row |= {"speedup_rounds": {}, "load_s": 1.0, "peak_rss_mb": 500.0, "texts": 10}
    text = markdown(data)
    assert "slower, not worth deploying here" in text and "## int8 variants (avx512_vnni)" in text
    assert "Intel(R) Xeon(R) Platinum 8480+ (16 cores)" in text
    faster = _report(1.7).deploy_notes()["onnx-int8"]
    assert faster.endswith("+0.00 dev points: worth deploying here") and "1.70x" in faster


def test_the_card_says_plainly_when_a_tier_is_slower(tmp_path: Path) -> None:
    from skadapt.publish.target import Reports, Target
    from skadapt.publish.tiers import tier_rows, tiers_markdown

    run = tmp_path / "run"
    (run / "finetune").mkdir(parents=True)
    target = Target(run, run / "finetune", "finetune", run, Reports({"export": _report(0.85)}))
    text = tiers_markdown(tier_rows(target), "org/model")
    assert "| onnx-int8 |" in text
    assert (
        "- **onnx-int8: 0.85x of the PyTorch model on the exporting machine (Intel(R) Xeon(R) Platinum "
        "8480+, 16 cores, 16 threads): slower, not worth deploying here**"
    ) in text


def test_speed_rounds_run_one_process_per_model(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three models, three rounds: three processes (each loads once and times every round), not nine; a
    second measurement forks from the same server, in the caller's working directory of the moment, and a
    model that fails to load is named."""
    from skadapt.export import speed

    texts = tmp_path / "texts.json"
    texts.write_text(json.dumps(TEXTS), encoding="utf-8")
    models = {kind: str(tiny_models[kind]) for kind in ("unigram", "wordpiece", "bpe")}
    rows = speed.measure_models(models, texts, batch_size=4, repeats=3, threads=1)
    assert len({row["pid"] for row in rows.values()} - {os.getpid()}) == 3
    for row in rows.values():
        assert len(row["passes"]) == 3 and row["seconds"] == min(row["passes"]) and row["load_s"] > 0
        assert row["texts"] == len(TEXTS) and row["peak_rss_mb"] > 0
    server = speed._server()
    monkeypatch.chdir(tiny_models["bpe"].parent)  # relative paths, as a recipe's output_dir: runs/...
    relative = Path(os.path.relpath(texts, tiny_models["bpe"].parent))
    again = speed.measure("bpe", relative, batch_size=4, repeats=1, threads=1)
    assert speed._server() is server and again["pid"] not in {row["pid"] for row in rows.values()}
    with pytest.raises(
        speed.ExportError, match=r"(?s)speed measurement of .*missing failed:\n.*FileNotFoundError"
    ):
        speed.measure(str(tmp_path / "missing"), texts, batch_size=4, repeats=1, threads=1)


def test_the_family_is_the_exporting_machine_and_the_plan_counts_every_variant() -> None:
    from skadapt.export.plan import INT8_VARIANTS

    flags = cpu_flags()
    family = cpu_family()
    if "avx512_vnni" in flags:
        assert family == "avx512_vnni"
    elif flags and "avx512f" not in flags:
        assert family in ("avx2", "arm64")
    assert len(variants(family, calibrated=True)) == INT8_VARIANTS
    assert [v.method for v in variants(family, calibrated=False)] == ["dynamic"] * 4
