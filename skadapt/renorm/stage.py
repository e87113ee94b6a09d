"""Renormalization and corpus-basis projection, saved as plain sentence-transformers modules.

With ``e`` the model's (normalized) output and ``mu`` the mean of ``e`` over a corpus sample:

- R1: ``normalize(e - mu)`` -> ``Dense(W=I, b=-mu)``, identity activation, then ``Normalize``;
- R2: ``normalize(e - (e.mu_hat) mu_hat)`` -> ``Dense(W=I - mu_hat mu_hat^T, b=0)``, then ``Normalize``;
- ``proj-<d>``: ``normalize(V_d e)`` with ``V_d`` the top ``d`` right singular vectors of the model's
  embeddings of the sample (each sentence with each prompt; :mod:`skadapt.tasks.projection`) ->
  ``Dense(W=V_d, no bias)``, then ``Normalize``; ``r1+proj-<d>`` / ``r2+proj-<d>``: R1/R2's ``Dense``,
  then the projection on the basis of the renormalized embeddings, then ``Normalize``.

The result loads in vanilla ``SentenceTransformer(path)`` and mteb, without skadapt or remote code.

Each can make a model worse (R1/R2 cost the demo's STS while helping retrieval), so with dev sets the
stage earns its place: mu and the bases are estimated once, the dev texts encoded once, and every
candidate, a map of those embeddings, is scored on the dev sets as their evaluators score it. A candidate
replaces "none" (the model unchanged) only when it beats none beyond the noise (a paired bootstrap over
the dev examples, :func:`select_on_dev`). When "none" is kept, no model is written: the stage's output
is its input unchanged, and the run's final model stays the previous stage's. Dev rows holding an
evaluation test text are dropped first (:mod:`skadapt.tasks.dev`), so the choice is never made on test
texts, those sharing a fine-tuning training text are counted and, unless the dev sets keep them,
dropped (:mod:`skadapt.tasks.heldout`), and the basis is never fitted on dev text; the report records
every set with its sizes and drops.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from skadapt.console import encode_texts
from skadapt.languages import Language
from skadapt.modeldir import finalize_model_dir, keep_matryoshka_dims
from skadapt.prompts import role_prompt
from skadapt.renorm.card import card_section
from skadapt.renorm.config import RenormConfig, RenormError, projection_dims
from skadapt.renorm.plan import plan_renorm
from skadapt.results import RenormSummary
from skadapt.results.base import StageResult
from skadapt.results.dev import DevSetPower
from skadapt.results.renorm import Candidate, RenormReport, Selection
from skadapt.sources import corpus_texts
from skadapt.stage import (
    Entrance,
    Input,
    Option,
    RunFacts,
    Stage,
    StageContext,
    corpus_input,
    dev_inputs,
)
from skadapt.tasks.config import DevSets
from skadapt.tasks.dev import DevSet, dev_keys
from skadapt.tasks.dev_scores import CONFIDENCE, REPLICATES, EncodedSet
from skadapt.tasks.heldout import TrainingTexts
from skadapt.tasks.projection import BASIS_TEXTS, basis_of, basis_prompts, dense_module
from skadapt.tasks.selection import evaluation_texts, suite_files
from skadapt.textsample import sample_sentences

log = logging.getLogger("skadapt.renorm")

Method = Literal["r1", "r2"]
PromptChoice = Literal["none", "query", "passage"]
REPORT = RenormReport.FILE
LOWER_BOUNDS = {"90%": 0.10, "95%": 0.05}
"""The looser one-sided bounds each candidate's report gives beside the selection's own level."""


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
    """Embeddings exactly as the model outputs them (after its own Normalize), float32; one bar on a
    terminal."""
    label = f"renorm: encoding the sample{f', prompt {prompt.strip()!r}' if prompt else ''}"
    return np.asarray(
        encode_texts(model, texts, label, prompt=prompt, batch_size=batch_size, convert_to_numpy=True),
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


@dataclass
class CandidateMap:
    """A candidate as a map of the model's embeddings: R1/R2 (``weight``, ``bias``), then a projection on
    ``projection`` (rows: basis vectors), then normalization; ``none`` has neither."""

    name: str
    dimension: int
    weight: np.ndarray | None = None
    bias: np.ndarray | None = None
    projection: np.ndarray | None = None

    def __call__(self, embeddings: np.ndarray) -> np.ndarray:
        """The candidate's unit vectors of ``embeddings`` (float64)."""
        out = embeddings.astype(np.float64)
        if self.weight is not None:
            out = out @ self.weight.astype(np.float64).T + self.bias
        if self.projection is not None:
            out = out @ self.projection.T
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def modules(self) -> list[Any]:
        """The modules appended to the model: ``Dense`` (R1/R2), ``Dense`` (projection, no bias), then
        ``Normalize`` (a renormalization is normalized again by the last one: a projection is linear)."""
        from sentence_transformers.sentence_transformer.modules import Normalize

        dense = [] if self.weight is None else [dense_module(self.weight, self.bias)]
        if self.projection is not None:
            dense.append(dense_module(self.projection))
        return [*dense, Normalize()] if dense else []


