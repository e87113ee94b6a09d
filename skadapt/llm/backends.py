"""Build the backend a recipe's ``llm`` section names."""

from __future__ import annotations

from skadapt.llm.config import LLMConfig
from skadapt.llm.types import Backend


def make_backend(config: LLMConfig) -> Backend:
    """The backend for ``config`` (vLLM and transformers load their model here)."""
    if config.backend == "openai":
        from skadapt.llm.openai_backend import OpenAIBackend

        urls = [config.base_url] if isinstance(config.base_url, str) else list(config.base_url or [])
        return OpenAIBackend(
            config.model,
            urls,
            api_key_env=config.api_key_env,
            concurrency=config.concurrency,
            timeout_s=config.timeout_s,
            http_retries=config.http_retries,
            thinking=config.thinking,
            structured=config.structured,
        )
    if config.backend == "transformers":
        from skadapt.llm.transformers_backend import TransformersBackend

        return TransformersBackend(
            config.model,
            revision=config.revision,
            device=config.device,
            thinking=config.thinking,
            batch_size=config.batch_size,
        )
    from skadapt.llm.vllm_backend import VLLMBackend

    return VLLMBackend(
        config.model,
        revision=config.revision,
        tensor_parallel_size=config.tensor_parallel_size,
        data_parallel_size=config.data_parallel_size,
        thinking=config.thinking,
    )
