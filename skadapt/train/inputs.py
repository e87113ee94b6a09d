"""What the preflight checks of the ``finetune`` section before any stage runs: every dataset (its first
row as the builder reads it; an nli source's grouping), the anchor corpus, the hard negatives' corpus and
mining model, the gist guide and the dev sets."""

from __future__ import annotations

from functools import partial

from skadapt.sources.commits import reading
from skadapt.sources.probe import commit_note
from skadapt.stage import Input, RunFacts, corpus_input, dev_inputs, model_input
from skadapt.train.config import FinetuneConfig, FinetuneDataset


@reading()
def probe_dataset(entry: FinetuneDataset) -> str:
    """Read a training dataset's first row (and, for nli, how its first rows group) as its builder does.

    Raises:
        SkadaptError: The source does not open, or its first row lacks a column or a label.
    """
    from skadapt.train.datasets import check_first_row, sample_grouping

    found = check_first_row(entry)  # the first row's problem before any other row's
    grouping = f"; {sample_grouping(entry)}" if entry.kind == "nli" else ""
    return found + grouping + commit_note(entry.source)


def inputs(config: FinetuneConfig, run: RunFacts) -> list[Input]:
    """The inputs of the ``finetune`` section."""
    found = [
        Input(
            f"finetune.datasets {entry.name}",
            entry.source,
            "opens, columns, labels",
            partial(probe_dataset, entry),
            source=True,
        )
        for entry in config.datasets
    ]
    for index, entry in enumerate(config.datasets):
        hard = entry.hard_negatives
        if hard is None:
            continue
        field = f"finetune.datasets.{index}.hard_negatives"
        if hard.corpus is not None:
            found.append(corpus_input(f"{field}.corpus", hard.corpus))
        if hard.model:
            found.append(model_input(f"{field}.model", hard.model, run.language))
    if config.anchor is not None and config.anchor.corpus is not None:
        found.append(corpus_input("finetune.anchor.corpus", config.anchor.corpus))
    for index, source in enumerate(config.anchor.parallel or [] if config.anchor is not None else []):
        found.append(corpus_input(f"finetune.anchor.parallel.{index}.source", source))
    if config.gist is not None and config.gist.guide:
        found.append(model_input("finetune.gist.guide", config.gist.guide, run.language))
    return found + dev_inputs("finetune.dev", config.dev)
