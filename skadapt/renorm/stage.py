"""Renormalization: remove the corpus-mean embedding direction, saved as plain sentence-transformers modules.

With ``e`` the model's (normalized) output and ``mu`` the mean of ``e`` over a corpus sample:

- R1: ``normalize(e - mu)`` -> ``Dense(W=I, b=-mu)``, identity activation, then ``Normalize``;
- R2: ``normalize(e - (e.mu_hat) mu_hat)`` -> ``Dense(W=I - mu_hat mu_hat^T, b=0)``, then ``Normalize``.

The result loads in vanilla ``SentenceTransformer(path)`` and mteb, without skadapt or remote code.

Renormalization can make a model worse (e.g. on STS while helping retrieval), so with dev sets the stage
earns its place: μ is estimated once, the model without renormalization ("none"), with R1 and with R2
are scored on the dev sets, and the best mean dev score is kept (ties go to "none", then R1). When "none"
wins, no model is written: the stage's output is its input unchanged, and the run's final model stays
the previous stage's. Dev rows holding an evaluation test text are dropped first (:mod:`skadapt.tasks.dev`),
so the choice is never made on test texts, and those sharing a fine-tuning training text are counted and,
unless the dev sets keep them, dropped (:mod:`skadapt.tasks.heldout`); the report records every set with its
sizes and drops.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any, Literal

import numpy as np

from skadapt import artifacts
from skadapt.errors import SkadaptError
from skadapt.modeldir import finalize_model_dir, keep_matryoshka_dims
from skadapt.prompts import role_prompt
from skadapt.renorm.config import RenormConfig
from skadapt.results.renorm import Candidate, RenormReport, Selection
from skadapt.sources import iter_texts
from skadapt.stage import RunFacts, Stage, StageContext
from skadapt.tasks.config import DevSets
from skadapt.tasks.heldout import TrainingTexts
from skadapt.tasks.selection import evaluation_texts, suite_files
from skadapt.textsample import sample_sentences

log = logging.getLogger("skadapt.renorm")

Method = Literal["r1", "r2"]
PromptChoice = Literal["none", "query", "passage"]
REPORT = RenormReport.FILE
CANDIDATES: tuple[str, ...] = ("none", "r1", "r2")
"""In order of preference on a tie: no change first."""
TIE_TOLERANCE = 1e-9


class RenormError(SkadaptError, ValueError):
    """Renormalization cannot run: too few usable sentences, a model without the asked prompt, ..."""


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


def select_on_dev(
    model: Any,
    mu: np.ndarray,
    dev: DevSets,
    batch_size: int = 32,
    test_texts: dict[str, list[str]] | None = None,
    training: TrainingTexts | None = None,
) -> Selection:
    """Score the model without renormalization, with R1 and with R2 on the dev sets; the best mean wins.

    The model is left as it was (the appended modules are removed again). Ties (within 1e-9) go to the
    earlier candidate of ``CANDIDATES``: no change before R1 before R2. Dev rows holding one of
    ``test_texts`` (evaluation task -> its test texts) are dropped before scoring, and those sharing a
    ``training`` text are counted (and dropped unless the dev sets keep them).
    """
    from skadapt.tasks.dev import build_dev_sets

    sets = build_dev_sets(dev, batch_size, dict(model.prompts or {}), test_texts, training)
    metrics = {dev_set.evaluator.name: dev_set.metric for dev_set in sets}
    candidates: list[Candidate] = []
    best: tuple[float, str] | None = None
    for name in CANDIDATES:
        if name != "none":
            append_renorm(model, mu.astype(np.float32), name)  # type: ignore[arg-type]
        try:
            scores = {
                dev_set.evaluator.name: round(float(dev_set.evaluator(model)[dev_set.metric]), 6)
                for dev_set in sets
            }
        finally:
            if name != "none":
                del model[-1]  # Normalize
                del model[-1]  # Dense
        mean = round(sum(scores.values()) / len(scores), 6)
        candidates.append(Candidate(name=name, scores=dict(scores), mean=mean))
        log.info("renorm: %s on dev: mean %.4f %s", name, mean, scores)
        if best is None or mean > best[0] + TIE_TOLERANCE:
            best = (mean, name)
    assert best is not None
    return Selection(
        metrics=metrics,
        candidates=candidates,
        choice=best[1],
        sets=[r for dev_set in sets for r in dev_set.report],
    )


def renormalize(
    model_path: str,
    out_dir: Path,
    config: RenormConfig,
    *,
    seed: int = 42,
    language: str = "en",
    exclude: set[str] | None = None,
    batch_size: int = 64,
    dev: DevSets | None = None,
    test_texts: dict[str, list[str]] | None = None,
    training: TrainingTexts | None = None,
) -> RenormReport:
    """Estimate μ on a corpus sample and save the model with R1/R2 appended into ``out_dir``.

    With ``dev`` the method is chosen on the dev sets (see :func:`select_on_dev`); when no renormalization
    wins, only ``renorm_report.json`` and ``renorm_mu.npy`` are written (no model).

    Args:
        model_path: sentence-transformers directory or Hub id.
        out_dir: Where the renormalized model and ``renorm_report.json`` are written.
        config: Method, corpus (must be set), sample size, prompt and sentence-length window.
        seed: Seed of the corpus sample.
        language: ISO 639-1 code of the corpus language (sentence splitting rules).
        exclude: Normalized evaluation texts that must not enter the sample.
        batch_size: Encoding batch size.
        dev: Dev sets to choose none / R1 / R2 on; None applies ``config.method``.
        test_texts: Evaluation task -> its test texts; dev rows holding one are not scored.
        training: The run's training texts; dev rows sharing one are counted (and dropped unless kept).

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
    started = time.perf_counter()
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
    sampled = time.perf_counter()
    embeddings = encode(model, sentences, text, batch_size)
    encoded = time.perf_counter()
    mu = embeddings.astype(np.float64).mean(axis=0)
    unit = mu / np.linalg.norm(mu)
    selection = (
        select_on_dev(model, mu, dev, test_texts=test_texts, training=training) if dev is not None else None
    )
    chosen = selection.choice if selection is not None else method
    if chosen == "none":
        log.warning(
            "renorm: neither R1 nor R2 beats the model without renormalization on the dev sets; "
            "the stage keeps its input model unchanged"
        )
        after = embeddings.astype(np.float64)
    else:
        after = renorm_formula(embeddings, mu, chosen)  # type: ignore[arg-type]
        append_renorm(model, mu.astype(np.float32), chosen)  # type: ignore[arg-type]
        model.save(str(out_dir))
        finalize_model_dir(out_dir)
        keep_matryoshka_dims(model_path, out_dir)  # truncation applies after the renormalization
    np.save(out_dir / "renorm_mu.npy", mu.astype(np.float32))
    result = RenormReport(
        method=chosen,
        kept=chosen != "none",
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
        selection=selection,
        seconds={"sample": round(sampled - started, 3), "encode": round(encoded - sampled, 3)},
    )
    artifacts.write_json(out_dir / REPORT, result.as_json())
    return result


