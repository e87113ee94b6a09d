"""The export stage's dims-tier bases and their choice on dev, outside a run."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from skadapt.recipe import Recipe
    from skadapt.results.export import DimsBasisChoice


@dataclass
class DimsBases:
    """The bases a recipe's export fits for a model, and the choice it makes among them.

    Attributes:
        model: The model directory.
        dimension: Its embedding dimension.
        dims: The tiers' dimensions (``export.dims``, else the model's recorded Matryoshka dimensions).
        fitted: Basis name (``corpus``, ``parallel``) -> the fitted basis (``first`` needs none).
        choice: Per dimension, every candidate's dev scores and the basis kept, with why.
        seconds: Fitting the bases and choosing among them.
    """

    model: Path
    dimension: int
    dims: list[int]
    fitted: dict[str, Any]
    choice: DimsBasisChoice
    seconds: float

    def write_tier(self, basis: str, dim: int, out: Path) -> dict[str, Any]:
        """Write the model reduced to ``dim`` on ``basis`` (``first``: its first components) at ``out``, as
        the export stage writes a dims tier; returns what the stage records of it."""
        from skadapt.export.dims import write_dims_tier

        fitted = None if basis == "first" else self.fitted[basis]
        return write_dims_tier(self.model, out, dim, self.dimension, fitted)


def dims_bases(model: str | Path, recipe: Recipe) -> DimsBases:
    """The dims tiers' bases of ``recipe.export`` fitted on ``model`` (the texts the stage fits on: the
    export corpus and its parallel text, evaluation and dev texts left out) and chosen per dimension on the
    recipe's dev sets, as the export stage does with ``export.dims_basis``."""
    from skadapt.export.dims import tier_dims
    from skadapt.export.dims_choice import fit_and_choose
    from skadapt.export.stage import fitting_corpora
    from skadapt.tasks.backends import load_sentence_model

    config = recipe.export
    if config is None:
        raise ValueError("the recipe has no export section")
    facts = recipe.run_facts()
    test_texts = facts.test_texts(facts.contamination_allow)[0]
    apart = {
        "eval_tasks": list(facts.eval_tasks),
        "test_texts": test_texts,
        "language": facts.text_language,
        "seed": facts.seed,
        "dev": facts.dev,
    }
    path = str(model)
    corpus, parallel = fitting_corpora(config, path, finetune_dir=path, **apart)
    parent = load_sentence_model(path)
    dimension = int(parent.get_embedding_dimension() or 0)
    dims = tier_dims(config.dims, Path(path), dimension)
    started = time.perf_counter()
    training = facts.training.get() if facts.training is not None else None
    bases, _, choice = fit_and_choose(
        parent, dims, corpus, parallel, config, dev=facts.dev, test_texts=test_texts, training=training,
        seed=facts.seed,
    )  # fmt: skip
    return DimsBases(Path(path), dimension, dims, dict(bases.fitted), choice, time.perf_counter() - started)