def candidate_maps(
    mu: np.ndarray, dims: list[int], basis_embeddings: np.ndarray | None
) -> tuple[list[CandidateMap], dict[str, Any] | None]:
    """The candidates in order of preference on a tie: none, r1, r2, ``proj-<d>`` (the basis of the
    embeddings), ``r1+proj-<d>``, ``r2+proj-<d>`` (the basis of the renormalized embeddings); and the
    energy the bases keep (None without projections)."""
    dimension = int(mu.shape[0])
    renorms = {name: renorm_weights(mu.astype(np.float32), name) for name in ("r1", "r2")}
    maps = [CandidateMap("none", dimension)]
    maps += [CandidateMap(name, dimension, *renorms[name]) for name in ("r1", "r2")]  # type: ignore[arg-type]
    if not dims or basis_embeddings is None:
        return maps, None
    energy: dict[str, Any] = {}
    for prefix in ("none", "r1", "r2"):
        weight, bias = renorms.get(prefix, (None, None))
        mapped = CandidateMap(prefix, dimension, weight, bias)(basis_embeddings)
        vectors, _ = basis_of(mapped)
        energy[prefix] = {d: round(kept_share(vectors, mapped, d), 4) for d in dims}
        for d in dims:
            name = f"proj-{d}" if prefix == "none" else f"{prefix}+proj-{d}"
            maps.append(CandidateMap(name, d, weight, bias, vectors[:d]))
    return maps, energy


def kept_share(vectors: np.ndarray, embeddings: np.ndarray, d: int) -> float:
    """The share of the energy of ``embeddings`` the top ``d`` basis vectors keep."""
    return float(np.sum((embeddings @ vectors[:d].T) ** 2) / np.sum(embeddings**2))


def _decide(candidates: list[Candidate]) -> tuple[str, str]:
    """The kept candidate and why: the best mean among those that beat none beyond the noise."""
    winners = [c for c in candidates[1:] if c.beats_none]
    best = max(winners, key=lambda c: c.mean or 0.0, default=None)  # max keeps the first of equal means
    if best is not None:
        assert best.difference is not None and best.interval is not None
        low, high = best.interval
        others = f"; {len(winners) - 1} more beat none, with smaller means" if len(winners) > 1 else ""
        return best.name, (
            f"{best.name} beats none by {100 * best.difference:+.2f} [{100 * low:+.2f}, {100 * high:+.2f}] "
            f"points of mean dev score{others}"
        )
    top = max(candidates[1:], key=lambda c: c.mean or 0.0, default=None)
    if top is None or top.difference is None or top.interval is None:
        return "none", "no candidate besides none"
    low, high = top.interval
    return "none", (
        f"no candidate beats none beyond the noise (best: {top.name} {100 * top.difference:+.2f} "
        f"[{100 * low:+.2f}, {100 * high:+.2f}] points of mean dev score)"
    )


def choose(
    encoded: list[EncodedSet], maps: list[CandidateMap], seed: int = 42
) -> tuple[list[Candidate], str, str]:
    """Score ``maps`` (the first is none) on the encoded dev sets with a paired bootstrap; the scored
    candidates, the kept one's name and why (see :func:`select_on_dev`)."""
    from skadapt.tasks.dev_scores import paired_interval, paired_quantiles, resamples, score_candidate

    indices = resamples(encoded, REPLICATES, seed)
    alpha = (1 - CONFIDENCE) / max(len(maps) - 1, 1)
    reference = score_candidate(encoded, None, indices)
    candidates: list[Candidate] = []
    for candidate in maps:
        scored = reference if candidate.name == "none" else score_candidate(encoded, candidate, indices)
        low, high = paired_interval(scored, reference, alpha) if candidate.name != "none" else (None, None)
        bounds = None if low is None else paired_quantiles(scored, reference, list(LOWER_BOUNDS.values()))
        entry = Candidate(
            name=candidate.name,
            scores={name: round(value, 6) for name, value in scored.scores.items()},
            mean=round(scored.mean, 6),
            dimension=candidate.dimension,
            difference=None if low is None else round(scored.mean - reference.mean, 6),
            interval=None if low is None or high is None else [round(low, 6), round(high, 6)],
            beats_none=low is not None and low > 0,
            lower_bounds=None
            if bounds is None
            else {level: round(bound, 6) for level, bound in zip(LOWER_BOUNDS, bounds, strict=True)},
        )
        candidates.append(entry)
        log.info("renorm: %s on dev: mean %.4f %s", candidate.name, scored.mean, entry.scores)
    choice, reason = _decide(candidates)
    log.info("renorm: %s", reason)
    return candidates, choice, reason


