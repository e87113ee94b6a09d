"""Renormalization: remove the corpus-mean embedding (R1: e - mu; R2: the projection on mu-hat), then
re-normalize, saved as standard sentence-transformers modules; chosen on dev data.

Modules:
    config: the recipe section ``renorm``.
    stage: mean estimation, the modules, the dev choice and the pipeline stage.
"""
