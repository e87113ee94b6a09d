"""The finetune stage's options (recipe section ``finetune``)."""

from __future__ import annotations

from itertools import pairwise
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from skadapt.config import Fraction, PositiveFloat, PositiveInt, Section, require_unique_names
from skadapt.sources.config import CorpusSource, ParallelSource
from skadapt.tasks.config import ContaminationConfig, DevSets
from skadapt.train.negatives_config import GistConfig, HardNegativesConfig

DatasetKind = Literal["pairs", "triplets", "nli", "sts", "rte"]
LossName = Literal["mnrl", "cached_mnrl", "cosine", "cosent", "gist", "cached_gist"]
DEFAULT_LOSS: dict[str, str] = {
    "pairs": "mnrl",
    "triplets": "mnrl",
    "nli": "mnrl",
    "rte": "mnrl",
    "sts": "cosine",
}
ANCHOR_DATASET = "anchor"
"""Name of the distillation dataset that ``finetune.anchor`` adds to the multi-task round."""
PARALLEL_ANCHOR_DATASET = "anchor_parallel"
"""Name of the cross-lingual distillation dataset of ``finetune.anchor.parallel``."""
PAIRS_SUFFIX = "_pairs"
"""An nli dataset's entailed hypotheses without a contradicted one train as pairs in ``<name>_pairs``."""


class FinetuneDataset(Section):
    """One training dataset; its kind fixes the columns it needs and the default loss."""

    name: str = Field(description="Dataset name, unique in the section (reports, logs, licenses)")
    kind: DatasetKind = Field(
        description="pairs | triplets | nli | rte | sts: the roles its columns fill and its default loss"
    )
    source: str = Field(description="hub:DATASET[:CONFIG[:SPLIT]] or a local .jsonl/.csv/.parquet file")
    columns: dict[str, str] = Field(default_factory=dict, description="role -> column name in the source")
    loss: LossName | None = Field(None, description="Training loss; default: the kind's (mnrl, sts: cosine)")
    label_map: dict[str, str] = Field(
        default_factory=dict, description="source label -> entailment/neutral/..."
    )
    score_range: tuple[float, float] = Field(
        (0.0, 5.0), description="sts: the source's score range, scaled to [0, 1] (low < high)"
    )
    prompts: dict[str, str] | None = Field(None, description="role -> prompt; default query:/passage:")
    max_samples: PositiveInt | None = Field(None, description="Rows read from the source at most")
    hard_negatives: HardNegativesConfig | None = Field(
        None,
        description="kind pairs: add mined (or random same-domain) negatives; trains as triplets/n-tuples",
    )

    @model_validator(mode="after")
    def _default_loss(self) -> FinetuneDataset:
        if self.loss is None:
            self.loss = DEFAULT_LOSS[self.kind]  # type: ignore[assignment]
        if self.hard_negatives is not None and self.kind != "pairs":
            raise ValueError(
                f"hard_negatives mines negatives for (anchor, positive) pairs: dataset {self.name!r} is of "
                f"kind {self.kind!r}; use it on a dataset of kind pairs"
            )
        if self.hard_negatives is not None and "negative" in self.columns:
            raise ValueError(
                f"dataset {self.name!r} maps a negative column and asks for hard_negatives: use one of them"
            )
        if self.hard_negatives is not None and self.loss == "gist" and self.hard_negatives.num_negatives > 1:
            raise ValueError(
                f"dataset {self.name!r}: loss gist takes one negative per anchor, "
                f"hard_negatives.num_negatives is {self.hard_negatives.num_negatives}; use loss cached_gist "
                "or num_negatives: 1"
            )
        if self.score_range[0] >= self.score_range[1]:
            raise ValueError(f"score_range must be [low, high] with low < high, got {list(self.score_range)}")
        return self


class DevEvaluation(DevSets):
    """The dev sets of fine-tuning: scored before and after training (the report, each set's power),
    WiSE-FT's choice, and with ``select_best`` the checkpoint kept."""

    steps: PositiveInt = Field(500, description="select_best: evaluate (and checkpoint) every this many")
    select_best: bool = Field(
        False,
        description="Evaluate every `steps` during training and keep the checkpoint with the best dev score "
        "(default: the last weights; measured against the plain sentence-transformers arm, the raw best on "
        "small dev sets chose on noise)",
    )


class AnchorConfig(Section):
    """Distillation towards the frozen starting model's embeddings (MSELoss): on corpus text, and across
    languages on parallel text.

    Mixed into the multi-task round as one more dataset each; its loss is ``weight`` x the mean squared
    Euclidean distance between the trained and the starting model's embeddings (2(1 - cos) for
    normalized embeddings). On parallel text every side of a pair is trained towards the starting model's
    embedding of the pair's last side (multilingual knowledge distillation, Reimers & Gurevych 2020):
    training on the language alone moves its texts away from their translations, and no in-language
    text sees it.
    """

    corpus: CorpusSource | None = Field(
        None, description="The anchor texts: file/glob or hub:... spec, or {source, columns, max_documents}"
    )
    parallel: list[ParallelSource] | None = Field(
        None,
        description="Parallel text, e.g. [{source: data/parallel.jsonl, columns: [sk, en]}]: each side "
        "trained towards the starting model's embedding of the last side (query prompt, as e5 reads "
        "symmetric tasks); pairs holding an evaluation text are left out",
    )
    samples: PositiveInt = Field(
        2000, description="Corpus sentences drawn (seeded; evaluation texts excluded)"
    )
    weight: PositiveFloat = Field(1.0, description="Loss weight: weight x squared distance to the start")
    prompt: str | None = Field(
        None, description="Model prompt name the corpus texts are encoded with; default: document/passage"
    )
    min_chars: PositiveInt = Field(32, description="Shortest sentence drawn, in characters")
    max_chars: PositiveInt = Field(512, description="Longest sentence drawn, in characters")

    @model_validator(mode="after")
    def _some_text(self) -> AnchorConfig:
        if self.corpus is None and not self.parallel:
            raise ValueError("finetune.anchor needs its texts: corpus, parallel or both")
        return self


