"""In-process vLLM: one batched ``LLM.chat`` call over all prompts, per-request ``SamplingParams(seed=)``
and JSON-schema output through ``StructuredOutputsParams(json=...)`` (vLLM >= 0.12). Optional extra:
``pip install 'skadapt[vllm]'``; importing skadapt never imports vLLM."""

from __future__ import annotations

from typing import Any

from skadapt.llm.types import ChatRequest, ChatResult, LLMUnavailableError


class VLLMBackend:
    """A vLLM engine in this process (GPU), with tensor/data parallelism passed through."""

    name = "vllm"

    def __init__(
        self,
        model: str,
        *,
        revision: str | None = None,
        tensor_parallel_size: int = 1,
        data_parallel_size: int = 1,
        thinking: bool | None = False,
    ) -> None:
        try:
            from vllm import LLM
        except ImportError:
            raise LLMUnavailableError(
                "the vllm backend needs vLLM: pip install 'skadapt[vllm]' (GPU machines), "
                "or use --llm-backend openai with a `vllm serve` endpoint"
            ) from None
        self.model = model
        self.revision = revision
        self.thinking = thinking
        options: dict[str, Any] = {"tensor_parallel_size": tensor_parallel_size}
        if data_parallel_size > 1:
            options["data_parallel_size"] = data_parallel_size
        self.engine = LLM(model=model, revision=revision, **options)

    def prepare(self, cache: Any) -> dict[str, Any]:
        """Nothing to probe: vLLM constrains JSON through its structured-outputs engine, seeds per request."""
        return {"structured": "vllm_structured_outputs", "seed_reproducible": True, "probe_requests": 0}

    def identity(self) -> dict[str, Any]:
        """Model and revision."""
        return {
            "backend": self.name,
            "model": self.model,
            "revision": self.revision,
            "thinking": self.thinking,
        }

    def chat(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """All requests in one batched call."""
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        params = [
            SamplingParams(
                temperature=r.sampling.temperature,
                top_p=r.sampling.top_p,
                max_tokens=r.sampling.max_tokens,
                seed=r.seed,
                structured_outputs=StructuredOutputsParams(json=r.json_schema) if r.json_schema else None,
            )
            for r in requests
        ]
        kwargs = {} if self.thinking is None else {"chat_template_kwargs": {"enable_thinking": self.thinking}}
        outputs = self.engine.chat([list(r.messages) for r in requests], params, use_tqdm=True, **kwargs)
        return [
            ChatResult(output.outputs[0].text, None, {"finish_reason": output.outputs[0].finish_reason})
            for output in outputs
        ]
