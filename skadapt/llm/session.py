"""One opener of the LLM for every stage that generates text: the backend and the generation cache, opened
once, and generators over them with the LLM's sampling (a stage's own temperature/top_p win when set)."""

from __future__ import annotations

from types import TracebackType

from skadapt.llm.backends import make_backend
from skadapt.llm.cache import GenerationCache, default_cache_path
from skadapt.llm.config import LLMConfig
from skadapt.llm.generate import Generator
from skadapt.llm.types import Sampling


def sampling_of(llm: LLMConfig, temperature: float | None = None, top_p: float | None = None) -> Sampling:
    """The LLM's sampling, with a stage's own ``temperature``/``top_p`` where given."""
    return Sampling(
        temperature=llm.temperature if temperature is None else temperature,
        top_p=llm.top_p if top_p is None else top_p,
        max_tokens=llm.max_tokens,
    )


class LLMSession:
    """The configured backend and its generation cache; close it (or use ``with``) when done."""

    def __init__(self, llm: LLMConfig) -> None:
        self.llm = llm
        self.cache = GenerationCache(llm.cache or default_cache_path())
        try:
            self.backend = make_backend(llm)
        except BaseException:
            self.cache.close()
            raise

    def generator(
        self,
        *,
        seed: int,
        template_version: str,
        temperature: float | None = None,
        top_p: float | None = None,
    ) -> Generator:
        """A generator for one run seed and prompt template version (both part of every cache key)."""
        return Generator(
            self.backend,
            self.cache,
            sampling_of(self.llm, temperature, top_p),
            run_seed=seed,
            attempts=self.llm.attempts,
            template_version=template_version,
        )

    def close(self) -> None:
        """Close the generation cache."""
        self.cache.close()

    def __enter__(self) -> LLMSession:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()
