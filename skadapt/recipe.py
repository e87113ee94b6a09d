"""The YAML recipe: strict pydantic models, loading, ``--set`` overrides and readable errors."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from skadapt.errors import SkadaptError
from skadapt.languages import UnknownLanguageError, get_language

STAGES: tuple[str, ...] = ("synth_sts", "trim", "finetune", "renorm", "evaluate", "robustness", "publish")
"""Pipeline stages in run order; each is an optional recipe section of the same name."""

MODEL_STAGES: tuple[str, ...] = ("trim", "finetune", "renorm")
"""Stages whose output is a model directory that the next stage takes as input."""

LLM_STAGES: tuple[str, ...] = ("synth_sts", "robustness")
"""Stages that need the recipe's ``llm`` section."""

PositiveInt = Annotated[int, Field(gt=0)]
PositiveFloat = Annotated[float, Field(gt=0)]
Fraction = Annotated[float, Field(ge=0, le=1)]


def require_unique_names(items: list[Any], what: str) -> list[Any]:
    """``items`` (objects with a ``name``) unchanged, or a ValueError listing the repeated names."""
    names = [item.name for item in items]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"{what} names must be unique, repeated: {', '.join(repeated)}")
    return items


class Section(BaseModel):
    """Base of every recipe model: unknown fields are errors, assignments are validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class TrimConfig(Section):
    """Vocabulary trimming (issue: trim)."""

    corpus: str | None = Field(
        None, description="Source spec: file/glob, hub:DATASET[:CONFIG[:SPLIT]], wordfreq:LANG"
    )
    text_column: str = "text"
    vocab_size: PositiveInt = 60_000
    min_frequency: PositiveInt = 1
    max_documents: PositiveInt | None = None
    max_bytes: PositiveInt | None = None
    keep: list[str] = Field(default_factory=list, description="Words or tokens always kept")
    extra_corpus: str | None = Field(None, description="Second source, e.g. wordfreq:eng")
    extra_vocab_size: int = Field(0, ge=0)
    workers: PositiveInt | None = Field(None, description="1: count on one thread; else all cores")
    batch_size: PositiveInt = 1000
    parity_documents: int = Field(
        1000, ge=0, description="Counted corpus texts sampled (recipe seed) for the parity check"
    )


DatasetKind = Literal["pairs", "triplets", "nli", "sts", "rte"]
LossName = Literal["mnrl", "cached_mnrl", "cosine", "cosent"]
DEFAULT_LOSS: dict[str, str] = {
    "pairs": "mnrl",
    "triplets": "mnrl",
    "nli": "mnrl",
    "rte": "mnrl",
    "sts": "cosine",
}
ANCHOR_DATASET = "anchor"
"""Name of the distillation dataset that ``finetune.anchor`` adds to the multi-task round."""


class FinetuneDataset(Section):
    """One training dataset; its kind fixes the columns it needs and the default loss."""

    name: str
    kind: DatasetKind
    source: str = Field(description="hub:DATASET[:CONFIG[:SPLIT]] or a local .jsonl/.csv/.parquet file")
    columns: dict[str, str] = Field(default_factory=dict, description="role -> column name in the source")
    loss: LossName | None = None
    label_map: dict[str, str] = Field(
        default_factory=dict, description="source label -> entailment/neutral/..."
    )
    score_range: tuple[float, float] = (0.0, 5.0)
    prompts: dict[str, str] | None = Field(None, description="role -> prompt; default query:/passage:")
    max_samples: PositiveInt | None = None

    @model_validator(mode="after")
    def _default_loss(self) -> FinetuneDataset:
        if self.loss is None:
            self.loss = DEFAULT_LOSS[self.kind]  # type: ignore[assignment]
        if self.score_range[0] >= self.score_range[1]:
            raise ValueError(f"score_range must be [low, high] with low < high, got {list(self.score_range)}")
        return self


class DevSetConfig(Section):
    """One dev set: ``sts`` (sentence1, sentence2, score), ``retrieval`` (query, positive) or
    ``triplets`` (anchor, positive, negative)."""

    kind: Literal["sts", "retrieval", "triplets"]
    source: str
    columns: dict[str, str] = Field(default_factory=dict)
    score_range: tuple[float, float] = (0.0, 5.0)


DEV_SET_FIELDS = tuple(DevSetConfig.model_fields)


class DevSets(Section):
    """Dev sets: either one set written inline (``{kind, source, ...}``) or several under ``sets``; with
    several, the dev score is the mean of their main scores."""

    sets: list[DevSetConfig] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _inline_set(cls, data: Any) -> Any:
        if isinstance(data, dict) and "sets" not in data and any(k in data for k in DEV_SET_FIELDS):
            inline = {k: v for k, v in data.items() if k in DEV_SET_FIELDS}
            return {**{k: v for k, v in data.items() if k not in DEV_SET_FIELDS}, "sets": [inline]}
        return data


class DevEvaluation(DevSets):
    """Dev evaluation during training, used for best-checkpoint selection and interpolation."""

    steps: PositiveInt = 500
    select_best: bool = Field(True, description="Keep the checkpoint with the best dev score")


class AnchorConfig(Section):
    """Distillation towards the frozen starting model's embeddings on corpus text (MSELoss).

    Mixed into the multi-task round as one more dataset; its loss is ``weight`` x the mean squared
    Euclidean distance between the trained and the starting model's embeddings (2(1 - cos) for
    normalized embeddings).
    """

    corpus: str = Field(description="Source spec of the anchor texts (file/glob or hub:...)")
    text_column: str = "text"
    samples: PositiveInt = 2000
    weight: PositiveFloat = 1.0
    prompt: str | None = Field(
        None, description="Model prompt name the texts are encoded with; default: document/passage"
    )
    min_chars: PositiveInt = 32
    max_chars: PositiveInt = 512


def _default_grid() -> list[float]:
    return [round(i / 10, 1) for i in range(11)]


class InterpolationConfig(Section):
    """WiSE-FT: weights (1 - a) * start + a * fine-tuned, with ``a`` chosen on the dev set from ``grid``."""

    grid: list[Fraction] = Field(default_factory=_default_grid, min_length=1)


class ContaminationConfig(Section):
    """Overlap check between training texts and evaluation test texts."""

    threshold: Fraction = 0.01
    allow: bool = False
    action: Literal["stop", "drop"] = Field(
        "stop",
        description="stop: over the threshold the stage stops; drop: every training row any of whose "
        "texts is an evaluation test text is removed first (counted per dataset and task)",
    )


class FinetuneConfig(Section):
    """Multi-task contrastive fine-tuning (SkMTEB defaults)."""

    datasets: list[FinetuneDataset] = Field(min_length=1)
    batch_size: PositiveInt = 32
    learning_rate: PositiveFloat = 2e-5
    warmup_ratio: Fraction = 0.1
    epochs: PositiveFloat = 3
    max_steps: PositiveInt | None = None
    weight_decay: Annotated[float, Field(ge=0)] = 0.01
    max_seq_length: PositiveInt = 256
    sampling: Literal["proportional", "round_robin"] = "proportional"
    mini_batch_size: PositiveInt = 32
    gradient_accumulation_steps: PositiveInt = 1
    bf16: bool = False
    save_steps: PositiveInt = 500
    save_total_limit: PositiveInt = 2
    dev: DevEvaluation | None = None
    anchor: AnchorConfig | None = None
    interpolation: InterpolationConfig | None = None
    report_to: Literal["none", "tensorboard", "wandb", "trackio"] = "none"
    contamination: ContaminationConfig = Field(default_factory=ContaminationConfig)

    @field_validator("datasets")
    @classmethod
    def _unique_names(cls, datasets: list[FinetuneDataset]) -> list[FinetuneDataset]:
        return require_unique_names(datasets, "dataset")

    @model_validator(mode="after")
    def _interpolation_needs_dev(self) -> FinetuneConfig:
        if self.interpolation is not None and self.dev is None:
            raise ValueError("interpolation chooses its mixing coefficient on the dev set: add finetune.dev")
        if self.anchor is not None and any(d.name == ANCHOR_DATASET for d in self.datasets):
            raise ValueError(f"dataset name {ANCHOR_DATASET!r} is reserved for finetune.anchor")
        return self


class RenormConfig(Section):
    """Corpus-mean removal (R1: e - mu, R2: remove the projection on mu-hat), then re-normalization.

    A stage that can make the model worse earns its place on dev data: with ``select: dev`` (the default
    whenever dev sets exist) none, R1 and R2 are scored on the dev sets and the best is kept (ties: none).
    """

    method: Literal["r1", "r2"] = Field("r2", description="The method applied with select: method")
    select: Literal["auto", "dev", "method"] = Field(
        "auto",
        description="dev: keep the best of none/r1/r2 on the dev sets; method: apply `method`; "
        "auto: dev when dev sets exist (renorm.dev, else finetune.dev), else method",
    )
    dev: DevSets | None = Field(None, description="Dev sets of the choice; default: finetune.dev's sets")
    corpus: str | None = None
    text_column: str = "text"
    samples: PositiveInt = 100_000
    max_documents: PositiveInt | None = Field(
        200_000, description="Texts read from the corpus; the sample is a reservoir sample of all of them"
    )
    prompt: Literal["none", "query", "passage"] = "none"
    min_chars: PositiveInt = 64
    max_chars: PositiveInt = 512

    @model_validator(mode="after")
    def _char_window(self) -> RenormConfig:
        if self.min_chars > self.max_chars:
            raise ValueError(f"min_chars ({self.min_chars}) must not exceed max_chars ({self.max_chars})")
        return self


ModelRef = Literal["base", "trim", "finetune", "renorm", "final"]


class EvaluateConfig(Section):
    """MTEB-style evaluation of one or more of the run's models."""

    tasks: list[str] = Field(
        default_factory=list, description="mteb benchmark/task names or suite .yaml files"
    )
    models: list[ModelRef] = Field(default_factory=lambda: ["final"])
    prompt_policy: dict[str, str] = Field(default_factory=dict, description="task type -> prompt")
    dataset_mirrors: dict[str, str] = Field(
        default_factory=dict, description="mteb task -> local dataset dir"
    )
    batch_size: PositiveInt = 32
    tost_margin: PositiveFloat = 2.0
    alpha: Annotated[float, Field(gt=0, lt=0.5)] = 0.05
    bootstrap: int = Field(1000, ge=0, description="Bootstrap resamples for per-task CIs (0 = none)")
    fail_on_harm: bool = Field(False, description="Exit non-zero when a stage harms its input model")


