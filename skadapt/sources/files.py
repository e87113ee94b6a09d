"""Local sources: the files a path or glob names, and directories written by ``save_to_disk``."""

from __future__ import annotations

import glob
from pathlib import Path

from skadapt.sources.spec import SOURCE_FORMS, SourceError

TEXT_SUFFIXES = (".txt", ".jsonl", ".json", ".csv", ".parquet")
ROW_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")
"""File types with columns (a ``.txt`` file has texts only)."""


def is_saved_dataset(path: Path) -> bool:
    """Whether ``path`` is a directory written by ``Dataset.save_to_disk``."""
    return (path / "state.json").is_file() and (path / "dataset_info.json").is_file()


def saved_dataset(path: Path) -> Path | None:
    """The saved ``Dataset`` directory a directory names (itself, or a saved ``DatasetDict``'s ``train``).

    Raises:
        SourceError: A saved ``DatasetDict`` without a ``train`` split.
    """
    if is_saved_dataset(path):
        return path
    if not (path / "dataset_dict.json").is_file():
        return None
    if is_saved_dataset(path / "train"):
        return path / "train"
    splits = sorted(p.name for p in path.iterdir() if is_saved_dataset(p))
    raise SourceError(
        f"{path}: a saved DatasetDict without a train split; name a split's directory "
        f"({', '.join(str(path / s) for s in splits) or 'it has none'})"
    )


def resolve_files(pattern: str) -> list[Path]:
    """Local files matched by a path or glob, sorted; a saved dataset is one entry, its directory.

    Raises:
        SourceError: Nothing matches, a match has an unsupported suffix, or a directory holds a saved
            dataset below its top (name that directory instead).
    """
    if glob.has_magic(pattern):
        matches = sorted(Path(p) for p in glob.glob(pattern, recursive=True))
    else:
        path = Path(pattern)
        if not path.exists():
            raise SourceError(f"{pattern}: no such file (sources: {SOURCE_FORMS})")
        if path.is_dir() and (saved := saved_dataset(path)) is not None:
            return [saved]
        if path.is_dir():
            below = sorted(path.rglob("*"))
            nested = [
                p.parent
                for p in below
                if p.name == "dataset_dict.json" or (p.name == "state.json" and is_saved_dataset(p.parent))
            ]
            if nested:
                raise SourceError(f"{pattern}: holds a saved dataset at {nested[0]}; name that directory")
            matches = [p for p in below if p.suffix in TEXT_SUFFIXES]
        else:
            matches = [path]
    files = [p for p in matches if p.is_file()]
    if not files:
        raise SourceError(f"{pattern}: matches no files")
    for file in files:
        if file.suffix not in TEXT_SUFFIXES:
            raise SourceError(
                f"{file}: unsupported file type {file.suffix!r}; use one of {', '.join(TEXT_SUFFIXES)} "
                "or a directory written by save_to_disk"
            )
    return files
