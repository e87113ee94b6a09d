"""LLM generation: backends (vLLM in-process, OpenAI-compatible HTTP, local transformers/GGUF), a sqlite
generation cache, per-request seeds and output checks shared by every LLM-using stage."""
