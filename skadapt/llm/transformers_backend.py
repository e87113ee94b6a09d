"""A local causal LM through transformers' chat template, on CPU or GPU, including GGUF files.

Each request is generated on its own after seeding torch with the request's seed, so an answer does not
depend on which other requests share the batch. JSON schemas are not enforced (no constrained decoding):
the prompt asks for JSON and the output checks reject what is not.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from skadapt.llm.types import ChatRequest, ChatResult, LLMUnavailableError

log = logging.getLogger(__name__)


def split_gguf(model: str) -> tuple[str, str | None]:
    """``(directory or id, gguf file name)`` for a path to a ``.gguf`` file, else ``(model, None)``."""
    path = Path(model)
    if path.suffix == ".gguf":
        if not path.is_file():
            raise LLMUnavailableError(f"GGUF file not found: {model}")
        return str(path.parent), path.name
    return model, None


class TransformersBackend:
    """Generation with a transformers causal LM loaded in this process."""

    name = "transformers"

    def __init__(
        self,
        model: str,
        *,
        revision: str | None = None,
        device: str | None = None,
        thinking: bool | None = False,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.model = model
        self.revision = revision
        self.thinking = thinking
        location, gguf_file = split_gguf(model)
        self.gguf_file = gguf_file
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        options: dict[str, Any] = {"revision": revision} if revision else {}
        if gguf_file:
            options["gguf_file"] = gguf_file
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(location, **options)
            self.lm = AutoModelForCausalLM.from_pretrained(location, dtype=torch.float32, **options)
        except (OSError, ValueError) as error:
            raise LLMUnavailableError(f"cannot load the LLM {model!r} with transformers: {error}") from None
        self.lm.to(self.device).eval()

    def identity(self) -> dict[str, Any]:
        """Model, revision, GGUF file and the thinking switch (it changes the chat template's prompt)."""
        return {
            "backend": self.name,
            "model": self.model,
            "revision": self.revision,
            "gguf": self.gguf_file,
            "thinking": self.thinking,
        }

    def chat(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Generate each answer in turn."""
        return [self._generate(request) for request in requests]

    def _generate(self, request: ChatRequest) -> ChatResult:
        import torch

        kwargs = {} if self.thinking is None else {"enable_thinking": self.thinking}
        prompt = self.tokenizer.apply_chat_template(
            list(request.messages),
            add_generation_prompt=True,
            return_tensors="pt",
            return_dict=True,
            **kwargs,
        )
        prompt = {name: tensor.to(self.device) for name, tensor in prompt.items()}
        sampling = request.sampling
        torch.manual_seed(request.seed)
        options: dict[str, Any] = {
            "max_new_tokens": sampling.max_tokens,
            "do_sample": sampling.temperature > 0,
        }
        if sampling.temperature > 0:
            options.update(temperature=sampling.temperature, top_p=sampling.top_p, top_k=0)
        pad = self.tokenizer.pad_token_id or self.tokenizer.eos_token_id
        with torch.inference_mode():
            output = self.lm.generate(**prompt, pad_token_id=pad, **options)
        new_tokens = output[0, prompt["input_ids"].shape[1] :]
        finished = bool(len(new_tokens) < sampling.max_tokens)
        text = self.tokenizer.decode(new_tokens, skip_special_tokens=True)
        return ChatResult(text, None, {"finish_reason": "stop" if finished else "length"})
