"""The shipped demo recipe runs end to end (trim -> finetune -> renorm -> export -> evaluate) and resumes."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from sentence_transformers import SentenceTransformer

from skadapt.artifacts import read_manifest
from skadapt.pipeline import run_recipe
from skadapt.recipe import load_recipe

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow  # the whole demo recipe, twice


@pytest.fixture
def demo_recipe(tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(ROOT)  # the recipe's data paths are relative to the repository root
    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "cache"))
    overrides = [
        f"base_model={tiny_models['unigram']}",
        f"output_dir={tmp_path / 'run'}",
        "finetune.max_steps=4",
        "finetune.save_steps=2",
        "finetune.dev.steps=2",
        "evaluate.bootstrap=20",
        "export.speed_texts=50",
        "export.speed_repeats=1",
        "export.pca_dims=null",  # the tiny model has 32 dimensions (the demo's e5-small 384)
        "export.dims=[16,8]",
    ]
    return load_recipe(ROOT / "recipes" / "demo_sk.yaml", overrides)


def test_demo_recipe_runs_every_stage_and_resumes(demo_recipe, tmp_path: Path) -> None:
    outcomes = run_recipe(demo_recipe)
    assert [(o.stage, o.status) for o in outcomes] == [
        ("trim", "ran"),
        ("finetune", "ran"),
        ("renorm", "ran"),
        ("export", "ran"),
        ("evaluate", "ran"),
    ]
    run = tmp_path / "run"
    trim = json.loads((run / "trim" / "trim_report.json").read_text())
    assert trim["source"] == "wordfreq:sk" and trim["extra_counts"]["source"] == "wordfreq:en"
    assert trim["parity"]["max_abs_embedding_diff"] <= 1e-5
    assert trim["evaluation_tokenization"]["texts"] > 2000  # the demo suite's texts after trimming
    training = json.loads((run / "finetune" / "training_report.json").read_text())
    assert training["steps"]["done"] == 4
    assert [d["name"] for d in training["datasets"]] == ["nli", "qa", "sts", "anchor_parallel"]
    assert training["datasets"][-1]["stats"]["pairs"] == 150  # the hand-written sk-en pairs, none dropped
    assert training["interpolation"]["chosen"] in [p["alpha"] for p in training["interpolation"]["scores"]]
    kinds = ["sts", "retrieval", "triplets", "clustering", "classification", "bitext"]  # power at the start
    assert [p["kind"] for p in training["dev"]["power"]] == kinds
    assert training["plain_arm"]["dir"] == "plain_arm" and training["plain_arm"]["steps"] == 4
    renorm = json.loads((run / "renorm" / "renorm_report.json").read_text())
    candidates = renorm["selection"]["candidates"]  # on fine-tuning's six dev sets
    projections = [f"{r}proj-{d}" for r in ("", "r1+", "r2+") for d in (24, 8)]  # 2/3, 1/3 of 32
    assert [c["name"] for c in candidates] == ["none", "r1", "r2", *projections]
    sets = ["sts-0", "retrieval-1", "triplets-2", "clustering-3", "classification-4", "bitext-5"]
    assert all(list(c["scores"]) == sets for c in candidates)
    winners = [c for c in candidates if c["beats_none"]]  # beyond the noise (paired bootstrap)
    best = max((c["mean"] for c in winners), default=None)
    assert renorm["method"] == next((c["name"] for c in winners if c["mean"] == best), "none")
    final_dir = run / "renorm" if renorm["kept"] else run / "finetune"
    final = SentenceTransformer(str(final_dir), device="cpu")  # vanilla loading, no skadapt code
    assert (type(final[-2]).__name__ == "Dense") == renorm["kept"] and type(final[-1]).__name__ == "Normalize"
    plain = SentenceTransformer(str(run / "finetune" / "plain_arm"), device="cpu")  # vanilla loading too
    assert plain.encode(["Dobrý deň"]).shape == (1, plain.get_embedding_dimension())
    report = json.loads((run / "evaluate" / "report.json").read_text())
    stages = ["base", "trim", "plain", "finetune", *(["renorm"] if renorm["kept"] else [])]
    dims = [f"dims-{d}" for d in (16, 8) if d < renorm["output_dimension"]]  # below a kept projection's
    tiers = ["onnx-int8", "static", *dims]  # the export's, scored beside the final model
    assert [row["model"] for row in report["models"]] == stages + tiers
    assert all(len(row["tasks"]) == 7 for row in report["models"])
    pairs = [*itertools.pairwise(stages), *((stages[-1], tier) for tier in tiers)]
    assert [(v["a"], v["b"]) for v in report["verdicts"]] == pairs
    made = len(stages) - 1
    assert all(v["verdict"] in ("improves", "non-inferior", "harms") for v in report["verdicts"][:made])
    assert [v["verdict"] for v in report["verdicts"][made:]] == ["tier"] * len(tiers)
    export = json.loads((run / "export" / "export_report.json").read_text())
    assert export["parent"] == final_dir.name and export["parity"]["fp32_max_abs_delta"] <= 1e-5
    assert list(export["speed"]) == ["pytorch", "onnx-int8", "static"]  # a dims tier runs its parent
    choices = {f"dims-{c['dimension']}": c for c in (export["dims_basis"] or {}).get("choices", [])}
    assert {name: tier["basis"] for name, tier in export["dims"].items()} == {  # chosen on the same dev sets
        name: c["chosen"] for name, c in choices.items()
    }
    assert all(
        [b["name"] for b in c["candidates"]] == ["corpus", "parallel", "first"] for c in choices.values()
    )
    static = export["static"]  # trained on the final model's embeddings of the fine-tuning datasets' texts
    assert static["method"] == "trained" and static["prompt"] == "query: " and static["epochs"] == 1
    bases = export["dims_basis"]["bases"] if dims else {}
    assert not dims or bases["corpus"]["texts"] == min(static["corpus"]["texts"], 2000)
    assert not dims or bases["parallel"]["parallel_texts"] == 300  # both sides of the 150 pairs
    assert [s["source"] for s in static["corpus"]["sources"]] == [
        d["source"] for d in training["datasets"][:3]
    ]
    manifest = read_manifest(run / "evaluate")
    assert manifest["models"]["final"] == final_dir.name  # relative to the run: it can move

    again = run_recipe(demo_recipe)
    assert [o.status for o in again] == ["skipped"] * 5
