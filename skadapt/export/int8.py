"""The int8 ONNX tier: a few real onnxruntime quantizations of the fp32 file, one kept, chosen on dev data.

The variants (:func:`variants`), each a file sentence-transformers' ONNX backend loads:

- ``dynamic``: sentence-transformers' (optimum's) dynamic preset for the CPU family (``QUANTIZATION``),
  every operator onnxruntime quantizes, the embedding ``Gather`` included (what export wrote before);
- ``dynamic-gather-fp32``: the same with the embedding tables kept fp32 (only ``MatMul`` quantized);
- the same with the preset's per-channel setting flipped, and with its reduce-range setting flipped;
- ``static-qdq``: ``quantize_static`` in QDQ format, activations calibrated (MinMax) on the export corpus
  (the fine-tuning texts, never an evaluation text), with onnxruntime's own CPU guidance for the family
  (x86: uint8 activations and int8 weights, 7-bit weights without VNNI; arm64: int8 both).

The CPU family is the exporting machine's (:func:`cpu_family`, from its CPU flags) unless the recipe names
one. The kept variant (:func:`choose`) is, among the variants faster than the PyTorch parent on this
machine and within :data:`MAX_DEV_LOSS` points of it on the dev sets, the one whose embeddings agree best
with the parent's on the dev texts; when none qualifies the best-agreeing faster (else any) variant is kept
and the tier is marked not worth deploying, with the reason. The export stage ranks the variants on that
agreement first and dev-scores and times only the best ones within the bar (:func:`pick_finalists`): the
choice is the same unless the best of them is not faster than the parent.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from skadapt.export.onnx import QUANTIZATION, ExportError
from skadapt.results.export import Int8Candidate, Int8Choice

MAX_DEV_LOSS = 0.5
"""Dev points (mean main score x100) the kept int8 variant may lose against its parent and be deployable."""
CALIBRATION_TEXTS = 128
"""Corpus texts the static variant's activations are calibrated on."""
CALIBRATION_BATCH = 16
CALIBRATION_LENGTH = 128


class Variant(BaseModel):
    """One onnxruntime int8 quantization of the fp32 file."""

    name: str
    method: Literal["dynamic", "static"]
    per_channel: bool
    reduce_range: bool
    gather_int8: bool = False
    """Whether the embedding ``Gather`` is quantized too (dynamic only)."""

    def settings(self) -> str:
        """The settings in words, e.g. ``dynamic, per-channel, 7-bit weights, embeddings fp32``."""
        return ", ".join(
            [
                self.method + (" QDQ calibrated" if self.method == "static" else ""),
                "per-channel" if self.per_channel else "per-tensor",
                "7-bit weights" if self.reduce_range else "8-bit weights",
                "embeddings int8" if self.gather_int8 else "embeddings fp32",
            ]
        )


def cpu_flags() -> set[str]:
    """The CPU flags of this machine (``/proc/cpuinfo``; empty where it has none)."""
    info = Path("/proc/cpuinfo")
    if not info.is_file():
        return set()
    for line in info.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(("flags", "Features")):
            return set(line.split(":", 1)[1].split())
    return set()


def cpu_family() -> str:
    """The sentence-transformers CPU family of this machine: ``arm64``, ``avx512_vnni``, ``avx512`` or
    ``avx2`` (from its architecture and CPU flags; ``avx2`` where they say nothing better)."""
    if platform.machine().lower() in ("arm64", "aarch64"):
        return "arm64"
    flags = cpu_flags()
    if "avx512_vnni" in flags:
        return "avx512_vnni"
    if "avx512f" in flags:
        return "avx512"
    return "avx2"


def machine() -> dict[str, Any]:
    """What the speed was measured on: CPU name, logical cores, family."""
    name = platform.processor() or platform.machine()
    info = Path("/proc/cpuinfo")
    if info.is_file():
        for line in info.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    return {"cpu": name, "cores": os.cpu_count() or 1, "family": cpu_family()}


