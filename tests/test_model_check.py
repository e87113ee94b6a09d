"""A model is checked before it is used: a model directory whose tokenizer files are missing, do not load,
or read the language's text as the unknown token is refused by `skadapt evaluate`, the stage commands and
`--check`, in one line that names the directory, what is wrong and the fix; real models pass."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from skadapt.cli import app
from skadapt.errors import SkadaptError
from skadapt.languages import LANGUAGES, get_language

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "tests" / "data" / "suite_sk" / "suite.yaml"
CORPUS = ROOT / "tests" / "data" / "sk_corpus.txt"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt")


def _without_tokenizer(tiny: Path, target: Path) -> Path:
    """A copy of a tiny model with every tokenizer file deleted (transformers then makes a 5-token one)."""
    shutil.copytree(tiny, target)
    for name in TOKENIZER_FILES:
        (target / name).unlink(missing_ok=True)
    return target


def _five_tokens(tiny: Path, target: Path) -> Path:
    """A copy of a tiny model whose tokenizer.json is a real WordPiece tokenizer of its 5 special tokens."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    shutil.copytree(tiny, target)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokenizer = Tokenizer(models.WordPiece({t: i for i, t in enumerate(specials)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.save(str(target / "tokenizer.json"))
    return target


def _truncated(tiny: Path, target: Path) -> Path:
    """A copy of a tiny model whose tokenizer.json was cut short (an interrupted copy)."""
    shutil.copytree(tiny, target)
    data = (target / "tokenizer.json").read_bytes()
    (target / "tokenizer.json").write_bytes(data[: len(data) // 2])
    return target


BROKEN = {
    "no_tokenizer_files": (_without_tokenizer, "no tokenizer files (tokenizer.json, or vocab.txt"),
    "five_token_vocabulary": (_five_tokens, "reads 100% of the Slovak sample text as the unknown token"),
    "truncated_tokenizer_json": (_truncated, "tokenizer.json: does not load"),
}


@pytest.fixture(params=list(BROKEN))
def broken(request: pytest.FixtureRequest, tiny_models: dict[str, Path], tmp_path: Path) -> tuple[Path, str]:
    """A real model directory with a broken tokenizer, and what its refusal says."""
    make, said = BROKEN[request.param]
    return make(tiny_models["wordpiece"], tmp_path / "model"), said


def _one_line(output: str, model: Path, said: str) -> None:
    [line] = [line for line in output.splitlines() if said in line]
    assert str(model) in line and "copy the tokenizer files" in line, line


def test_evaluate_refuses_before_any_scoring(broken: tuple[Path, str], tmp_path: Path) -> None:
    """Was: the model loaded with a 5-token tokenizer, every word <unk>, a score table and exit 0."""
    model, said = broken
    out = tmp_path / "report"
    args = ["evaluate", str(model), "--tasks", str(SUITE), "--language", "slk", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--cache", str(tmp_path / "cache")])
    assert result.exit_code == 1, result.output
    _one_line(result.output, model, said)
    assert "main scores" not in result.output and not out.exists()


def test_check_refuses_a_recipe_whose_base_model_has_a_broken_tokenizer(
    broken: tuple[Path, str], tmp_path: Path
) -> None:
    """Was: `--check` said OK and the run failed (or scored garbage) later."""
    model, said = broken
    recipe = {
        "name": "mc",
        "language": "slk",
        "base_model": str(model),
        "output_dir": str(tmp_path / "run"),
        "trim": {"corpus": str(CORPUS), "vocab_size": 200},
        "evaluate": {"tasks": [str(SUITE)]},
    }
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe), encoding="utf-8")
    result = CliRunner().invoke(app, ["train", str(path), "--check"], env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output
    [line] = [line for line in result.output.splitlines() if line.startswith("problem: ")]
    assert line.startswith(f"problem: base_model {model}") and said in line, line
    assert "1 of " in result.output and not (tmp_path / "run" / "trim").exists()


def test_a_stage_command_refuses_it_before_the_stage_starts(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    from skadapt.trim.config import TrimConfig
    from skadapt.trim.trimmer import trim_model

    model = _without_tokenizer(tiny_models["wordpiece"], tmp_path / "model")
    out = tmp_path / "trimmed"
    args = ["trim", str(model), "--out", str(out), "--corpus", str(CORPUS), "--language", "slk"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    _one_line(result.output, model, "no tokenizer files")
    assert not out.exists()
    with pytest.raises(SkadaptError, match="no tokenizer files"):  # what trimming a Hub download meets
        trim_model(str(model), TrimConfig(corpus=str(CORPUS)), tmp_path)


def test_the_loader_refuses_what_it_loaded(tiny_models: dict[str, Path], tmp_path: Path) -> None:
    """A model the loaders load (a Hub model after its download, a tier): its loaded tokenizer is judged."""
    from skadapt.tasks.backends import load_sentence_model
    from skadapt.tokenizer_check import ModelCheckError

    model = _five_tokens(tiny_models["wordpiece"], tmp_path / "model")
    with pytest.raises(ModelCheckError, match="reads 100% of the sample text of every known language"):
        load_sentence_model(str(model))


def test_a_language_the_tokenizer_never_saw_is_refused_by_name(tiny_models: dict[str, Path]) -> None:
    """The tiny WordPiece saw no Cyrillic letter: Ukrainian text is mostly [UNK]; Slovak passes."""
    from skadapt.tokenizer_check import ModelCheckError, check_tokenizer

    tiny = tiny_models["wordpiece"]
    assert "0% unknown in the Slovak sample" in check_tokenizer(tiny, get_language("slk"))
    with pytest.raises(ModelCheckError, match=r"of the Ukrainian sample text .* does not cover Ukrainian"):
        check_tokenizer(tiny, get_language("ukr"))


def test_tiny_and_trimmed_models_pass(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tiny models (170-300 tokens trained on a few Slovak sentences) and their trimmed copies pass on
    the Slovak sample, and on any language's without one."""
    from skadapt.tokenizer_check import MAX_UNKNOWN, check_tokenizer
    from skadapt.trim.config import TrimConfig
    from skadapt.trim.trimmer import trim_model
    from tests.support.tiny_models import FIXTURE_TEXTS

    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "cache"))
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(FIXTURE_TEXTS[:6]) + "\n", encoding="utf-8")
    for kind, tiny in tiny_models.items():
        for language in (get_language("slk"), None):
            assert "0% unknown in the Slovak sample" in check_tokenizer(tiny, language)
        trimmed = tmp_path / kind
        trimmed.mkdir()
        trim_model(str(tiny), TrimConfig(corpus=str(corpus), workers=1, parity_documents=0), trimmed)
        assert "unknown in the Slovak sample" in check_tokenizer(trimmed, get_language("slk"))
    assert MAX_UNKNOWN == 0.5


def test_multilingual_e5_reads_every_language(e5_small: Path) -> None:
    """The real multilingual-e5-small reads every registered language's sample with no unknown piece."""
    from skadapt.tokenizer_check import check_tokenizer

    for language in LANGUAGES.values():
        assert f"0% unknown in the {language.name} sample" in check_tokenizer(e5_small, language)


def test_an_offline_hub_model_is_checked_in_its_cached_copy(
    tiny_models: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Offline, --check reads the Hub model's copy in the local Hub cache: its tokenizer is checked there."""
    from huggingface_hub import constants

    from skadapt.model_sources import probe_model

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--org--tiny"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot = _without_tokenizer(tiny_models["wordpiece"], repo / "snapshots" / commit)
    with pytest.raises(SkadaptError, match=f"{snapshot}: no tokenizer files"):
        probe_model("org/tiny")  # what main said: "Hub repository, cached (offline mode)", OK
    shutil.copy2(tiny_models["wordpiece"] / "tokenizer.json", snapshot / "tokenizer.json")
    assert "0% unknown in the Slovak sample" in probe_model("org/tiny", get_language("slk"))


def test_checking_a_good_model_logs_nothing(
    tiny_models: dict[str, Path], caplog: pytest.LogCaptureFixture
) -> None:
    """The samples are longer than the tiny BPE model's 128 tokens in Ukrainian: reading them must not log
    transformers' "Token indices sequence length is longer" warning at every model load."""
    from skadapt.tasks.backends import load_sentence_model

    with caplog.at_level(logging.WARNING):
        load_sentence_model(str(tiny_models["bpe"]))
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
