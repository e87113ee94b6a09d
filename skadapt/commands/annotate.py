"""``skadapt annotate export|agreement|split``: the human check of synthetic STS data and of rewrites."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.console import handle_errors, out

app = typer.Typer(
    help="Annotation sheets: the human check of synthetic STS data and of robustness rewrites.",
    no_args_is_help=True,
)

SheetsDir = Annotated[Path, typer.Argument(help="Directory with key.jsonl and sheets/ (from export).")]


@app.command("export")
@handle_errors
def export(
    source: Annotated[
        Path,
        typer.Argument(
            help="A synth-sts output directory (or its dataset/): STS sheets; or a robustness output "
            "directory (with rewrites/): sheets rating each transformation's rewrites."
        ),
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for sheets/ and key.jsonl.")],
    language: Annotated[str, typer.Option(help="Language of the guidelines (ISO 639-3 or 639-1).")],
    annotators: Annotated[int, typer.Option(min=1, help="Sheets (one per annotator).")] = 3,
    seed: Annotated[int, typer.Option(help="Seed of the sample, the item ids and the sheets' order.")] = 42,
    per_transform: Annotated[
        int, typer.Option(min=1, help="Rewrites: pairs drawn per transformation (HTEB: 100, PTEB: 50).")
    ] = 100,
    dummies: Annotated[
        int,
        typer.Option(min=0, help="Rewrites: easy dummy pairs mixed into every sheet (half kept, half lost)."),
    ] = 10,
    overwrite: Annotated[
        bool, typer.Option(help="Replace an existing --out directory, filled sheets included.")
    ] = False,
) -> None:
    """Write annotation sheets: held-out synthetic STS pairs (intended scores only in key.jsonl), or a
    seeded sample of each transformation's rewrites with dummy pairs (rated 1-5 on quality and fluency).

    An --out that is not empty is refused (naming the filled sheets in it) unless --overwrite is given;
    --out appears only when it is complete."""
    from skadapt.annotate.rewrites import CRITERIA
    from skadapt.annotate.sheetio import refuse_to_replace
    from skadapt.annotate.sheets import SCORE
    from skadapt.languages import language_code

    language = language_code(language)  # sk -> slk: the guidelines are keyed by ISO 639-3
    if source.resolve().is_relative_to(out_dir.resolve()):
        raise typer.BadParameter(f"--out {out_dir} holds the source {source}; choose another directory")
    if not overwrite:
        refuse_to_replace(out_dir, (SCORE, *CRITERIA))
    if (source / "rewrites").is_dir():
        from skadapt.annotate.rewrites import export_rewrite_sheets, read_rewrites

        result = export_rewrite_sheets(
            read_rewrites(source),
            out_dir,
            per_transform=per_transform,
            annotators=annotators,
            dummies=dummies,
            seed=seed,
            language=language,
        )
        out.print(
            f"[green]wrote[/] {result['annotators']} sheets of {result['items']} rewrites "
            f"({result['transformations']} transformations, {result['dummies']} dummies) to "
            f"{out_dir / 'sheets'}"
        )
        return
    from skadapt.annotate.sheets import export_heldout_sheets

    result = export_heldout_sheets(source, out_dir, annotators=annotators, seed=seed, language=language)
    out.print(
        f"[green]wrote[/] {result['annotators']} sheets of {result['items']} pairs to {out_dir / 'sheets'}"
    )


@app.command("agreement")
@handle_errors
def agreement(
    sheets: SheetsDir,
    threshold: Annotated[
        float, typer.Option(help="Rewrites: a transformation is accepted when both mean ratings reach it.")
    ] = 3.0,
    model: Annotated[
        str | None,
        typer.Option(help="Rewrites: embedding drift of this model vs the human quality ratings (Spearman)."),
    ] = None,
) -> None:
    """Validate the filled sheets; print and save agreement (pairwise, Fleiss' κ, Krippendorff's α). For
    rewrite sheets: reject raters failing the dummies, Gwet's AC2 per criterion, and the verdict per
    transformation (validation.json, read by robustness.validated)."""
    from skadapt import artifacts
    from skadapt.annotate.rewrites import is_rewrite_sheets, markdown, validate

    if is_rewrite_sheets(sheets):
        if model is not None:
            from skadapt.model_sources import resolve_model

            model = resolve_model(model)
        out.print(markdown(validate(sheets, threshold=threshold, model=model)))
        out.print(f"verdict: {sheets / 'validation.json'} (set robustness.validated to it)")
        return
    from skadapt.annotate.agreement import agreement_markdown, agreement_report
    from skadapt.annotate.sheets import read_key, read_sheets

    ratings = read_sheets(sheets)
    reference = {item: float(row["score"]) for item, row in read_key(sheets).items()}
    report = agreement_report(ratings, reference)
    artifacts.write_json(sheets / "agreement.json", report)
    (sheets / "agreement.md").write_text(agreement_markdown(report) + "\n", encoding="utf-8")
    out.print(agreement_markdown(report))


@app.command("split")
@handle_errors
def split(
    sheets: SheetsDir,
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for the train/test dataset and suite.")],
    language: Annotated[str, typer.Option(help="ISO 639-3 or 639-1 code of the data.")],
    dataset: Annotated[Path, typer.Argument(help="The synth-sts dataset/ directory.")],
) -> None:
    """Make train + test (annotated pairs scored by the mean rating) and a one-task evaluation suite."""
    from skadapt.languages import language_code
    from skadapt.synth.dataset import build_test_split

    result = build_test_split(dataset, sheets, out_dir, language_code(language))
    out.print(
        f"[green]saved[/] {out_dir / 'dataset'}: train {result['train']}, test {result['test']} pairs "
        f"rated by {result['annotators']} annotators; evaluation suite {out_dir / 'suite.yaml'}"
    )
