"""Export: ONNX fp32/int8 in sentence-transformers' layout, the model2vec static tier, speed rows, the
tiers in the pipeline and in the evaluation's verdicts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from skadapt.export.config import ExportConfig
from skadapt.export.stage import export_tiers, speed_texts
from skadapt.tasks.backends import load_sentence_model
from tests.support.suite_fixtures import write_tiny_suite

pytest.importorskip("onnxruntime")
pytest.importorskip("model2vec")

TEXTS = [
    "Prší a fúka vietor.",
    "Zajtra bude slnečno a teplo, povedal meteorológ v rannom vysielaní.",
    "Hokejisti vyhrali.",
    "Električka ide do centra mesta každých desať minút.",
    "Most je nový.",
    "Radnica na námestí je najstaršou budovou v meste.",
] * 3


def _config(**changes: object) -> ExportConfig:
    return ExportConfig(
        **{
            "tiers": ["onnx", "onnx-int8", "static"],
            "speed_texts": 18,
            "speed_repeats": 1,
            "static_training": None,  # the distilled static tier (trained: tests/test_static_train.py)
            "quantization": "avx512_vnni",  # a fixed file name (default: the exporting machine's family)
            **changes,
        }
    )


@pytest.fixture(scope="module")
def exported(tiny_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("export") / "out"
    out.mkdir()
    report = export_tiers(str(tiny_models["unigram"]), out, _config(pca_dims=16), TEXTS)
    return out, report


def _ort_hidden(file: Path, model_dir: Path, texts: list[str]) -> np.ndarray:
    """Mean-pooled, normalized embeddings straight from onnxruntime (no skadapt wrapper): the oracle."""
    import onnxruntime as ort
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    session = ort.InferenceSession(str(file), providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    batch = tokenizer(texts, padding=True, truncation=True, max_length=128, return_tensors="np")
    (hidden,) = session.run(None, {k: v.astype(np.int64) for k, v in batch.items() if k in names})
    mask = batch["attention_mask"][..., None]
    pooled = (hidden * mask).sum(1) / mask.sum(1)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


@pytest.mark.slow
def test_onnx_layout_parity_and_int8(exported: tuple[Path, dict], tiny_models: dict[str, Path]) -> None:
    out, report = exported
    files = sorted(p.name for p in (out / "model" / "onnx").iterdir())
    assert files == ["model.onnx", "model_qint8_avx512_vnni.onnx"]
    assert (out / "model" / "modules.json").is_file() and (out / "model" / "model.safetensors").is_file()
    reference = load_sentence_model(str(tiny_models["unigram"])).encode(TEXTS)
    oracle = _ort_hidden(out / "model" / "onnx" / "model.onnx", out / "model", TEXTS)
    assert np.abs(oracle - reference).max() < 1e-5
    assert report["parity"]["fp32_max_abs_delta"] < 1e-5
    int8 = load_sentence_model(str(out / "model" / "onnx" / "model_qint8_avx512_vnni.onnx")).encode(TEXTS)
    cosine = (int8 * reference).sum(1)
    assert report["parity"]["int8_mean_cosine"] == pytest.approx(cosine.mean(), abs=1e-5)
    assert 0.5 < cosine.min() <= 1.0 + 1e-6
    assert report["tiers"] == {
        "onnx": "model/onnx/model.onnx",
        "onnx-int8": "model/onnx/model_qint8_avx512_vnni.onnx",
        "static": "static",
    }


@pytest.mark.slow
def test_int8_is_onnxruntime_dynamic_quantization(exported: tuple[Path, dict]) -> None:
    import onnx

    out, _ = exported
    graph = onnx.load(str(out / "model" / "onnx" / "model_qint8_avx512_vnni.onnx")).graph
    ops = {node.op_type for node in graph.node}
    assert ops & {"DynamicQuantizeLinear", "DynamicQuantizeMatMul", "MatMulInteger"}
    int8_weights = [t for t in graph.initializer if t.data_type == onnx.TensorProto.INT8]
    assert int8_weights


@pytest.mark.slow
def test_static_tier_is_model2vec_and_loads_in_sentence_transformers(exported: tuple[Path, dict]) -> None:
    """The static directory is model2vec's format (its table, its tokenizer) and loads as a plain
    ``SentenceTransformer``: the mean of the text's token rows, normalized. model2vec's own ``encode``
    drops unknown tokens where sentence-transformers keeps them; on texts without one they agree."""
    from model2vec import StaticModel
    from safetensors.numpy import load_file
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

    out, report = exported
    static_dir = out / "static"
    table = load_file(str(static_dir / "model.safetensors"))["embeddings"].astype(np.float32)
    tokenizer = Tokenizer.from_file(str(static_dir / "tokenizer.json"))
    ids = [e.ids for e in tokenizer.encode_batch(TEXTS, add_special_tokens=False)]
    oracle = np.stack([table[i].mean(0) for i in ids])
    oracle /= np.linalg.norm(oracle, axis=1, keepdims=True)
    plain = SentenceTransformer(str(static_dir), device="cpu").encode(TEXTS)
    assert plain.shape == (len(TEXTS), 16) == (len(TEXTS), report["static"]["dimension"])
    assert np.abs(plain.astype(np.float32) - oracle).max() < 2e-3  # the table is float16 (model2vec's)
    static = StaticModel.from_pretrained(str(static_dir))
    known = [t for t, i in zip(TEXTS, ids, strict=True) if static.unk_token_id not in i]
    if known:
        own = static.encode(known).astype(np.float32)
        own /= np.linalg.norm(own, axis=1, keepdims=True)
        assert np.abs(own - SentenceTransformer(str(static_dir), device="cpu").encode(known)).max() < 1e-3
    assert report["static"]["vocabulary"] == table.shape[0] == tokenizer.get_vocab_size()


@pytest.mark.slow
def test_speed_rows_measure_every_model_once(exported: tuple[Path, dict]) -> None:
    out, report = exported
    speed = report["speed"]
    assert list(speed) == ["pytorch", "onnx", "onnx-int8", "static"]
    for row in speed.values():
        assert row["texts"] == len(TEXTS) and row["texts_per_s"] > 0 and row["peak_rss_mb"] > 0
        assert row["size_mb"] > 0 and len(row["passes"]) == 1
        assert row["rounds"] >= 1 and row["seconds"] == min(row["passes"])
    assert speed["pytorch"]["speedup"] == 1.0
    assert speed["static"]["size_mb"] < speed["pytorch"]["size_mb"]
    text = (out / "export.md").read_text()
    assert "| onnx-int8 |" in text and "max |Δ|" in text
    assert json.loads((out / "export_report.json").read_text())["tiers"] == report["tiers"]


@pytest.mark.slow
def test_renorm_dense_is_carried_by_the_module_stack(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    """A renormalized model (Dense + Normalize after pooling) exports with the same outputs."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, Normalize

    model = SentenceTransformer(str(tiny_models["wordpiece"]), device="cpu")
    dim = model.get_sentence_embedding_dimension()
    mu = torch.full((dim,), 0.1)
    dense = Dense(dim, dim, bias=True, activation_function=torch.nn.Identity())
    with torch.no_grad():
        dense.linear.weight.copy_(torch.eye(dim))
        dense.linear.bias.copy_(-mu)
    renormed = SentenceTransformer(modules=[*list(model), dense, Normalize()], device="cpu")
    renormed.prompts = model.prompts
    source = tmp_path / "renormed"
    renormed.save(str(source))
    out = tmp_path / "out"
    out.mkdir()
    report = export_tiers(str(source), out, _config(tiers=["onnx"]), TEXTS)
    reference = SentenceTransformer(str(source), device="cpu").encode(TEXTS, prompt="query: ")
    onnx = load_sentence_model(str(out / "model" / "onnx" / "model.onnx")).encode(TEXTS, prompt="query: ")
    assert np.abs(onnx - reference).max() < 1e-5
    assert report["parity"]["fp32_max_abs_delta"] < 1e-5
    assert "Dense" in (out / "model" / "modules.json").read_text()


