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


def test_portable_modules_load_identically(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    """A model saved by sentence-transformers 6 (with a Dense) is rewritten to the old module format."""
    import torch
    from sentence_transformers.sentence_transformer.modules import Dense, Normalize

    from skadapt.modeldir import LEGACY_TYPES, finalize_model_dir

    model = SentenceTransformer(str(tiny_models["wordpiece"]), device="cpu")
    model.max_seq_length = 48
    dense = Dense(32, 32, bias=True, activation_function=torch.nn.Identity())
    model.append(dense)
    model.append(Normalize())
    saved = tmp_path / "saved"
    model.save(str(saved))
    before = SentenceTransformer(str(saved), device="cpu")

    finalize_model_dir(saved)

    modules = json.loads((saved / "modules.json").read_text())
    assert [m["type"] for m in modules] == [
        LEGACY_TYPES[n] for n in ("Transformer", "Pooling", "Normalize", "Dense", "Normalize")
    ]
    assert json.loads((saved / "sentence_bert_config.json").read_text()) == {
        "max_seq_length": 48,
        "do_lower_case": False,
    }
    pooling = json.loads((saved / "1_Pooling" / "config.json").read_text())
    assert pooling["word_embedding_dimension"] == 32 and pooling["pooling_mode_mean_tokens"] is True
    after = SentenceTransformer(str(saved), device="cpu")
    assert after.max_seq_length == 48
    assert after.prompts == {**before.prompts, "document": "passage: "}
    np.testing.assert_array_equal(
        after.encode(TEXTS, prompt="query: "), before.encode(TEXTS, prompt="query: ")
    )
    finalize_model_dir(saved)  # idempotent
    assert json.loads((saved / "modules.json").read_text()) == modules
