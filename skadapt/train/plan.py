"""The finetune stage's cost plan: rows per dataset, training examples, steps, and their time."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skadapt.plan.dev import dev_size
from skadapt.plan.model import Part, StagePlan
from skadapt.plan.parts import (
    CHARS_PER_TOKEN,
    cpu_part,
    encode_part,
    gb,
    load_part,
    train_part,
    write_part,
)
from skadapt.plan.sizes import SourceSize, source_size
from skadapt.stage import PlanContext
from skadapt.train.config import ANCHOR_DATASET, PARALLEL_ANCHOR_DATASET, FinetuneConfig, FinetuneDataset
from skadapt.train.datasets import ROLE_ALIASES, SOURCE_ROLES

NON_TEXT_ROLES = frozenset({"label", "score", "answer"})
NLI_TRIPLETS_PER_ROW = 1 / 3
"""An NLI premise has one entailed, one neutral and one contradicted hypothesis (SNLI/MNLI): one triplet
per three rows (the preflight's sample shows how a source really groups)."""
RTE_ENTAILED_SHARE = 0.5
"""RTE data is about half entailment pairs (skLEP rte train: 1,241 of 2,490)."""
OPTIMIZER_BYTES = 12
"""Bytes per parameter of a training checkpoint: the weights and AdamW's two moments (fp32)."""


@dataclass
class _Sized:
    """A dataset's length, for :func:`skadapt.train.trainer.estimate_steps`."""

    name: str
    size: int

    def __len__(self) -> int:
        return self.size


def text_columns(entry: FinetuneDataset) -> list[str]:
    """The source columns of an entry's text roles (mapped, else the role's own name and its alias)."""
    required, optional = SOURCE_ROLES[entry.kind]
    columns = []
    for role in required + optional:
        if role in NON_TEXT_ROLES:
            continue
        columns.append(entry.columns.get(role, role))
        if role not in entry.columns and role in ROLE_ALIASES.get(entry.kind, {}):
            columns.append(ROLE_ALIASES[entry.kind][role])
    return columns


def _made_by_run(ctx: PlanContext, spec: str) -> bool:
    if spec.startswith(("hub:", "wordfreq:")):
        return False
    return Path(spec).resolve().is_relative_to(ctx.run.run_dir.resolve())


def written_size(ctx: PlanContext, entry: FinetuneDataset) -> SourceSize:
    """The size of data an earlier stage of this run writes, as its plan said (``ctx.written``; e.g. the
    synthetic STS split of synth_sts)."""
    source = Path(entry.source).resolve()
    for directory, size in ctx.written.items():
        if source.is_relative_to(directory.resolve()):
            return size
    return SourceSize(None, reason="written by an earlier stage of this run")


def examples(entry: FinetuneDataset, size: SourceSize) -> tuple[list[tuple[str, int]], str]:
    """The training datasets an entry builds, with their examples, and how they were counted: local nli/rte
    sources are built with the stage's own reader; Hub ones estimated from the row count."""
    assert size.rows is not None
    rows = size.rows
    if entry.kind in ("nli", "rte") and not entry.source.startswith("hub:"):
        from skadapt.train.datasets import build_task_datasets

        built = build_task_datasets(entry)
        return [(d.name, len(d)) for d in built], "built by the stage's reader"
    if entry.kind == "nli":
        return [(entry.name, int(rows * NLI_TRIPLETS_PER_ROW))], "estimate: one triplet per premise of 3 rows"
    if entry.kind == "rte":
        return [(entry.name, int(rows * RTE_ENTAILED_SHARE))], "estimate: half the rows entailed"
    count = min(rows, entry.max_samples) if entry.max_samples else rows
    return [(entry.name, count)], "one example per row"


def steps_of(config: FinetuneConfig, sizes: list[tuple[str, int]]) -> tuple[int, dict[str, float]]:
    """Optimizer steps of the run (the trainer's own formula) and their share per dataset."""
    from skadapt.train.trainer import estimate_steps

    datasets = [_Sized(name, n) for name, n in sizes if n > 0]
    if not datasets:
        return 0, {}
    total = estimate_steps(datasets, config)  # type: ignore[arg-type]
    batches = {d.name: -(-len(d) // config.batch_size) for d in datasets}
    weight = sum(batches.values())
    return total, {name: total * b / weight for name, b in batches.items()}


def plan_finetune(config: FinetuneConfig, ctx: PlanContext) -> StagePlan:
    """Rows per training dataset (source metadata), examples, steps = rows x epochs / batch, and the
    training time of each dataset at the rate of the row shape nearest to it. Its datasets' sources and
    text columns and its Matryoshka dimensions join ``ctx`` (what a later stage fits on or cuts to)."""
    ctx.training = [(entry.source, text_columns(entry)) for entry in config.datasets]
    ctx.trained_dims = config.matryoshka_dims
    plan = StagePlan(stage="finetune")
    sizes: list[tuple[str, int]] = []
    chars: dict[str, float] = {}
    rows_read = 0
    for entry in config.datasets:
        if _made_by_run(ctx, entry.source):
            size = written_size(ctx, entry)
            if size.rows is None:
                plan.unknown.append(
                    f"{entry.name}: {entry.source} is written by an earlier stage of this run"
                )
                continue
        else:
            size = source_size(entry.source, text_columns(entry))
        if size.rows is None:
            plan.unknown.append(f"{entry.name}: {entry.source}: {size.describe()}")
            plan.lines.append(f"{entry.name} ({entry.kind}): rows {size.describe()}")
            plan.work.setdefault("datasets", {})[entry.name] = {"rows": None, "reason": size.reason}
            continue
        built, how = examples(entry, size)
        rows_read += size.rows
        for name, count in built:
            sizes.append((name, count))
            per_row = (size.chars or 0) * (1.5 if entry.kind == "nli" else 1.0)
            chars[name] = per_row
        plan.work.setdefault("datasets", {})[entry.name] = {
            "source": entry.source,
            "rows": size.rows,
            "examples": {name: count for name, count in built},
            "how": how,
        }
        shown = ", ".join(f"{name} {count:,}" for name, count in built)
        plan.lines.append(f"{entry.name} ({entry.kind}): {size.describe()} -> {shown} examples ({how})")
        if entry.kind == "nli":
            plan.parts.append(cpu_part(ctx, f"grouping {entry.name}", "nli_grouping", size.rows))
        elif not entry.source.startswith("hub:"):
            plan.parts.append(cpu_part(ctx, f"reading {entry.name}", "build_pairs", size.rows, size.chars))
        if entry.source.startswith("hub:"):
            plan.parts.append(cpu_part(ctx, f"reading {entry.name}", "read_hub", size.rows, size.chars))
    if config.anchor is not None and (corpus := config.anchor.corpus) is not None:
        anchor = source_size(corpus.source, corpus.columns, enough=corpus.max_documents)
        count = min(config.anchor.samples, anchor.rows) if anchor.rows is not None else config.anchor.samples
        sizes.append((ANCHOR_DATASET, count))
        chars[ANCHOR_DATASET] = min(anchor.chars or config.anchor.max_chars, config.anchor.max_chars)
        plan.lines.append(f"anchor: {count:,} corpus texts encoded by the starting model, trained towards")
        plan.parts.append(encode_part(ctx, "anchor targets", ctx.model, count, chars[ANCHOR_DATASET]))
    for source in (config.anchor.parallel or []) if config.anchor is not None else []:
        side = source_size(source.source, source.columns[-1:], enough=source.max_documents)
        pairs = side.rows or 0
        sizes.append((PARALLEL_ANCHOR_DATASET, pairs * len(source.columns)))
        chars[PARALLEL_ANCHOR_DATASET] = side.chars or 0
        plan.lines.append(
            f"anchor: {pairs:,} parallel pairs of {source.source}, each side trained towards the starting "
            "model's embedding of the last"
        )
        plan.parts.append(encode_part(ctx, "parallel anchor targets", ctx.model, pairs, side.chars or 0))
    total, shares = steps_of(config, sizes)
    plan.work |= {
        "examples": dict(sizes),
        "steps": total,
        "batch_size": config.batch_size,
        "epochs": config.epochs,
    }
    how = (
        f"max_steps {config.max_steps}"
        if config.max_steps
        else (f"ceil({config.epochs:g} epochs x sum of ceil(examples / {config.batch_size}))")
    )
    plan.lines.append(
        f"steps: {total:,} ({how}); per dataset " + ", ".join(f"{n} {s:,.0f}" for n, s in shares.items())
    )
    for name, share in shares.items():
        plan.parts.append(
            train_part(
                ctx,
                f"training {name}",
                ctx.model,
                share,
                chars.get(name) or 0.0,
                config.batch_size,
                config.bf16,
            )
        )
    if config.plain_arm:  # the same tasks without the anchor, at the same batch size
        tasks = [
            (name, size) for name, size in sizes if name not in (ANCHOR_DATASET, PARALLEL_ANCHOR_DATASET)
        ]
        plain, _ = steps_of(config, tasks)
        plan.work["plain_arm_steps"] = plain
        plan.lines.append(f"plain arm: {plain:,} steps (the same datasets, no anchor)")
        mean_chars = sum(chars.get(name) or 0.0 for name, _ in tasks) / max(len(tasks), 1)
        plan.parts.append(
            train_part(
                ctx, "training the plain arm", ctx.model, plain, mean_chars, config.batch_size, config.bf16
            )
        )
    _contamination(config, ctx, plan, rows_read)
    if config.dev is not None:
        dev_texts, dev_chars = dev_size(config.dev, plan, config.max_seq_length * CHARS_PER_TOKEN)
        # the starting model; with select_best the trainer's, every dev.steps steps and at the last step;
        # the chosen model; the interpolation grid and its reference a = 1
        grid = len({*config.interpolation.grid, 1.0}) if config.interpolation else 0
        trainer = -(-total // config.dev.steps) if config.dev.select_best else 0
        evaluations = 2 + trainer + grid
        plan.work["dev_encodes"] = dev_texts * evaluations
        during = f"every {config.dev.steps} steps and the last; " if trainer else ""
        plan.lines.append(
            f"dev: {evaluations} evaluations x {dev_texts:,} texts (the starting model; {during}the chosen "
            "model; the interpolation grid with a = 1)"
        )
        dev_part = encode_part(ctx, "dev evaluations", ctx.model, dev_texts * evaluations, dev_chars)
        _slice_dev_rate(ctx, dev_part, dev_texts * evaluations)
        plan.parts.append(dev_part)
    params = ctx.model.parameters
    plan.parts.append(load_part(ctx, "loading the model", [params]))
    saves = total // config.save_steps
    checkpoint = params * OPTIMIZER_BYTES / 1e9
    plan.work["checkpoints"] = saves
    written = saves * checkpoint + params * 4 / 1e9
    plan.parts.append(
        write_part(ctx, f"saving {saves} checkpoints of {checkpoint:.2f} GB and the model", written)
    )
    plan.disk_gb = gb(params * 4 + config.save_total_limit * params * OPTIMIZER_BYTES)
    plan.notes.append(
        f"disk: the model and up to {config.save_total_limit} checkpoints (weights + AdamW moments) while "
        "it trains"
    )
    if config.bf16:
        plan.notes.append("finetune.bf16: the GPU figure is bf16; the CPU figure fp32")
    return plan.total()


SLICE_MODEL = "e5-small-trimmed"
"""The model of the GPU check's real-size slice."""


def _slice_dev_rate(ctx: PlanContext, part: Part, texts: float) -> None:
    """Adds to the GPU figure of the dev evaluations (their encoding) the evaluators' own work per text,
    as the real-size slice measured it; unchanged without a slice."""
    overhead = ctx.gpu.dev_overhead(SLICE_MODEL) if ctx.gpu is not None else None
    if overhead is None or part.seconds_gpu is None:
        return
    part.seconds_gpu += texts * overhead[0]
    part.basis_gpu += f"; + {overhead[1]}"


def _contamination(config: FinetuneConfig, ctx: PlanContext, plan: StagePlan, rows: int) -> None:
    """The contamination check: every training row against the evaluation test texts."""
    if not ctx.tasks:
        return
    test_texts = sum(t.texts for t in ctx.tasks)
    action = config.contamination.action
    plan.lines.append(
        f"contamination check ({action}): {rows:,} rows against ~{test_texts:,} evaluation texts; the rows "
        "it "
        "drops are measured at run time (`skadapt train RECIPE --check` shows them)"
    )
    plan.work["contamination"] = {"rows": rows, "test_texts": test_texts, "dropped": "measured at run time"}
    plan.parts.append(cpu_part(ctx, "contamination index", "contamination_index", test_texts))
    plan.parts.append(cpu_part(ctx, "contamination check", "contamination", rows))