def test_parity_failure_stops_the_export(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    from skadapt.export.onnx import ExportError

    with pytest.raises(ExportError, match="differs from PyTorch"):
        export_tiers(
            str(tiny_models["bpe"]),
            tmp_path,
            _config(tiers=["onnx"], parity_tolerance=1e-12),
            TEXTS,
        )


def test_not_a_model_directory_is_a_clear_error(tmp_path: Path) -> None:
    from skadapt.export.onnx import ExportError

    with pytest.raises(ExportError, match="nothing: no such directory"):
        export_tiers(str(tmp_path / "nothing"), tmp_path / "out", _config(), TEXTS)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ExportError, match="not a local sentence-transformers directory"):
        export_tiers(str(tmp_path / "empty"), tmp_path / "out", _config(), TEXTS)


def _export_command(model: Path, out: Path, *extra: str) -> tuple[int, str]:
    from typer.testing import CliRunner

    from skadapt.cli import app

    args = ["export", str(model), "--out", str(out), "--speed-texts", "8", "--speed-repeats", "1", *extra]
    result = CliRunner().invoke(app, args)
    return result.exit_code, " ".join(result.output.split())


def test_the_model_is_checked_before_the_speed_corpus(tmp_path: Path) -> None:
    """A missing model is named as such, not as a corpus problem (the corpus is missing too)."""
    code, output = _export_command(tmp_path / "nothing", tmp_path / "out", "--speed-corpus", "missing.txt")
    assert code == 1 and "no such directory" in output and "missing.txt" not in output, output
    assert str(tmp_path / "nothing") in output, output
    assert not (tmp_path / "out").exists()