def _default_grid() -> list[float]:
    return [round(i / 10, 1) for i in range(11)]


class InterpolationConfig(Section):
    """WiSE-FT: weights (1 - a) * start + a * fine-tuned, with ``a`` chosen on the dev set from ``grid``."""

    grid: list[Fraction] = Field(
        default_factory=_default_grid,
        min_length=1,
        description="Mixing coefficients a scored on dev (a = 1, the fine-tuned model, is scored always)",
    )


class FinetuneConfig(Section):
    """Multi-task contrastive fine-tuning (SkMTEB defaults)."""

    datasets: list[FinetuneDataset] = Field(
        min_length=1, description="The training datasets, trained together in one multi-task round"
    )
    batch_size: PositiveInt = Field(32, description="Examples per batch and device (SkMTEB: 32)")
    learning_rate: PositiveFloat = Field(2e-5, description="Peak learning rate (SkMTEB: 2e-5)")
    warmup_ratio: Fraction = Field(0.1, description="Share of the steps with linear warmup (SkMTEB: 0.1)")
    epochs: PositiveFloat = Field(3, description="Passes over the data (SkMTEB: 3)")
    max_steps: PositiveInt | None = Field(None, description="Stop after this many steps (overrides epochs)")
    weight_decay: Annotated[float, Field(ge=0)] = Field(0.01, description="AdamW weight decay")
    max_seq_length: PositiveInt = Field(256, description="Training length in tokens (SkMTEB: 256)")
    sampling: Literal["proportional", "round_robin"] = Field(
        "proportional", description="How batches are drawn from the datasets (each batch from one dataset)"
    )
    mini_batch_size: PositiveInt = Field(
        32, description="cached_mnrl, cached_gist: examples per forward pass"
    )
    gist: GistConfig = Field(
        default_factory=GistConfig,
        description="The guide model and false-negative margin of gist/cached_gist",
    )
    gradient_accumulation_steps: PositiveInt = Field(1, description="Batches per optimizer step")
    bf16: bool = Field(False, description="Train in bfloat16 (GPUs that support it)")
    save_steps: PositiveInt = Field(500, description="Checkpoint every this many steps (resume point)")
    save_total_limit: PositiveInt = Field(2, description="Checkpoints kept")
    dev: DevEvaluation | None = Field(
        None, description="Dev sets scored before and after training; WiSE-FT and select_best choose on them"
    )
    anchor: AnchorConfig | None = Field(
        None, description="Distillation towards the frozen starting model on corpus sentences"
    )
    interpolation: InterpolationConfig | None = Field(
        None, description="WiSE-FT: a mixture with the starting model, kept only beyond the noise on dev"
    )
    plain_arm: bool = Field(
        False,
        description="Also train the plain sentence-transformers arm from the same starting model on the "
        "same data (MNRL, CoSENT on scored pairs, these hyperparameters, the last weights) into plain_arm/ "
        "beside the model; evaluate.models can then list `plain`, scored beside the fine-tuned model",
    )
    report_to: Literal["none", "tensorboard", "wandb", "trackio"] = Field(
        "none", description="Where the trainer logs metrics"
    )
    contamination: ContaminationConfig = Field(
        default_factory=ContaminationConfig,
        description="The check of the training texts against the evaluation tasks' test texts",
    )
    matryoshka_dims: list[PositiveInt] | None = Field(
        None,
        description="Matryoshka dimensions, descending (e.g. [384, 256, 128, 64]): every task loss is also "
        "trained on the truncated, renormalized embeddings (MatryoshkaLoss); the model's own dimension is "
        "added first when missing",
    )

    @field_validator("matryoshka_dims")
    @classmethod
    def _descending_dims(cls, dims: list[int] | None) -> list[int] | None:
        if dims is not None and (not dims or any(a <= b for a, b in pairwise(dims))):
            raise ValueError(f"matryoshka_dims must be distinct dimensions in descending order, got {dims}")
        return dims

    @field_validator("datasets")
    @classmethod
    def _unique_names(cls, datasets: list[FinetuneDataset]) -> list[FinetuneDataset]:
        return require_unique_names(datasets, "dataset")

    @model_validator(mode="after")
    def _interpolation_needs_dev(self) -> FinetuneConfig:
        if self.interpolation is not None and self.dev is None:
            raise ValueError("interpolation chooses its mixing coefficient on the dev set: add finetune.dev")
        reserved = {ANCHOR_DATASET, PARALLEL_ANCHOR_DATASET}
        if self.anchor is not None and (taken := reserved & {d.name for d in self.datasets}):
            raise ValueError(f"dataset name {sorted(taken)[0]!r} is reserved for finetune.anchor")
        names = {d.name for d in self.datasets}
        clashes = [
            d.name + PAIRS_SUFFIX
            for d in self.datasets
            if (d.kind == "nli" or d.hard_negatives is not None) and d.name + PAIRS_SUFFIX in names
        ]
        if clashes:
            raise ValueError(
                f"dataset name {clashes[0]!r} is reserved for the pairs of dataset "
                f"{clashes[0].removesuffix(PAIRS_SUFFIX)!r} (nli pairs, or pairs without hard negatives): "
                "rename it"
            )
        return self
