"""Licenses of what a published model derives from: the base model and each training dataset.

A license is read, never guessed: the base model's from its card's YAML metadata (its local directory, or
the Hugging Face cache for a Hub id -- no network), a training dataset's from the recipe/report entry
(``license``), the ``publish.dataset_licenses`` / ``--dataset-licenses NAME=LICENSE`` options, or the
dataset card in the local Hugging Face cache. What stays unknown is shown as unknown.

Non-commercial (``cc-by-nc-*``, ``*-nc-*``) and share-alike (``*-sa-*``) licenses are flagged: the card says
so and the command warns, so that no restriction is inherited silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skadapt.cards import UNKNOWN, DataLicense


def card_license(readme: Path) -> str | None:
    """The ``license`` of a card's YAML metadata (``license_name`` for ``other``), or None."""
    from huggingface_hub import metadata_load

    try:
        metadata = metadata_load(readme) if readme.is_file() else None
    except (OSError, ValueError):
        return None
    if not isinstance(metadata, dict):
        return None
    value = metadata.get("license")
    if value == "other" and metadata.get("license_name"):
        value = metadata["license_name"]
    if isinstance(value, list):
        value = "/".join(map(str, value))
    return str(value) if value else None


def cached_card(repo_id: str, repo_type: str = "model") -> Path | None:
    """A Hub repository's ``README.md`` in the local Hugging Face cache (never downloads), or None."""
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(repo_id, "README.md", repo_type=repo_type)
    except Exception:  # an id the cache layout cannot hold (a path, a malformed id)
        return None
    return Path(found) if isinstance(found, str) else None


def base_model_license(base_model: str | None, local_dir: str | Path | None = None) -> str | None:
    """The base model's license: from its local directory's card, else the cached Hub card, else None."""
    if local_dir and Path(local_dir).is_dir():
        found = card_license(Path(local_dir) / "README.md")
        if found:
            return found
    if base_model and Path(base_model).is_dir():
        return card_license(Path(base_model) / "README.md")
    if base_model and base_model.count("/") == 1:
        card = cached_card(base_model)
        return card_license(card) if card else None
    return None


def _hub_dataset_id(source: str) -> str | None:
    from skadapt.sources import SourceError, parse_source

    try:
        spec = parse_source(source)
    except SourceError:
        return None
    return spec.name if spec.kind == "hub" else None


def dataset_licenses(datasets: list[dict[str, Any]], given: dict[str, str]) -> list[DataLicense]:
    """The license of each training dataset (``name``/``source``/optional ``license`` entries).

    Precedence: the entry's own ``license`` (a recipe field), then ``given`` (options/recipe
    ``publish.dataset_licenses``), then the dataset card of a ``hub:`` source in the local cache.
    """
    result = []
    for entry in datasets:
        name, source = str(entry.get("name")), str(entry.get("source", ""))
        license_id, origin = entry.get("license"), "recipe"
        if not license_id and name in given:
            license_id, origin = given[name], "option"
        if not license_id and (dataset_id := _hub_dataset_id(source)):
            card = cached_card(dataset_id, "dataset")
            license_id, origin = (card_license(card) if card else None), "dataset card"
        result.append(DataLicense(name, source, license_id or None, origin if license_id else None))
    return result


def unknown_names(given: dict[str, str], datasets: list[DataLicense]) -> list[str]:
    """Names in ``given`` that are no training dataset (a typo in ``--dataset-licenses``)."""
    known = {d.name for d in datasets}
    return sorted(set(given) - known)


def license_warnings(
    model_license: str | None, base_license: str | None, datasets: list[DataLicense]
) -> list[str]:
    """One line per license matter the publisher must decide on (also written into the card)."""
    warnings = []
    for data in datasets:
        if data.restrictions:
            warnings.append(
                f"training dataset {data.name!r} ({data.source}) is licensed {data.license} "
                f"({' and '.join(data.restrictions)}): the model is trained on it, the card says so; check "
                f"that the model's license ({model_license or UNKNOWN}) respects its terms"
            )
        elif data.license is None:
            warnings.append(
                f"training dataset {data.name!r} ({data.source}): license unknown; pass --dataset-licenses "
                f"{data.name}=LICENSE (or publish.dataset_licenses in the recipe)"
            )
    if base_license is None:
        warnings.append("the base model's license is unknown (no license in its card); pass --license")
    if model_license is None:
        warnings.append("no license for the published model: the card says 'unknown'; pass --license")
    return warnings
