"""Human validation of LLM rewrites (HTEB/PTEB): sheets of a seeded sample of each transformation's rewrites
rated on two 1-5 criteria, easy dummy pairs to catch careless raters, and the verdict the robustness stage
reads (``robustness.validated``): a transformation is kept only if its mean rating is at least the threshold
on both criteria.

Layout of a sheets directory::

    <dir>/sheets/annotator_<n>.csv, guidelines.md   hand these out; fill `quality` and `fluency` (1-5)
    <dir>/key.jsonl                                 item -> transformation, or the dummy and its expected side
    <dir>/export.json                               the sheet names written (only those are read back)
    <dir>/validation.json, validation.md            written by `skadapt annotate agreement <dir>`
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np

from skadapt.annotate.agreement import (
    Notes,
    ac2_undefined,
    alpha_undefined,
    gwet_ac2,
    krippendorff_alpha,
    one_value,
    put,
    shown,
)
from skadapt.annotate.sheetio import (
    SheetError,
    SheetItem,
    check,
    number,
    opaque_id,
    read_key,
    read_sheets,
    record_sheets,
    recorded_sheets,
    write_key,
    write_sheets,
)
from skadapt.artifacts import atomic_dir

SHEETS = "sheets"
KEY = "key.jsonl"
SHOWN = ("original", "rewrite")
CRITERIA = ("quality", "fluency")
ANSWERS = {criterion: number(1, 5, whole=True) for criterion in CRITERIA}
VERDICT = "validation.json"
DUMMY_PASS = 0.8
"""A rater is rejected who rates fewer than this share of the dummy pairs on their obvious side."""
SCALE = [1, 2, 3, 4, 5]

GUIDELINES = {
    "slk": """\
# Pokyny na hodnotenie prepísaných textov

Každý riadok obsahuje pôvodný text a jeho prepis. Do stĺpcov napíšte celé číslo 1 až 5:

- `quality` – kvalita prepisu vrátane zachovania významu: 5 = význam úplne zachovaný a prepis robí, čo
  mal (napr. parafráza, preklep, iný slovosled), 1 = význam stratený alebo iný text.
- `fluency` – plynulosť a gramatickosť prepisu ako textu v jazyku (chyby, ktoré mal prepis zámerne vniesť,
  napr. preklepy, nehodnoťte prísnejšie, než si úloha vyžaduje): 5 = prirodzený text, 1 = nezrozumiteľný.

Hodnoťte každý riadok samostatne, nemeňte stĺpce ani `item_id`.
""",
    "default": """\
# Guidelines for rating rewritten texts

Each row holds an original text and its rewrite. In each column write a whole number from 1 to 5:

- `quality` - how good the rewrite is, meaning preserved included: 5 = the meaning is fully kept and the
  rewrite does what it should (a paraphrase, typos, another word order ...), 1 = the meaning is lost or it
  is another text.
- `fluency` - how fluent and grammatical the rewrite reads in its language (errors the rewrite was meant to
  add, such as typos, are not held against it beyond what the task asks): 5 = natural, 1 = unintelligible.

