"""The deployment tiers of the export stage in the published repositories.

The ONNX files go inside the model repository (``onnx/model.onnx``, ``onnx/model_qint8_<family>.onnx``),
where ``SentenceTransformer(repo_id, backend="onnx")`` finds them; the static model becomes its own
repository ``<repo_id>-static`` with a card that names its parent and its measured cost. A dims tier by
truncation is the parent with ``truncate_dim``; one on a corpus basis (a projection the parent's repository
cannot express) becomes its own repository ``<repo_id>-dims-<d>``. All only when the export was made from
the very model being published.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skadapt import artifacts
from skadapt.config import DIMS_TIER
from skadapt.publish.target import STATIC_SUFFIX, Target
from skadapt.results import EvaluationReport, ExportReport
from skadapt.tasks.backends import EXPORT_MODEL_DIR, ONNX_DIR

SPEED_KEYS = ("texts_per_s", "speedup", "size_mb", "peak_rss_mb")


def _export(target: Target) -> tuple[Path, ExportReport] | None:
    """The run's export directory and report, when its parent is the published model."""
    report = target.reports.of(ExportReport)
    stage = target.reports.stage_of(ExportReport)
    if report is None or stage is None or target.run_dir is None:
        return None
    directory = target.run_dir / stage
    parent = artifacts.resolved_path(report.parent, directory.parent)
    if not parent or Path(parent).resolve() != target.model_dir.resolve():
        return None
    return directory, report


def onnx_files(target: Target) -> list[Path]:
    """The exported ONNX files of the published model (empty without an export of it)."""
    found = _export(target)
    if found is None:
        return []
    return sorted((found[0] / EXPORT_MODEL_DIR / ONNX_DIR).glob("*.onnx"))


def static_dir(target: Target) -> Path | None:
    """The static model exported from the published model, if any."""
    found = _export(target)
    if found is None or "static" not in found[1].tiers:
        return None
    directory = found[0] / found[1].tiers["static"]
    return directory if directory.is_dir() else None


def corpus_dims_dirs(target: Target) -> dict[str, Path]:
    """The dims tiers on a corpus basis of the published model (each its own repository): tier -> its
    directory."""
    found = _export(target)
    if found is None:
        return {}
    directory, report = found
    return {
        name: directory / tier.path
        for name, tier in report.dims.items()
        if tier.basis == "corpus" and (directory / tier.path).is_dir()
    }


def tier_rows(target: Target) -> list[dict[str, Any]]:
    """Per tier of the published model: mean score and its Δ to the parent with the interval (from the
    evaluation report, where it scored the tier), texts/s, speed-up and MB (from the export report)."""
    found = _export(target)
    if found is None:
        return []
    report = found[1]
    evaluation = target.reports.of(EvaluationReport)
    means = {row.model: row.All for row in evaluation.models} if evaluation is not None else {}
    verdicts = {v.b: v for v in evaluation.verdicts if v.verdict == "tier"} if evaluation is not None else {}
    parent = next(iter(verdicts.values())).a if verdicts else None
    notes = report.deploy_notes("the exporting machine")
    rows = []
    for label in ["pytorch", *report.tiers]:
        verdict = verdicts.get(label)
        measured = report.speed.get(label) or (report.dims[label].as_json() if label in report.dims else {})
        rows.append(
            {
                "tier": label,
                "file": Path(report.tiers[label]).name if label.startswith("onnx") else None,
                "mean": means.get(parent if label == "pytorch" else label),
                "delta": verdict.mean_diff if verdict else None,
                "low": verdict.ci_low if verdict else None,
                "high": verdict.ci_high if verdict else None,
                **{k: measured.get(k) for k in SPEED_KEYS},
            }
        )
        if label in notes:  # slower than the parent where measured, or the int8 tier's verdict
            rows[-1]["note"] = notes[label]
        if label == "static":  # distilled, or trained on the parent (export.static_training)
            rows[-1]["method"] = report.static.method if report.static is not None else None
        if label in report.dims:  # truncation ("first") or a corpus basis of its own repository
            rows[-1]["basis"] = report.dims[label].basis
    return rows


