"""The dims tiers' basis, chosen per dimension on the dev sets (``export.dims_basis: auto``).

Candidates, in order of preference on a tie:

- ``corpus``: the top ``d`` directions of the parent's embeddings of the export corpus (each text with each
  prompt; :mod:`skadapt.tasks.projection`), the default: it keeps the most of the embeddings' energy on
  in-language text;
- ``parallel`` (when ``export.corpus.parallel`` names parallel text): the top ``d`` directions of the
  corpus embeddings and of both sides of the parallel pairs, each half weighted equally (each row scaled by
  one over the square root of its half's size: a few hundred pairs beside thousands of corpus texts would
  otherwise barely move the top directions). A corpus in one language has no direction for the other
  language of a cross-lingual task (bitext mining lost 8.1 points at 128 dims and 17.7 at 64 on the demo);
  the parallel half gives it some;
- ``first``: the first ``d`` components (truncation).

With dev sets (the run's: ``renorm.dev``, else ``finetune.dev``, rows holding an evaluation text dropped,
rows sharing a training text counted and dropped as the dev sets say), the dev texts are encoded once by
the parent and each candidate is a map of those embeddings (project on the top ``d`` vectors, normalize),
scored as the dev evaluators score (:mod:`skadapt.tasks.dev_scores`). A candidate replaces the default only
when it beats it beyond the noise: the lower end of its paired bootstrap interval over the dev examples
(one-sided, ``1 - (1 - CONFIDENCE) / (candidates - 1)``) is above 0; among several, the best mean. Without
dev sets the default is kept, and the report says it was not chosen on dev. The bases are fitted on
training-side text only: the export corpus and the parallel text leave out every evaluation text and every
dev text (:func:`skadapt.export.corpus.read_corpus`), counted in the report.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from skadapt.export.config import ExportConfig
from skadapt.export.corpus import Corpus
from skadapt.results.export import BasisCandidate, DimsBasisChoice, DimsChoice
from skadapt.tasks.projection import BASIS_TEXTS, Basis, basis_of, basis_prompts, sample_embeddings

log = logging.getLogger("skadapt.export")

CONFIDENCE = 0.95
"""One-sided confidence, over all challengers of a dimension together, that a kept challenger beats the
default basis."""
REPLICATES = 2000
"""Paired bootstrap resamples of the dev examples."""
FIRST = "first"


@dataclass
class Bases:
    """The fitted bases by name (``corpus``, ``parallel``) and what each was fitted on."""

    fitted: dict[str, Basis]

    @property
    def default(self) -> str:
        """The basis kept without a reason to change: corpus, else parallel, else truncation."""
        return next((name for name in ("corpus", "parallel") if name in self.fitted), FIRST)

    def vectors(self, name: str, dimension: int) -> np.ndarray:
        """The basis' vectors as rows (``first``: the identity)."""
        return np.eye(dimension) if name == FIRST else self.fitted[name].vectors


def fit_bases(
    model: Any, corpus: Corpus | None, parallel: Corpus | None, batch_size: int, want: set[str]
) -> Bases:
    """The bases of ``want`` (``corpus``, ``parallel``) that their text allows: ``corpus`` on the corpus,
    ``parallel`` on the corpus and the parallel text (each half weighted equally; the parallel text alone
    without a corpus)."""
    prompts = basis_prompts(model)
    fitted: dict[str, Basis] = {}
    embedded: dict[str, np.ndarray] = {}
    seconds: dict[str, float] = {}
    for name, texts in (("corpus", corpus), ("parallel", parallel)):
        if texts is not None and (name in want or (name == "corpus" and "parallel" in want)):
            started = time.perf_counter()
            embedded[name] = sample_embeddings(model, texts.texts, batch_size)
            seconds[name] = time.perf_counter() - started
    if "corpus" in want and "corpus" in embedded:
        assert corpus is not None
        vectors, kept = basis_of(embedded["corpus"])
        fitted["corpus"] = Basis(
            vectors,
            {
                "texts": min(len(corpus.texts), BASIS_TEXTS),
                "prompts": prompts,
                "energy_kept": kept,
                "seconds": round(seconds["corpus"], 1),
                "dropped_dev_overlap": corpus.dropped_dev_overlap,
            },
            "corpus",
        )
    if "parallel" in want and "parallel" in embedded:
        assert parallel is not None
        started = time.perf_counter()
        halves = [
            embedded[name] / np.sqrt(len(embedded[name]))
            for name in ("corpus", "parallel")
            if name in embedded
        ]
        vectors, kept = basis_of(np.concatenate(halves))
        fitted["parallel"] = Basis(
            vectors,
            {
                "texts": min(len(corpus.texts), BASIS_TEXTS) if "corpus" in embedded and corpus else 0,
                "parallel_texts": min(len(parallel.texts), BASIS_TEXTS),
                "prompts": prompts,
                "energy_kept": kept,
                "seconds": round(seconds["parallel"] + time.perf_counter() - started, 1),
                "dropped_dev_overlap": parallel.dropped_dev_overlap,
                "dropped_eval_overlap": parallel.dropped_eval_overlap,
                "weighting": "corpus and parallel halves weighted equally",
            },
            "parallel",
        )
    return Bases(fitted)


def wanted(mode: str, parallel: bool) -> set[str]:
    """The bases to fit for ``export.dims_basis`` ``mode`` (``parallel`` only with parallel text)."""
    if mode == FIRST:
        return set()
    if mode == "auto":
        return {"corpus", "parallel"} if parallel else {"corpus"}
    return {mode}


def _project(vectors: np.ndarray) -> Any:
    def transform(embeddings: np.ndarray) -> np.ndarray:
        out = embeddings.astype(np.float64) @ vectors.T
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    return transform


