"""The recipe's ``publish`` stage: the run's final model with its card, to the Hub (or a dry run)."""

from __future__ import annotations

import logging
from pathlib import Path

from skadapt.plan.model import StagePlan
from skadapt.publish.config import PublishConfig
from skadapt.publish.errors import PublishError
from skadapt.publish.model import planned_repositories, publish_model
from skadapt.publish.target import find_target, target_for_run
from skadapt.results import PublishSummary
from skadapt.results.base import StageResult
from skadapt.stage import PlanContext, Stage, StageContext

log = logging.getLogger("skadapt")


def run_stage(context: StageContext[PublishConfig], *, path: Path | None = None) -> PublishSummary:
    """Publish the run's final model; the stage directory keeps ``upload/`` and ``publish.json``.

    ``path``: what ``skadapt publish`` was given instead (a run directory, its final model, or a model
    directory: :func:`~skadapt.publish.target.find_target`).

    Raises:
        skadapt.publish.errors.PublishError: The recipe makes no model, no token, or the Hub refused.
    """
    if not context.stages:
        raise PublishError(
            "publish: its context lists no stages (StageContext.stages): nothing to read the reports by"
        )
    if path is not None:
        target = find_target(path, context.config.repo_id, stages=context.stages)
    else:
        target = target_for_run(context.run.run_dir, Path(context.input_model), context.stages)
    language = context.run.language.code if context.run.language is not None else None
    report = publish_model(
        target, context.config, context.out_dir, language=language, previous=context.previous_dir
    )
    for warning in report["warnings"]:
        log.warning("publish: %s", warning)
    uploaded = report.get("uploaded") or {}
    repositories = planned_repositories(report)
    done = "uploaded" if uploaded else "dry run, nothing uploaded"
    log.info("publish: %s, %d repositories (%s)", target.model_dir, len(repositories), done)
    for repository in repositories:
        log.info("publish: %s", repository.line())
    return PublishSummary.of(
        {
            "repo_id": report["repo_id"],
            "dry_run": report["dry_run"],
            "files": len(report["files"]),
            "bytes": sum(f["bytes"] for f in report["files"]),
            "license": report["license"],
            "url": uploaded.get("url"),
            "commit_url": uploaded.get("commit_url"),
            "repositories": [r.model_dump() for r in repositories],
        }
    )


def plan(config: PublishConfig, ctx: PlanContext) -> StagePlan:
    """Its cost plan: none to speak of (an upload)."""
    return StagePlan(stage="publish", lines=["uploads the final model: no compute"])


def summary(config: PublishConfig, result: StageResult | None, stage_dir: Path) -> list[str]:
    """Each repository it uploaded to, or would have (a dry run)."""
    if not isinstance(result, PublishSummary):
        return []
    done = "dry run, nothing uploaded" if result.dry_run else "uploaded"
    return [f"publish ({done}) {repository.line()}" for repository in result.repositories]


STAGE = Stage("publish", PublishConfig, run_stage, result=PublishSummary, plan=plan, summary=summary)
