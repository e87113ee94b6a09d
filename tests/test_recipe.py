"""Recipe parsing, validation messages, overrides and the language registry."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from skadapt.languages import LANGUAGES, get_language
from skadapt.recipe import RecipeError, apply_override, load_recipe, parse_override, validate_recipe
from skadapt.stages import STAGE_NAMES as STAGES
from skadapt.templates import render_recipe

ROOT = Path(__file__).resolve().parents[1]
MINIMAL = {"name": "demo", "language": "slk", "base_model": "intfloat/multilingual-e5-small"}


def write(tmp_path: Path, data: dict | str) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["e5_sk_small", "e5_sk_large"])
def test_shipped_recipes_have_skmteb_settings(name: str) -> None:
    recipe = load_recipe(ROOT / "recipes" / f"{name}.yaml")
    assert recipe.language == "slk" and recipe.seed == 42
    assert recipe.trim.vocab_size == 60_000
    assert recipe.trim.corpus.source == "hub:HuggingFaceFW/fineweb-2:slk_Latn:train"
    ft = recipe.finetune
    assert (
        ft.batch_size,
        ft.learning_rate,
        ft.warmup_ratio,
        ft.epochs,
        ft.weight_decay,
        ft.max_seq_length,
    ) == (
        32,
        2e-5,
        0.1,
        3,
        0.01,
        256,
    )
    assert recipe.evaluate.tasks == ["MTEB(slk, v1)"]
    assert recipe.base_model.endswith("small" if "small" in name else "large")
    # skLEP's validation splits are the dev sets: the checkpoint and renormalization are chosen on them
    configs = {"retrieval": "question-answering", "sts": "sts", "nli": "nli", "rte": "rte"}
    revision = "10549a8c63542e6a0db4fcf5fcdc29b3e1b8c4e9"
    assert [(s.kind, s.source) for s in ft.dev.sets] == [
        (kind, f"hub:slovak-nlp/sklep:{config}:validation@{revision}") for kind, config in configs.items()
    ]
    assert ft.save_steps % ft.dev.steps == 0 and ft.dev.select_best
    assert recipe.run_facts().dev == ft.dev and recipe.renorm.select == "auto"
    wise = load_recipe(ROOT / "recipes" / f"{name}.yaml", ["finetune.interpolation={}"])  # the comment's line
    assert wise.finetune.interpolation is not None and wise.finetune.interpolation.grid[-1] == 1.0


def test_defaults_are_resolved_from_the_language() -> None:
    recipe = validate_recipe({**MINIMAL, "trim": {}, "renorm": {}, "evaluate": {}})
    assert recipe.output_dir == "runs/demo"
    assert recipe.trim.corpus.source == get_language("slk").corpus
    assert recipe.renorm.corpus.source == get_language("slk").corpus
    assert recipe.evaluate.tasks == ["MTEB(slk, v1)"]
    assert recipe.enabled_stages() == ["trim", "renorm", "evaluate"]


def test_finetune_dataset_default_loss_by_kind() -> None:
    recipe = validate_recipe(
        {
            **MINIMAL,
            "finetune": {
                "datasets": [
                    {"name": "qa", "kind": "pairs", "source": "qa.jsonl"},
                    {"name": "sts", "kind": "sts", "source": "sts.jsonl"},
                ]
            },
        }
    )
    assert [d.loss for d in recipe.finetune.datasets] == ["mnrl", "cosine"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            {**MINIMAL, "trim": {"vocab_sise": 10}},
            ["trim.vocab_sise: unknown field", "did you mean 'vocab_size'"],
        ),
        ({**MINIMAL, "trim": {"vocab_size": 0}}, ["trim.vocab_size", "greater than 0"]),
        ({**MINIMAL, "language": "xyz"}, ["language: unknown language 'xyz'", "slk"]),
        ({**MINIMAL, "renrom": {}}, ["renrom: unknown field", "did you mean 'renorm'", "Allowed:"]),
        (
            {**MINIMAL, "finetune": {"datasets": [], "learning_rate": -1}},
            ["finetune.learning_rate", "finetune.datasets"],
        ),
        (
            {
                **MINIMAL,
                "finetune": {"datasets": [{"name": "a", "kind": "pairs", "source": "a", "loss": "mse"}]},
            },
            ["finetune.datasets.0.loss", "'mnrl'", "'cosent'"],
        ),
        ({**MINIMAL, "renorm": {"method": "r3"}}, ["renorm.method", "'r1' or 'r2'"]),
        (
            {**MINIMAL, "finetune": {"datasets": [{"name": "a", "kind": "pairs", "source": "x"}] * 2}},
            ["finetune.datasets: dataset names must be unique, repeated: a"],
        ),
        ({"language": "slk"}, ["name: required field is missing", "base_model: required field is missing"]),
        ({**MINIMAL, "seed": "abc"}, ["seed:"]),
    ],
)
def test_bad_recipes_name_the_field(tmp_path: Path, data: dict, expected: list[str]) -> None:
    path = write(tmp_path, data)
    with pytest.raises(RecipeError) as error:
        load_recipe(path)
    message = str(error.value)
    assert message.startswith(f"{path}: invalid recipe")
    for fragment in expected:
        assert fragment in message
    assert "Traceback" not in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "the recipe is empty"),
        ("- a\n- b\n", "must be a mapping"),
        ("name: [unclosed\n", "not valid YAML"),
    ],
)
def test_unreadable_recipe_files(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(RecipeError, match=expected):
        load_recipe(write(tmp_path, text))


def test_missing_recipe_file(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match="recipe file not found"):
        load_recipe(tmp_path / "nope.yaml")


def test_overrides_are_typed_and_validated(tmp_path: Path) -> None:
    path = ROOT / "recipes" / "e5_sk_small.yaml"
    recipe = load_recipe(
        path,
        [
            "finetune.epochs=1",
            "seed=7",
            "finetune.datasets.0.loss=cached_mnrl",
            "output_dir=/tmp/x",
            "renorm.method=r1",
        ],
    )
    assert recipe.finetune.epochs == 1 and recipe.seed == 7
    assert recipe.finetune.datasets[0].loss == "cached_mnrl"
    assert recipe.output_dir == "/tmp/x" and recipe.renorm.method == "r1"
    with pytest.raises(RecipeError, match=r"finetune.epochs"):
        load_recipe(path, ["finetune.epochs=-1"])
    with pytest.raises(RecipeError, match=r"finetune.epoch: unknown field"):
        load_recipe(path, ["finetune.epoch=1"])
    with pytest.raises(RecipeError, match="expected KEY=VALUE"):
        load_recipe(path, ["finetune.epochs"])
    with pytest.raises(RecipeError, match="not an index"):
        load_recipe(path, ["finetune.datasets.9.loss=mnrl"])


def test_override_creates_missing_sections() -> None:
    data = dict(MINIMAL)
    path, value = parse_override("trim.vocab_size=1000")
    apply_override(data, path, value)
    assert validate_recipe(data).trim.vocab_size == 1000


def test_registry_has_the_required_languages() -> None:
    required = {"slk", "ces", "pol", "slv", "hrv", "hun", "lit", "lav", "est", "dan", "nld", "eng"}
    assert required <= set(LANGUAGES)
    for language in LANGUAGES.values():
        assert len(language.code) == 3 and language.name and language.native_name and language.script
        assert language.eval_tasks, f"{language.code} has no evaluation tasks"
        assert language.corpus.startswith("hub:")


def test_registry_entries_match_the_libraries() -> None:
    import mteb
    import wordfreq

    available = set(wordfreq.available_languages())
    for language in LANGUAGES.values():
        if language.wordfreq:
            assert language.wordfreq in available, language.code
        if language.mteb_benchmark:
            mteb.get_benchmark(language.mteb_benchmark)
        for task in language.mteb_tasks:
            languages = mteb.get_task(task).metadata.languages  # ISO 639-3 codes of its subsets
            assert language.code in languages, f"{task} has no {language.code} subset"
    assert len(mteb.get_benchmark("MTEB(slk, v1)").tasks) == 31


@pytest.mark.parametrize("code", sorted(LANGUAGES))
def test_recipe_new_is_valid_for_every_language(tmp_path: Path, code: str) -> None:
    text = render_recipe(get_language(code), "intfloat/multilingual-e5-small")
    recipe = load_recipe(write(tmp_path, text))
    assert recipe.language == code
    assert recipe.trim.corpus.source == get_language(code).corpus
    assert set(recipe.enabled_stages()) <= set(STAGES)


def test_recipe_new_slovak_equals_the_shipped_skmteb_recipe(tmp_path: Path) -> None:
    """Slovak's public training data lives in the registry: `recipe new --language slk` is e5_sk_small."""
    text = render_recipe(get_language("slk"), "intfloat/multilingual-e5-small")
    new = load_recipe(write(tmp_path, text))
    shipped = load_recipe(ROOT / "recipes" / "e5_sk_small.yaml")
    assert new.finetune == shipped.finetune
    assert new.trim == shipped.trim
    czech = load_recipe(write(tmp_path, render_recipe(get_language("ces"), "m")))  # no public data known:
    assert [d.source for d in czech.finetune.datasets] == ["runs/e5_cs_small/synth_sts/dataset"]  # synthetic


@pytest.mark.parametrize("path", sorted((ROOT / "recipes").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_mteb_name_of_the_shipped_recipes_exists_in_the_installed_mteb(path: Path) -> None:
    """The pyproject floor (mteb>=2.26.1) is the first release that has all of them; each is checked here."""
    from skadapt.tasks.selection import mteb_tasks
    from skadapt.tasks.suite import is_suite_spec

    recipe = load_recipe(path)
    specs = [
        *(recipe.evaluate.tasks if recipe.evaluate else []),
        *(recipe.robustness.tasks if recipe.robustness else []),
    ]
    names = [spec for spec in specs if not is_suite_spec(spec)]
    for spec in names:
        assert mteb_tasks(spec, recipe.language), spec  # unknown names and missing languages raise
    assert names or path.stem == "demo_sk"
