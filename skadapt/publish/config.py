"""The publish stage's options (recipe section ``publish``); ``skadapt publish`` and ``skadapt
publish-dataset`` derive their options from it."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator, model_validator

from skadapt.config import Section


class PublishConfig(Section):
    """Upload to the Hugging Face Hub: the final model with its card (``skadapt publish``, the recipe's
    ``publish`` stage) or a synthetic STS dataset (``skadapt publish-dataset``).

    The token comes from the environment (the ``token_env`` variable, else ``HF_TOKEN`` or the stored
    ``hf auth login``), never from the recipe.
    """

    repo_id: str = Field(description="ORG/NAME of the Hub repository (created if missing)")
    private: bool = Field(
        True, description="Create a new repository private (an existing repository keeps its visibility)"
    )
    token_env: str = Field(
        "HF_TOKEN",
        description="Environment variable holding the Hub token (else HF_TOKEN, else the stored "
        "`hf auth login`)",
    )
    revision: str | None = Field(
        None, description="Branch to push to, created if missing (default: the repository's default branch)"
    )
    commit_message: str | None = Field(
        None, description="Commit message (default: 'Upload NAME with skadapt', NAME the repository's)"
    )
    dry_run: bool = Field(
        False, description="Write the card and the upload folder, list the files; upload nothing (no network)"
    )
    license: str | None = Field(
        None,
        description="License id of what is published, e.g. mit, cc-by-sa-4.0 (default: the base model's "
        "license for a model, the generation card's for a dataset)",
    )
    dataset_licenses: dict[str, str] = Field(
        default_factory=dict,
        description="Training dataset name -> license id, e.g. nli=cc-by-sa-4.0 (a license in the "
        "dataset's own recipe entry wins; else the dataset card in the local Hugging Face cache)",
    )

    @model_validator(mode="before")
    @classmethod
    def _no_token(cls, data: Any) -> Any:
        if isinstance(data, dict) and "token" in data:
            raise ValueError("never put a token in a recipe: set it in the environment (token_env, HF_TOKEN)")
        return data

    @field_validator("repo_id")
    @classmethod
    def _repo_id(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*", value) or ".." in value:
            raise ValueError(f"repo_id must be ORG/NAME (letters, digits, '-', '_', '.'), got {value!r}")
        return value

    @field_validator("dataset_licenses")
    @classmethod
    def _dataset_licenses(cls, value: dict[str, str]) -> dict[str, str]:
        licenses = {str(name).strip(): str(license_id).strip() for name, license_id in value.items()}
        empty = sorted(name for name, license_id in licenses.items() if not license_id)
        if empty:
            missing = ", ".join(empty)
            raise ValueError(f"expected NAME=LICENSE, e.g. nli=cc-by-sa-4.0 (no license for {missing})")
        return licenses

    @property
    def message(self) -> str:
        """The commit message (``commit_message``, else ``Upload NAME with skadapt``)."""
        return self.commit_message or f"Upload {self.repo_id.rsplit('/', 1)[-1]} with skadapt"