class LLMConfig(Section):
    """The LLM every LLM-using stage (synthetic STS, robustness) generates with."""

    backend: Literal["vllm", "openai", "transformers"] = "openai"
    model: str = Field(
        min_length=1, description="Model name (server/vLLM), Hub id or local dir, or a .gguf file path"
    )
    revision: str | None = Field(None, description="Model revision; part of every generation cache key")
    base_url: str | list[str] | None = Field(
        None, description="openai: server URL, or several (requests are spread over them)"
    )
    api_key_env: str = Field("OPENAI_API_KEY", description="Variable holding the API key (openai)")
    temperature: Annotated[float, Field(ge=0, le=2)] = 0.7
    top_p: Annotated[float, Field(gt=0, le=1)] = 1.0
    max_tokens: PositiveInt = 512
    thinking: bool | None = Field(
        False, description="Reasoning models: False sends enable_thinking=False; null sends nothing"
    )
    attempts: PositiveInt = Field(3, description="Tries per item when an output fails its checks")
    concurrency: PositiveInt = Field(8, description="openai: requests in flight at once")
    timeout_s: PositiveFloat = 120.0
    http_retries: int = Field(4, ge=0, description="openai: retries with backoff on 429/5xx/timeouts")
    structured: Literal[
        "auto", "json_schema", "json_object_schema", "structured_outputs", "guided_json", "prompt_only"
    ] = Field(
        "auto",
        description="openai: how the JSON schema is sent (auto: probe the server once and remember; "
        "json_schema: OpenAI/vLLM/Ollama/llama-server; json_object_schema: llama-cpp-python; "
        "structured_outputs, guided_json: vLLM extras; prompt_only: the prompt alone asks for JSON)",
    )
    tensor_parallel_size: PositiveInt = 1
    data_parallel_size: PositiveInt = 1
    device: str | None = Field(None, description="transformers: cpu, cuda, ... (default: cuda if present)")
    batch_size: PositiveInt | None = Field(
        None, description="transformers: prompts generated together (default 1 on CPU, 16 on GPU)"
    )
    cache: str | None = Field(None, description="Generation cache file (default $SKADAPT_CACHE/llm.sqlite)")


