"""``skadapt human export|score``: human baselines (HUME) for any evaluation suite."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.commands.options import Options, config_command
from skadapt.console import console, handle_errors, out
from skadapt.human.config import HumanConfig

app = typer.Typer(
    help="Human baselines: annotation sheets for a suite, human scores beside the models'.",
    no_args_is_help=True,
)


@app.command("export")
@handle_errors
@config_command
def export(
    config: Annotated[HumanConfig, Options("human", short={"dir": "--out"}, file=False)],
    language: Annotated[str, typer.Option(help="ISO 639-3 code of the tasks (guidelines, subsets).")],
    seed: Annotated[int, typer.Option(help="Seed of the subsets and the sheets' order.")] = 42,
    overwrite: Annotated[
        bool, typer.Option(help="Replace an existing --out directory, filled sheets included.")
    ] = False,
) -> None:
    """Draw seeded subsets at HUME's sizes and write one sheet per task and annotator (no gold in them).

    An --out that is not empty is refused (naming the filled sheets in it) unless --overwrite is given;
    --out appears only when it is complete."""
    from skadapt.annotate.sheetio import refuse_to_replace
    from skadapt.human.sheets import ANSWER, export_baseline
    from skadapt.human.subset import SIZES, draw_subset
    from skadapt.languages import get_language
    from skadapt.tasks.selection import select_tasks

    language = get_language(language).code  # an unknown code is a usage error before anything is read
    tasks = list(config.tasks)
    if not tasks:
        raise typer.BadParameter("give the tasks: --tasks SPEC (repeatable)")
    out_dir = Path(config.dir)
    unknown = sorted(set(config.sizes) - set(SIZES))
    if unknown:
        raise typer.BadParameter(
            f"--sizes: unknown task type(s) {', '.join(unknown)}; types: {', '.join(SIZES)}"
        )
    if not overwrite:
        refuse_to_replace(out_dir, (ANSWER,))
    sizes = dict(config.sizes)
    annotators = config.annotators
    subsets = []
    for task in select_tasks(tasks, language=language, seed=seed):
        task.load_data()
        subset = draw_subset(task, sizes.get(str(task.metadata.type)), seed, language)
        if subset is None:
            console.print(f"{task.metadata.name}: {task.metadata.type} is not annotated by people; skipped")
            continue
        subsets.append(subset)
    suite = export_baseline(subsets, out_dir, annotators=annotators, seed=seed)
    out.print(
        f"[green]wrote[/] sheets for {len(subsets)} task(s) x {annotators} annotator(s) in "
        f"{out_dir / 'sheets'}; the same items for the models: {suite}"
    )


@app.command("score")
@handle_errors
def score(
    directory: Annotated[Path, typer.Argument(help="The export directory, with filled sheets.")],
    leave_one_out: Annotated[
        list[str] | None,
        typer.Option("--leave-one-out", help="Task whose gold is the annotators' mean (repeatable)."),
    ] = None,
    language: Annotated[
        str | None, typer.Option(help="ISO 639-3 code of the tasks (default: the subset suite's).")
    ] = None,
) -> None:
    """Score every annotator with the models' metric; write human_scores.json and mteb results (Human)."""
    from rich.table import Table

    from skadapt.annotate.agreement import Notes
    from skadapt.human.score import save, score_subsets, write_mteb_results
    from skadapt.human.sheets import read_answers, read_key
    from skadapt.tasks.selection import select_tasks

    subsets = read_key(directory)
    answers = read_answers(directory, subsets)
    scores = score_subsets(subsets, answers, set(leave_one_out or []))
    save(scores, directory)
    tasks = select_tasks([str(directory / "subset" / "suite.yaml")], language=language)
    write_mteb_results(scores, tasks, directory / "results")
    table = Table(title=f"human scores ({directory})")
    for column in ("task", "type", "metric", "annotators", "mean", "sd", "agreement"):
        table.add_column(column)
    notes = Notes()
    for task, entry in scores.items():
        found, by_name = entry["agreement"], entry.get("annotators_note", {})
        each = [notes.cell(v, by_name.get(n), task, n, 1) for n, v in entry["annotators"].items()]
        mean, sd = (notes.cell(entry[k], entry.get(f"{k}_note"), task, k, 2) for k in ("mean", "sd"))
        agree = [
            f"{k} {notes.cell(v, found.get(f'{k}_note'), task, k)}"
            for k, v in found.items()
            if not k.endswith("_note")
        ]
        table.add_row(task, entry["type"], entry["metric"], ", ".join(each), mean, sd, ", ".join(agree))
    out.print(table)
    for line in notes.lines():
        out.print(line)
    out.print(
        f"mteb results of baseline/Human in {directory / 'results'}; compare with "
        f"`skadapt evaluate MODELS --tasks ... --human {directory}`"
    )
