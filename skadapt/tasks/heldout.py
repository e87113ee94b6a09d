"""Are the dev sets held out? The training texts the dev rows are checked against.

A choice made on dev rows the model was trained on (the best checkpoint, WiSE-FT's coefficient,
renormalization) rewards memorisation. skLEP's question-answering validation split "was created by sampling
from the training data", and a SQuAD-style paragraph serves ~4.5 questions, so its validation paragraphs
are training paragraphs; STS and NLI sentences recur across splits too.

**The rule.** A dev example *overlaps* the training data when **any** of its texts is a training text,
compared as the contamination check compares (:func:`~skadapt.tasks.contamination.folded_words`: NFKC,
case-folded, punctuation dropped; folded texts shorter than
:data:`~skadapt.tasks.contamination.MIN_CHARS` are ignored). Every text role counts: a retrieval
example whose question is new but whose passage was trained on still rewards a model that memorised the
passage (the passage is the case skLEP has); an STS pair, NLI triplet or RTE pair one of whose sentences
was trained on counts as well. ``DevSets.training_overlap`` says what happens to them (``drop``, the
default, or ``keep``); both count them per dev set and training dataset (:mod:`skadapt.tasks.dev`).

**The training texts** are those of the fine-tuning datasets as built from ``finetune.datasets``
(``max_samples`` applied, rows a kind leaves out by design, such as neutral NLI rows, not trained on and
not counted), before the contamination drop (a row dropped there holds an evaluation test text, and the dev
rows sharing it are dropped for that anyway), without the anchor sample (distillation to the starting
model's own embeddings rewards no task memorisation). Each folded text is kept as an 8-byte BLAKE2b digest
in a sorted ``uint64`` array per training dataset: 8 bytes a text instead of the text (skLEP's
question-answering training split alone holds ~90 MB of paragraphs). With 64-bit digests, a dev text
falsely matching one of a million training texts has a probability of about 5e-14.

The run builds them once (:class:`SharedTrainingTexts`): the fine-tuning stage hands over the texts of
the datasets it built anyway, and renormalization reads them, or builds them from the sources itself when
fine-tuning did not run in this process (finished earlier, or another command).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from skadapt.tasks.contamination import MIN_CHARS, folded_words

DIGEST_BYTES = 8


def text_digest(text: str) -> int | None:
    """The 8-byte digest of a text's folded words, or None when they are shorter than ``MIN_CHARS``."""
    key = folded_words(text)
    if len(key) < MIN_CHARS:
        return None
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=DIGEST_BYTES).digest(), "little")


def _digests(texts: Iterable[str]) -> np.ndarray:
    """The sorted distinct digests of ``texts`` (short texts left out)."""
    found = (digest for digest in map(text_digest, texts) if digest is not None)
    return np.unique(np.fromiter(found, dtype=np.uint64))


@dataclass(frozen=True)
class TrainingTexts:
    """The folded training texts, as digests, per training dataset.

    Attributes:
        digests: Training dataset (the recipe's name) -> the sorted distinct digests of its texts.
    """

    digests: Mapping[str, np.ndarray]

    @classmethod
    def from_texts(cls, texts: Mapping[str, Iterable[str]]) -> TrainingTexts:
        """Digest each dataset's texts (dataset name -> its texts, repeats allowed)."""
        return cls({name: _digests(found) for name, found in texts.items()})

    def __len__(self) -> int:
        """Distinct texts per dataset, summed."""
        return sum(len(found) for found in self.digests.values())

    @property
    def nbytes(self) -> int:
        """Memory the digests take."""
        return sum(found.nbytes for found in self.digests.values())

    def owners(self, texts: Sequence[str]) -> list[tuple[str, ...]]:
        """For each text, the training datasets that hold it (folded), in the order of ``digests``."""
        names = list(self.digests)
        if not names:
            return [() for _ in texts]
        found = [text_digest(text) for text in texts]
        known = np.array([digest is not None for digest in found], dtype=bool)
        query = np.array([digest or 0 for digest in found], dtype=np.uint64)
        hits = np.zeros((len(query), len(names)), dtype=bool)
        for column, digests in enumerate(self.digests.values()):
            if len(digests):
                at = np.minimum(np.searchsorted(digests, query), len(digests) - 1)
                hits[:, column] = (digests[at] == query) & known
        return [tuple(names[column] for column in np.flatnonzero(row)) for row in hits]


class SharedTrainingTexts:
    """The run's training texts, made at most once per run: handed over by the stage that built the
    training datasets (:meth:`put`), else made from the sources by the first stage that asks
    (:meth:`get`)."""

    def __init__(self, make: Callable[[], TrainingTexts]) -> None:
        self._make = make
        self._texts: TrainingTexts | None = None

    def put(self, texts: TrainingTexts) -> None:
        """Keep ``texts`` for the later stages of the run."""
        self._texts = texts

    def get(self) -> TrainingTexts:
        """The training texts (made now when no stage handed them over)."""
        if self._texts is None:
            self._texts = self._make()
        return self._texts
