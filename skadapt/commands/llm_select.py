"""``skadapt llm select``: choose the generator by measurement (error rates, then a crossover judge)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skadapt.console import console, handle_errors, out
from skadapt.errors import SkadaptError

MIN_CHARS, MAX_CHARS = 40, 300
"""Length of the sentences sampled from the source."""


class NoTextsError(SkadaptError):
    """The source has no sentence to sample: nothing would be measured."""


@handle_errors
def command(
    candidates: Annotated[
        Path, typer.Argument(help="YAML: candidates: [{name: NAME, llm: {model: ..., base_url: ...}}, ...]")
    ],
    language: Annotated[str, typer.Option(help="ISO 639-3 language of the texts.")],
    out_dir: Annotated[Path, typer.Option("--out", help="Where llm_select.json and .md go.")],
    source: Annotated[
        str | None,
        typer.Option(
            help="Texts to rewrite: a file/glob, hub:... or saved dataset (default: the language's corpus)."
        ),
    ] = None,
    sample: Annotated[int, typer.Option(min=2, help="Sentences sampled from the source (seeded).")] = 100,
    transforms: Annotated[
        list[str] | None, typer.Option(help="Transformations measured (repeatable; default: hteb-min's).")
    ] = None,
    sts_sources: Annotated[
        int, typer.Option(min=0, help="Of the sample, sources also given to synthetic STS (0: none).")
    ] = 20,
    top_k: Annotated[
        int, typer.Option(min=2, help="Lowest-error candidates judged crossover (HTEB: 5).")
    ] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the sample and of every request.")] = 42,
    max_documents: Annotated[int, typer.Option(min=1, help="Texts read from the source.")] = 20_000,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing --out.")] = False,
) -> None:
    """Measure each candidate's error rates on the same seeded sample (one attempt per item, HTEB's count),
    judge the lowest-error ones crossover (each rated by the others, bootstrap CIs), rank, choose."""
    from skadapt.artifacts import refuse_nonempty
    from skadapt.choose import load_candidates, save, select
    from skadapt.languages import get_language
    from skadapt.robustness.transforms import PRESETS, resolve_transforms
    from skadapt.sources import iter_texts
    from skadapt.textsample import sample_sentences

    lang = get_language(language)
    try:
        names = resolve_transforms(transforms) if transforms else list(PRESETS["hteb-min"]["transforms"])
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--transforms") from None
    if not overwrite:  # before the source is read or any candidate asked
        refuse_nonempty(out_dir)
    chosen_from = load_candidates(candidates)  # a typo in the file is found before the source is read
    spec = source or lang.corpus
    if spec is None:
        raise typer.BadParameter(f"--source is required: language {language!r} has no default corpus")
    drawn = sample_sentences(
        iter_texts(spec, max_documents=max_documents),
        sample,
        min_chars=MIN_CHARS,
        max_chars=MAX_CHARS,
        seed=seed,
        language=lang.iso639_1 or "en",
    )
    texts = list(drawn.sentences)
    if not texts:
        raise NoTextsError(
            f"--source {spec}: no sentence of {MIN_CHARS}-{MAX_CHARS} characters in it; nothing to measure "
            "the candidates on (give a source with longer sentences)"
        )
    console.print(f"llm select: {len(texts)} texts, transformations {', '.join(names)}")
    report = select(
        chosen_from,
        texts,
        names,
        lang,
        seed=seed,
        sts_sources=min(sts_sources, len(texts)),
        top_k=top_k,
        source=str(candidates),
    )
    text = save(report, out_dir, overwrite=overwrite)
    out.print(text)