class SynthSTSConfig(Section):
    """SkMTEB-style synthetic STS: six LLM-written variants (scores 0-5) per source sentence."""

    source: str = Field(description="Corpus source spec the source sentences are drawn from")
    text_column: str = "text"
    n_sources: PositiveInt = 100
    min_chars: PositiveInt = 60
    max_chars: PositiveInt = 200
    max_documents: PositiveInt | None = Field(None, description="Corpus texts read to find sources")
    temperature: Annotated[float, Field(ge=0, le=2)] = Field(1.0, description="SkMTEB: 1.0")
    prompt_template: str | None = Field(None, description="A prompt file replacing the built-in one")
    annotation_sample_per_level: PositiveInt = 50
    annotators: PositiveInt = 3
    contamination_tasks: list[str] | None = Field(
        None, description="Evaluation tasks the train split must not overlap (default: the language's)"
    )
    contamination: ContaminationConfig = Field(default_factory=ContaminationConfig)

    @model_validator(mode="after")
    def _length_range(self) -> SynthSTSConfig:
        if self.contamination.action != "stop":
            raise ValueError(
                "contamination.action: drop applies to fine-tuning data; synth_sts stops over the threshold"
            )
        if self.min_chars >= self.max_chars:
            raise ValueError(f"min_chars ({self.min_chars}) must be below max_chars ({self.max_chars})")
        return self


