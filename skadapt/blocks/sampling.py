"""How ``sample_sentences`` splits a stream of texts into sentences on this machine."""

from __future__ import annotations

from pydantic import BaseModel


class SplitParallelism(BaseModel):
    """The sentence splitter's parallelism.

    Attributes:
        serial_texts: Texts of a stream split in the calling process before the rest goes to workers.
        workers: Worker processes that split the rest (the cores this process may use, at most 16).
    """

    serial_texts: int
    workers: int


def split_parallelism() -> SplitParallelism:
    """How ``sample_sentences`` (and the renorm stage's corpus sample) splits texts here: the first
    ``serial_texts`` in this process, the rest by ``workers`` processes."""
    from skadapt.textsample import PARALLEL_AFTER, split_workers

    return SplitParallelism(serial_texts=PARALLEL_AFTER, workers=split_workers())