def tiers_markdown(rows: list[dict[str, Any]], repo_id: str) -> str:
    """The card section: one row per tier with its quality cost, speed and size."""
    if not rows:
        return ""
    lines = [
        "## Deployment tiers",
        "",
        "Measured in one run on the same texts and CPU threads (skadapt's `export` stage); Δ: mean over the "
        "evaluation tasks against the PyTorch model the tiers came from, with its 90% interval.",
        "",
        "| tier | load with | mean | Δ [90% CI] | texts/s | × | MB |",
        "|---|---|---|---|---|---|---|",
    ]

    def loader(row: dict[str, Any]) -> str:
        if DIMS_TIER.fullmatch(row["tier"]) and row.get("basis") == "corpus":
            return f'`SentenceTransformer("{repo_id}-{row["tier"]}")`'
        if DIMS_TIER.fullmatch(row["tier"]):  # the tier's vectors before renormalization (cosine: the same)
            dim = row["tier"].removeprefix("dims-")
            return f'`SentenceTransformer("{repo_id}", truncate_dim={dim})`, then normalize'
        if row["tier"] == "static":
            return f'`SentenceTransformer("{repo_id}{STATIC_SUFFIX}")`'
        if row["file"]:
            kwargs = f'model_kwargs={{"file_name": "onnx/{row["file"]}"}}'
            return f'`SentenceTransformer("{repo_id}", backend="onnx", {kwargs})`'
        return f'`SentenceTransformer("{repo_id}")`'

    def number(value: Any, spec: str) -> str:
        return format(value, spec) if isinstance(value, int | float) else "—"

    for row in rows:
        delta = (
            f"{row['delta']:+.2f} [{row['low']:+.2f}, {row['high']:+.2f}]"
            if row["delta"] is not None
            else "—"
        )
        lines.append(
            f"| {row['tier']} | {loader(row)} | {number(row['mean'], '.2f')} | {delta} | "
            f"{number(row['texts_per_s'], '.1f')} | {number(row['speedup'], '.2f')} | "
            f"{number(row['size_mb'], '.1f')} |"
        )
    notes = [f"- **{row['note']}**" for row in rows if row.get("note")]
    return "\n".join([*lines, *(["", *notes] if notes else [])]) + "\n"


def static_card(
    rows: list[dict[str, Any]], parent_repo: str, language: str | None, license_id: str | None
) -> str:
    """The static repository's card: what it is, its parent, and its measured cost."""
    from huggingface_hub import ModelCard, ModelCardData

    static = next((r for r in rows if r["tier"] == "static"), None)
    cost = ""
    if static is not None and static["delta"] is not None:
        cost = (
            f"On the parent's evaluation tasks it scores {static['mean']:.2f} (Δ {static['delta']:+.2f}, "
            f"90% CI [{static['low']:+.2f}, {static['high']:+.2f}]) at {static['speedup']:.0f}× the parent's "
            f"texts/s, in {static['size_mb']:.1f} MB."
        )
    trained = (
        ", then trained on the parent's sentence embeddings of corpus texts (skadapt's "
        "`export.static_training`)"
        if static is not None and static.get("method") == "trained"
        else ""
    )
    data = ModelCardData(
        language=[language] if language else None,
        license=license_id,
        library_name="model2vec",
        base_model=parent_repo,
        tags=["model2vec", "static-embeddings", "sentence-transformers", "skadapt"],
    )
    text = (
        f"# {parent_repo}{STATIC_SUFFIX}\n\n"
        f"A static embedding model distilled with model2vec from [{parent_repo}](https://huggingface.co/"
        f"{parent_repo}) on its own (language-trimmed) vocabulary{trained}: one vector per token, a text's "
        f"embedding is the mean of its tokens'. {cost}\n\n"
        "```python\nfrom sentence_transformers import SentenceTransformer\n"
        f'model = SentenceTransformer("{parent_repo}{STATIC_SUFFIX}")\n```\n\n'
        "or `model2vec.StaticModel.from_pretrained(...)`. No prompts: the static model has no attention, a "
        "prompt adds the same tokens to every text.\n\n" + tiers_markdown(rows, parent_repo)
    )
    return str(ModelCard.from_template(data, template_str="---\n{{ card_data }}\n---\n\n" + text))


def dims_card(rows: list[dict[str, Any]], parent_repo: str, tier: str, license_id: str | None) -> str:
    """The card of a dims tier's own repository: what it is, its parent, and its measured cost."""
    from huggingface_hub import ModelCard, ModelCardData

    row = next((r for r in rows if r["tier"] == tier), None)
    dim = tier.removeprefix("dims-")
    cost = ""
    if row is not None and row["delta"] is not None:
        cost = (
            f"On the parent's evaluation tasks it scores {row['mean']:.2f} (Δ {row['delta']:+.2f}, 90% CI "
            f"[{row['low']:+.2f}, {row['high']:+.2f}]) with {dim}-dimensional vectors."
        )
    data = ModelCardData(
        license=license_id,
        library_name="sentence-transformers",
        base_model=parent_repo,
        tags=["sentence-transformers", "skadapt"],
    )
    text = (
        f"# {parent_repo}-{tier}\n\n"
        f"[{parent_repo}](https://huggingface.co/{parent_repo}) with {dim}-dimensional embeddings: its "
        f"embedding projected on the top {dim} directions of its embeddings of in-language corpus text (a "
        f"`Dense` layer), then normalized — the same encoder, smaller vectors. {cost}\n\n"
        "```python\nfrom sentence_transformers import SentenceTransformer\n"
        f'model = SentenceTransformer("{parent_repo}-{tier}")\n```\n\n' + tiers_markdown(rows, parent_repo)
    )
    return str(ModelCard.from_template(data, template_str="---\n{{ card_data }}\n---\n\n" + text))
