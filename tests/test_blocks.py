"""The public building blocks (skadapt/blocks/) do what the stages do: the synthetic-STS requests are the
stage's, the training texts of built datasets equal those of the section, R1/R2 as modules equal the
formula, ``choose_int8`` applies the export rule to what ``quantize_int8`` returns, ``score_models`` scores
identical models identically (fresh task copies, paired draws), and ``run_evaluation(tiers=...)`` hands
the tiers to the evaluation."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import skadapt.api
from skadapt.api import EvaluateConfig, FinetuneConfig
from skadapt.blocks import (
    choose_int8,
    renorm_modules,
    score_models,
    sts_requests,
    training_datasets,
    training_texts,
)

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "sk_corpus.txt"
SUITE = ROOT / "tests" / "data" / "suite_sk" / "suite.yaml"


def test_sts_requests_are_the_synth_stage_requests() -> None:
    from skadapt.llm.seeds import request_seed
    from skadapt.synth.prompts import load_template
    from skadapt.synth.sources import select_sources
    from skadapt.synth.sts import generation_items

    language = skadapt.get_language("slk")
    requests = sts_requests(str(CORPUS), "slk", 6, seed=3, max_tokens=100)
    sources = select_sources(str(CORPUS), language, 6, seed=3).sentences
    items = generation_items(sources, load_template(language), language)
    assert [r.messages for r in requests] == [item.messages for item in items]
    assert [r.json_schema for r in requests] == [item.json_schema for item in items]
    assert [r.seed for r in requests] == [request_seed(3, s.id, 0) for s in sources]
    assert {r.sampling.max_tokens for r in requests} == {100} and len(set(r.seed for r in requests)) == 6


def test_training_texts_of_built_datasets_equal_those_of_the_section(tmp_path: Path) -> None:
    source = tmp_path / "qa.jsonl"
    rows = [{"question": f"Otázka číslo {i}?", "context": f"Odsek číslo {i} o niečom."} for i in range(40)]
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    entry = {"name": "qa", "kind": "pairs", "source": str(source), "columns": {"anchor": "question",
             "positive": "context"}}  # fmt: skip
    config = FinetuneConfig(datasets=[entry])
    built = training_datasets(config)
    assert [len(d) for d in built] == [40] == [len(d) for d in training_datasets(config.datasets[0])]
    of_built, of_section = training_texts(built), training_texts(config)
    assert len(of_built) == 80
    assert {k: v.tolist() for k, v in of_built.digests.items()} == {
        k: v.tolist() for k, v in of_section.digests.items()
    }


@pytest.mark.parametrize("method", ["r1", "r2"])
def test_renorm_modules_apply_the_renormalization(method: str) -> None:
    import torch

    from skadapt.renorm.stage import renorm_formula

    rng = np.random.default_rng(0)
    mu = (rng.normal(size=16) * 0.3).astype(np.float32)
    embeddings = rng.normal(size=(5, 16)).astype(np.float32)
    features = {"sentence_embedding": torch.from_numpy(embeddings)}
    modules = renorm_modules(mu, method)  # type: ignore[arg-type]
    for module in modules:
        features = module(features)
    expected = renorm_formula(embeddings, mu, method)  # type: ignore[arg-type]
    assert np.allclose(features["sentence_embedding"].detach().numpy(), expected, atol=1e-5)
    assert renorm_modules(mu, "none") == []


def test_choose_int8_applies_the_export_rule() -> None:
    from skadapt.blocks.int8 import Int8Variant, Int8Variants

    def variant(name: str, dev: float, agreement: float) -> Int8Variant:
        return Int8Variant(name=name, settings="s", path=Path(name), dev=dev, agreement=agreement)

    made = Int8Variants(
        model_dir=Path("m"),
        fp32=Path("m/onnx/model.onnx"),
        machine={"cpu": "x", "cores": 2, "family": "avx2"},
        parent_dev=70.0,
        agreement_texts="10 dev texts",
        variants=[variant("a", 69.9, 0.98), variant("b", 60.0, 0.99), variant("c", 70.1, 0.995)],
    )
    choice = choose_int8(made, {"a": 2.0, "b": 3.0, "c": 0.9})
    assert choice.kept == "a" and choice.worth is True  # b loses too much on dev, c is slower
    assert [c.speedup for c in choice.candidates] == [2.0, 3.0, 0.9] and choice.family == "avx2"
    assert choose_int8(made, {"a": 0.5, "b": 0.5, "c": 0.5}).worth is False


def test_score_models_scores_identical_models_identically(tiny_models: dict[str, Path]) -> None:
    model = str(tiny_models["unigram"])
    scored = score_models({"a": model, "b": model}, [str(SUITE)], language="slk", bootstrap=20)
    rows = {row.model: row for row in scored.table.rows}
    assert rows["a"].tasks == rows["b"].tasks and len(rows["a"].tasks) == 7
    assert scored.texts_encoded["a"] == scored.texts_encoded["b"] > 0
    assert set(scored.draws["a"].values) == set(scored.draws["b"].values) and scored.draws["a"].values
    for task, values in scored.draws["a"].values.items():
        assert len(values) == 20 and np.array_equal(values, scored.draws["b"].values[task])


def test_run_evaluation_hands_the_tiers_over(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from skadapt.artifacts import write_json
    from skadapt.evaluate.aggregate import Table

    seen: list[object] = []

    def fake(config: object, models: dict, out_dir: Path, **facts: object) -> tuple:
        seen.append(facts["parents"])
        write_json(out_dir / "report.json", {**Table(task_types={}, rows=[]).to_dict(), "verdicts": []})
        return Table(task_types={}, rows=[]), [], []

    monkeypatch.setattr("skadapt.evaluate.stage.run_evaluation", fake)
    int8 = tmp_path / "m" / "onnx" / "model_qint8.onnx"
    int8.parent.mkdir(parents=True)
    int8.write_bytes(b"")  # never loaded: the evaluation is replaced
    models = {"final": str(tmp_path / "m"), "int8": str(int8)}
    config = EvaluateConfig(tasks=[str(SUITE)])
    skadapt.api.run_evaluation(models, config, language=None, out=tmp_path / "a", tiers={"int8": "final"})
    skadapt.api.run_evaluation(models, config, language=None, out=tmp_path / "b")
    assert seen == [{"int8": "final"}, {}]  # without tiers: found from export reports (there are none)
