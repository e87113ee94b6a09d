"""One spelling of a corpus (issue 41): every corpus field of every stage is a ``CorpusSource``, a plain
string is its short form (same texts, same stage key), the old flat fields are gone and named by their new
spelling, and each command derives ``--corpus``, ``--corpus-columns`` and ``--corpus-max-documents`` from
it."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from pydantic import BaseModel
from typer.testing import CliRunner

from skadapt.commands.options import Options, config_command, option_flags
from skadapt.config import RecipeError
from skadapt.pipeline.keys import section_key
from skadapt.recipe import Recipe, load_recipe, validate_recipe
from skadapt.sources import CorpusSource, SourceError, corpus_texts
from skadapt.sources.config import FLAT_FIELDS, is_corpus_field
from skadapt.stages import STAGES
from skadapt.trim.config import TrimConfig

CORPUS_FIELDS = {
    "synth_sts.corpus",
    "trim.corpus",
    "trim.extra_corpus",
    "finetune.datasets.hard_negatives.corpus",
    "finetune.anchor.corpus",
    "finetune.dev.sets.corpus",
    "renorm.corpus",
    "renorm.dev.sets.corpus",
    "export.corpus.sources",
    "export.corpus.parallel",
    "finetune.anchor.parallel",
    "export.speed_corpus",
}
"""Every field of the recipe schema that names texts to read, as the walk below must find them."""


def _models(annotation: Any) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation) or (annotation,):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            found.append(arg)
        elif typing.get_args(arg):
            found += _models(arg)
    return found


def _walk(model: type[BaseModel], prefix: str) -> tuple[set[str], list[str], list[str]]:
    """(the corpus fields, the fields named like a corpus that are not one, the flat fields left) of
    ``model``, dotted (list items under their field's name)."""
    corpora: set[str] = set()
    wrong: list[str] = []
    flat: list[str] = []
    for name, info in model.model_fields.items():
        dotted = f"{prefix}.{name}"
        if is_corpus_field(info.annotation):
            corpora.add(dotted)
            continue
        nested = [m for m in _models(info.annotation) if m is not CorpusSource]
        if "corpus" in name and not nested:
            wrong.append(dotted)  # a corpus spelled some other way (a string, a column beside it)
        if name in FLAT_FIELDS and name != "source":
            flat.append(dotted)
        for inner in nested:
            found, bad, left = _walk(inner, dotted)
            corpora |= found
            wrong += bad
            flat += left
    return corpora, wrong, flat


def test_every_corpus_field_in_the_recipe_schema_is_a_corpus_source() -> None:
    corpora: set[str] = set()
    wrong: list[str] = []
    flat: list[str] = []
    for stage in STAGES:
        found, bad, left = _walk(stage.config, stage.name)
        corpora |= found
        wrong += bad
        flat += left
    assert not wrong, f"fields named like a corpus that are no CorpusSource: {wrong}"
    assert not flat, f"flat corpus fields beside a corpus (they belong in the CorpusSource): {flat}"
    assert corpora == CORPUS_FIELDS  # the walk finds each (and a new one is added here on purpose)


def _recipe(corpus: Any, tmp_path: Path) -> Recipe:
    """A recipe naming ``corpus`` in every corpus field."""
    return validate_recipe(
        {
            "name": "forms",
            "language": "slk",
            "base_model": "base-model-id",
            "output_dir": str(tmp_path / "run"),
            "llm": {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"},
            "synth_sts": {"corpus": corpus},
            "trim": {"corpus": corpus, "extra_corpus": corpus, "extra_vocab_size": 10},
            "finetune": {
                "datasets": [
                    {"name": "qa", "kind": "pairs", "source": "x.jsonl", "hard_negatives": {"corpus": corpus}}
                ],
                "anchor": {"corpus": corpus},
            },
            "renorm": {"corpus": corpus},
            "export": {"corpus": {"sources": [corpus]}, "speed_corpus": corpus},
        }
    )


@pytest.mark.parametrize("full", [{"source": "{file}"}, {"source": "{file}", "columns": ["text"]}])
def test_the_short_form_and_the_full_form_are_one_corpus(tmp_path: Path, full: dict[str, Any]) -> None:
    """``corpus: FILE`` is ``corpus: {source: FILE}``: the same sections, texts and stage keys."""
    file = tmp_path / "texts.txt"
    file.write_text("Prvá veta.\nDruhá veta.\n", encoding="utf-8")
    short = _recipe(str(file), tmp_path)
    spelled = _recipe(json.loads(json.dumps(full).replace("{file}", str(file))), tmp_path)
    assert short.model_dump() == spelled.model_dump()
    facts = short.run_facts()
    for stage in ("synth_sts", "trim", "finetune", "renorm", "export"):
        keys = [section_key(stage, getattr(r, stage), facts, "slk", {})[0] for r in (short, spelled)]
        assert keys[0] == keys[1], stage
    texts = list(corpus_texts(CorpusSource.model_validate(str(file))))
    assert texts == list(corpus_texts(spelled.renorm.corpus)) == ["Prvá veta.", "Druhá veta."]  # type: ignore[union-attr]


def test_renorm_reads_its_own_default_limit_unless_the_corpus_says_otherwise() -> None:
    """renorm read at most 200,000 texts by default (``renorm.max_documents``); it still does, and
    ``corpus.max_documents: null`` still means all."""
    from skadapt.renorm.config import RenormConfig

    assert RenormConfig(corpus="c.txt").corpus == CorpusSource(source="c.txt", max_documents=200_000)
    assert RenormConfig(corpus={"source": "c.txt", "max_documents": None}).corpus.max_documents is None  # type: ignore[union-attr]
    assert RenormConfig(corpus={"source": "c.txt", "max_documents": 7}).corpus.max_documents == 7  # type: ignore[union-attr]


def test_corpus_texts_reads_each_column_in_turn_capped_per_column(tmp_path: Path) -> None:
    rows = [{"q": f"q{i}", "p": f"p{i}"} for i in range(4)]
    file = tmp_path / "rows.jsonl"
    file.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    corpus = CorpusSource(source=str(file), columns=["q", "p"], max_documents=3)
    assert list(corpus_texts(corpus)) == ["q0", "q1", "q2", "p0", "p1", "p2"]
    assert list(corpus_texts(corpus, max_documents=1)) == ["q0", "p0"]  # the smaller cap holds
    with pytest.raises(SourceError, match="one column"):
        corpus_texts(corpus, max_bytes=10)
    with pytest.raises(SourceError, match="column 'x'"):
        list(corpus_texts(CorpusSource(source=str(file), columns=["x"])))


def test_trim_counts_one_column() -> None:
    with pytest.raises(ValueError, match="one column"):
        TrimConfig(corpus={"source": "c.jsonl", "columns": ["a", "b"]})


@pytest.mark.parametrize(
    ("section", "field", "named"),
    [
        ("trim", {"text_column": "passage"}, "trim.text_column: unknown field; did you mean corpus.columns"),
        (
            "trim",
            {"max_documents": 5},
            "trim.max_documents: unknown field; did you mean corpus.max_documents",
        ),
        (
            "renorm",
            {"text_column": "passage"},
            "renorm.text_column: unknown field; did you mean corpus.columns",
        ),
        ("synth_sts", {"source": "c.txt"}, "synth_sts.source: unknown field; did you mean corpus.source"),
        (
            "export",
            {"text_column": "x"},
            "export.text_column: unknown field; did you mean speed_corpus.columns",
        ),
    ],
)
def test_an_old_flat_field_is_named_with_its_new_spelling(
    tmp_path: Path, section: str, field: dict[str, Any], named: str
) -> None:
    corpus = {"synth_sts": {"corpus": "c.txt"}, "trim": {"corpus": "c.txt"}, "renorm": {"corpus": "c.txt"}}
    data = {
        "name": "old",
        "language": "slk",
        "base_model": "base-model-id",
        "output_dir": str(tmp_path / "run"),
        "llm": {"backend": "openai", "model": "m"},
        section: {**corpus.get(section, {}), **field},
    }
    with pytest.raises(RecipeError) as raised:
        validate_recipe(data)
    assert named in str(raised.value)


def test_set_extends_a_short_form_corpus(tmp_path: Path) -> None:
    """``--set trim.corpus.max_documents=5`` on ``trim.corpus: FILE`` keeps the file (the short form is its
    source)."""
    path = tmp_path / "recipe.yaml"
    path.write_text(
        f"name: r\nlanguage: slk\nbase_model: m\noutput_dir: {tmp_path / 'run'}\ntrim: {{corpus: c.txt}}\n"
    )
    recipe = load_recipe(path, ["trim.corpus.max_documents=5", "trim.corpus.columns=[body]"])
    assert recipe.trim is not None
    assert recipe.trim.corpus == CorpusSource(source="c.txt", columns=["body"], max_documents=5)


def _trim_app(seen: dict[str, Any]) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @config_command
    def run(config: Annotated[TrimConfig, Options("trim")]) -> None:
        seen["config"] = config

    @app.command()
    def other() -> None:  # two commands: typer then takes the command name
        pass

    return app


def test_a_command_spells_a_corpus_as_options_and_merges_them_with_its_file(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}
    args = ["run", "--corpus", "c.jsonl", "--corpus-columns", "body", "--corpus-max-documents", "5"]
    result = CliRunner().invoke(_trim_app(seen), args)
    assert result.exit_code == 0, result.output
    assert seen["config"] == TrimConfig(corpus={"source": "c.jsonl", "columns": ["body"], "max_documents": 5})
    section = tmp_path / "trim.yaml"
    section.write_text("corpus: c.jsonl\n")  # the short form in the file, a corpus option on top
    result = CliRunner().invoke(
        _trim_app(seen), ["run", "--config", str(section), "--corpus-max-documents", "5"]
    )
    assert result.exit_code == 0, result.output
    assert seen["config"].corpus == CorpusSource(source="c.jsonl", max_documents=5)
    result = CliRunner().invoke(_trim_app(seen), ["run", "--corpus-columns", "body"])
    assert result.exit_code != 0 and "--corpus" in str(result.exception)  # no source: the option is named


def test_every_command_with_a_corpus_has_its_options() -> None:
    from skadapt.commands.stage import stage_command
    from skadapt.stages import BY_NAME

    expected = {
        "trim": ["--corpus", "--extra-corpus"],
        "renorm": ["--corpus"],
        "synth_sts": ["--corpus"],
        "export": ["--speed-corpus"],
    }
    for stage, corpora in expected.items():
        command = stage_command(BY_NAME[stage])
        flags = option_flags(command)
        for flag in corpora:
            assert {flag, f"{flag}-columns", f"{flag}-max-documents"} <= flags, (command, flag)
        assert "--text-column" not in flags and "--max-documents" not in flags
