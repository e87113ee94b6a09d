"""Renormalization: remove the corpus-mean embedding direction, saved as plain sentence-transformers modules.

With ``e`` the model's (normalized) output and ``mu`` the mean of ``e`` over a corpus sample:

- R1: ``normalize(e - mu)`` -> ``Dense(W=I, b=-mu)``, identity activation, then ``Normalize``;
- R2: ``normalize(e - (e.mu_hat) mu_hat)`` -> ``Dense(W=I - mu_hat mu_hat^T, b=0)``, then ``Normalize``.

The result loads in vanilla ``SentenceTransformer(path)`` and mteb, without skadapt or remote code.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from skadapt import artifacts
from skadapt.errors import SkadaptError
from skadapt.modeldir import finalize_model_dir
from skadapt.prompts import role_prompt
from skadapt.recipe import RenormConfig
from skadapt.sources import iter_texts
from skadapt.textsample import sample_sentences

log = logging.getLogger("skadapt.renorm")

Method = Literal["r1", "r2"]
PromptChoice = Literal["none", "query", "passage"]
REPORT = "renorm_report.json"


class RenormError(SkadaptError, ValueError):
    """Renormalization cannot run: too few usable sentences, a model without the asked prompt, ..."""


@dataclass
class RenormResult:
    """What a renormalization did (also written as ``renorm_report.json``)."""

    method: str
    corpus: str
    prompt: str
    prompt_text: str
    samples: int
    pool: int
    documents: int
    dropped_eval_overlap: int
    mu_norm: float
    mean_cos_to_mu_before: float
    mean_cos_to_mu_after: float
    dimension: int
    seed: int


def prompt_text(model: Any, prompt: PromptChoice) -> str:
    """The prompt string μ is estimated with: '' for none, else the model's query/document prompt.

    Raises:
        RenormError: The model has no such prompt.
    """
    if prompt == "none":
        return ""
    prompts = model.prompts or {}
    text = role_prompt(prompts, "query" if prompt == "query" else "document")
    if not text:
        raise RenormError(
            f"renorm.prompt {prompt!r}: the model has no {prompt} prompt (its prompts: {prompts}); "
            "use prompt: none"
        )
    return text


def encode(model: Any, texts: list[str], prompt: str, batch_size: int = 64) -> np.ndarray:
    """Embeddings exactly as the model outputs them (after its own Normalize), float32."""
    return np.asarray(
        model.encode(
            texts, prompt=prompt, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=True
        ),
        dtype=np.float32,
    )


def renorm_weights(mu: np.ndarray, method: Method) -> tuple[np.ndarray, np.ndarray]:
    """Weight and bias of the Dense layer (float32): R1 ``(I, -mu)``, R2 ``(I - mu_hat mu_hat^T, 0)``."""
    mu64 = mu.astype(np.float64)
    dim = mu64.shape[0]
    if method == "r1":
        return np.eye(dim, dtype=np.float32), (-mu64).astype(np.float32)
    unit = mu64 / np.linalg.norm(mu64)
    return (np.eye(dim) - np.outer(unit, unit)).astype(np.float32), np.zeros(dim, dtype=np.float32)


def renorm_formula(embeddings: np.ndarray, mu: np.ndarray, method: Method) -> np.ndarray:
    """Reference computation (float64) of R1/R2 on embeddings, for checks."""
    e = embeddings.astype(np.float64)
    mu64 = mu.astype(np.float64)
    if method == "r1":
        out = e - mu64
    else:
        unit = mu64 / np.linalg.norm(mu64)
        out = e - np.outer(e @ unit, unit)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def append_renorm(model: Any, mu: np.ndarray, method: Method) -> Any:
    """Append ``Dense`` (identity activation) + ``Normalize`` implementing R1/R2 to a SentenceTransformer."""
    import torch
    from sentence_transformers.sentence_transformer.modules import Dense, Normalize

    weight, bias = renorm_weights(mu, method)
    dim = weight.shape[0]
    dense = Dense(
        in_features=dim,
        out_features=dim,
        bias=True,
        activation_function=torch.nn.Identity(),
        init_weight=torch.from_numpy(weight),
        init_bias=torch.from_numpy(bias),
    )
    model.append(dense)
    model.append(Normalize())
    return model


def renormalize(
    model_path: str,
    out_dir: Path,
    config: RenormConfig,
    *,
    seed: int = 42,
    language: str = "en",
    exclude: set[str] | None = None,
    batch_size: int = 64,
) -> RenormResult:
    """Estimate μ on a corpus sample and save the model with R1/R2 appended into ``out_dir``.

    Args:
        model_path: sentence-transformers directory or Hub id.
        out_dir: Where the renormalized model and ``renorm_report.json`` are written.
        config: Method, corpus (must be set), sample size, prompt and sentence-length window.
        seed: Seed of the corpus sample.
        language: ISO 639-1 code of the corpus language (sentence splitting rules).
        exclude: Normalized evaluation texts that must not enter the sample.
        batch_size: Encoding batch size.

    Raises:
        RenormError: No usable sentence in the corpus, or a prompt the model lacks.
        SourceError: Unreadable corpus.
    """
    corpus, method, samples, prompt = config.corpus, config.method, config.samples, config.prompt
    min_chars, max_chars = config.min_chars, config.max_chars
    if corpus is None:
        raise RenormError("renorm: no corpus given")
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_path)  # a GPU when there is one: the mean needs ~100k encodings
    text = prompt_text(model, prompt)
    sample = sample_sentences(
        iter_texts(corpus, config.text_column, max_documents=config.max_documents),
        samples,
        min_chars=min_chars,
        max_chars=max_chars,
        seed=seed,
        language=language,
        exclude=exclude,
    )
    sentences = sample.sentences
    if not sentences:
        raise RenormError(
            f"{corpus}: no sentence of {min_chars}-{max_chars} characters (after dropping evaluation texts); "
            "use another corpus or widen renorm.min_chars/max_chars"
        )
    if len(sentences) < samples:
        log.warning("renorm: only %d sentences available (asked for %d)", len(sentences), samples)
    embeddings = encode(model, sentences, text, batch_size)
    mu = embeddings.astype(np.float64).mean(axis=0)
    unit = mu / np.linalg.norm(mu)
    after = renorm_formula(embeddings, mu, method)
    append_renorm(model, mu.astype(np.float32), method)
    model.save(str(out_dir))
    finalize_model_dir(out_dir)
    np.save(out_dir / "renorm_mu.npy", mu.astype(np.float32))
    result = RenormResult(
        method=method,
        corpus=corpus,
        prompt=prompt,
        prompt_text=text,
        samples=len(sentences),
        pool=sample.eligible,
        documents=sample.documents,
        dropped_eval_overlap=sample.dropped,
        mu_norm=float(np.linalg.norm(mu)),
        mean_cos_to_mu_before=float((embeddings.astype(np.float64) @ unit).mean()),
        mean_cos_to_mu_after=float((after @ unit).mean()),
        dimension=int(mu.shape[0]),
        seed=seed,
    )
    artifacts.write_json(out_dir / REPORT, asdict(result))
    return result


def input_files(recipe: Any) -> list[Path]:
    """The recipe's evaluation suite files: their texts are kept out of the μ sample."""
    from skadapt.evaluate.selection import suite_files

    return suite_files(recipe)


def run_stage(ctx: Any) -> dict[str, Any]:
    """Pipeline entry: renormalize the newest model; evaluation suites of the recipe are kept disjoint."""
    from skadapt.evaluate.selection import evaluation_texts
    from skadapt.languages import get_language

    language = get_language(ctx.recipe.language).iso639_1 or "en"
    evaluate = ctx.recipe.evaluate
    exclude = evaluation_texts(list(evaluate.tasks), language) if evaluate is not None else set()
    result = renormalize(
        ctx.input_model, ctx.out_dir, ctx.config, seed=ctx.recipe.seed, language=language, exclude=exclude
    )
    return asdict(result)
