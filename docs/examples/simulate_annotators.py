"""SIMULATED annotators for the human-baseline worked example (docs/human_baseline_demo.md).

Not people: each simulated annotator answers from the gold with seeded noise, so the example can show
the whole flow (export -> filled sheets -> score -> evaluate with the Human row) without a real
annotation round. Never report numbers from this script as a human baseline.

Noise per task type, with probability ``--error`` per item: STS gold + a normal error (SD 1.0), rounded
and clipped to 0-5 (always); classification a random other label; clustering a random other group;
pair classification and reranking a flipped 0/1.

    python docs/examples/simulate_annotators.py human/demo --error 0.15 --seed 1
"""

from __future__ import annotations

import argparse
import csv
import random
from pathlib import Path

from skadapt.human.sheets import read_key


def answer(kind: str, gold, choices: list, rng: random.Random, error: float):
    if kind == "STS":
        return int(min(5, max(0, round(gold + rng.gauss(0, 1.0)))))
    if rng.random() >= error:
        return gold
    if kind in ("PairClassification", "Reranking"):
        return 1 - int(gold)
    return rng.choice([c for c in choices if c != gold] or [gold])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("directory", type=Path)
    parser.add_argument("--error", type=float, default=0.15)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for subset in read_key(args.directory):
        gold = {item.item_id: item.gold for item in subset.items}
        choices = sorted({item.gold for item in subset.items}, key=str)
        for sheet in sorted((args.directory / "sheets" / subset.task).glob("*.csv")):
            rng = random.Random(f"{args.seed}|{subset.task}|{sheet.stem}")
            rows = list(csv.DictReader(sheet.open(encoding="utf-8-sig")))
            for row in rows:
                row["answer"] = answer(subset.type, gold[row["item_id"]], choices, rng, args.error)
            with sheet.open("w", encoding="utf-8-sig", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
        print(f"{subset.task}: {len(subset.items)} items filled for every sheet (simulated)")


if __name__ == "__main__":
    main()
