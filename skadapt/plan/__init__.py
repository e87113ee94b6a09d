"""A cost plan before the first step: per stage of a recipe, the work and its estimated time, memory and disk.

``skadapt train RECIPE --plan`` prints it and exits without downloading data or running a stage.
:func:`skadapt.planning.plan_recipe` asks each stage for its plan (:attr:`skadapt.stage.Stage.plan`, in
its own package's ``plan`` module), which reads only metadata: source sizes (line counts, Parquet footers,
the Hub's dataset cards), mteb's descriptive statistics of the evaluation tasks, the model's
``config.json``; it prices the work with the rates measured on machines (``skadapt/plan/rates/*.json``,
written by ``benchmark/gpu_check.py``), on this CPU and on the GPU where a measured figure exists, and says
for each figure whether it is measured or extrapolated. What cannot be read (offline, an unreachable Hub, no
metadata) is ``unknown`` with its reason, and the plan is partial.

Modules: ``model`` (the typed results), ``rates`` (the rates files), ``models`` (architecture and
parameters), ``sizes`` (source row counts), ``tasks`` (evaluation texts), ``dev`` (dev sets), ``parts``
(pricing), ``llm`` (what the LLM stages' plans share), ``render`` (the table). This package sits below the
stages (they import it for their plans) and never imports a stage or the recipe.
"""

from __future__ import annotations

from skadapt.plan.model import Part, Plan, StagePlan
from skadapt.plan.render import render_plan

__all__ = ["Part", "Plan", "StagePlan", "render_plan"]