Rate every row on its own; do not change the columns or the `item_id`.
""",
}


def read_rewrites(robustness_dir: Path) -> dict[str, list[tuple[str, str]]]:
    """Transformation -> its successful (original, rewrite) pairs over every seed, from ``rewrites/``.

    Raises:
        SheetError: No ``rewrites/*.jsonl`` in the directory.
    """
    files = sorted((robustness_dir / "rewrites").glob("*_s*.jsonl"))
    if not files:
        raise SheetError(f"{robustness_dir}: no rewrites/*.jsonl (give a robustness output directory)")
    found: dict[str, list[tuple[str, str]]] = {}
    for path in files:
        transform = path.stem.rsplit("_s", 1)[0]
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else {}
            if row.get("rewritten") and not row.get("failed"):
                found.setdefault(transform, []).append((row["original"], row["rewritten"]))
    return found


def export_rewrite_sheets(
    rewrites: dict[str, list[tuple[str, str]]],
    out_dir: Path,
    *,
    per_transform: int,
    annotators: int,
    dummies: int,
    seed: int,
    language: str,
) -> dict[str, Any]:
    """Write the sheets: ``per_transform`` seeded pairs of each transformation and ``dummies`` easy pairs
    (half an original beside itself: obviously kept; half beside an unrelated original: obviously lost),
    every sheet in its own order; which item is what stays in the key. ``out_dir`` is replaced, and
    appears only when complete."""
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    for transform in sorted(rewrites):
        pairs = sorted(set(rewrites[transform]))
        for original, rewrite in rng.sample(pairs, min(per_transform, len(pairs))):
            items.append({"transformation": transform, "original": original, "rewrite": rewrite})
    originals = sorted({item["original"] for item in items})
    if dummies and len(originals) < 2:
        raise SheetError("dummy pairs need at least two different original texts")
    for index in range(dummies):
        text = rng.choice(originals)
        if index % 2 == 0:
            items.append({"dummy": "positive", "original": text, "rewrite": text})
        else:
            other = rng.choice([o for o in originals if o != text])
            items.append({"dummy": "negative", "original": text, "rewrite": other})
    for position, item in enumerate(items):
        item["item_id"] = opaque_id(f"{position}\x1f{item['original']}\x1f{item['rewrite']}", seed)
    with atomic_dir(out_dir) as tmp:
        write_key(tmp / KEY, items)
        names = write_sheets(
            tmp / SHEETS,
            [SheetItem(item["item_id"], {column: item[column] for column in SHOWN}) for item in items],
            ANSWERS,
            annotators=annotators,
            seed=seed,
            guidelines=GUIDELINES.get(language, GUIDELINES["default"]),
        )
        record_sheets(tmp, {tmp / SHEETS: names})
    return {
        "items": len(items),
        "dummies": dummies,
        "annotators": annotators,
        "transformations": len(rewrites),
    }


def is_rewrite_sheets(directory: Path) -> bool:
    """Whether a sheets directory holds rewrite sheets (its key names transformations or dummies)."""
    path = directory / KEY
    if not path.is_file():
        return False
    first = next((line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()), "")
    return bool(first) and ("transformation" in json.loads(first) or "dummy" in json.loads(first))


def _dummy_passed(kind: str, quality: float) -> bool:
    return quality >= 4 if kind == "positive" else quality <= 2


def drift_vs_rating(
    pairs: list[tuple[str, str]], ratings: list[float], model: str, *, resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """HTEB's check of the embedding space against people: per item the embedding drift (1 - cos of the
    original and its rewrite under ``model``) vs the mean human quality rating, as Spearman's rho with a
    percentile bootstrap 95% CI over items (a good embedding drifts less where people see the meaning kept,
    so rho should be negative)."""
    from scipy.stats import spearmanr
    from sentence_transformers import SentenceTransformer

    encoder = SentenceTransformer(model, device="cpu")
    a = encoder.encode([o for o, _ in pairs], normalize_embeddings=True)
    b = encoder.encode([r for _, r in pairs], normalize_embeddings=True)
    drift = 1 - (a * b).sum(axis=1)
    human = np.asarray(ratings, dtype=float)
    result: dict[str, Any] = {"model": model, "items": len(pairs)}
    reason = one_value({"drift": drift, "mean quality": human}, "value")
    put(result, "spearman", lambda: spearmanr(drift, human).statistic, reason)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(resamples):
        index = rng.integers(0, len(pairs), len(pairs))
        if len(np.unique(human[index])) > 1 and len(np.unique(drift[index])) > 1:
            draws.append(spearmanr(drift[index], human[index]).statistic)
    result["ci95"] = [float(bound) for bound in np.percentile(draws, [2.5, 97.5])] if draws else None
    if not draws:
        result["ci95_note"] = "not defined: no resample has two or more values on both sides"
    return result


def _agreement(entry: dict[str, Any], criterion: str, matrix: np.ndarray) -> None:
    """``<criterion>_ac2`` and ``<criterion>_alpha`` (ordinal) of items x raters into ``entry``; where one is
    not defined (one rater kept, one rating value), None and a ``_note`` saying why."""
    if matrix.shape[1] < 2:
        for name in ("ac2", "alpha"):
            put(entry, f"{criterion}_{name}", lambda: None, "one rater kept (agreement needs two)")
        return
    put(entry, f"{criterion}_ac2", lambda: gwet_ac2(matrix, SCALE), ac2_undefined(matrix))
    put(
        entry,
        f"{criterion}_alpha",
        lambda: krippendorff_alpha(matrix.T, "ordinal"),
        alpha_undefined(matrix.T),
    )


def validate(
    directory: Path, *, threshold: float = 3.0, dummy_pass: float = DUMMY_PASS, model: str | None = None
) -> dict[str, Any]:
    """Read the filled sheets; reject raters failing the dummies; per transformation the mean of each
    criterion over the kept raters, Gwet's AC2 (ordinal) and Krippendorff's alpha, and the verdict
    (accepted when both means reach ``threshold``). Writes ``validation.json`` and ``validation.md``.

    Raises:
        SheetError: Every problem of the sheets, or no rater left after the dummy check.
    """
    key = read_key(directory / KEY)
    problems: list[str] = []
    folder = directory / SHEETS
    ratings = read_sheets(folder, set(key), ANSWERS, problems, recorded_sheets(directory, folder))
    check(problems, f"the sheets under {directory / SHEETS}")
    raters: dict[str, dict[str, Any]] = {}
    for rater, answers in ratings.items():
        dummies = [(key[i]["dummy"], v["quality"]) for i, v in answers.items() if key[i].get("dummy")]
        passed = sum(_dummy_passed(kind, quality) for kind, quality in dummies)
        share = passed / len(dummies) if dummies else None
        raters[rater] = {
            "dummies": len(dummies),
            "passed": passed,
            "kept": share is None or share >= dummy_pass,
        }
    kept = [rater for rater, facts in raters.items() if facts["kept"]]
    if not kept:
        raise SheetError(f"{directory}: every rater failed the dummy pairs; nothing to validate")
    transforms: dict[str, Any] = {}
    for transform in sorted({row["transformation"] for row in key.values() if "transformation" in row}):
        items = sorted(i for i, row in key.items() if row.get("transformation") == transform)
        entry: dict[str, Any] = {"items": len(items)}
        for criterion in CRITERIA:
            matrix = np.array(
                [[ratings[r].get(i, {}).get(criterion, np.nan) for r in kept] for i in items], dtype=float
            )
            entry[criterion] = float(np.nanmean(matrix))
            _agreement(entry, criterion, matrix)
        entry["accepted"] = all(entry[c] >= threshold for c in CRITERIA)
        transforms[transform] = entry
    drift = None
    if model is not None:
        rated = sorted(i for i, row in key.items() if "transformation" in row)
        means = [np.nanmean([ratings[r].get(i, {}).get("quality", np.nan) for r in kept]) for i in rated]
        usable = [(i, m) for i, m in zip(rated, means, strict=True) if not np.isnan(m)]
        drift = drift_vs_rating(
            [(key[i]["original"], key[i]["rewrite"]) for i, _ in usable], [m for _, m in usable], model
        )
    report = {
        "drift_vs_quality": drift,
        "threshold": threshold,
        "dummy_pass": dummy_pass,
        "raters": raters,
        "kept_raters": kept,
        "transformations": transforms,
        "accepted": sorted(t for t, e in transforms.items() if e["accepted"]),
        "rejected": sorted(t for t, e in transforms.items() if not e["accepted"]),
    }
    (directory / VERDICT).write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    (directory / "validation.md").write_text(markdown(report) + "\n", encoding="utf-8")
    return report


def markdown(report: dict[str, Any]) -> str:
    """The verdict table: per transformation the means, AC2 and the decision."""

    notes = Notes()

    def cell(name: str, e: dict[str, Any], column: str) -> str:
        return notes.cell(e[column], e.get(f"{column}_note"), name, column)

    dropped = [r for r, facts in report["raters"].items() if not facts["kept"]]
    lines = [
        f"Raters kept: {', '.join(report['kept_raters'])}"
        + (f"; rejected (failed the dummy pairs): {', '.join(dropped)}" if dropped else ""),
        "",
        f"Accepted: mean quality and mean fluency both >= {report['threshold']:g}.",
        "",
        "| transformation | items | quality | fluency | AC2 quality | AC2 fluency | verdict |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for name, e in report["transformations"].items():
        verdict = "accepted" if e["accepted"] else "rejected"
        lines.append(
            f"| {name} | {e['items']} | {e['quality']:.2f} | {e['fluency']:.2f} | "
            f"{cell(name, e, 'quality_ac2')} | {cell(name, e, 'fluency_ac2')} | {verdict} |"
        )
    lines += ["", *notes.lines()] if notes.lines() else []
    drift = report.get("drift_vs_quality")
    if drift:
        rho = shown(drift["spearman"], drift.get("spearman_note"))
        if drift["ci95"] is not None:
            rho += " [{:.3f}, {:.3f}]".format(*drift["ci95"])
        elif drift["spearman"] is not None:
            rho += f" (95% CI {drift['ci95_note']})"
        lines += [
            "",
            f"Embedding drift (1 - cos, {drift['model']}) vs mean human quality over {drift['items']} "
            f"rewrites: Spearman {rho} (negative: the model drifts less where people see the meaning kept).",
        ]
    return "\n".join(lines)


def validated_transforms(path: Path, transforms: list[str]) -> tuple[list[str], dict[str, Any]]:
    """The transformations a verdict accepts among ``transforms``, and the rejected ones with their means.

    A transformation the verdict does not cover is rejected too (it was not validated).

    Raises:
        SheetError: The file is missing or not a verdict.
    """
    if not Path(path).is_file():
        raise SheetError(
            f"robustness.validated: {path}: no such file; give the validation.json `skadapt annotate "
            "agreement` wrote"
        )
    try:
        report = json.loads(Path(path).read_text(encoding="utf-8"))
        verdicts = report["transformations"]
    except (OSError, ValueError, KeyError, TypeError):
        raise SheetError(
            f"robustness.validated: {path} is not a verdict of `skadapt annotate agreement`"
        ) from None
    kept = [t for t in transforms if verdicts.get(t, {}).get("accepted")]
    rejected = {
        t: {c: verdicts[t].get(c) for c in CRITERIA} if t in verdicts else {"reason": "not validated"}
        for t in transforms
        if t not in kept
    }
    return kept, rejected