def variants(family: str, calibrated: bool) -> list[Variant]:
    """The variants tried for ``family`` (see the module doc); ``static-qdq`` only when ``calibrated``
    (there is a corpus to calibrate on)."""
    preset = QUANTIZATION[family]
    per_channel, reduce_range = preset["per_channel"], preset["reduce_range"]
    found = [
        Variant(name="dynamic", method="dynamic", gather_int8=True, **preset),
        Variant(name="dynamic-gather-fp32", method="dynamic", **preset),
        Variant(
            name="dynamic-gather-fp32-" + ("per-tensor" if per_channel else "per-channel"),
            method="dynamic",
            per_channel=not per_channel,
            reduce_range=reduce_range,
        ),
        Variant(
            name="dynamic-gather-fp32-" + ("8-bit" if reduce_range else "7-bit"),
            method="dynamic",
            per_channel=per_channel,
            reduce_range=not reduce_range,
        ),
    ]
    if calibrated:  # onnxruntime's CPU guidance for quantize_static: per-tensor, 7-bit only without VNNI
        found.append(
            Variant(
                name="static-qdq",
                method="static",
                per_channel=False,
                reduce_range=family in ("avx2", "avx512"),
            )
        )
    return found


def variant_file(variant: Variant) -> str:
    """The candidate file name of a variant (the kept one is renamed to sentence-transformers' name)."""
    return f"model_qint8_{variant.name}.onnx"


class CalibrationTexts:
    """onnxruntime's ``CalibrationDataReader`` over tokenized texts: batches of the model's inputs."""

    def __init__(self, tokenizer: Any, texts: list[str], inputs: list[str]) -> None:
        self.batches = [
            {
                name: value.astype("int64")
                for name, value in tokenizer(
                    texts[start : start + CALIBRATION_BATCH],
                    padding=True,
                    truncation=True,
                    max_length=CALIBRATION_LENGTH,
                    return_tensors="np",
                ).items()
                if name in inputs
            }
            for start in range(0, len(texts), CALIBRATION_BATCH)
        ]
        self.position = 0

    def get_next(self) -> dict[str, Any] | None:
        """The next batch, None after the last (onnxruntime's protocol)."""
        if self.position >= len(self.batches):
            return None
        self.position += 1
        return self.batches[self.position - 1]

    def rewind(self) -> None:
        """Start over."""
        self.position = 0


def quantize(
    variant: Variant,
    source: Path,
    target: Path,
    family: str,
    calibration: CalibrationTexts | None = None,
) -> None:
    """Write ``variant`` of the fp32 file ``source`` to ``target`` with onnxruntime's quantizer.

    Raises:
        ExportError: A static variant without calibration texts.
    """
    import onnx
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_dynamic, quantize_static

    extra = {"DefaultTensorType": onnx.TensorProto.FLOAT, "MatMulConstBOnly": True}
    if variant.method == "dynamic":
        quantize_dynamic(
            str(source),
            str(target),
            weight_type=QuantType.QInt8,
            op_types_to_quantize=None if variant.gather_int8 else ["MatMul"],
            per_channel=variant.per_channel,
            reduce_range=variant.reduce_range,
            extra_options=extra,
        )
        return
    if calibration is None:
        raise ExportError(f"export: the int8 variant {variant.name} needs corpus texts to calibrate on")
    calibration.rewind()
    quantize_static(
        str(source),
        str(target),
        calibration,
        quant_format=QuantFormat.QDQ,
        op_types_to_quantize=["MatMul"],
        per_channel=variant.per_channel,
        reduce_range=variant.reduce_range,
        activation_type=QuantType.QInt8 if family == "arm64" else QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        extra_options=extra,
    )


