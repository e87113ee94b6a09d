"""What the preflight checks of an ``llm`` section (the run's, or a judge's own) before any stage runs."""

from __future__ import annotations

import importlib.util
import json
import os
import urllib.error
import urllib.request
from pathlib import Path

from skadapt.errors import SkadaptError
from skadapt.llm.config import LLMConfig
from skadapt.model_sources import probe_model

TIMEOUT_S = 5.0
"""How long a server has to answer ``GET /models``."""


def probe_llm(llm: LLMConfig) -> str | None:
    """Check an LLM section as its stage will use it: vllm installed; a transformers model resolves; each
    OpenAI-compatible server answers, takes the key and serves the model.

    Raises:
        SkadaptError: What is wrong, naming the server or the field, and what to do.
    """
    if llm.backend == "vllm":
        if importlib.util.find_spec("vllm") is None:
            raise SkadaptError("llm.backend vllm: vllm is not installed (pip install -e '.[vllm]', GPU)")
        return "vllm installed"
    if llm.backend == "transformers":
        return probe_model(llm.model) if Path(llm.model).exists() or "/" in llm.model else None
    urls = llm.base_url if isinstance(llm.base_url, list) else [llm.base_url or "https://api.openai.com/v1"]
    key = os.environ.get(llm.api_key_env)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    listed = 0
    for url in urls:
        request = urllib.request.Request(f"{url.rstrip('/')}/models", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
                served = [m.get("id") for m in json.loads(answer.read()).get("data", [])]
        except urllib.error.HTTPError as error:
            if error.code in (401, 403):
                raise SkadaptError(
                    f"LLM server {url} refuses the request (HTTP {error.code}): set the API key in "
                    f"${llm.api_key_env} (llm.api_key_env)"
                ) from None
            if error.code >= 500 and error.code != 501:  # 501: no GET /models; it answers
                raise SkadaptError(f"LLM server {url} answers HTTP {error.code} ({error.reason})") from None
            continue  # it answers, without a model list (404/405): the model is not checked
        except (urllib.error.URLError, OSError, ValueError) as error:
            reason = getattr(error, "reason", error)
            raise SkadaptError(
                f"LLM server {url} does not answer ({reason}); start it (e.g. `vllm serve {llm.model}`) "
                "or fix llm.base_url"
            ) from None
        if served and llm.model not in served:
            raise SkadaptError(
                f"LLM server {url} does not serve {llm.model!r} (it serves {', '.join(served)})"
            )
        listed += bool(served)
    return f"{len(urls)} server(s) answer" + (f", {listed} list {llm.model}" if listed else "")
