"""Saved model directories: E5-style prompts reach sentence-transformers' encode_document and mteb."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
from sentence_transformers import SentenceTransformer

from skadapt.modeldir import ST_CONFIG, fill_document_prompt

TEXTS = ["Bratislava leží na Dunaji.", "Vysoké Tatry sú pohorie."]


def test_document_prompt_equals_passage_prompt(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    model_dir = tmp_path / "m"
    shutil.copytree(tiny_models["unigram"], model_dir)
    before = SentenceTransformer(str(model_dir), device="cpu")
    assert before.prompts.get("document") == ""  # sentence-transformers' own default shadows "passage"

    prompts = fill_document_prompt(model_dir)

    assert prompts["document"] == "passage: "
    after = SentenceTransformer(str(model_dir), device="cpu")
    expected = after.encode(TEXTS, prompt="passage: ")
    np.testing.assert_allclose(after.encode_document(TEXTS), expected, atol=1e-6)
    assert not np.allclose(before.encode_document(TEXTS), expected, atol=1e-4)


def test_models_without_passage_prompt_are_left_alone(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    model_dir = tmp_path / "m"
    shutil.copytree(tiny_models["bpe"], model_dir)
    config = json.loads((model_dir / ST_CONFIG).read_text())
    config["prompts"] = {"query": "q: ", "document": "d: "}
    (model_dir / ST_CONFIG).write_text(json.dumps(config))
    assert fill_document_prompt(model_dir) == {"query": "q: ", "document": "d: "}
