"""A model's tokenizer, checked before the model is used: its files are there and load, and it reads ordinary
text of the run's language as words, not as the unknown token.

sentence-transformers loads a model directory whose tokenizer files are missing without a word: transformers
builds a new tokenizer of the model's class that holds only its special tokens (5 for BERT), every word
becomes the unknown token, and the model scores garbage with exit 0. A tokenizer that is not the model's
(another model's, a toy one) does the same less visibly. So every model reference a run starts from
(:func:`skadapt.model_sources.resolve_model`), the preflight (:func:`skadapt.model_sources.probe_model`) and
the model loaders (:func:`check_loaded`) refuse such a model, naming the directory, what is wrong and the
fix. Only the tokenizer is read (never the weights): the check costs what loading ``tokenizer.json`` costs.

The text: the language's :attr:`~skadapt.languages.Language.sample_text`; without a language (``skadapt
evaluate`` with no ``--language``), every registered language's, and the tokenizer passes when it reads one
of them. A tokenizer fails when more than :data:`MAX_UNKNOWN` of the pieces are the unknown id.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from skadapt.errors import SkadaptError
from skadapt.languages import LANGUAGES, Language

MAX_UNKNOWN = 0.5
"""The largest share of a sample's pieces that may be the unknown id. A tokenizer of the language reads its
sample with next to none (multilingual-e5: 0% in every language; the tests' tokenizers of 170-300 tokens
trained on sixteen Slovak and English sentences: 0% in Slovak, at most 20% in the other Latin-script
languages, 76% in Ukrainian, whose letters they never saw); a tokenizer without the model's vocabulary (the
5 special tokens transformers keeps when the files are missing) reads all of it as unknown (100%). Half lies
far from both: a small or partial vocabulary passes, an empty or foreign one does not."""
TOKENIZER_JSON = "tokenizer.json"
FIX = (
    "copy the tokenizer files of the model it was made from into it "
    "(AutoTokenizer.from_pretrained(SOURCE).save_pretrained(DIR)), or give another model"
)


class ModelCheckError(SkadaptError):
    """A model whose tokenizer is missing, does not load, or reads the language's text as unknown."""


