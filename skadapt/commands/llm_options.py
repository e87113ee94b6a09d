"""The LLM options every LLM-using command takes (the recipe's ``llm:`` section on the command line)."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from skadapt.recipe import LLMConfig, section_from_options

Backend = Annotated[
    Literal["vllm", "openai", "transformers"],
    typer.Option("--llm-backend", help="vllm (in-process), openai (any compatible server), transformers."),
]
Model = Annotated[str, typer.Option("--llm-model", help="Model name, Hub id, local directory or .gguf file.")]
BaseUrl = Annotated[
    list[str] | None,
    typer.Option(
        "--llm-base-url", help="openai: server URL, e.g. http://127.0.0.1:8000/v1 (repeatable: a fleet)."
    ),
]
ApiKeyEnv = Annotated[str, typer.Option("--llm-api-key-env", help="Variable holding the API key.")]
Revision = Annotated[str | None, typer.Option("--llm-revision", help="Model revision.")]
Cache = Annotated[str | None, typer.Option("--llm-cache", help="Generation cache file (sqlite).")]
MaxTokens = Annotated[int, typer.Option("--llm-max-tokens", min=1)]
Attempts = Annotated[
    int, typer.Option("--llm-attempts", min=1, help="Tries per item whose output fails a check.")
]
Concurrency = Annotated[int, typer.Option("--llm-concurrency", min=1, help="openai: requests in flight.")]


def llm_config(
    backend: str,
    model: str,
    base_url: list[str] | None,
    api_key_env: str,
    revision: str | None,
    cache: str | None,
    max_tokens: int,
    attempts: int,
    concurrency: int,
) -> LLMConfig:
    """The ``llm`` section the options describe (validated like the recipe's)."""
    urls: str | list[str] | None = base_url[0] if base_url and len(base_url) == 1 else base_url or None
    return section_from_options(
        LLMConfig,
        "llm-",
        backend=backend,
        model=model,
        base_url=urls,
        api_key_env=api_key_env,
        revision=revision,
        cache=cache,
        max_tokens=max_tokens,
        attempts=attempts,
        concurrency=concurrency,
    )
