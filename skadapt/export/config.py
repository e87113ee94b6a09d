"""The export stage's options (recipe section ``export``; ``skadapt export`` derives its options from it)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from skadapt.config import PositiveFloat, PositiveInt, Section, Tier
from skadapt.sources.config import CorpusSource, ParallelSource

Quantization = Literal["avx512_vnni", "avx512", "avx2", "arm64"]
"""The CPU family an int8 file is quantized for (sentence-transformers' file names and settings)."""


class FitCorpus(Section):
    """The texts the trained static table and the dims tiers' basis are fitted on, evaluation texts left out
    (``skadapt.export.static_train.static_corpus``)."""

    sources: list[CorpusSource] | None = Field(
        None,
        description="Its sources, each a corpus (not a wordfreq list) (null: the texts of the datasets the "
        "model was fine-tuned on, as the "
        "finetune stage's training_report.json names them; without one: no corpus, the static tier is "
        "distilled alone and the dims tiers truncate)",
    )
    max_texts: PositiveInt = Field(
        50000,
        description="Texts read per source column at most, and the largest seeded sample of them kept",
    )
    sentences: bool = Field(
        True, description="Also the sentences of multi-sentence texts (pysbd, the run's language)"
    )
    parallel: list[ParallelSource] | None = Field(
        None,
        description="Parallel text (e.g. [{source: data/parallel.jsonl, columns: [sk, en]}]): a dims "
        "basis candidate is fitted on the corpus plus both sides of these pairs (cross-lingual tasks such "
        "as bitext mining need directions the in-language corpus lacks); only the dims tiers use it",
    )


class StaticTraining(Section):
    """Training of the static tier's table on its parent (``skadapt.export.static_train``): the parent's
    sentence embeddings of the corpus texts (``export.corpus``) are the targets, its contextual token vectors
    the starting table."""

    prompt: str | None = Field(
        "query",
        description="The parent's prompt the targets are encoded with (its name; null: none). The table is "
        "fitted to texts with and without it, so the static model serves both",
    )
    shrinkage: PositiveFloat = Field(
        1.0, description="Pseudo-count pulling a seen token's contextual mean toward its distilled estimate"
    )
    ridge: PositiveFloat = Field(
        1.0, description="Ridge penalty of the linear map fitted to the targets (relative to the features)"
    )
    epochs: float = Field(
        1.0, ge=0, description="Epochs of gradient training of the table after the fit (0: none)"
    )
    learning_rate: PositiveFloat = Field(0.003, description="Learning rate of the gradient training")
    batch_size: PositiveInt = Field(32, description="Batch size of the gradient training")


class ExportConfig(Section):
    """Deployment tiers of the final model, each measured against it (quality, texts/s, size, memory).

    The fp32 ONNX file is always written (the int8 file is quantized from it) and checked against the
    PyTorch model; ``tiers`` names the tiers evaluated beside the final model.
    """

    tiers: list[Tier] = Field(
        default_factory=lambda: ["onnx-int8", "static"],
        description="Tiers to make and evaluate beside the final model (onnx, onnx-int8, static)",
    )
    quantization: Quantization | Literal["auto"] = Field(
        "auto",
        description="CPU family the int8 ONNX file is quantized for (its name: model_qint8_<family>.onnx; "
        "auto: the exporting machine's, from its CPU flags)",
    )
    opset: int = Field(17, ge=14, description="ONNX opset of the export")
    parity_tolerance: float = Field(
        1e-5, gt=0, description="Largest |Δ| allowed between fp32 ONNX and PyTorch embeddings"
    )
    pca_dims: PositiveInt | None = Field(
        256, description="Static model dimensions after PCA (null: the model's own dimension)"
    )
    corpus: FitCorpus = Field(
        default_factory=FitCorpus,
        description="The texts the static table is trained on and the dims tiers' basis is fitted on",
    )
    static_training: StaticTraining | None = Field(
        default_factory=StaticTraining,
        description="Train the static table on the parent (null: the model2vec distillation alone)",
    )
    sif_coefficient: float | None = Field(
        1e-4,
        gt=0,
        description="SIF weighting of the distilled token vectors (null: none; a trained table "
        "learns its own)",
    )
    speed_corpus: CorpusSource | None = Field(
        None,
        description="Texts the speed is measured on: file/glob or hub: spec, or {source, columns, "
        "max_documents} (default: the evaluation suites' texts, else the language's corpus)",
    )
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
    dims_basis: Literal["auto", "corpus", "parallel", "first"] = Field(
        "auto",
        description="Which d components a dims tier keeps: corpus = the top d directions of the parent's "
        "embeddings of the corpus (both prompts); parallel = those of the corpus plus the parallel text "
        "(export.corpus.parallel), each half weighted equally; first = its first d components (plain "
        "truncation, what Matryoshka training trains); auto = chosen per d on the dev sets among them "
        "(corpus kept unless another beats it beyond the noise), corpus without dev sets. Without a "
        "corpus the tiers truncate",
    )

    @field_validator("tiers")
    @classmethod
    def _tiers(cls, tiers: list[str]) -> list[str]:
        if not tiers:
            raise ValueError("name at least one tier (onnx, onnx-int8, static), or drop the export section")
        if len(set(tiers)) != len(tiers):
            raise ValueError(f"a tier is named twice: {tiers}")
        return tiers

    @model_validator(mode="after")
    def _parallel_basis(self) -> ExportConfig:
        if self.dims_basis == "parallel" and not self.corpus.parallel:
            raise ValueError(
                "export.dims_basis: parallel needs parallel text in export.corpus.parallel "
                "(e.g. [{source: data/parallel.jsonl, columns: [sk, en]}])"
            )
        return self

    @field_validator("dims")
    @classmethod
    def _dims(cls, dims: list[int] | None) -> list[int] | None:
        if dims is not None and len(set(dims)) != len(dims):
            raise ValueError(f"a dimension is named twice: {dims}")
        return dims
