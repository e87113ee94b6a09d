"""The publish stage's options (recipe section ``publish``)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator, model_validator

from skadapt.config import Section


class PublishConfig(Section):
    """Upload of the final model with its model card to the Hugging Face Hub (``skadapt publish``).

    The token comes from the environment (the ``token_env`` variable, else ``HF_TOKEN`` or the stored
    ``hf auth login``), never from the recipe.
    """

    repo_id: str = Field(description="ORG/NAME of the Hub model repository (created if missing)")
    private: bool = True
    token_env: str = Field("HF_TOKEN", description="Environment variable holding the Hub token")
    revision: str | None = Field(None, description="Branch to push to (created if missing); default main")
    commit_message: str | None = Field(None, description="Default: 'Upload <name> (skadapt)'")
    dry_run: bool = Field(False, description="Write the card and list the files; upload nothing")
    license: str | None = Field(None, description="License of the published model; default: the base model's")
    dataset_licenses: dict[str, str] = Field(
        default_factory=dict, description="Training dataset name -> license (SPDX-like id, e.g. cc-by-sa-4.0)"
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
