"""The ``finetune`` stage's section of the published model card: the training datasets (sizes, losses,
licenses), the hyperparameters and the dev sets' power."""

from __future__ import annotations

from typing import Any

from skadapt.cards import UNKNOWN, DataLicense, number, power_table, table
from skadapt.results import TrainingReport
from skadapt.stage import CardContext


def card_section(ctx: CardContext) -> list[str]:
    """Its card section (:attr:`skadapt.stage.Stage.card`)."""
    report = ctx.report_as(TrainingReport)
    return training_section(report, ctx.config, ctx.non_default_config, ctx.licenses)


def training_section(
    report: TrainingReport | None,
    config: dict[str, Any],
    non_default: dict[str, Any] | None,
    licenses: list[DataLicense],
) -> list[str]:
    """Training datasets (sizes, losses, licenses) and hyperparameters.

    ``config``: the ``finetune`` section the run recorded (its datasets and anchor, when there is no
    report); ``non_default``: its fields that differ from their defaults (the hyperparameters shown; None
    when not recorded).
    """
    if report is None and not config:
        return []
    by_name = {item.name: item for item in licenses}
    lines = ["## Training data", ""]
    rows = []
    datasets = (
        [(d.name, d.kind, d.source, d.examples, d.loss) for d in report.datasets]
        if report is not None
        else [
            (str(d.get("name")), str(d.get("kind")), d.get("source"), None, d.get("loss"))
            for d in config.get("datasets") or []
        ]
    )
    for name, kind, source, examples, loss in datasets:
        found = by_name.get(name)
        license_text = (found.license if found else None) or UNKNOWN
        if found and found.restrictions:
            license_text += f" (**{', '.join(found.restrictions)}**)"
        rows.append([name, kind, f"`{source}`", number(examples), str(loss or "-"), license_text])
    lines += table(["dataset", "kind", "source", "examples", "loss", "license"], rows)
    lines += ["", *hyperparameters(report, config, non_default), ""]
    return lines + dev_power_lines(report)


def dev_power_lines(report: TrainingReport | None) -> list[str]:
    """The dev sets the choices were made on, with their power for the starting model (none recorded: no
    lines)."""
    power = report.dev.power if report is not None and report.dev is not None else []
    if not power:
        return []
    intro = (
        "Dev sets the checkpoint (and any interpolation) was chosen on, scored for the starting model; "
        '"detects ≥" is the smallest difference each tells apart with 80% power at alpha 0.05:'
    )
    return [intro, "", *power_table(power, "start score"), ""]


def hyperparameters(
    report: TrainingReport | None, config: dict[str, Any], non_default: dict[str, Any] | None
) -> list[str]:
    """The training hyperparameters as a bullet list: the recipe's non-default settings (as
    sentence-transformers' trainer lists its non-default training arguments; nested sections such as the
    datasets and the anchor have their own lines), then what the run did."""
    lines = ["Hyperparameters:", ""]
    settings = (non_default or {}).items()
    shown = [f"`{name}` {value}" for name, value in settings if not isinstance(value, dict | list)]
    if non_default is None and report is not None:
        shown.append(f"`sampling` {report.sampling}")
    if not shown:
        shown.append("(not recorded)" if non_default is None else "skadapt's defaults")
    lines.append("- " + ", ".join(shown))
    if report is not None:
        steps = report.steps
        lines.append(f"- steps: {steps.done} of {steps.planned} planned, seed {report.seed}")
        if report.world_size > 1:
            lines.append(f"- processes: {report.world_size}")
    anchor = config.get("anchor")
    if anchor:
        lines.append(
            f"- anchor (distillation to the input model's own embeddings): {anchor.get('samples')} sentences "
            f"of `{anchor.get('corpus')}`, weight {anchor.get('weight')}"
        )
    interpolation = report.interpolation if report is not None else None
    if interpolation is not None:
        lines.append(
            f"- weight interpolation with the input model: alpha {interpolation.chosen} chosen on the dev "
            f"set ({interpolation.metric})"
        )
    loss = report.train_metrics.get("train_loss") if report is not None else None
    if loss is not None:
        lines.append(f"- mean training loss {loss:.4f}")
    return lines