def choose(
    candidates: list[Int8Candidate], parent_dev: float | None, family: str, agreement_texts: str
) -> Int8Choice:
    """The kept variant (see the module doc): among the faster-than-parent variants within
    :data:`MAX_DEV_LOSS` dev points of the parent, the best agreement (ties: the earlier variant); without
    one, the best-agreeing faster variant (else the best-agreeing one) and the reason it is not worth
    deploying. Candidates without a speed-up (not timed: no finalists) are never kept."""

    def agreement(candidate: Int8Candidate) -> float:
        return candidate.agreement if candidate.agreement is not None else float("-inf")

    def close(candidate: Int8Candidate) -> bool:
        return parent_dev is None or candidate.dev is None or candidate.dev >= parent_dev - MAX_DEV_LOSS

    timed = [c for c in candidates if c.speedup is not None]  # the others are no finalists: never kept
    faster = [c for c in timed if (c.speedup or 0.0) > 1.0]
    eligible = [c for c in faster if close(c)]
    pool = eligible or faster or timed or candidates
    kept = max(pool, key=lambda c: (agreement(c), -candidates.index(c)))
    speedup = kept.speedup or 0.0
    if speedup <= 1.0:
        worth, reason = False, f"slower than the PyTorch model on this machine ({speedup:.2f}x)"
    elif not close(kept):
        assert parent_dev is not None and kept.dev is not None
        worth = False
        reason = (
            f"{parent_dev - kept.dev:.2f} dev points below its parent (more than {MAX_DEV_LOSS:g}) in every "
            "faster variant"
        )
    elif parent_dev is None or kept.dev is None:
        worth, reason = None, f"{kept.speedup:.2f}x the PyTorch model; not judged on dev (no dev sets)"
    else:
        worth = True
        reason = f"{kept.speedup:.2f}x the PyTorch model, {kept.dev - parent_dev:+.2f} dev points"
    return Int8Choice(
        kept=kept.name,
        family=family,
        parent_dev=parent_dev,
        agreement_texts=agreement_texts,
        candidates=candidates,
        worth=worth,
        reason=reason,
    )


def dev_texts(dev: Any, test_texts: dict[str, list[str]] | None) -> list[str]:
    """The distinct texts of the dev sets' examples, less the evaluation tasks' test texts (normalized as
    the contamination check compares them): what the variants' agreement with the parent is measured on."""
    from skadapt.tasks.dev import encoded_texts
    from skadapt.textsample import normalize_text

    banned = {normalize_text(t) for texts in (test_texts or {}).values() for t in texts}
    seen: dict[str, None] = {}
    for entry in dev.sets:
        for text in encoded_texts(entry):
            if text.strip() and normalize_text(text) not in banned:
                seen.setdefault(text, None)
    return list(seen)


def encode_for_agreement(model: Any, texts: list[str], batch_size: int) -> Any:
    """Normalized embeddings of ``texts`` with the model's query prompt (where it has one), as the dev
    evaluators encode most texts."""
    import numpy as np

    prompts = dict(model.prompts or {})
    name = "query" if "query" in prompts else None
    embeddings = model.encode(texts, batch_size=batch_size, prompt_name=name, convert_to_numpy=True)
    embeddings = np.asarray(embeddings, dtype=np.float64)
    return embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)


def dev_score(model: Any, sets: list[Any]) -> float:
    """The mean main score of built dev sets (:func:`skadapt.tasks.dev.build_dev_sets`), x100."""
    scores = [float(dev_set.evaluator(model)[dev_set.metric]) for dev_set in sets]
    return round(100 * sum(scores) / len(scores), 4)


class Made(BaseModel):
    """A variant's file, with its dev score and agreement with the parent."""

    variant: Variant
    path: Path
    dev: float | None
    agreement: float | None
    finalist: bool = True
    """Whether it is timed and may be kept (:func:`pick_finalists`); the others are not dev-scored either
    when they cannot be a finalist."""


class Variants(BaseModel):
    """The variants made of one fp32 file: what :func:`choose` decides between, and the parent's dev score."""

    family: str
    made: list[Made]
    parent_dev: float | None
    agreement_texts: str


AGREEMENT_TEXTS = 1000
"""Texts the agreement is measured on at most (dev texts, else corpus texts)."""
FINALISTS = 2
"""Variants timed by the export stage: the best-agreeing ones within :data:`MAX_DEV_LOSS` of the parent."""