def tokenizer_dir(model_dir: Path) -> Path | None:
    """Where a model directory's tokenizer is: its Transformer module's directory (the directory itself for
    a plain transformers model); None for a model without one (a static model's own tokenizer)."""
    modules = model_dir / "modules.json"
    if not modules.is_file():
        return model_dir if (model_dir / "config.json").is_file() else None
    try:
        entries = json.loads(modules.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # not readable: sentence-transformers' own error says so when it loads
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and str(entry.get("type", "")).rsplit(".", 1)[-1] == "Transformer":
            return model_dir / str(entry.get("path") or "")
    return None


def check_tokenizer(model_dir: str | Path, language: Language | None = None) -> str:
    """Check the tokenizer of a local model directory (see the module doc); what was found, as a note.

    What the tokenizer makes of the samples is kept per directory and state of its files (names, sizes,
    times): a run that resolves the same model again, for any language, does not read it again.

    Raises:
        ModelCheckError: No tokenizer files, they do not load, or the sample text is mostly unknown.
    """
    path = Path(model_dir)
    where = tokenizer_dir(path)
    if where is None or not where.is_dir():
        return "no transformer tokenizer to check"
    files = tuple(
        sorted((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in where.iterdir() if f.is_file())
    )
    return _verdict(_read(str(path), str(where), files), str(path), language)


class Reading(NamedTuple):
    """What a tokenizer makes of the samples: its size, its unknown token, and per language (ISO 639-3
    code) the share of the sample's pieces that are unknown; no shares for a tokenizer skadapt cannot run."""

    size: int
    unknown: str
    shares: dict[str, float]


@functools.lru_cache(maxsize=64)
def _read(model_dir: str, where: str, files: tuple[Any, ...]) -> Reading:
    """The :class:`Reading` of a directory's tokenizer in one state of its files (``files``, the cache key's
    part for them).

    Raises:
        ModelCheckError: No tokenizer files, or they do not load.
    """
    del files
    tokenizer_path = Path(where) / TOKENIZER_JSON
    if not tokenizer_path.is_file():
        return reading(_transformers_tokenizer(model_dir, Path(where)))
    from tokenizers import Tokenizer

    try:
        loaded = Tokenizer.from_file(str(tokenizer_path))
    except Exception as error:  # a truncated or foreign file: tokenizers' message says where
        said = f"{type(error).__name__}: {error}".splitlines()[0][:200]
        raise ModelCheckError(f"{tokenizer_path}: does not load ({said}); {FIX}") from None
    return reading(loaded)


def _transformers_tokenizer(model_dir: str, where: Path) -> Any:
    """The tokenizer transformers loads from a directory without ``tokenizer.json``, once the vocabulary
    files its class reads (``vocab.txt``, ``sentencepiece.bpe.model``, ...) are found there.

    Raises:
        ModelCheckError: It does not load, or its class's vocabulary files are not there.
    """
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(where))
    except Exception as error:  # no config to tell the class, a broken vocabulary file
        said = f"{type(error).__name__}: {error}".splitlines()[0][:200]
        raise ModelCheckError(
            f"{model_dir}: no {TOKENIZER_JSON}, and its tokenizer does not load from {where} ({said}); {FIX}"
        ) from None
    names = {key: name for key, name in type(tokenizer).vocab_files_names.items() if key != "tokenizer_file"}
    if any(not (where / name).is_file() for name in names.values()):
        inside = "" if where == Path(model_dir) else f" in {where}"
        wanted = " + ".join(names.values())
        raise ModelCheckError(
            f"{model_dir}: no tokenizer files{inside} ({TOKENIZER_JSON}, or {wanted} for its "
            f"{type(tokenizer).__name__}): transformers would make an empty tokenizer that reads every word "
            f"as {tokenizer.unk_token}; {FIX}"
        )
    return tokenizer


def check_loaded(model: Any, where: str, language: Language | None = None) -> None:
    """Check the tokenizer of a loaded sentence-transformers model (nothing is read again): a Hub model
    after its download, whatever the loaders load.

    Raises:
        ModelCheckError: The sample text is mostly unknown (for a local directory whose tokenizer files are
            missing, :func:`check_tokenizer`'s message, which says so).
    """
    tokenizer = getattr(model, "tokenizer", None)
    if tokenizer is None:
        return
    try:
        _verdict(reading(tokenizer), where, language)
    except ModelCheckError:
        if Path(where).is_dir():
            check_tokenizer(where, language)  # the directory's own diagnosis (missing files), if it has one
        raise


def reading(tokenizer: Any) -> Reading:
    """What a transformers or ``tokenizers`` tokenizer makes of every language's sample: the share of its
    pieces (no special tokens added) that are the unknown id (0 for a tokenizer without one, such as
    byte-level BPE)."""
    found = _encoder(tokenizer)
    if found is None:
        return Reading(0, "", {})
    encode, unknown = found
    size = tokenizer.get_vocab_size() if hasattr(tokenizer, "get_vocab_size") else len(tokenizer)
    shares = {}
    for code, entry in LANGUAGES.items():
        ids = encode(entry.sample_text) if entry.sample_text else []
        if ids:
            shares[code] = sum(1 for i in ids if i == unknown) / len(ids) if unknown is not None else 0.0
    convert = getattr(tokenizer, "id_to_token", None) or getattr(tokenizer, "convert_ids_to_tokens", None)
    return Reading(size, str(convert(unknown)) if convert and unknown is not None else "", shares)


def _verdict(read: Reading, where: str, language: Language | None) -> str:
    """A note on a tokenizer's :class:`Reading`, or its refusal for ``language`` (None: for every
    registered language).

    Raises:
        ModelCheckError: More than :data:`MAX_UNKNOWN` of the language's sample pieces (of every language's,
            without a language or a sample of it) are the unknown id.
    """
    shares = read.shares
    if language is not None and language.code in shares:
        shares = {language.code: shares[language.code]}
    if not shares:
        return "tokenizer loads"
    best = min(shares, key=shares.__getitem__)
    name = LANGUAGES[best].name
    if shares[best] <= MAX_UNKNOWN:
        return f"tokenizer: {read.size:,} tokens, {shares[best]:.0%} unknown in the {name} sample"
    text = f"the {name} sample text" if len(shares) == 1 else "the sample text of every known language"
    hint = f" or does not cover {name}" if len(shares) == 1 else ""
    raise ModelCheckError(
        f"{where}: its tokenizer ({read.size:,} tokens) reads {shares[best]:.0%} of {text} as the unknown "
        f"token {read.unknown} (at most {MAX_UNKNOWN:.0%}): it is not the model's own{hint}; {FIX}"
    )


def _encoder(tokenizer: Any) -> tuple[Callable[[str], list[int]], int | None] | None:
    """(text -> ids without special tokens, the unknown id) of a transformers or a ``tokenizers``
    tokenizer; None for anything else."""
    if hasattr(tokenizer, "unk_token_id") and callable(tokenizer):
        encode = functools.partial(tokenizer, add_special_tokens=False, verbose=False)  # no "longer than"
        return (lambda text: encode(text)["input_ids"]), tokenizer.unk_token_id
    model = getattr(tokenizer, "model", None)
    if model is None or not hasattr(tokenizer, "token_to_id") or not hasattr(model, "__getstate__"):
        return None
    state = json.loads(model.__getstate__())  # the model's settings: Unigram's unk_id, the others' unk_token
    unknown = state.get("unk_id")
    if unknown is None and state.get("unk_token") is not None:
        unknown = tokenizer.token_to_id(state["unk_token"])
    return (lambda text: tokenizer.encode(text, add_special_tokens=False).ids), unknown
