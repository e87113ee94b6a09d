"""The synth_sts stage's options (recipe section ``synth_sts``; ``skadapt synth-sts`` derives its options
from it)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from skadapt.config import PositiveInt, Section
from skadapt.llm.config import JudgeConfig
from skadapt.sources.config import CorpusSource
from skadapt.tasks.config import ContaminationConfig


class SynthSTSConfig(Section):
    """SkMTEB-style synthetic STS: six LLM-written variants (scores 0-5) per source sentence."""

    corpus: CorpusSource = Field(
        description="Corpus the source sentences are drawn from: file/glob (.txt .jsonl .json .csv .parquet) "
        "or hub:DATASET[:CONFIG[:SPLIT]], or {source, columns, max_documents}"
    )
    n_sources: PositiveInt = Field(100, description="Source sentences; six scored pairs each")
    min_chars: PositiveInt = Field(60, description="Shortest source sentence, in characters")
    max_chars: PositiveInt = Field(200, description="Longest source sentence, in characters")
    temperature: Annotated[float, Field(ge=0, le=2)] = Field(
        1.0,
        description="Sampling temperature of the variants; this one is used, llm.temperature is not "
        "(SkMTEB: 1.0)",
    )
    prompt_template: str | None = Field(None, description="A prompt file replacing the built-in one")
    annotation_sample_per_level: PositiveInt = Field(
        50, description="Held-out sources for human annotation (kept out of the train split)"
    )
    annotators: PositiveInt = Field(3, description="Annotators the annotation sheets are written for")
    contamination_tasks: list[str] | None = Field(
        None, description="Evaluation tasks the train split must not overlap (default: the language's)"
    )
    contamination: ContaminationConfig = Field(
        default_factory=ContaminationConfig,
        description="The check of the source sentences against the contamination tasks' test texts",
    )
    judge: JudgeConfig | None = Field(
        None,
        description="An LLM judge rating every pair 0-5: its agreement with the intended levels is reported, "
        "and with judge.max_gap pairs rated farther than that from their level are dropped (null: no judge)",
    )

    @model_validator(mode="after")
    def _length_range(self) -> SynthSTSConfig:
        if self.contamination.action != "stop":
            raise ValueError(
                "contamination.action: drop applies to fine-tuning data; synth_sts stops over the threshold"
            )
        if self.min_chars >= self.max_chars:
            raise ValueError(f"min_chars ({self.min_chars}) must be below max_chars ({self.max_chars})")
        return self
