"""``trim_report.json``: what was trimmed, from what, and how well the result matches the original."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skadapt import artifacts

REPORT_FILE = "trim_report.json"


def build_report(
    *,
    model: str,
    config: dict[str, Any],
    tokenizer_kind: str,
    counts: dict[str, Any],
    extra_counts: dict[str, Any] | None,
    selection: dict[str, Any],
    vocab_before: int,
    rows_before: int,
    rows_after: int,
    parameters_before: int,
    parameters_after: int,
    parity: dict[str, Any],
) -> dict[str, Any]:
    """The report as a dict (see :func:`write_report`)."""
    return {
        "model": model,
        "tokenizer": tokenizer_kind,
        "config": config,
        "source": config.get("corpus"),
        "vocab_size": config.get("vocab_size"),
        "min_frequency": config.get("min_frequency"),
        "counts": counts,
        "extra_counts": extra_counts,
        "counts_fingerprint": counts.get("fingerprint"),
        "selection": selection,
        "vocab": {"before": vocab_before, "after": rows_after},
        "embedding_rows": {"before": rows_before, "after": rows_after},
        "parameters": {
            "before": parameters_before,
            "after": parameters_after,
            "ratio": round(parameters_after / parameters_before, 6) if parameters_before else None,
        },
        "parity": parity,
        "versions": artifacts.library_versions(),
    }


def write_report(out_dir: Path, report: dict[str, Any]) -> Path:
    """Write ``trim_report.json`` into ``out_dir``."""
    path = out_dir / REPORT_FILE
    artifacts.write_json(path, report)
    return path
