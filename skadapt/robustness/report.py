"""Robustness profiles as Markdown and figures (matplotlib): a delta heatmap (model x transformation), a
Hodges-Lehmann forest plot with Holm-adjusted marks, and an original-vs-transformed dumbbell per model."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from skadapt.results import RobustnessReport
from skadapt.robustness.transforms import AXES


def _f(value: float, digits: int = 2, sign: bool = True) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def markdown(report: dict[str, Any], error_table: str, judge_table: str = "") -> str:
    """The profile tables, statistics, the judge's ratings, diversity and the output checks' error rates
    (``judge_table``: the judge's own)."""
    stats = report["statistics"]["models"]
    transforms = report["transforms"]
    llm, sampling = report["llm"], report["sampling"]
    axes = [a for a in AXES if any(t in AXES[a] for t in transforms)]
    lines = [
        "# Robustness",
        "",
        f"Models: {', '.join(report['models'])}. Tasks: {', '.join(report['tasks'])}. Seeds: "
        f"{', '.join(map(str, report['seeds']))}. LLM: {llm['backend']} `{llm['model']}`, "
        f"temperature {sampling['temperature']}, top_p {sampling['top_p']}.",
        "",
        "Δ = transformed − original on the same surviving items (main score, points), mean over tasks "
        "and seeds.",
        "",
        "## Profile by axis",
        "",
        "| model | " + " | ".join(axes) + " | Total |",
        "|---" * (len(axes) + 2) + "|",
    ]
    for label, data in stats.items():
        cells = [_f(data["axes"].get(a, math.nan)) for a in axes]
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {_f(data['total'])} |")
    lines += [
        "",
        "## Profile by transformation",
        "",
        "| model | transformation | mean Δ | SD over seeds | HL shift [95% Walsh CI] | bootstrap CI "
        "| Wilcoxon p | Holm p | excluded items |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, data in stats.items():
        for name, s in data["transforms"].items():
            mark = " *" if s["significant"] else ""
            walsh = s["hl_ci_walsh"]
            boot = s["hl_ci_bootstrap"]
            lines.append(
                f"| {label} | {name}{mark} | {_f(s['mean_delta'])} | "
                f"{_f(s['sd_across_seeds'], sign=False)} | "
                f"{_f(s['hl_shift'])} [{_f(walsh[0])}, {_f(walsh[1])}] | [{_f(boot[0])}, {_f(boot[1])}] | "
                f"{_f(s['wilcoxon_p'], 3, False)} | {_f(s['holm_p'], 3, False)} | {s['excluded_items']} |"
            )
    lines.append("")
    lines.append("\\* Holm-adjusted Wilcoxon p < 0.05 across the transformations of a model.")
    if report.get("judge"):
        lines += judge_section(report["judge"])
    if report["statistics"]["kendall_tau"]:
        lines += ["", "## Ranking stability (Kendall τ, original vs transformed, per dataset)", ""]
        lines += ["| transformation | mean τ | SD | datasets |", "|---|---|---|---|"]
        for name, tau in report["statistics"]["kendall_tau"].items():
            lines.append(f"| {name} | {tau['mean']:.3f} | {tau['sd']:.3f} | {tau['datasets']} |")
    lines += [
        "",
        "## Diversity of the rewrites",
        "",
        "| transformation | pairs | word edit distance | length ratio | embedding drift (1 − cos) |",
        "|---|---|---|---|---|",
    ]
    for name, d in report["diversity"].items():
        lines.append(
            f"| {name} | {d['pairs']} | {_f(d.get('word_edit_distance', math.nan), 3, False)} | "
            f"{_f(d.get('length_ratio', math.nan), 2, False)} | "
            f"{_f(d.get('embedding_drift', math.nan), 4, False)} |"
        )
    if report.get("skipped_variants"):
        lines += ["", "## Skipped (too few rewrites survived their checks: fewer than 5 items or 10%)", ""]
        lines += ["| task | transformation | seed | items | failed |", "|---|---|---|---|---|"]
        lines += [
            f"| {v['task']} | {v['transform']} | {v['seed']} | {v['items']} | {v['excluded']} |"
            for v in report["skipped_variants"]
        ]
    if report.get("rejected_transforms"):
        lines += ["", "## Not scored: rejected by the human validation (robustness.validated)", ""]
        lines += ["| transformation | mean quality | mean fluency |", "|---|---|---|"]
        lines += [
            f"| {name} | {v.get('quality', v.get('reason', '–'))} | {v.get('fluency', '–')} |"
            for name, v in report["rejected_transforms"].items()
        ]
    lines += ["", "## Output checks", "", error_table, ""]
    if judge_table:
        lines += ["### The judge's output checks", "", judge_table, ""]
    return "\n".join(lines)


def judge_section(judge: dict[str, Any]) -> list[str]:
    """The judge's ratings per transformation (over its seeds, then per seed) as Markdown lines."""
    lines = [
        "",
        "## Judge: meaning kept (0–5)",
        "",
        f"Judge: {judge['backend']} `{judge['model']}`, temperature {judge['temperature']}, prompt "
        f"`{judge['prompt_version']}`. Each rewrite that passed the output checks is rated against its "
        f"original; rated below {judge['threshold']:g} or not rated: failed, excluded like failed checks. "
        "Counts are of distinct texts.",
        "",
        "| transformation | seed | rated | mean | median | below threshold | not rated |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, found in judge["transforms"].items():
        rows = [("all", found), *found["seeds"].items()]
        lines += [
            f"| {name} | {seed} | {s['rated']} | {_f(s['mean'], sign=False)} | {_f(s['median'], sign=False)} "
            f"| {s['below_threshold']} | {s['unrated']} |"
            for seed, s in rows
        ]
    return lines


def figures(report: dict[str, Any], directory: Path) -> list[Path]:
    """The three figures as PNG files."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    directory.mkdir(parents=True, exist_ok=True)
    stats = report["statistics"]["models"]
    models = list(stats)
    transforms = report["transforms"]
    written = []

    grid = np.array(
        [[stats[m]["transforms"].get(t, {}).get("mean_delta", np.nan) for t in transforms] for m in models]
    )
    fig, ax = plt.subplots(figsize=(1.2 * len(transforms) + 2.5, 0.6 * len(models) + 1.8))
    bound = np.nanmax(np.abs(grid)) if np.isfinite(grid).any() else 1.0
    image = ax.imshow(grid, cmap="RdBu", vmin=-bound, vmax=bound, aspect="auto")
    ax.set_xticks(range(len(transforms)), transforms, rotation=35, ha="right")
    ax.set_yticks(range(len(models)), models)
    for i in range(len(models)):
        for j in range(len(transforms)):
            if np.isfinite(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:+.1f}", ha="center", va="center", fontsize=8)
    fig.colorbar(image, ax=ax, label="mean Δ (points)")
    ax.set_title("Robustness: mean Δ by model and transformation")
    fig.tight_layout()
    written.append(_save(fig, directory / "delta_heatmap.png"))

    fig, ax = plt.subplots(figsize=(7, 0.45 * len(transforms) * len(models) + 1.5))
    y = 0
    labels = []
    for m_index, model in enumerate(models):
        for transform in transforms:
            s = stats[model]["transforms"].get(transform)
            if s is None:
                continue
            low, high = s["hl_ci_walsh"]
            ax.errorbar(
                s["hl_shift"],
                y,
                xerr=[[s["hl_shift"] - low], [high - s["hl_shift"]]],
                fmt="o",
                color=f"C{m_index}",
                capsize=3,
            )
            labels.append(f"{model} · {transform}{' *' if s['significant'] else ''}")
            y += 1
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("Hodges–Lehmann shift (points), 95% Walsh CI; * Holm p < 0.05")
    fig.tight_layout()
    written.append(_save(fig, directory / "hl_forest.png"))

    fig, axes = plt.subplots(
        1, len(models), figsize=(4 * len(models), 0.4 * len(transforms) + 1.8), squeeze=False
    )
    for ax, model in zip(axes[0], models, strict=True):
        for j, transform in enumerate(transforms):
            s = stats[model]["transforms"].get(transform)
            if s is None:
                continue
            ax.plot([s["mean_original"], s["mean_transformed"]], [j, j], color="grey", linewidth=1)
            ax.scatter([s["mean_original"]], [j], color="C0", label="original" if j == 0 else None, zorder=3)
            ax.scatter(
                [s["mean_transformed"]], [j], color="C3", label="transformed" if j == 0 else None, zorder=3
            )
        ax.set_yticks(range(len(transforms)), transforms)
        ax.invert_yaxis()
        ax.set_title(model)
        ax.set_xlabel("mean main score (points)")
    axes[0][0].legend(loc="best", fontsize=8)
    fig.tight_layout()
    written.append(_save(fig, directory / "dumbbell.png"))
    return written


def _save(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_reports(report: dict[str, Any], error_table: str, out_dir: Path, judge_table: str = "") -> None:
    """``robustness.md`` and ``figures/*.png``."""
    text = markdown(report, error_table, judge_table)
    (out_dir / RobustnessReport.MARKDOWN).write_text(text, encoding="utf-8")
    figures(report, out_dir / "figures")