def test_a_model_without_tokenizer_files_fails_before_any_onnx_work(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    """Without tokenizer files transformers builds a 5-token placeholder tokenizer that passes the parity
    check; the export refuses the directory at once instead."""
    from skadapt.tokenizer_check import ModelCheckError

    model = tmp_path / "model"
    shutil.copytree(tiny_models["unigram"], model)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (model / name).unlink()
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ModelCheckError, match="no tokenizer files"):
        export_tiers(str(model), out, _config(tiers=["onnx"]), TEXTS)
    assert list(out.iterdir()) == []  # nothing copied or exported
    code, output = _export_command(model, tmp_path / "cli", "--speed-corpus", "missing.txt")
    assert code == 1 and "no tokenizer files" in output and "missing.txt" not in output, output


def test_pca_dims_above_the_model_dimension_is_an_error(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    from skadapt.export.stage import check_model

    suite = write_tiny_suite(tmp_path / "suite")
    model = tiny_models["unigram"]  # 32 dimensions
    code, output = _export_command(model, tmp_path / "out", "--pca-dims", "64", "--tasks", str(suite))
    assert code == 1 and "pca_dims 64 is larger than the model's dimension 32" in output, output
    assert not (tmp_path / "out").exists()
    check_model(str(model), _config(tiers=["onnx"], pca_dims=64))  # no static tier: no PCA to check
    check_model(str(model), _config(pca_dims=32))  # as many as it has: no reduction, no error


def test_config_rejects_empty_and_repeated_tiers() -> None:
    with pytest.raises(ValueError, match="at least one tier"):
        ExportConfig(tiers=[])
    with pytest.raises(ValueError, match="named twice"):
        ExportConfig(tiers=["static", "static"])
    with pytest.raises(ValueError):
        ExportConfig(tiers=["onnx-int4"])


def test_speed_texts_come_from_the_suites_seeded(tmp_path: Path) -> None:
    from skadapt.export.onnx import ExportError

    suite = str(write_tiny_suite(tmp_path / "suite"))
    first = speed_texts(ExportConfig(speed_texts=10), [suite], None, 3)
    assert len(first) == 10 and first == speed_texts(ExportConfig(speed_texts=10), [suite], None, 3)
    assert first != speed_texts(ExportConfig(speed_texts=10), [suite], None, 4)
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(f"Veta {i}." for i in range(50)), encoding="utf-8")
    chosen = speed_texts(ExportConfig(speed_texts=5, speed_corpus=str(corpus)), [suite], None, 3)
    assert len(chosen) == 5 and all(t.startswith("Veta ") for t in chosen)
    assert len(speed_texts(ExportConfig(speed_texts=5), [], str(corpus), 3)) == 5  # the language's corpus
    with pytest.raises(ExportError, match="no texts to measure speed on"):
        speed_texts(ExportConfig(), [], None, 3)


