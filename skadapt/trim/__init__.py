"""Vocabulary trimming: count corpus tokens, select a vocabulary, rewrite tokenizer and model, check parity.

Modules (each single-purpose, heavy libraries imported inside functions):

- ``counting`` - token frequencies of a whole source with its parity sample, cached (the entry point);
- ``parallel`` - counting a text stream in batches with the tokenizer's own threads;
- ``checkpoint`` - counting in checkpointed segments that a killed run resumes;
- ``wordlist`` - weighted counts of ``wordfreq:`` word lists;
- ``sampling`` - the seeded parity sample of the counted texts (bottom-k, resumable);
- ``encoder`` - the ``tokenizers.Tokenizer`` used to count and compare (special ids, fingerprint);
- ``cache`` - the on-disk count cache (``$SKADAPT_CACHE/counts`` or ``~/.cache/skadapt/counts``);
- ``tokenizer`` - analysis and rewrite of a fast tokenizer's ``tokenizer.json`` (Unigram, WordPiece, BPE);
- ``selection`` - which token ids to keep;
- ``coverage`` - how much of the counted corpus the kept vocabulary covers, and what it drops;
- ``model`` - slicing the embedding rows of a model and writing a sentence-transformers directory;
- ``parity`` - the built-in check that trimming changed nothing on identically tokenized text;
- ``report`` - ``trim_report.json`` and the exactness verdict;
- ``card`` - the trimmed model's ``README.md`` card;
- ``trimmer`` - ``trim_model``, the one function behind ``skadapt trim`` and the ``trim`` pipeline stage.
"""

from __future__ import annotations
