"""Evaluation: mteb tasks (built-in benchmarks, built-in tasks, local YAML suites), Table-1 aggregation,
paired comparison statistics and reports.

Every metric is computed by mteb; skadapt only selects tasks, wires models and prompts, and aggregates.
"""
