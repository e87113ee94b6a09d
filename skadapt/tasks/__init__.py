"""The task layer: what several stages read about evaluation tasks and datasets.

Modules:
    suite: local task suites (YAML + JSONL) — the one reader of suite files.
    local_tasks: suite tasks as mteb ``AbsTask`` objects.
    selection: task specs (mteb benchmarks, task names, suite files) -> mteb tasks, their test texts.
    runner: the encoder (prompts, embedding memo) and ``evaluate_model`` over mteb's evaluators.
    embedding_memo: per-model memo of encoded texts.
    rows: rows of a training or dev dataset with positions for error messages.
    dev: dev sets (STS, retrieval with optional distractor passages, triplets, NLI, RTE, bitext,
        clustering, classification) as sentence-transformers evaluators, without the evaluation test texts.
    bitext_dev, cluster_dev, class_dev: the evaluators of the bitext, clustering and classification dev
        sets (mteb's scores of those task types).
    dev_scores: the dev sets' scores computed from embeddings, per example, and their paired bootstrap.
    encode_once: each distinct dev text encoded once (shared by evaluators and dev_scores).
    contamination: overlap between training texts and the evaluation tasks' test texts.

Stages import this layer; it imports no stage and never the recipe.
"""
