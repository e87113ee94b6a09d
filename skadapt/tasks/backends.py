"""Loading a model reference as a sentence-transformers model: a model directory, a Hub id, or one ONNX
file of a model directory (``<dir>/onnx/model_qint8_avx512_vnni.onnx``).

An ONNX reference is run the way sentence-transformers' own ``backend="onnx"`` runs it: the Transformer
module's model is replaced by an onnxruntime session that returns the token embeddings, and every module
after it (pooling, a renormalization ``Dense``, ``Normalize``), the tokenizer and the prompts are the
directory's own, run by sentence-transformers. skadapt does not need optimum for this (optimum's ONNX
package pins transformers < 4.58); ``SentenceTransformer(dir, backend="onnx", model_kwargs={"file_name":
...})`` loads the same files where optimum is installed.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from skadapt import artifacts
from skadapt.results import ExportReport

ONNX_DIR = "onnx"
EXPORT_REPORT = ExportReport.FILE
"""The export stage's report, beside its tiers: it names the model each tier came from."""
EXPORT_MODEL_DIR = "model"
"""The export directory's sentence-transformers directory that holds the ONNX files (``model/onnx/``)."""


def onnx_file(ref: str) -> Path | None:
    """The ONNX file a reference names (``<dir>/onnx/<name>.onnx``), else None."""
    path = Path(ref)
    return path if path.suffix == ".onnx" and path.parent.name == ONNX_DIR else None


def model_dir_of(ref: str) -> str:
    """The sentence-transformers directory behind a reference (an ONNX file's model directory)."""
    file = onnx_file(ref)
    return str(file.parent.parent) if file is not None else ref


def tier_parents(models: dict[str, str]) -> dict[str, str]:
    """Which labelled models are deployment tiers of another one listed: tier label -> parent label.

    A tier is a reference the export stage made (a path under a directory with ``export_report.json``
    that lists it); its parent is the listed model whose directory the report names (relative to the
    export directory's parent, the run directory, or absolute).
    """
    resolved = {label: Path(model_dir_of(ref)).resolve() for label, ref in models.items()}
    parents: dict[str, str] = {}
    for label, ref in models.items():
        path = Path(ref).resolve()
        for folder in path.parents:
            report = folder / EXPORT_REPORT
            if not report.is_file():
                continue
            data = json.loads(report.read_text(encoding="utf-8"))
            tiers = {(folder / rel).resolve() for rel in (data.get("tiers") or {}).values()}
            recorded = str(data.get("parent") or "")
            parent = Path(artifacts.resolved_path(recorded, folder.parent)).resolve() if recorded else None
            match = [other for other, where in resolved.items() if where == parent and other != label]
            if path in tiers and match:
                parents[label] = match[0]
            break
    return parents


def load_sentence_model(ref: str, device: str | None = "cpu") -> Any:
    """A ``SentenceTransformer`` for a directory, Hub id or ONNX file reference (see the module doc), once
    its tokenizer passed :func:`skadapt.tokenizer_check.check_loaded`.

    Raises:
        skadapt.tokenizer_check.ModelCheckError: Its tokenizer reads ordinary text mostly as unknown.
    """
    from sentence_transformers import SentenceTransformer

    from skadapt.tokenizer_check import check_loaded

    file = onnx_file(ref)
    if file is None:
        model = SentenceTransformer(ref, device=device)
        check_loaded(model, ref)
        return model
    if not file.is_file():
        raise OSError(f"{file}: no such ONNX file")
    model = SentenceTransformer(str(file.parent.parent), device="cpu")
    check_loaded(model, str(file.parent.parent))
    use_onnx(model, file)
    return model


class _TokenizerWithVocab:
    """A ``tokenizers.Tokenizer`` (a static model's) with the ``vocab`` mapping of transformers' tokenizers,
    which mteb's model metadata reads to count embedding parameters; everything else is the tokenizer's."""

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer

    @property
    def vocab(self) -> dict[str, int]:
        """Token -> id (the tokenizer's ``get_vocab()``)."""
        return self._tokenizer.get_vocab()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tokenizer, name)


@contextlib.contextmanager
def tokenizer_with_vocab(model: Any) -> Iterator[None]:
    """While active, a static model's (model2vec tier's) tokenizer answers ``.vocab`` like a transformers
    tokenizer, so that mteb can describe the model (without it mteb logs "'tokenizers.Tokenizer' object has
    no attribute 'vocab'"). Encoding never runs in between: the module gets its own tokenizer back."""
    from tokenizers import Tokenizer

    first = model[0] if len(model) else None
    tokenizer = getattr(first, "tokenizer", None)
    if not isinstance(tokenizer, Tokenizer):
        yield
        return
    first.tokenizer = _TokenizerWithVocab(tokenizer)
    try:
        yield
    finally:
        first.tokenizer = tokenizer


def session(file: Path, threads: int | None = None) -> Any:
    """An onnxruntime CPU session for ``file`` with ``threads`` intra-op threads (default: torch's)."""
    import onnxruntime as ort
    import torch

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or int(
        os.environ.get("OMP_NUM_THREADS") or torch.get_num_threads()
    )
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(file), options, providers=["CPUExecutionProvider"])


def use_onnx(model: Any, file: Path) -> None:
    """Replace the Transformer module's model of ``model`` by an onnxruntime session of ``file``."""
    first = model[0]
    inner = getattr(first, "model", None) or first.auto_model
    runner = OnnxEncoder(session(file), inner.config)
    if hasattr(first, "model"):
        first.model = runner
    else:
        first.auto_model = runner


class _Output(dict):
    """A ``last_hidden_state`` that reads both as a key and as an attribute (as transformers' outputs)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _module_base() -> type:
    import torch

    return torch.nn.Module


class OnnxEncoder(_module_base()):  # type: ignore[misc]
    """Stands for a transformers encoder: takes its inputs, returns ``last_hidden_state`` from ONNX."""

    def __init__(self, ort_session: Any, config: Any) -> None:
        super().__init__()
        self.session = ort_session
        self.config = config
        self.inputs = [i.name for i in ort_session.get_inputs()]

    def forward(self, input_ids: Any = None, attention_mask: Any = None, **kwargs: Any) -> _Output:
        import torch

        given = {"input_ids": input_ids, "attention_mask": attention_mask, **kwargs}
        feed = {}
        for name in self.inputs:
            value = given.get(name)
            if value is None and name == "token_type_ids":
                value = torch.zeros_like(input_ids)
            if value is None:
                raise ValueError(f"the ONNX model needs input {name!r}")
            feed[name] = value.detach().cpu().numpy().astype("int64")
        (hidden,) = self.session.run(["last_hidden_state"], feed)
        return _Output(last_hidden_state=torch.from_numpy(hidden))
