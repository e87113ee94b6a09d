"""The synthetic-STS stage's LLM requests and the backend that answers them, outside a run (no cache)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from skadapt.languages import Language
    from skadapt.llm.config import LLMConfig
    from skadapt.llm.types import Backend, ChatRequest


def llm_backend(config: LLMConfig) -> Backend:
    """The backend of ``config`` as the stages use it, without the generation cache: ``chat(requests)``
    answers a batch of requests (:func:`sts_requests`), one answer per request, in order (vLLM and
    transformers load their model here)."""
    from skadapt.llm.backends import make_backend

    return make_backend(config)


def sts_requests(
    corpus: str,
    language: Language | str,
    count: int,
    *,
    seed: int = 1,
    temperature: float = 1.0,
    top_p: float = 1.0,
    max_tokens: int = 768,
) -> list[ChatRequest]:
    """The synthetic-STS stage's chat requests for ``count`` source sentences of ``corpus`` (a source spec):
    the language's prompt template, the JSON schema of the six variants, and each request's seed derived
    from (``seed``, the sentence, first attempt) as the stage derives it."""
    from skadapt.languages import Language, get_language
    from skadapt.llm.seeds import request_seed
    from skadapt.llm.types import ChatRequest, Sampling
    from skadapt.synth.prompts import JSON_SCHEMA, load_template, render
    from skadapt.synth.sources import select_sources

    language = language if isinstance(language, Language) else get_language(language)
    template = load_template(language)
    sources = select_sources(corpus, language, count, seed=seed).sentences
    sampling = Sampling(temperature=temperature, top_p=top_p, max_tokens=max_tokens)
    return [
        ChatRequest(
            ({"role": "user", "content": render(template, s.text, language)},),
            sampling,
            request_seed(seed, s.id, 0),
            JSON_SCHEMA,
        )
        for s in sources
    ]
