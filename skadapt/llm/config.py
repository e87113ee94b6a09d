"""The LLM every LLM-using stage generates with (recipe section ``llm``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from skadapt.config import PositiveFloat, PositiveInt, Section


class LLMConfig(Section):
    """The LLM every LLM-using stage (synthetic STS, robustness) generates with."""

    backend: Literal["vllm", "openai", "transformers"] = Field(
        "openai",
        description="openai: any OpenAI-compatible server; vllm: in-process vLLM; transformers: in-process",
    )
    model: str = Field(
        min_length=1, description="Model name (server/vLLM), Hub id or local dir, or a .gguf file path"
    )
    revision: str | None = Field(None, description="Model revision; part of every generation cache key")
    base_url: str | list[str] | None = Field(
        None, description="openai: server URL, or several (requests are spread over them)"
    )
    api_key_env: str = Field("OPENAI_API_KEY", description="Variable holding the API key (openai)")
    temperature: Annotated[float, Field(ge=0, le=2)] = Field(
        0.7,
        description="Sampling temperature where the stage sets none; a stage's own wins "
        "(synth_sts.temperature always, robustness.temperature or its preset's when set)",
    )
    top_p: Annotated[float, Field(gt=0, le=1)] = Field(
        1.0, description="Nucleus sampling; robustness.top_p (or its preset's) wins when set"
    )
    max_tokens: PositiveInt = Field(
        2048,
        description="Most tokens generated per answer (room for six sentences + explanations as JSON; "
        "rewrites stop far earlier)",
    )
    thinking: bool | None = Field(
        False, description="Reasoning models: False sends enable_thinking=False; null sends nothing"
    )
    attempts: PositiveInt = Field(3, description="Tries per item when an output fails its checks")
    concurrency: PositiveInt = Field(8, description="openai: requests in flight at once")
    timeout_s: PositiveFloat = Field(120.0, description="openai: seconds one request may take")
    http_retries: int = Field(4, ge=0, description="openai: retries with backoff on 429/5xx/timeouts")
    structured: Literal[
        "auto", "json_schema", "json_object_schema", "structured_outputs", "guided_json", "prompt_only"
    ] = Field(
        "auto",
        description="openai: how the JSON schema is sent (auto: probe the server once and remember; "
        "json_schema: OpenAI/vLLM/Ollama/llama-server; json_object_schema: llama-cpp-python; "
        "structured_outputs, guided_json: vLLM extras; prompt_only: the prompt alone asks for JSON)",
    )
    tensor_parallel_size: PositiveInt = Field(1, description="vllm: GPUs one model copy is split over")
    data_parallel_size: PositiveInt = Field(1, description="vllm: model copies (each on its own GPUs)")
    device: str | None = Field(None, description="transformers: cpu, cuda, ... (default: cuda if present)")
    batch_size: PositiveInt | None = Field(
        None, description="transformers: prompts generated together (default 1 on CPU, 16 on GPU)"
    )
    cache: str | None = Field(None, description="Generation cache file (default $SKADAPT_CACHE/llm.sqlite)")


class JudgeConfig(Section):
    """An LLM judge rating how similar in meaning two texts are, 0-5 (section ``judge`` of robustness and
    synth_sts; ``skadapt llm judge-eval`` measures a candidate against gold ratings)."""

    llm: LLMConfig | None = Field(
        None,
        description="The judge's LLM, a whole llm section of its own (default: the run's llm; its "
        "sampling fields other than max_tokens are not used)",
    )
    threshold: Annotated[float, Field(ge=0, le=5)] = Field(
        3.0,
        description="Pass mark (PTEB/HTEB: 3): robustness rewrites rated below it, or not rated, fail and "
        "are excluded; judge-eval reports how often pass/fail at it matches the gold",
    )
    max_gap: Annotated[float, Field(ge=0, le=5)] | None = Field(
        None,
        description="synth_sts: drop pairs whose rating is farther than this from their level "
        "(null keeps every pair)",
    )
    temperature: Annotated[float, Field(ge=0, le=2)] = Field(
        0.0, description="The judge's sampling temperature (greedy by default)"
    )
