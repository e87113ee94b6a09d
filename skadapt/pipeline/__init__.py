"""The stage runner: one run directory per recipe, a manifest per stage, skip/resume, atomic stage outputs.

Layout of a run directory::

    <output_dir>/
      run.log
      trim/          sentence-transformers model + trim_report.json + manifest.json
      finetune/      sentence-transformers model + training_report.json + manifest.json
      renorm/        ...
      evaluate/      results + report + manifest.json
      .work/<stage>-<key>/   resumable scratch (training checkpoints), removed when the stage completes
      .skadapt.lock(.json)   while a run goes: its lock and who holds it (:mod:`skadapt.outputs`)

A stage is finished when ``<stage>/manifest.json`` exists with ``status: complete`` and the key of the
current stage config + inputs. Stages write into a hidden temporary directory that is renamed into place
only after success, so an interrupted stage never looks finished. One run at a time owns the directory: a
second is refused, naming the first; a stage whose directory is, lies inside or contains what it reads (the
base model, its input files) is refused before it writes. A manifest's ``sources`` records the commit
each ``hub:`` source the stage read was at.

Modules:
    run: ``run_recipe`` (the order, skip/resume, atomic stage directories, manifests).
    alone: ``run_alone``, one stage run by its command (``skadapt finetune``, ``skadapt robustness``) into
        ``--out``, its scratch keyed beside it.
    keys: the key of a stage (config, seed, language, base model, upstream keys, input files).
    sources: a skipped stage whose Hub branch has moved since it read it is warned about.
    launch: distributed launches (rank 0 writes; other ranks join distributed stages and follow).
    failures: one message for a failed stage, naming its inputs and what to do.
    runlog: ``run.log``.
"""

from skadapt.pipeline.alone import run_alone
from skadapt.pipeline.keys import stage_key
from skadapt.pipeline.launch import Launch, PipelineError
from skadapt.pipeline.run import RunHalted, StageOutcome, run_recipe

__all__ = ["Launch", "PipelineError", "RunHalted", "StageOutcome", "run_alone", "run_recipe", "stage_key"]
