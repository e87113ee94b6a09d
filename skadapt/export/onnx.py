"""The ONNX tiers: the model directory with ``onnx/model.onnx`` (fp32) and an int8 file beside it, named
as sentence-transformers names them (``onnx/model_qint8_avx512_vnni.onnx``; how it is quantized:
``skadapt.export.int8``).

Only the Transformer module is exported, as sentence-transformers' ONNX backend does: the ONNX graph maps
``input_ids``/``attention_mask`` (``token_type_ids`` where the tokenizer makes them) to
``last_hidden_state``; pooling, a renormalization ``Dense`` and ``Normalize`` stay the directory's own
modules (``modules.json``), so they run identically for every tier, and so do the prompts
(``config_sentence_transformers.json``) and the tokenizer.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from skadapt.errors import SkadaptError
from skadapt.tasks.backends import ONNX_DIR

FP32_FILE = "model.onnx"
QUANTIZATION: dict[str, dict[str, bool]] = {
    # sentence-transformers' (optimum's) dynamic presets: weights int8, per-channel where the CPU gains
    "arm64": {"per_channel": True, "reduce_range": False},
    "avx2": {"per_channel": False, "reduce_range": True},
    "avx512": {"per_channel": True, "reduce_range": True},
    "avx512_vnni": {"per_channel": True, "reduce_range": False},
}


class ExportError(SkadaptError):
    """A model cannot be exported, or its export does not reproduce it."""


def int8_file(quantization: str) -> str:
    """The file name sentence-transformers gives an int8 export for a CPU family."""
    return f"model_qint8_{quantization}.onnx"


def copy_model_dir(model_dir: Path, out: Path) -> None:
    """Copy a sentence-transformers directory (without an ``onnx/`` folder it may carry) to ``out``."""
    shutil.copytree(model_dir, out, ignore=shutil.ignore_patterns(ONNX_DIR, ".*"))


def export_fp32(model: Any, target: Path, opset: int = 17) -> list[str]:
    """Export the Transformer module of a loaded ``SentenceTransformer`` to ``target``; the input names.

    Raises:
        ExportError: The model's first module is not a transformers model.
    """
    import torch

    first = model[0]
    inner = getattr(first, "model", None) or getattr(first, "auto_model", None)
    if inner is None or not hasattr(first, "tokenizer"):
        raise ExportError(
            f"the first module is {type(first).__name__}, not a transformers model: nothing to export to ONNX"
        )
    sample = first.tokenizer(
        ["Export sample sentence.", "A second, longer sample sentence for the dynamic axes."],
        return_tensors="pt",
        padding=True,
    )
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]

    class Encoder(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *inputs: Any) -> Any:
            return self.inner(**dict(zip(names, inputs, strict=True)), return_dict=True).last_hidden_state

    axes = {"batch": 0, "sequence": 1}
    dynamic = {name: {i: a for a, i in axes.items()} for name in [*names, "last_hidden_state"]}
    target.parent.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(
            Encoder(inner).eval(),
            tuple(sample[n] for n in names),
            str(target),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=dynamic,
            opset_version=opset,
            dynamo=False,  # the TorchScript exporter: no onnxscript needed, dynamic axes as named
        )
    return names
