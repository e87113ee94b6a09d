"""A local causal LM through transformers' chat template, on CPU or GPU, including GGUF files.

JSON schemas are enforced by constrained decoding with xgrammar (the structured-output engine vLLM uses
by default): the schema is compiled once against the model's vocabulary and, at every step, tokens that
would leave the grammar are masked out. The output is therefore parseable JSON of the right shape unless
it stops at ``max_tokens``; the checks then judge its content.

Requests run one at a time by default on CPU (each after seeding torch with the request's own seed, so an
answer does not depend on which other requests were asked). ``batch_size > 1`` (the default on GPU)
generates several prompts together with left padding: faster on a GPU, and greedy answers stay the same,
but a sampled batch draws from one torch generator seeded by its first request, so a sampled answer then
depends on the batch it was in (the generation cache keeps it; a rerun reads it back).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from skadapt.llm.types import ChatRequest, ChatResult, LLMUnavailableError

log = logging.getLogger(__name__)

GPU_BATCH_SIZE = 16


def split_gguf(model: str) -> tuple[str, str | None]:
    """``(directory or id, gguf file name)`` for a path to a ``.gguf`` file, else ``(model, None)``."""
    path = Path(model)
    if path.suffix == ".gguf":
        if not path.is_file():
            raise LLMUnavailableError(f"GGUF file not found: {model}")
        return str(path.parent), path.name
    return model, None


class JSONSchemaConstraint:
    """A transformers logits processor that keeps every row of a batch inside a compiled xgrammar
    grammar (rows that finished are left alone)."""

    def __init__(self, compiled: list[Any], vocab_size: int) -> None:
        import xgrammar as xgr

        self.matchers = [xgr.GrammarMatcher(grammar) for grammar in compiled]
        self.bitmask = xgr.allocate_token_bitmask(len(compiled), vocab_size)
        self.started = False

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import xgrammar as xgr

        if self.started:
            for row, matcher in enumerate(self.matchers):
                if not matcher.is_terminated():
                    matcher.accept_token(int(input_ids[row, -1]))
        self.started = True
        live = [row for row, matcher in enumerate(self.matchers) if not matcher.is_terminated()]
        for row in live:
            self.matchers[row].fill_next_token_bitmask(self.bitmask, row)
        if live:
            device_bitmask = self.bitmask.to(scores.device)
            xgr.apply_token_bitmask_inplace(scores, device_bitmask, indices=live)
        return scores


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
        batch_size: int | None = None,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.model = model
        self.revision = revision
        self.thinking = thinking
        location, gguf_file = split_gguf(model)
        self.gguf_file = gguf_file
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.batch_size = batch_size or (1 if self.device == "cpu" else GPU_BATCH_SIZE)
        options: dict[str, Any] = {"revision": revision} if revision else {}
        if gguf_file:
            options["gguf_file"] = gguf_file
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(location, **options)
            self.lm = AutoModelForCausalLM.from_pretrained(location, dtype=torch.float32, **options)
        except (OSError, ValueError) as error:
            raise LLMUnavailableError(f"cannot load the LLM {model!r} with transformers: {error}") from None
        self.lm.to(self.device).eval()
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self._compiler: Any = None
        self._grammars: dict[str, Any] = {}

    def prepare(self, cache: Any) -> dict[str, Any]:
        """Nothing to probe: schemas are enforced in-process with xgrammar, seeds are torch's."""
        return {"structured": "xgrammar", "seed_reproducible": True, "probe_requests": 0}

    def identity(self) -> dict[str, Any]:
        """Model, revision, GGUF file, the thinking switch (it changes the chat template's prompt) and the
        constrained decoding."""
        return {
            "backend": self.name,
            "model": self.model,
            "revision": self.revision,
            "gguf": self.gguf_file,
            "thinking": self.thinking,
            "structured": "xgrammar",
        }

    def chat(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Generate the answers, ``batch_size`` requests of the same sampling at a time."""
        results: dict[int, ChatResult] = {}
        groups: dict[Any, list[int]] = {}
        for index, request in enumerate(requests):
            groups.setdefault((request.sampling, request.json_schema is None), []).append(index)
        for indices in groups.values():
            for start in range(0, len(indices), self.batch_size):
                chunk = indices[start : start + self.batch_size]
                for index, result in zip(chunk, self._generate([requests[i] for i in chunk]), strict=True):
                    results[index] = result
        return [results[i] for i in range(len(requests))]

    def _grammar(self, schema: dict[str, Any]) -> Any:
        """The schema compiled against the model's vocabulary (cached per schema)."""
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            if self._compiler is None:
                try:
                    import xgrammar as xgr
                except ImportError:
                    raise LLMUnavailableError(
                        "constrained JSON decoding needs xgrammar: pip install -e '.[xgrammar]'"
                    ) from None
                info = xgr.TokenizerInfo.from_huggingface(
                    self.tokenizer, vocab_size=self.lm.config.vocab_size
                )
                self._compiler = xgr.GrammarCompiler(info)
            self._grammars[key] = self._compiler.compile_json_schema(key, any_whitespace=False)
        return self._grammars[key]

    def _generate(self, requests: list[ChatRequest]) -> list[ChatResult]:
        import torch
        from transformers import LogitsProcessorList

        kwargs = {} if self.thinking is None else {"enable_thinking": self.thinking}
        prompts = [
            self.tokenizer.apply_chat_template(
                list(r.messages), add_generation_prompt=True, tokenize=False, **kwargs
            )
            for r in requests
        ]
        encoded = self.tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        encoded = {name: tensor.to(self.device) for name, tensor in encoded.items()}
        sampling = requests[0].sampling
        torch.manual_seed(requests[0].seed)
        options: dict[str, Any] = {
            "max_new_tokens": sampling.max_tokens,
            "do_sample": sampling.temperature > 0,
        }
        if sampling.temperature > 0:
            options.update(temperature=sampling.temperature, top_p=sampling.top_p, top_k=0)
        schemas = [r.json_schema for r in requests]
        if any(schemas):
            if not all(schemas):
                raise ValueError("a batch mixes requests with and without a JSON schema")
            grammars = [self._grammar(schema) for schema in schemas if schema is not None]
            constraint = JSONSchemaConstraint(grammars, self.lm.config.vocab_size)
            options["logits_processor"] = LogitsProcessorList([constraint])
        with torch.inference_mode():
            output = self.lm.generate(**encoded, pad_token_id=self.tokenizer.pad_token_id, **options)
        new_tokens = output[:, encoded["input_ids"].shape[1] :]
        results = []
        stops = {self.tokenizer.pad_token_id, self.tokenizer.eos_token_id}
        for row in new_tokens:
            produced = [int(t) for t in row]
            length = next((i for i, t in enumerate(produced) if t in stops), len(produced))
            finished = length < sampling.max_tokens
            text = self.tokenizer.decode(produced[:length], skip_special_tokens=True)
            meta = {"finish_reason": "stop" if finished else "length", "completion_tokens": length}
            results.append(ChatResult(text, None, meta))
        return results
