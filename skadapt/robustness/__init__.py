"""Robustness: LLM transformations of evaluation texts at evaluation time, paired statistics, figures."""
