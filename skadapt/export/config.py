"""The export stage's options (recipe section ``export``; ``skadapt export`` derives its options from it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from skadapt.config import PositiveInt, Section, Tier

Quantization = Literal["avx512_vnni", "avx512", "avx2", "arm64"]
"""The CPU family an int8 file is quantized for (sentence-transformers' file names and settings)."""


class ExportConfig(Section):
    """Deployment tiers of the final model, each measured against it (quality, texts/s, size, memory).

    The fp32 ONNX file is always written (the int8 file is quantized from it) and checked against the
    PyTorch model; ``tiers`` names the tiers evaluated beside the final model.
    """

    tiers: list[Tier] = Field(
        default_factory=lambda: ["onnx-int8", "static"],
        description="Tiers to make and evaluate beside the final model (onnx, onnx-int8, static)",
    )
    quantization: Quantization = Field(
        "avx512_vnni", description="CPU family of the int8 ONNX file (its name: model_qint8_<family>.onnx)"
    )
    opset: int = Field(17, ge=14, description="ONNX opset of the export")
    parity_tolerance: float = Field(
        1e-5, gt=0, description="Largest |Δ| allowed between fp32 ONNX and PyTorch embeddings"
    )
    pca_dims: PositiveInt | None = Field(
        256, description="Static model dimensions after PCA (null: the model's own dimension)"
    )
    sif_coefficient: float | None = Field(
        1e-4, gt=0, description="SIF weighting of the static model's token vectors (null: none)"
    )
    speed_corpus: str | None = Field(
        None,
        description="Texts the speed is measured on: file/glob or hub: spec (default: the evaluation "
        "suites' texts, else the language's corpus)",
    )
    text_column: str = Field("text", description="Text column of a tabular/Hub speed corpus")
    speed_texts: PositiveInt = Field(1000, description="Texts encoded per speed measurement")
    speed_repeats: PositiveInt = Field(
        3, description="Rounds in which the models take turns, one timed pass each; the fastest counts"
    )
    batch_size: PositiveInt = Field(32, description="Encoding batch size of the speed measurement")
    dims: list[PositiveInt] | None = Field(
        None,
        description="Matryoshka tiers dims-<d>: the model truncated to d dimensions and renormalized (null: "
        "the dimensions the model records from finetune.matryoshka_dims; [] for none)",
    )

    @field_validator("tiers")
    @classmethod
    def _tiers(cls, tiers: list[str]) -> list[str]:
        if not tiers:
            raise ValueError("name at least one tier (onnx, onnx-int8, static), or drop the export section")
        if len(set(tiers)) != len(tiers):
            raise ValueError(f"a tier is named twice: {tiers}")
        return tiers

    @field_validator("dims")
    @classmethod
    def _dims(cls, dims: list[int] | None) -> list[int] | None:
        if dims is not None and len(set(dims)) != len(dims):
            raise ValueError(f"a dimension is named twice: {dims}")
        return dims
