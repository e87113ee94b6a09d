"""Vocabulary trimming: count corpus tokens, select a vocabulary, rewrite tokenizer and model, check parity.

Modules (each single-purpose, heavy libraries imported inside functions):

- ``counting`` - token frequencies of a corpus, in parallel worker processes, cached on disk;
- ``cache`` - the on-disk count cache (``$SKADAPT_CACHE/counts`` or ``~/.cache/skadapt/counts``);
- ``tokenizer`` - analysis and rewrite of a fast tokenizer's ``tokenizer.json`` (Unigram, WordPiece, BPE);
- ``selection`` - which token ids to keep;
- ``model`` - slicing the embedding rows of a model and writing a sentence-transformers directory;
- ``parity`` - the built-in check that trimming changed nothing on identically tokenized text;
- ``report`` - ``trim_report.json``;
- ``trimmer`` - ``trim_model``, the one function behind ``skadapt trim`` and the ``trim`` pipeline stage.
"""

from __future__ import annotations
