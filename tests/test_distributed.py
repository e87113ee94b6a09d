"""`skadapt train` under torchrun: two CPU processes (gloo) train one model; rank 0 writes every artifact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from sentence_transformers import SentenceTransformer

DATA = Path(__file__).parent / "data"


@pytest.mark.slow
def test_torchrun_two_ranks_train_one_model(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    run = tmp_path / "run"
    recipe = {
        "name": "ddp",
        "language": "slk",
        "base_model": str(tiny_models["unigram"]),
        "output_dir": str(run),
        "trim": {"corpus": str(DATA / "sk_corpus.txt"), "vocab_size": 150, "parity_documents": 10},
        "finetune": {
            "datasets": [
                {"name": "nli", "kind": "nli", "source": str(DATA / "finetune" / "sk_train_nli.jsonl")},
                {"name": "sts", "kind": "sts", "source": str(DATA / "finetune" / "sk_train_sts.jsonl")},
            ],
            "batch_size": 8,
            "max_steps": 6,
            "save_steps": 3,
            "max_seq_length": 32,
        },
        "renorm": {"corpus": str(DATA / "sk_corpus.txt"), "samples": 100},
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    env = {**os.environ, "OMP_NUM_THREADS": "1", "SKADAPT_CACHE": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]
    process = subprocess.run(
        [*command, "-m", "skadapt", "train", str(path)], env=env, capture_output=True, text=True, timeout=600
    )
    assert process.returncode == 0, process.stdout[-3000:] + process.stderr[-3000:]
    assert process.stdout.count("run ddp ->") == 2  # both ranks finished the recipe

    stages = ("trim", "finetune", "renorm")
    manifests = {s: json.loads((run / s / "manifest.json").read_text()) for s in stages}
    assert len({m["run_id"] for m in manifests.values()}) == 1 and manifests["trim"]["run_id"]
    report = json.loads((run / "finetune" / "training_report.json").read_text())
    assert report["steps"] == {"done": 6, "planned": 6} and report["world_size"] == 2
    assert not (run / ".work").exists() or not any((run / ".work").iterdir())
    assert not [p for p in run.iterdir() if p.name.startswith(".") and p.name != ".work"]
    model = SentenceTransformer(str(run / "renorm"), device="cpu")
    assert model.encode(["Bratislava je hlavné mesto."]).shape == (1, 32)
