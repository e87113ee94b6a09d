"""Model side of trimming: find the files, slice the embedding rows, write a sentence-transformers directory.

Every parameter whose first dimension is the old number of embedding rows (input embeddings, tied or untied
output embeddings, an MLM decoder bias) is sliced to the kept rows; shared (tied) parameters stay shared.
The sentence-transformers modules (``modules.json``, pooling, Normalize, prompts, ``max_seq_length``) are
copied unchanged.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from skadapt.trim.errors import TrimError

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
STALE_FILES = (
    "sentencepiece.bpe.model",
    "spiece.model",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "added_tokens.json",
    "README.md",
)
"""Files not copied to the trimmed model: slow-tokenizer vocabularies (now inconsistent) and the old card."""
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".h5", ".msgpack", ".onnx")
TRANSFORMER_TYPES = ("Transformer",)
EXPORT_DIRS = ("onnx", "openvino", "coreml", "tflite")
"""Directories of exports of the full-vocabulary model (ONNX, OpenVINO, ...): never copied, they are stale."""
EXPORT_SUFFIXES = (".onnx", ".onnx_data", ".ort", ".tflite", ".mlmodel", ".mlpackage", ".ot", ".gguf")
EXPORT_PREFIXES = ("openvino_model", "rust_model", "tf_model", "flax_model")
"""Exported or other-framework weight files, stale wherever they are in the model directory."""


def is_stale_export(relative: Path) -> bool:
    """Whether a path (relative to a model directory) is an export made from the untrimmed weights."""
    if any(part in EXPORT_DIRS for part in relative.parts[:-1]):
        return True
    name = relative.name
    return name.endswith(EXPORT_SUFFIXES) or name.startswith(EXPORT_PREFIXES)


def stale_exports(model_dir: Path) -> list[Path]:
    """Stale exports under ``model_dir`` (relative paths), e.g. to check a trimmed directory has none."""
    return sorted(
        path.relative_to(model_dir)
        for path in model_dir.rglob("*")
        if path.is_file() and is_stale_export(path.relative_to(model_dir))
    )


def resolve_model_dir(model: str) -> Path:
    """A local directory for a model path or Hugging Face Hub id (downloaded to the Hub cache).

    Raises:
        TrimError: Neither a local directory nor a downloadable Hub model.
    """
    path = Path(model)
    if path.is_dir():
        return path
    if path.exists() or model.startswith((".", "/")) or model.count("/") > 1:
        raise TrimError(f"{model}: not a model directory (expected a local directory or a Hub model id)")
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(model))
    except Exception as error:  # offline, unknown repo, auth: all end here
        raise TrimError(
            f"{model}: not a local directory and cannot be downloaded from the Hugging Face Hub "
            f"({type(error).__name__}: {error}); pass a local model directory"
        ) from None


def transformer_subdir(model_dir: Path) -> str:
    """Relative path of the Transformer module of a sentence-transformers directory ("" = root).

    A plain transformers directory (no ``modules.json``) is its own Transformer module.

    Raises:
        TrimError: ``modules.json`` has no Transformer module.
    """
    modules_file = model_dir / "modules.json"
    if not modules_file.is_file():
        return ""
    modules = json.loads(modules_file.read_text(encoding="utf-8"))
    for module in modules:
        if module.get("type", "").rsplit(".", 1)[-1] in TRANSFORMER_TYPES:
            return module.get("path", "")
    raise TrimError(f"{modules_file}: no Transformer module; trimming needs a transformer text encoder")


def ensure_sentence_transformers(model_dir: Path, scratch: Path) -> Path:
    """``model_dir`` if it is a sentence-transformers directory, else a copy saved as one (mean pooling)."""
    if (model_dir / "modules.json").is_file():
        return model_dir
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(model_dir), device="cpu")
    target = scratch / "as-sentence-transformers"
    model.save(str(target))
    return target


def copy_modules(model_dir: Path, out_dir: Path, subdir: str) -> None:
    """Copy everything but the Transformer's weights, config, tokenizer files, stale files and exports.

    Exports of the untrimmed model (``onnx/``, ``openvino/``, ``*.onnx``, ...) would load the old
    vocabulary's weights with the new tokenizer's ids, so they are left behind.
    """
    transformer_dir = model_dir / subdir
    for source in model_dir.rglob("*"):
        if not source.is_file():
            continue
        relative = source.relative_to(model_dir)
        in_transformer = source.parent == transformer_dir
        if in_transformer and (
            source.name in (*TOKENIZER_FILES, "config.json", "generation_config.json")
            or source.suffix in WEIGHT_SUFFIXES
            or source.name.endswith(".index.json")
        ):
            continue
        if source.name in STALE_FILES or relative.parts[0].startswith(".") or is_stale_export(relative):
            continue
        target = out_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def load_transformer(transformer_dir: Path) -> Any:
    """Load the transformer with its own architecture class (keeping an MLM head if there is one)."""
    import transformers

    config = transformers.AutoConfig.from_pretrained(transformer_dir)
    architecture = (config.architectures or [None])[0]
    cls = getattr(transformers, architecture, None) if architecture else None
    if cls is None:
        cls = transformers.AutoModel
    return cls.from_pretrained(transformer_dir, dtype="auto")


def embedding_rows(model: Any) -> int:
    """Rows of the input embedding matrix."""
    return int(model.get_input_embeddings().weight.shape[0])


def slice_rows(model: Any, keep: list[int]) -> int:
    """Keep only the ``keep`` rows of every vocabulary-sized parameter; returns the old row count.

    Raises:
        TrimError: A kept id is beyond the embedding matrix.
    """
    import torch

    rows = embedding_rows(model)
    if keep and max(keep) >= rows:
        raise TrimError(
            f"the tokenizer has ids up to {max(keep)} but the model has only {rows} embedding rows; "
            "tokenizer and model do not match"
        )
    index = torch.tensor(keep, dtype=torch.long)
    replaced: dict[int, torch.nn.Parameter] = {}
    for module in model.modules():
        for name, param in list(module.named_parameters(recurse=False)):
            if param.dim() == 0 or param.shape[0] != rows:
                continue
            if id(param) not in replaced:
                data = param.data.index_select(0, index).clone()
                replaced[id(param)] = torch.nn.Parameter(data, requires_grad=param.requires_grad)
            setattr(module, name, replaced[id(param)])
    for module in model.modules():
        if isinstance(module, torch.nn.Embedding) and module.weight.shape[0] == len(keep):
            module.num_embeddings = len(keep)
        if isinstance(module, torch.nn.Linear) and module.weight.shape[0] == len(keep):
            module.out_features = len(keep)
    return rows


def update_config(model: Any, mapping: dict[int, int], size: int) -> None:
    """Set ``vocab_size`` and remap special-token ids in the model config (and the padding index)."""
    import torch

    config = model.config
    config.vocab_size = size
    for attribute in ("pad_token_id", "bos_token_id", "eos_token_id", "sep_token_id", "cls_token_id"):
        old = getattr(config, attribute, None)
        if isinstance(old, int):
            setattr(config, attribute, mapping.get(old))
    embedding = model.get_input_embeddings()
    if isinstance(embedding, torch.nn.Embedding) and embedding.padding_idx is not None:
        embedding.padding_idx = mapping.get(embedding.padding_idx)


def parameter_count(model: Any) -> int:
    """Distinct parameters of a torch model."""
    return sum(p.numel() for p in model.parameters())