def select_on_dev(
    model: Any,
    mu: np.ndarray,
    dev: DevSets,
    batch_size: int = 32,
    test_texts: dict[str, list[str]] | None = None,
    training: TrainingTexts | None = None,
    *,
    dims: list[int] | None = None,
    basis_embeddings: np.ndarray | None = None,
    basis: dict[str, Any] | None = None,
    seed: int = 42,
) -> tuple[Selection, CandidateMap]:
    """Score every candidate (:func:`candidate_maps`) on the dev sets; keep the best that beats none
    beyond the noise.

    The dev texts are encoded once by ``model`` (:mod:`skadapt.tasks.dev_scores`) and every candidate is
    a map of those embeddings; each set's metric is computed as its evaluator computes it. A candidate
    beats none when the lower end of its paired bootstrap interval of (candidate - none) in mean dev score,
    one-sided at ``1 - (1 - CONFIDENCE) / (candidates - 1)`` (Bonferroni over the candidates), is above 0.
    Dev rows holding one of ``test_texts`` (evaluation task -> its test texts) are dropped before scoring.

    Args:
        model: The loaded model (left unchanged).
        mu: The corpus mean of its embeddings.
        dev: The dev sets.
        batch_size: Encoding batch size.
        test_texts: Evaluation task -> its test texts.
        training: The run's training texts; dev rows sharing one are counted (and dropped unless kept).
        dims: Dimensions of the projection candidates (none without ``basis_embeddings``).
        basis_embeddings: The model's embeddings of training-side corpus text the bases are fitted on.
        basis: What those embeddings are (texts, prompts), recorded in the selection.
        seed: Seed of the bootstrap resamples.
    """
    from skadapt.tasks.dev import build_dev_sets
    from skadapt.tasks.dev_scores import encode_dev_set

    sets = build_dev_sets(dev, batch_size, dict(model.prompts or {}), test_texts, training)
    metrics = {dev_set.evaluator.name: dev_set.metric for dev_set in sets}
    encoded = [encode_dev_set(model, dev_set, batch_size) for dev_set in sets]
    maps, energy = candidate_maps(mu, dims or [], basis_embeddings)
    candidates, choice, reason = choose(encoded, maps, seed)
    power = _power(encoded, sets, candidates, seed)
    recorded_basis = None if energy is None else {**(basis or {}), "energy_kept": energy}
    selection = Selection(
        metrics=metrics,
        candidates=candidates,
        choice=choice,
        reason=reason,
        confidence=CONFIDENCE,
        replicates=REPLICATES,
        basis=recorded_basis,
        sets=[r for dev_set in sets for r in dev_set.report],
        power=power,
    )
    return selection, next(m for m in maps if m.name == choice)


def _power(
    encoded: list[EncodedSet], sets: list[DevSet], candidates: list[Candidate], seed: int
) -> list[DevSetPower]:
    """Each dev set's power for the input model (from the embeddings the candidates are scored on: no
    encoding more) and ``saturated_for_all`` (every candidate at the metric's top on it); a warning per
    flag."""
    from skadapt.tasks.dev_power import at_top_everywhere, flag_lines, saturated_for_all_line, set_power

    power = []
    for one, dev_set in zip(encoded, sets, strict=True):
        entry = set_power(one, dev_set.report[0]["kind"] if dev_set.report else None, seed=seed)
        entry.saturated_for_all = at_top_everywhere(c.scores.get(one.name) for c in candidates)
        power.append(entry)
    for line in flag_lines(power, "the input model"):
        log.warning("renorm: %s", line)
    for entry in power:
        if entry.saturated_for_all:
            log.warning("renorm: %s", saturated_for_all_line(entry, f"all {len(candidates)} candidates"))
    return power


