"""Fine-tuning: task datasets, losses and the sentence-transformers trainer (rows, dev sets and the
contamination check live in :mod:`skadapt.tasks`).

Modules:
    datasets: turn recipe dataset entries (pairs, nli, sts, rte) into training datasets + prompts.
    losses: loss per dataset and the batch sampler they need; gist: the guided losses and their guide.
    negatives: hard negatives of pairs datasets (candidates, cache, report); mining: the mining itself.
    trainer: ``SentenceTransformerTrainer`` setup, checkpoint resume, the training report.
    checkpoints: the completion marker of a checkpoint; which one a rerun resumes from (set aside: damaged).
    stage: ``run_stage`` of the pipeline's ``finetune`` stage (also used by ``skadapt finetune``).
"""