class RobustnessConfig(Section):
    """Evaluation under LLM-made transformations of the test texts (uses the recipe's ``llm``)."""

    preset: Literal["pteb", "hteb", "hteb-min"] | None = Field(
        None, description="Transformations, seeds and sampling of PTEB or HTEB (fields set here win)"
    )
    transforms: list[str] | None = Field(None, description="Transformation names, or [all]")
    seeds: list[int] | None = Field(None, description="Default: the preset's, else 1337, 1338, 1339")
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    top_p: Annotated[float, Field(gt=0, le=1)] | None = None
    tasks: list[str] = Field(default_factory=list, description="Default: evaluate.tasks, else the language's")
    models: list[ModelRef] = Field(default_factory=lambda: ["base", "final"])
    prompt_policy: dict[str, str] | None = Field(None, description="Default: evaluate.prompt_policy")
    batch_size: PositiveInt = 32

    @field_validator("transforms")
    @classmethod
    def _known_transforms(cls, names: list[str] | None) -> list[str] | None:
        if names is None:
            return None
        from skadapt.robustness.transforms import resolve_transforms

        return resolve_transforms(names)


class HumanConfig(Section):
    """Human baselines (HUME): annotation sheets for a subset of the evaluation tasks, and the human scores
    beside the models' in the evaluation report (``skadapt human export|score``)."""

    dir: str = Field(description="Where the sheets, the subset suite and the human results live")
    tasks: list[str] = Field(default_factory=list, description="Default: evaluate.tasks")
    annotators: PositiveInt = 2
    sizes: dict[str, PositiveInt] = Field(
        default_factory=dict, description="Task type -> items drawn (default: HUME's sizes)"
    )


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


class Recipe(Section):
    """A whole adaptation run: base model + one optional section per stage."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
    language: str
    base_model: str
    output_dir: str | None = Field(None, description="Run directory; default runs/<name>")
    seed: int = 42
    llm: LLMConfig | None = None
    synth_sts: SynthSTSConfig | None = None
    trim: TrimConfig | None = None
    finetune: FinetuneConfig | None = None
    renorm: RenormConfig | None = None
    evaluate: EvaluateConfig | None = None
    robustness: RobustnessConfig | None = None
    human: HumanConfig | None = None
    publish: PublishConfig | None = None

    @field_validator("language")
    @classmethod
    def _known_language(cls, code: str) -> str:
        try:
            get_language(code)
        except UnknownLanguageError as error:
            raise ValueError(str(error)) from None
        return code

    @model_validator(mode="after")
    def _language_defaults(self) -> Recipe:
        language = get_language(self.language)
        if self.output_dir is None:
            self.output_dir = f"runs/{self.name}"
        if self.trim is not None and self.trim.corpus is None:
            self.trim.corpus = language.corpus
        if self.renorm is not None and self.renorm.corpus is None:
            self.renorm.corpus = language.corpus
        if self.renorm is not None and self.renorm.select == "dev" and self.renorm_dev() is None:
            raise ValueError("renorm.select: dev needs dev sets: set renorm.dev or finetune.dev")
        for stage in LLM_STAGES:
            if getattr(self, stage) is not None and self.llm is None:
                raise ValueError(f"the {stage} stage generates text with an LLM: add an llm: section")
        if self.synth_sts is not None and self.synth_sts.contamination_tasks is None:
            self.synth_sts.contamination_tasks = language.eval_tasks
        if self.robustness is not None and not self.robustness.tasks:
            self.robustness.tasks = list(self.evaluate.tasks if self.evaluate else []) or language.eval_tasks
        if self.robustness is not None and self.robustness.prompt_policy is None:
            self.robustness.prompt_policy = dict(self.evaluate.prompt_policy) if self.evaluate else {}
        if self.human is not None and not self.human.tasks:
            self.human.tasks = list(self.evaluate.tasks if self.evaluate else []) or language.eval_tasks
        if self.evaluate is not None and not self.evaluate.tasks:
            if not language.eval_tasks:
                raise ValueError(
                    f"evaluate.tasks is empty and language {self.language!r} has no default tasks"
                )
            self.evaluate.tasks = language.eval_tasks
        return self

    @property
    def run_dir(self) -> Path:
        """The run directory (output_dir) as a path."""
        return Path(self.output_dir or f"runs/{self.name}")

    def renorm_dev(self) -> DevSets | None:
        """The dev sets renormalization is chosen on: ``renorm.dev``, else the fine-tuning stage's."""
        if self.renorm is not None and self.renorm.dev is not None:
            return self.renorm.dev
        return self.finetune.dev if self.finetune is not None else None

    def enabled_stages(self) -> list[str]:
        """Stages whose section is present, in run order."""
        return [stage for stage in STAGES if getattr(self, stage) is not None]