def input_files(config: RenormConfig, run: RunFacts) -> list[Path]:
    """The run's evaluation suite files: their texts are kept out of the μ sample."""
    return suite_files(list(run.eval_tasks))


def run_stage(ctx: StageContext[RenormConfig]) -> dict[str, Any]:
    """Renormalize the newest model; the run's evaluation suites are kept out of the μ sample, and the
    evaluation tasks' test texts out of the dev sets the method is chosen on."""
    run = ctx.run
    config = ctx.config
    dev = run.dev if config.select != "method" else None
    test_texts = training = None
    if dev is not None:  # fails closed as fine-tuning's check does (finetune.contamination.allow)
        test_texts, _ = run.test_texts(run.contamination_allow)
        training = run.training.get() if run.training is not None else None
    result = renormalize(
        ctx.input_model,
        ctx.out_dir,
        config,
        seed=run.seed,
        language=run.text_language,
        exclude=evaluation_texts(list(run.eval_tasks), run.text_language),
        dev=dev,
        test_texts=test_texts,
        training=training,
    )
    return result.as_json()


STAGE = Stage(
    "renorm",
    RenormConfig,
    run_stage,
    input_files,
    makes_model=True,
    reads=("eval_tasks", "excluded_tasks", "dataset_mirrors", "dev", "contamination_allow"),
    report=RenormReport,
)
