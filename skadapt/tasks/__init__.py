"""The task layer: what several stages read about evaluation tasks and datasets.

Modules:
    suite: local task suites (YAML + JSONL) — the one reader of suite files.
    local_tasks: suite tasks as mteb ``AbsTask`` objects.
    selection: task specs (mteb benchmarks, task names, suite files) -> mteb tasks, their test texts.
    runner: the encoder (prompts, embedding memo) and ``evaluate_model`` over mteb's evaluators.
    embedding_memo: per-model memo of encoded texts.
    rows: rows of a training or dev dataset with positions for error messages.
    dev: dev sets (STS, retrieval, triplets, NLI, RTE) as sentence-transformers evaluators, without the
        evaluation test texts.
    contamination: overlap between training texts and the evaluation tasks' test texts.

Stages import this layer; it imports no stage and never the recipe.
"""