def choose_bases(
    model: Any,
    dims: list[int],
    bases: Bases,
    mode: str,
    *,
    dev: Any = None,
    test_texts: dict[str, list[str]] | None = None,
    training: Any = None,
    batch_size: int = 32,
    seed: int = 42,
) -> tuple[dict[int, Basis | None], DimsBasisChoice]:
    """The basis of each dims tier (None: truncation) and the choice as reported (see the module doc).

    ``mode`` is ``export.dims_basis``: ``corpus``/``parallel``/``first`` fix it (corpus and parallel fall
    back to the default the text allows); ``auto`` chooses per ``d`` on ``dev`` (the dev sets; rows holding
    one of ``test_texts`` dropped, those sharing one of ``training`` counted and dropped as they say), or
    keeps the default without dev sets.
    """
    dimension = int(model.get_embedding_dimension() or 0)
    default = bases.default
    names = [
        default,
        *(n for n in ("corpus", "parallel", FIRST) if n != default and (n == FIRST or n in bases.fitted)),
    ]
    report: dict[str, Any] = {
        "mode": mode,
        "default": default,
        "bases": {name: basis.report for name, basis in bases.fitted.items()},
        "confidence": CONFIDENCE,
        "replicates": REPLICATES,
    }
    if mode != "auto" or dev is None or len(names) == 1:
        name = mode if mode in bases.fitted or mode == FIRST else default
        why = (
            f"export.dims_basis: {mode}"
            if mode != "auto"
            else "no dev sets: the default basis, not chosen on dev"
            if dev is None
            else "the only candidate"
        )
        if mode not in ("auto", name):
            why += f" ({mode} has no text to fit on: {name})"
        choices = [DimsChoice(dimension=d, chosen=name, reason=why, candidates=[]) for d in dims]
        chosen = {d: None if name == FIRST else bases.fitted[name] for d in dims}
        return chosen, DimsBasisChoice.model_validate({**report, "choices": choices, "dev_sets": None})
    from skadapt.tasks.dev import build_dev_sets
    from skadapt.tasks.dev_scores import encode_dev_set, paired_interval, resamples, score_candidate

    started = time.perf_counter()
    sets = build_dev_sets(dev, batch_size, dict(model.prompts or {}), test_texts, training)
    encoded = [encode_dev_set(model, dev_set, batch_size) for dev_set in sets]
    indices = resamples(encoded, REPLICATES, seed)
    alpha = (1 - CONFIDENCE) / (len(names) - 1)
    choices, chosen = [], {}
    for d in dims:
        scored = {
            name: score_candidate(encoded, _project(bases.vectors(name, dimension)[:d]), indices)
            for name in names
        }
        reference = scored[default]
        candidates = []
        for name in names:
            low, high = paired_interval(scored[name], reference, alpha) if name != default else (None, None)
            candidates.append(
                BasisCandidate(
                    name=name,
                    scores={k: round(v, 6) for k, v in scored[name].scores.items()},
                    mean=round(scored[name].mean, 6),
                    difference=None if low is None else round(scored[name].mean - reference.mean, 6),
                    interval=None if low is None or high is None else [round(low, 6), round(high, 6)],
                    beats_default=low is not None and low > 0,
                )
            )
        name, why = _decide(candidates, default)
        log.info("export: dims-%d basis %s: %s", d, name, why)
        choices.append(DimsChoice(dimension=d, chosen=name, reason=why, candidates=candidates))
        chosen[d] = None if name == FIRST else bases.fitted[name]
    report["seconds"] = round(time.perf_counter() - started, 1)
    report["dev_sets"] = [r for dev_set in sets for r in dev_set.report]
    return chosen, DimsBasisChoice.model_validate({**report, "choices": choices})


def _decide(candidates: list[BasisCandidate], default: str) -> tuple[str, str]:
    """The kept basis and why: the best mean among those beating the default beyond the noise."""
    winners = [c for c in candidates if c.beats_default]
    best = max(winners, key=lambda c: c.mean, default=None)
    if best is not None:
        assert best.difference is not None and best.interval is not None
        low, high = best.interval
        return best.name, (
            f"{best.name} beats {default} by {100 * best.difference:+.2f} "
            f"[{100 * low:+.2f}, {100 * high:+.2f}] points of mean dev score"
        )
    others = [c for c in candidates if c.name != default and c.difference is not None]
    top = max(others, key=lambda c: c.mean, default=None)
    if top is None or top.interval is None or top.difference is None:
        return default, "no other candidate"
    low, high = top.interval
    return default, (
        f"no candidate beats {default} beyond the noise (best: {top.name} {100 * top.difference:+.2f} "
        f"[{100 * low:+.2f}, {100 * high:+.2f}] points of mean dev score)"
    )


def fit_and_choose(
    model: Any,
    dims: list[int],
    corpus: Corpus | None,
    parallel: Corpus | None,
    config: ExportConfig,
    *,
    dev: Any = None,
    test_texts: dict[str, list[str]] | None = None,
    training: Any = None,
    seed: int = 42,
) -> tuple[Bases, dict[int, Basis | None], DimsBasisChoice]:
    """The bases ``export.dims_basis`` wants fitted on the corpus and parallel text (:func:`fit_bases`),
    each dims tier's basis and the choice as reported (:func:`choose_bases`): the export stage's step."""
    want = wanted(config.dims_basis, parallel is not None)
    fitted = fit_bases(model, corpus, parallel, config.batch_size, want)
    chosen, choice = choose_bases(
        model,
        dims,
        fitted,
        config.dims_basis,
        dev=dev,
        test_texts=test_texts,
        training=training,
        batch_size=config.batch_size,
        seed=seed,
    )
    return fitted, chosen, choice
