"""Renormalization: remove the corpus-mean embedding (R1: e - mu; R2: the projection on mu-hat), or project
on the top directions of the corpus embeddings, then re-normalize, saved as standard sentence-transformers
modules; chosen on dev data, kept only beyond the noise.

Modules:
    config: the recipe section ``renorm``.
    stage: mean and basis estimation, the candidates, the dev choice and the pipeline stage.
"""