def _sample_embeddings(
    model: Any,
    sentences: list[str],
    mu_prompt: str,
    prompts: list[str],
    batch_size: int,
    seed: int,
    held_out: set[str] | None = None,
) -> tuple[np.ndarray, np.ndarray | None, dict[str, Any] | None]:
    """The sample encoded with ``mu_prompt`` (for mu), and the basis embeddings: a seeded subset of at most
    ``BASIS_TEXTS`` of its sentences not in ``held_out`` (normalized dev texts), encoded with each of
    ``prompts`` (reusing the mu encoding for its prompt); None without ``prompts``."""
    from skadapt.textsample import normalize_text

    embeddings = encode(model, sentences, mu_prompt, batch_size)
    if not prompts:
        return embeddings, None, None
    eligible = [i for i, s in enumerate(sentences) if normalize_text(s) not in (held_out or set())]
    if not eligible:
        log.warning("renorm: every sample sentence is a dev text; no projection candidates")
        return embeddings, None, None
    rows = sorted(random.Random(seed).sample(eligible, min(len(eligible), BASIS_TEXTS)))
    subset = [sentences[i] for i in rows]
    parts = [embeddings[rows] if p == mu_prompt else encode(model, subset, p, batch_size) for p in prompts]
    report = {
        "texts": len(subset),
        "prompts": prompts,
        "source": "the renorm corpus sample",
        "dropped_dev_overlap": len(sentences) - len(eligible),
    }
    return embeddings, np.concatenate(parts), report


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
    """Estimate mu on a corpus sample; save the model with the chosen candidate appended into ``out_dir``.

    With ``dev`` the candidate is chosen on the dev sets (see :func:`select_on_dev`), the projections'
    bases fitted on the same corpus sample (training-side text: evaluation texts are kept out of it);
    without, ``config.method`` is applied. When no candidate beats none, only ``renorm_report.json`` and
    ``renorm_mu.npy`` are written (no model).

    Args:
        model_path: sentence-transformers directory or Hub id.
        out_dir: Where the model and ``renorm_report.json`` are written.
        config: Method, corpus (must be set), sample size, prompt, sentence-length window, projections.
        seed: Seed of the corpus sample, the basis subset and the bootstrap.
        language: ISO 639-1 code of the corpus language (sentence splitting rules).
        exclude: Normalized evaluation texts that must not enter the sample.
        batch_size: Encoding batch size.
        dev: Dev sets to choose on; None applies ``config.method``.
        test_texts: Evaluation task -> its test texts; dev rows holding one are not scored.
        training: The run's training texts; dev rows sharing one are counted (and dropped unless kept).

    Raises:
        RenormError: No usable sentence in the corpus, a prompt the model lacks, or a projection dimension
            not below the model's.
        SourceError: Unreadable corpus.
    """
    corpus, method, samples, prompt = config.corpus, config.method, config.samples, config.prompt
    min_chars, max_chars = config.min_chars, config.max_chars
    if corpus is None:
        raise RenormError("renorm: no corpus given")
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_path)  # a GPU when there is one: the mean needs ~100k encodings
    text = prompt_text(model, prompt)
    dimension = int(model.get_embedding_dimension() or 0)
    dims = projection_dims(config, dimension) if dev is not None else []
    started = time.perf_counter()
    sample = sample_sentences(
        corpus_texts(corpus),
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
            f"{corpus.source}: no sentence of {min_chars}-{max_chars} characters (after dropping evaluation "
            "texts); "
            "use another corpus or widen renorm.min_chars/max_chars"
        )
    if len(sentences) < samples:
        log.warning("renorm: only %d sentences available (asked for %d)", len(sentences), samples)
    sampled = time.perf_counter()
    prompts = basis_prompts(model) if dims else []
    held_out = dev_keys(dev, language) if prompts and dev is not None else None
    embeddings, basis_embeddings, basis = _sample_embeddings(
        model, sentences, text, prompts, batch_size, seed, held_out
    )
    encoded = time.perf_counter()
    mu = embeddings.astype(np.float64).mean(axis=0)
    unit = mu / np.linalg.norm(mu)
    selection = None
    if dev is not None:
        selection, chosen = select_on_dev(
            model,
            mu,
            dev,
            test_texts=test_texts,
            training=training,
            dims=dims,
            basis_embeddings=basis_embeddings,
            basis=basis,
            seed=seed,
        )
    else:
        chosen = CandidateMap(method, dimension, *renorm_weights(mu.astype(np.float32), method))
    chose = time.perf_counter()
    renormalized = CandidateMap(chosen.name, dimension, chosen.weight, chosen.bias)  # before any projection
    after = renormalized(embeddings) if chosen.weight is not None else embeddings.astype(np.float64)
    if chosen.name == "none":
        log.warning(
            "renorm: no candidate beats the model without renormalization beyond the noise on the dev sets; "
            "the stage keeps its input model unchanged"
        )
    else:
        for module in chosen.modules():
            model.append(module)
        model.save(str(out_dir))
        finalize_model_dir(out_dir)
        # truncation applies after the renormalization; a projection keeps the dimensions below its own
        keep_matryoshka_dims(model_path, out_dir, chosen.dimension)
    np.save(out_dir / "renorm_mu.npy", mu.astype(np.float32))
    seconds = {"sample": round(sampled - started, 3), "encode": round(encoded - sampled, 3)}
    if selection is not None:
        seconds["select"] = round(chose - encoded, 3)
    result = RenormReport(
        method=chosen.name,
        kept=chosen.name != "none",
        corpus=corpus.source,
        prompt=prompt,
        prompt_text=text,
        samples=len(sentences),
        pool=sample.eligible,
        documents=sample.documents,
        dropped_eval_overlap=sample.dropped,
        mu_norm=float(np.linalg.norm(mu)),
        mean_cos_to_mu_before=float((embeddings.astype(np.float64) @ unit).mean()),
        mean_cos_to_mu_after=float((after @ unit).mean()),
        dimension=dimension,
        output_dimension=chosen.dimension,
        seed=seed,
        selection=selection,
        seconds=seconds,
    )
    result.write(out_dir)
    return result