@pytest.mark.slow
def test_static_model_scores_in_mteb_as_in_skadapt(exported: tuple[Path, dict], tmp_path: Path) -> None:
    """mteb on a plain SentenceTransformer(static_dir) gives skadapt's evaluation scores."""
    import mteb
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper
    from sentence_transformers import SentenceTransformer

    from skadapt.tasks.runner import evaluate_model
    from skadapt.tasks.selection import select_tasks

    out, _ = exported
    suite = write_tiny_suite(tmp_path / "suite")
    tasks = select_tasks([str(suite)], language="slk")
    ours = {s.task: s.score for s in evaluate_model(str(out / "static"), "static", tasks, cache_dir=None)}
    plain = SentenceTransformerEncoderWrapper(SentenceTransformer(str(out / "static"), device="cpu"))
    theirs = {}
    for task in select_tasks([str(suite)], language="slk"):
        result = mteb.evaluate(plain, task, cache=None, co2_tracker=False, show_progress_bar=False)
        theirs[task.metadata.name] = round(100 * result.task_results[0].get_score(), 4)
    assert ours == pytest.approx(theirs, abs=1e-4)


@pytest.mark.skipif(
    not os.environ.get("SKADAPT_PLAIN_PYTHON"),
    reason="needs SKADAPT_PLAIN_PYTHON: a Python with sentence-transformers[onnx] (optimum) and no skadapt",
)
def test_plain_sentence_transformers_onnx_backend_loads_the_layout(
    exported: tuple[Path, dict], tmp_path: Path
) -> None:
    """``SentenceTransformer(dir, backend="onnx")`` in an environment without skadapt gives the
    embeddings skadapt computes for the same files (checked with sentence-transformers 5.1.2,
    transformers 4.57.1, optimum-onnx 0.1.0). The tiny fixture's tokenizer is saved by transformers 5 as
    ``TokenizersBackend``, a class transformers 4 lacks; a copy names the class both know (a real model
    names its own, e.g. ``XLMRobertaTokenizer``)."""
    import shutil

    source, _ = exported
    out = tmp_path / "out"
    shutil.copytree(source, out)
    config = out / "model" / "tokenizer_config.json"
    config.write_text(
        json.dumps({**json.loads(config.read_text()), "tokenizer_class": "PreTrainedTokenizerFast"}),
        encoding="utf-8",
    )
    script = (
        "import json, sys\n"
        "from sentence_transformers import SentenceTransformer\n"
        "texts = json.loads(sys.argv[3])\n"
        "for name in ('model.onnx', 'model_qint8_avx512_vnni.onnx'):\n"
        "    kwargs = {'file_name': f'onnx/{name}'}\n"
        "    m = SentenceTransformer(sys.argv[1], backend='onnx', model_kwargs=kwargs)\n"
        "    print(json.dumps(m.encode(texts).tolist()))\n"
        "print(json.dumps(SentenceTransformer(sys.argv[2]).encode(texts).astype('float32').tolist()))\n"
    )
    done = subprocess.run(
        [
            os.environ["SKADAPT_PLAIN_PYTHON"],
            "-c",
            script,
            str(out / "model"),
            str(out / "static"),
            json.dumps(TEXTS),
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=out,  # not the checkout: skadapt must not be importable there
    )
    assert done.returncode == 0, done.stderr[-2000:]
    fp32, int8, static = (np.asarray(json.loads(line)) for line in done.stdout.strip().splitlines()[-3:])
    onnx_dir = out / "model" / "onnx"
    assert np.abs(fp32 - load_sentence_model(str(onnx_dir / "model.onnx")).encode(TEXTS)).max() < 1e-5
    ours_int8 = load_sentence_model(str(onnx_dir / "model_qint8_avx512_vnni.onnx")).encode(TEXTS)
    assert np.abs(int8 - ours_int8).max() < 1e-5
    ours_static = load_sentence_model(str(out / "static")).encode(TEXTS).astype(np.float32)
    assert np.abs(static - ours_static).max() < 1e-3  # float16 table: rounding of the last digit


@pytest.mark.slow
def test_peak_memory_is_the_measured_process_own(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    """A parent holding 1.5 GB does not show up in the child's peak (ru_maxrss would carry it over)."""
    from skadapt.export.speed import measure

    texts = tmp_path / "texts.json"
    texts.write_text(json.dumps(TEXTS), encoding="utf-8")
    ballast = np.ones(1_500_000_000 // 8)  # touched: resident in this process
    row = measure(str(tiny_models["unigram"]), texts, batch_size=8, repeats=1, threads=1)
    assert ballast.sum() > 0
    assert 0 < row["peak_rss_mb"] < 1200 and row["texts"] == len(TEXTS) and row["threads"] == 1


@pytest.mark.slow
def test_export_command(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from skadapt.cli import app

    suite = write_tiny_suite(tmp_path / "suite")
    out = tmp_path / "tiers"
    args = ["export", str(tiny_models["wordpiece"]), "--out", str(out), "--tiers", "onnx-int8"]
    args += ["--tasks", str(suite), "--speed-texts", "8", "--speed-repeats", "1"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    from skadapt.export.int8 import cpu_family
    from skadapt.export.onnx import int8_file

    assert (out / "model" / "onnx" / int8_file(cpu_family())).is_file()  # the machine's own family
    assert not (out / "static").exists() and not (out / ".work").exists()
    assert "onnx-int8" in result.output and "texts/s" in result.output
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 1 and "--overwrite" in again.output


def test_evaluate_scores_every_tier_beside_the_final_model() -> None:
    from skadapt.evaluate.config import EvaluateConfig
    from skadapt.evaluate.stage import EvaluateStageError, _selected_models

    available = {
        "base": "/b",
        "trim": "/run/trim",
        "finetune": "/run/finetune",
        "renorm": "/run/finetune",
        "final": "/run/finetune",
        "onnx-int8": "/run/export/model/onnx/model_qint8_avx512_vnni.onnx",
        "static": "/run/export/static",
        "dims-256": "/run/export/dims-256",
        "dims-64": "/run/export/dims-64",
    }
    tiers = ["onnx-int8", "static", "dims-256", "dims-64"]
    models, parents = _selected_models(EvaluateConfig(models=["base", "trim"]), available)
    assert list(models) == ["base", "trim", "final", *tiers]
    assert parents == dict.fromkeys(tiers, "final")
    models, parents = _selected_models(EvaluateConfig(models=["base", "finetune", "static"]), available)
    assert list(models) == ["base", "finetune", *tiers] and parents == dict.fromkeys(tiers, "finetune")
    without = {k: v for k, v in available.items() if k not in tiers}
    assert _selected_models(EvaluateConfig(models=["base"]), without) == ({"base": "/b"}, {})
    with pytest.raises(EvaluateStageError, match="not a tier of this run"):
        _selected_models(EvaluateConfig(models=["base", "onnx"]), available)


def test_pipeline_hands_the_tiers_on_without_changing_final(tmp_path: Path) -> None:
    from skadapt.pipeline.run import _record_model
    from skadapt.results import ExportSummary

    models = {"base": "/b", "final": "/run/finetune", "finetune": "/run/finetune"}
    result = ExportSummary.of({"parent": "/run/finetune", "tiers": {"static": "static"}})
    _record_model(models, "export", tmp_path / "export", result)
    assert models["final"] == "/run/finetune" and models["static"] == str(tmp_path / "export" / "static")
    assert "export" not in models


def test_standalone_evaluate_recognizes_tiers_from_the_export_report(
    exported: tuple[Path, dict], tiny_models: dict[str, Path]
) -> None:
    from skadapt.tasks.backends import tier_parents

    out, _ = exported
    models = {
        "final": str(tiny_models["unigram"]),
        "int8": str(out / "model" / "onnx" / "model_qint8_avx512_vnni.onnx"),
        "static": str(out / "static"),
        "other": str(tiny_models["bpe"]),
    }
    assert tier_parents(models) == {"int8": "final", "static": "final"}
    assert tier_parents({"int8": models["int8"], "other": models["other"]}) == {}  # parent not listed