S = TypeVar("S", bound=BaseModel)


class RecipeError(SkadaptError, ValueError):
    """A recipe that cannot be loaded; ``str()`` is the complete user-facing message."""


def _allowed_fields(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str] | None:
    """Field names allowed at ``loc`` (the parent of the offending key), walking nested models."""
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
        return list(current.model_fields)
    return None


def _inner_model(annotation: Any) -> Any:
    """The BaseModel inside ``X | None`` or ``list[X]``, else the annotation itself."""
    for arg in getattr(annotation, "__args__", ()) or ():
        inner = _inner_model(arg)
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            return inner
    return annotation


def format_validation_error(error: ValidationError, source: str) -> str:
    """Turn a pydantic error into one readable message naming the file and each field path."""
    lines = [f"{source}: invalid recipe ({error.error_count()} problem{'s' * (error.error_count() > 1)})"]
    for item in error.errors():
        loc = tuple(item["loc"])
        path = ".".join(str(p) for p in loc) or "(top level)"
        if item["type"] == "extra_forbidden":
            allowed = _allowed_fields(Recipe, loc[:-1]) or []
            hint = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
            suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
            lines.append(f"  {path}: unknown field{suggestion} Allowed: {', '.join(allowed)}")
        elif item["type"] == "missing":
            lines.append(f"  {path}: required field is missing")
        else:
            message = re.sub(r"^Value error, ", "", item["msg"])
            lines.append(f"  {path}: {message} (got {item.get('input')!r})")
    return "\n".join(lines)


def section_from_options(section: type[S], prefix: str = "", /, **options: Any) -> S:
    """Build a recipe section from command-line options; errors name the option (``--vocab-size``, with
    ``prefix`` ``"llm-"``: ``--llm-model``).

    Raises:
        RecipeError: An option value the section rejects.
    """
    try:
        return section(**options)
    except ValidationError as error:
        problems = []
        for item in error.errors():
            name = ".".join(map(str, item["loc"])).replace("_", "-")
            name = f"{prefix}{name}" if name else name
            message = re.sub(r"^Value error, ", "", item["msg"])
            problems.append(f"--{name}: {message} (got {item.get('input')!r})" if name else message)
        raise RecipeError("invalid option: " + "; ".join(problems)) from None


def parse_override(text: str) -> tuple[list[str], Any]:
    """Parse ``a.b.c=value`` into a key path and a YAML-typed value.

    Raises:
        RecipeError: The text has no ``=`` or an empty key.
    """
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise RecipeError(f"--set {text!r}: expected KEY=VALUE, e.g. finetune.epochs=1")
    try:
        value = yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError:
        value = raw
    return key.strip().split("."), value


def apply_override(data: dict[str, Any], path: list[str], value: Any) -> None:
    """Set ``value`` at ``path`` in a nested dict/list structure, creating dicts on the way."""
    node: Any = data
    for i, part in enumerate(path):
        last = i == len(path) - 1
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise RecipeError(
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
                if not isinstance(node.get(part), dict | list):
                    node[part] = {}
                node = node[part]
        else:
            raise RecipeError(f"--set {'.'.join(path)}: {'.'.join(path[:i])} is not a section")


def load_recipe_data(path: str | Path) -> dict[str, Any]:
    """Read a recipe YAML file into a dict, with file-named errors."""
    path = Path(path)
    if not path.is_file():
        raise RecipeError(f"{path}: recipe file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise RecipeError(f"{path}: not valid YAML: {error}") from None
    if data is None:
        raise RecipeError(f"{path}: the recipe is empty")
    if not isinstance(data, dict):
        raise RecipeError(f"{path}: a recipe must be a mapping of fields, got {type(data).__name__}")
    return data


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
    """
    data = load_recipe_data(path)
    for text in overrides or []:
        key_path, value = parse_override(text)
        apply_override(data, key_path, value)
    return validate_recipe(data, str(path))


def recipe_to_yaml(recipe: Recipe) -> str:
    """The resolved recipe (defaults filled in) as YAML."""
    return yaml.safe_dump(recipe.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
