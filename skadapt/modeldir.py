"""Conventions of the sentence-transformers directories skadapt writes.

Every model directory skadapt writes goes through :func:`finalize_model_dir`, so that it loads in the
sentence-transformers versions users have (3.x to 6.x) and in mteb, without skadapt:

- module types and configs are written in the long-standing ``sentence_transformers.models.*`` format
  (sentence-transformers 6 writes ``sentence_transformers.base.modules...`` types and new config keys
  that 5.x cannot load; 6.x reads the old format unchanged);
- an E5-style model's ``document`` prompt equals its ``passage`` prompt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skadapt import artifacts

ST_CONFIG = "config_sentence_transformers.json"
MODULES = "modules.json"
PLAIN_ARM_DIR = "plain_arm"
"""Where fine-tuning keeps its plain sentence-transformers arm inside the model's directory: a reference
model beside the model, never part of it (publishing leaves it out)."""
LEGACY_TYPES = {
    name: f"sentence_transformers.models.{name}" for name in ("Transformer", "Pooling", "Normalize", "Dense")
}
POOLING_KEYS = {
    "cls": "pooling_mode_cls_token",
    "mean": "pooling_mode_mean_tokens",
    "max": "pooling_mode_max_tokens",
    "mean_sqrt_len_tokens": "pooling_mode_mean_sqrt_len_tokens",
    "weightedmean": "pooling_mode_weightedmean_tokens",
    "lasttoken": "pooling_mode_lasttoken",
}
TEXT_MODALITY = {"text": {"method": "forward", "method_output_name": "last_hidden_state"}}
MATRYOSHKA_KEY = "matryoshka_dims"
"""The key of ``config_sentence_transformers.json`` that lists the Matryoshka dimensions a model was trained
for (sentence-transformers ignores it)."""
DENSE_DEFAULT_NAMES = {"module_input_name": "sentence_embedding", "module_output_name": "sentence_embedding"}


def finalize_model_dir(model_dir: Path) -> None:
    """Make a saved sentence-transformers directory portable and fill its ``document`` prompt."""
    write_portable_modules(model_dir)
    fill_document_prompt(model_dir)


def fill_document_prompt(model_dir: Path) -> dict[str, str]:
    """Give an E5-style model (``query``/``passage`` prompts) a ``document`` prompt equal to ``passage``.

    sentence-transformers 6 adds an empty ``document`` prompt to every model it loads, and
    ``encode_document`` (and mteb, which asks for the ``document`` prompt) then encodes passages with no
    prompt at all. Writing ``document`` into the saved config makes both use ``passage: ``.

    Returns:
        The prompts now saved in ``model_dir``.
    """
    path = model_dir / ST_CONFIG
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    prompts = dict(data.get("prompts") or {})
    passage = prompts.get("passage")
    if passage and not prompts.get("document"):
        prompts["document"] = passage
        data["prompts"] = prompts
        artifacts.write_json(path, data)
    return prompts


def write_portable_modules(model_dir: Path) -> None:
    """Rewrite ``modules.json`` and the module configs in the format every sentence-transformers reads.

    Only modules whose settings the old format can express are rewritten (text Transformer, Pooling with
    one mode, Normalize, Dense with default input/output names); anything else is left as saved.
    """
    modules_path = model_dir / MODULES
    modules = artifacts.read_json(modules_path)
    if not isinstance(modules, list):
        return
    for module in modules:
        name = str(module.get("type", "")).rsplit(".", 1)[-1]
        directory = model_dir / module.get("path", "")
        rewrite = _REWRITERS.get(name)
        if rewrite is not None and rewrite(directory):
            module["type"] = LEGACY_TYPES[name]
    artifacts.write_json(modules_path, modules)


def _read(path: Path) -> dict[str, Any] | None:
    data = artifacts.read_json(path)
    return data if isinstance(data, dict) else None


def _transformer(directory: Path) -> bool:
    path = directory / "sentence_bert_config.json"
    config = _read(path)
    if config is None:
        return False
    if "max_seq_length" in config and "transformer_task" not in config:
        return True  # already the old format
    if config.get("transformer_task", "feature-extraction") != "feature-extraction":
        return False
    if config.get("modality_config", TEXT_MODALITY) != TEXT_MODALITY:
        return False
    if config.get("module_output_name", "token_embeddings") != "token_embeddings":
        return False
    tokenizer = _read(directory / "tokenizer_config.json") or {}
    length = config.get("max_seq_length", tokenizer.get("model_max_length"))
    legacy = {"max_seq_length": int(length) if length is not None else None, "do_lower_case": False}
    artifacts.write_json(path, legacy)
    return True


def _pooling(directory: Path) -> bool:
    path = directory / "config.json"
    config = _read(path)
    if config is None:
        return False
    if "word_embedding_dimension" in config:
        return True
    mode = config.get("pooling_mode")
    if mode not in POOLING_KEYS or set(config) - {"embedding_dimension", "pooling_mode", "include_prompt"}:
        return False
    legacy: dict[str, Any] = {"word_embedding_dimension": config["embedding_dimension"]}
    legacy.update({key: key == POOLING_KEYS[mode] for key in POOLING_KEYS.values()})
    legacy["include_prompt"] = config.get("include_prompt", True)
    artifacts.write_json(path, legacy)
    return True


def _normalize(directory: Path) -> bool:
    path = directory / "config.json"
    config = _read(path)
    if config is not None:
        if any(config.get(k, v) != v for k, v in DENSE_DEFAULT_NAMES.items()):
            return False
        path.unlink()
    return True


def _dense(directory: Path) -> bool:
    path = directory / "config.json"
    config = _read(path)
    if config is None or any(config.get(k, v) != v for k, v in DENSE_DEFAULT_NAMES.items()):
        return False
    artifacts.write_json(path, {k: v for k, v in config.items() if k not in DENSE_DEFAULT_NAMES})
    return True


_REWRITERS = {"Transformer": _transformer, "Pooling": _pooling, "Normalize": _normalize, "Dense": _dense}


def record_matryoshka_dims(model_dir: Path, dims: list[int]) -> None:
    """Write ``dims`` into the model directory's ``config_sentence_transformers.json``."""
    path = model_dir / ST_CONFIG
    data = artifacts.read_json(path)
    config = data if isinstance(data, dict) else {}
    config[MATRYOSHKA_KEY] = [int(d) for d in dims]
    artifacts.write_json(path, config)


def matryoshka_dims_of(model_dir: Path) -> list[int] | None:
    """The Matryoshka dimensions a model directory records, if any."""
    data = artifacts.read_json(model_dir / ST_CONFIG)
    dims = data.get(MATRYOSHKA_KEY) if isinstance(data, dict) else None
    if isinstance(dims, list) and dims and all(isinstance(d, int) and d > 0 for d in dims):
        return [int(d) for d in dims]
    return None


def keep_matryoshka_dims(source: str | Path, model_dir: Path, dimension: int | None = None) -> None:
    """Carry ``source``'s recorded dimensions into ``model_dir`` (a model saved from it); with ``dimension``
    (``model_dir``'s embedding dimension, smaller than ``source``'s after a projection) only those not
    above it."""
    source_dir = Path(source)
    dims = matryoshka_dims_of(source_dir) if source_dir.is_dir() else None
    if dims is not None and dimension is not None:
        dims = [d for d in dims if d <= dimension]
    if dims:
        record_matryoshka_dims(model_dir, dims)
