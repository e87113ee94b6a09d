"""People beside the models on the same items: per task the human score, the models' range, Human's rank,
and the tasks where a model beats people; a HUME-style figure (human position within the model range)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def comparison(human: Mapping[str, Any], model_scores: Sequence[Any]) -> list[dict[str, Any]]:
    """Rows per task: human mean/SD, worst and best model, Human's rank among models + Human (1 = best);
    where the human mean is not defined, None (rank too) and its ``human_note``."""
    rows = []
    for task, entry in human.items():
        scores = {s.model: s.score for s in model_scores if s.task == task}
        if not scores:
            continue
        human = entry["mean"]
        better = sorted(m for m, v in scores.items() if v > human) if human is not None else []
        rows.append(
            {
                "task": task,
                "type": entry["type"],
                "human": human,
                "human_sd": entry["sd"],
                **({"human_note": entry.get("mean_note")} if human is None else {}),
                "annotators": len(entry["annotators"]),
                "models": scores,
                "worst": min(scores.values()),
                "best": max(scores.values()),
                "rank": 1 + len(better) if human is not None else None,
                "of": len(scores) + 1,
                "models_above_human": better,
            }
        )
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """The comparison table in Markdown."""
    lines = [
        "## Human baseline (same items)",
        "",
        "| task | type | Human (mean ± SD, n) | models worst – best | Human's rank | models above Human |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        human = f"{r['human']:.2f} ± {r['human_sd']:.2f}" if r["human"] is not None else r["human_note"]
        rank = f"{r['rank']} of {r['of']}" if r["rank"] is not None else "–"
        lines.append(
            f"| {r['task']} | {r['type']} | {human} ({r['annotators']}) | "
            f"{r['worst']:.2f} – {r['best']:.2f} | {rank} | {', '.join(r['models_above_human']) or '–'} |"
        )
    lines += ["", *score_table(rows)]
    beaten = [r["task"] for r in rows if r["models_above_human"]]
    lines += [
        "",
        f"Models beat people on {len(beaten)} of {sum(r['human'] is not None for r in rows)} tasks"
        + (f": {', '.join(beaten)}." if beaten else "."),
    ]
    return "\n".join(lines) + "\n"


def score_table(rows: list[dict[str, Any]]) -> list[str]:
    """Models and Human as rows over the annotated tasks (the same items for all), with their mean."""
    if not rows:
        return []
    models = list(dict.fromkeys(m for r in rows for m in r["models"]))  # in evaluation order
    header = "| model | " + " | ".join(r["task"] for r in rows) + " | mean |"
    lines = ["Scores on the annotated items:", "", header, "|---" * (len(rows) + 2) + "|"]
    for label in [*models, "Human"]:
        values = [r["human"] if label == "Human" else r["models"].get(label) for r in rows]
        shown = [f"{v:.2f}" if v is not None else "–" for v in values]
        present = [v for v in values if v is not None]
        mean = f"{sum(present) / len(present):.2f}" if present else "–"
        name = "**Human**" if label == "Human" else label
        lines.append(f"| {name} | " + " | ".join(shown) + f" | {mean} |")
    return lines


def figure(rows: list[dict[str, Any]], path: Path) -> Path:
    """Per task: the models' scores as dots on their range, Human as a star."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 0.5 * len(rows) + 1.5))
    starred = False
    for y, row in enumerate(rows):
        ax.plot([row["worst"], row["best"]], [y, y], color="lightgrey", linewidth=6, solid_capstyle="round")
        ax.scatter(
            list(row["models"].values()),
            [y] * len(row["models"]),
            color="C0",
            zorder=3,
            label="models" if y == 0 else None,
        )
        if row["human"] is not None:  # not defined: no star
            label = None if starred else "Human"
            ax.scatter([row["human"]], [y], marker="*", s=180, color="C3", zorder=4, label=label)
            starred = True
    ax.set_yticks(range(len(rows)), [r["task"] for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel("main score (points)")
    ax.set_title("Human within the model range, per task")
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
