"""WiSE-FT's choice on dev, per fine-tuned model: every mixture's dev scores and what each rule keeps.

For each fine-tuned model (``--tuned``, e.g. benchmark/plain_arm.py's ``runs/skadapt-SEED/model``) and its
starting model (``--start``, the recipe's trimmed model), the weights ``(1 - a) start + a tuned`` of every
``a`` of ``--grid`` are scored on the recipe's fine-tuning dev sets through ``skadapt.blocks.wise_ft``, the
stage's
own choice (a mixture replaces ``a = 1`` only beyond the noise). Printed per model: each ``a``'s mean and
per-set dev scores and its paired interval against ``a = 1``, the kept ``a``, and the ``a`` the raw best
mean would keep. ``--save`` writes the kept mixture of each model as ``<tuned>-wise`` (and the raw best's as
``<tuned>-raw`` when it differs) for scoring on the suite.

    python benchmark/wise_ft.py --start runs/demo_sk/trim --tuned runs/plain_arm/runs/skadapt-42/model ...
        [--recipe recipes/demo_sk.yaml] [--grid 0 0.5 0.6 0.7 0.8 0.9] [--save]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--start", type=Path, required=True, help="The starting (trimmed) model")
    parser.add_argument("--tuned", type=Path, nargs="+", required=True, help="Fine-tuned models")
    parser.add_argument("--recipe", type=Path, default=ROOT / "recipes" / "demo_sk.yaml")
    parser.add_argument("--grid", type=float, nargs="+", default=[0.0, 0.5, 0.6, 0.7, 0.8, 0.9])
    parser.add_argument("--save", action="store_true", help="Save each kept mixture as <tuned>-wise")
    parser.add_argument("--out", type=Path, default=None, help="JSON of every choice")
    args = parser.parse_args()
    import yaml
    from sentence_transformers import SentenceTransformer

    from skadapt.blocks import DevSets, mix_weights, wise_ft

    os.chdir(ROOT)
    recipe = yaml.safe_load(args.recipe.read_text(encoding="utf-8"))
    dev = DevSets.model_validate(recipe["finetune"]["dev"])
    start = SentenceTransformer(str(args.start), device="cpu")
    results = {}
    for tuned in args.tuned:
        model = SentenceTransformer(str(tuned), device="cpu")
        chosen = wise_ft(model, start, dev, args.grid, batch_size=16, seed=42)
        raw = max(chosen.scores, key=lambda e: (e["score"], e["alpha"]))["alpha"]
        results[str(tuned)] = {
            "kept": chosen.chosen,
            "raw_best": raw,
            "reason": chosen.reason,
            "scores": chosen.scores,
        }
        print(f"\n{tuned}: kept a={chosen.chosen:g} (raw best a={raw:g}): {chosen.reason}", flush=True)
        for entry in chosen.scores:
            interval = entry.get("interval")
            shown = "" if interval is None else f" [{100 * interval[0]:+.2f}, {100 * interval[1]:+.2f}]"
            sets_shown = ", ".join(
                f"{name.split('-')[1]} {value:.3f}" for name, value in entry["sets"].items()
            )
            print(f"  a={entry['alpha']:.1f}: mean {entry['score']:.4f}{shown}  ({sets_shown})", flush=True)
        if args.save:
            model.save(str(tuned.parent / f"{tuned.name}-wise"))
            if raw != chosen.chosen:
                model = SentenceTransformer(str(tuned), device="cpu")
                mix_weights(model, start, raw)
                model.save(str(tuned.parent / f"{tuned.name}-raw"))
    if args.out is not None:
        args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
