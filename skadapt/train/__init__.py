"""Fine-tuning: task datasets, losses, contamination check and the sentence-transformers trainer.

Modules:
    rows: read rows (dicts) from a Hub dataset or a local file, with row positions for error messages.
    datasets: turn recipe dataset entries (pairs, nli, sts, rte) into training datasets + prompts.
    losses: loss per dataset and the batch sampler they need.
    evaluation: the optional dev-set evaluator (best-checkpoint selection).
    contamination: overlap between training texts and the evaluation suite's test texts.
    trainer: ``SentenceTransformerTrainer`` setup, checkpoint resume, the training report.
    stage: ``run_stage`` of the pipeline's ``finetune`` stage (also used by ``skadapt finetune``).
"""