def agreement_order(made: list[Made]) -> list[int]:
    """Indices of ``made`` by agreement, best first (ties: the earlier variant, as :func:`choose` breaks
    them; no agreement last)."""

    def key(i: int) -> tuple[float, int]:
        agreement = made[i].agreement
        return (-(agreement if agreement is not None else float("-inf")), i)

    return sorted(range(len(made)), key=key)


def pick_finalists(made: list[Made], parent_dev: float | None, count: int, score: Any = None) -> list[Made]:
    """Mark the ``count`` variants that go on to be timed: in order of agreement (:func:`agreement_order`),
    those within :data:`MAX_DEV_LOSS` dev points of ``parent_dev``, each dev-scored by ``score`` (index ->
    dev score; None: the ``dev`` already set) only until ``count`` pass; fewer passing: the best-agreeing
    others fill up. :func:`choose` keeps the best-agreeing faster variant within the bar, so it keeps the
    same one among these as among all, unless the first of them is not faster than the parent.
    """
    order = agreement_order(made)
    chosen: list[int] = []
    for i in order:
        if len(chosen) >= count:
            break
        if score is not None:
            made[i].dev = score(i)
        dev = made[i].dev
        if parent_dev is None or dev is None or dev >= parent_dev - MAX_DEV_LOSS:
            chosen.append(i)
    chosen += [i for i in order if i not in chosen][: count - len(chosen)]
    for i, item in enumerate(made):
        item.finalist = i in chosen
    return [made[i] for i in order if i in chosen]


def make_variants(
    model: Any,
    fp32: Path,
    inputs: list[str],
    family: str,
    *,
    corpus_texts: list[str] | None,
    dev: Any = None,
    test_texts: dict[str, list[str]] | None = None,
    batch_size: int = 32,
    finalists: int | None = None,
) -> Variants:
    """Quantize every variant of ``fp32`` into its folder (:func:`variant_file`) and score each on the dev
    sets ``dev`` (rows holding one of ``test_texts`` dropped) beside the PyTorch ``model``, and its
    agreement with ``model`` on the dev texts (without dev sets: the corpus texts; without those: none).
    ``corpus_texts`` (the export corpus) calibrate the static variant; without them there is none. With
    ``finalists``, the variants are ranked on agreement first and dev-scored in that order only until that
    many pass the dev bar (:func:`pick_finalists`): the others keep ``dev`` None and are no finalists."""
    from skadapt.tasks.backends import load_sentence_model
    from skadapt.tasks.dev import build_dev_sets

    calibration = (
        CalibrationTexts(model[0].tokenizer, corpus_texts[:CALIBRATION_TEXTS], inputs)
        if corpus_texts
        else None
    )
    sets = build_dev_sets(dev, batch_size, dict(model.prompts or {}), test_texts) if dev is not None else []
    parent_dev = dev_score(model, sets) if sets else None
    if dev is not None:
        texts, label = dev_texts(dev, test_texts)[:AGREEMENT_TEXTS], "dev texts"
    else:
        texts, label = (corpus_texts or [])[:AGREEMENT_TEXTS], "export corpus texts"
    reference = encode_for_agreement(model, texts, batch_size) if texts else None
    made = []
    for variant in variants(family, calibration is not None):
        path = fp32.parent / variant_file(variant)
        quantize(variant, fp32, path, family, calibration)
        tier = load_sentence_model(str(path))
        agreement = None
        if reference is not None:
            agreement = round(
                float((encode_for_agreement(tier, texts, batch_size) * reference).sum(1).mean()), 6
            )
        scored = dev_score(tier, sets) if sets and finalists is None else None
        made.append(Made(variant=variant, path=path, dev=scored, agreement=agreement))
    if finalists is not None:

        def score(i: int) -> float | None:
            return dev_score(load_sentence_model(str(made[i].path)), sets) if sets else None

        pick_finalists(made, parent_dev, finalists, score)
    return Variants(
        family=family,
        made=made,
        parent_dev=parent_dev,
        agreement_texts=f"{len(texts)} {label}" if texts else "none",
    )