def input_files(config: RenormConfig, run: RunFacts) -> list[Path]:
    """The run's evaluation suite files: their texts are kept out of the μ sample."""
    return suite_files(list(run.eval_tasks))


def run_stage(ctx: StageContext[RenormConfig]) -> RenormSummary:
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
    return RenormSummary.of(result.as_json())


def inputs(config: RenormConfig, run: RunFacts) -> list[Input]:
    """Its corpus and its own dev sets (``finetune.dev``'s are fine-tuning's inputs)."""
    corpus = [corpus_input("renorm.corpus", config.corpus)] if config.corpus is not None else []
    return corpus + dev_inputs("renorm.dev", config.dev)


def provides(config: RenormConfig, language: Language | None) -> dict[str, Any]:
    """Its own dev sets, when it has some: the run's choices are made on them."""
    return {"dev": config.dev, "dev_field": "renorm.dev"} if config.dev is not None else {}


def defaults(config: RenormConfig, run: RunFacts) -> None:
    """The corpus: the language's (its registry entry's ``corpus``), unless the section names one.

    Raises:
        ValueError: ``select: dev`` and the run has no dev sets.
    """
    if config.select == "dev" and run.dev is None:
        raise ValueError("renorm.select: dev needs dev sets: set renorm.dev or finetune.dev")
    if config.corpus is None and run.language is not None:
        config.corpus = run.language.corpus  # type: ignore[assignment]  # its short form, validated


def summary(config: RenormConfig, result: StageResult | None, stage_dir: Path) -> list[str]:
    """What it chose on dev and why, each candidate's mean dev score, each dev set's overlap with the
    training data."""
    from skadapt.tasks.dev import overlap_line

    selection = RenormSummary.parse(result).selection if result is not None else None
    if selection is None:
        return []
    means = ", ".join(f"{c.name} {c.mean:.4f}" for c in selection.candidates)
    kept = "kept its input (no renormalization)" if selection.choice == "none" else "kept"
    lines = [
        f"renorm chosen on dev: {selection.choice} {kept}: {selection.reason}",
        f"renorm mean dev scores: {means}",
    ]
    for entry in selection.sets:
        if entry.get("training_overlap"):
            lines.append(f"renorm dev {entry['name']}: {overlap_line(entry['training_overlap'])}")
    return lines


ENTRANCE = Entrance(
    options=(
        Option(
            "eval_tasks",
            list[str] | None,
            None,
            "Evaluation task specs whose texts are dropped from the sample (local suites) and whose test "
            "texts are dropped from the dev sets (repeatable); an unreachable one stops the command.",
            flag="--exclude-tasks",
            value=lambda tasks: tasks or (),
        ),
    ),
)


STAGE = Stage(
    "renorm",
    RenormConfig,
    run_stage,
    input_files,
    makes_model=True,
    reads=("eval_tasks", "excluded_tasks", "dataset_mirrors", "dev", "contamination_allow"),
    report=RenormReport,
    inputs=inputs,
    result=RenormSummary,
    plan=plan_renorm,
    defaults=defaults,
    card=card_section,
    card_tag="renormalization",
    provides=provides,
    summary=summary,
    entrance=ENTRANCE,
)
