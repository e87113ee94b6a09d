"""Local task suites: a YAML file listing tasks whose data are local JSONL files.

Format (paths relative to the suite file)::

    language: slk            # optional suite default; else the recipe's / --language
    tasks:
      - {name: MySTS, type: STS, data: sts.jsonl, score_range: [0, 5]}
      - {name: MyRetrieval, type: Retrieval, corpus: corpus.jsonl, queries: queries.jsonl, qrels: qrels.jsonl}
      - {name: MyPairs, type: PairClassification, data: pairs.jsonl}
      - {name: MyTopics, type: Classification, train: train.jsonl, test: test.jsonl}
      - {name: MyClusters, type: Clustering, data: clusters.jsonl}
      - {name: MyRerank, type: Reranking, data: rerank.jsonl}
      - {name: MyBitext, type: BitextMining, data: bitext.jsonl, language: [slk, eng]}

The suite is validated strictly (unknown fields are errors); problems are reported with file and line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from skadapt.config import require_unique_names
from skadapt.errors import SkadaptError
from skadapt.sources import SourceError, iter_jsonl
from skadapt.userfiles import DuplicateKeyError, load_yaml, read_text

TASK_TYPES = (
    "STS",
    "Retrieval",
    "PairClassification",
    "Classification",
    "Clustering",
    "Reranking",
    "BitextMining",
)


class SuiteError(SkadaptError, ValueError):
    """A suite file or one of its data files is missing or malformed; the message names file and line."""


class _Task(BaseModel):
    """Fields every local task has."""

    model_config = ConfigDict(extra="forbid")

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
    language: str | list[str] | None = Field(
        None,
        description="ISO 639-3 code (slk), ISO 639-1 code (sk) or code-script (slk-Latn); a list for bitext "
        "pairs",
    )
    description: str = ""
    main_score: str | None = Field(None, description="mteb metric reported as the main score")
    split: str = "test"


class STSTask(_Task):
    """Rows: ``sentence1``, ``sentence2``, ``score``."""

    type: Literal["STS"]
    data: str
    score_range: tuple[float, float] = (0.0, 5.0)

    @model_validator(mode="after")
    def _range(self) -> STSTask:
        if self.score_range[0] >= self.score_range[1]:
            raise ValueError(f"score_range must be [low, high] with low < high, got {list(self.score_range)}")
        return self


class RetrievalTask(_Task):
    """Corpus rows ``id, text[, title]``; queries ``id, text``; qrels ``query-id, corpus-id, score``."""

    type: Literal["Retrieval"]
    corpus: str
    queries: str
    qrels: str


class PairClassificationTask(_Task):
    """Rows: ``sentence1``, ``sentence2``, ``label`` (0/1)."""

    type: Literal["PairClassification"]
    data: str


class ClassificationTask(_Task):
    """Rows of both files: ``text``, ``label``."""

    type: Literal["Classification"]
    train: str
    test: str
    samples_per_label: int = Field(8, gt=0, description="mteb undersampling of the train split")
    n_experiments: int = Field(10, gt=0)


class ClusteringTask(_Task):
    """Rows: ``text``, ``label``."""

    type: Literal["Clustering"]
    data: str


class RerankingTask(_Task):
    """Rows: ``query``, ``positive: [...]``, ``negative: [...]``."""

    type: Literal["Reranking"]
    data: str


class BitextMiningTask(_Task):
    """Rows: ``sentence1``, ``sentence2`` (translations of each other)."""

    type: Literal["BitextMining"]
    data: str


LocalTask = Annotated[
    STSTask
    | RetrievalTask
    | PairClassificationTask
    | ClassificationTask
    | ClusteringTask
    | RerankingTask
    | BitextMiningTask,
    Field(discriminator="type"),
]

DATA_FIELDS = ("data", "corpus", "queries", "qrels", "train", "test")


class Suite(BaseModel):
    """A validated suite; ``root`` is the directory data paths are relative to."""

    model_config = ConfigDict(extra="forbid")

    language: str | None = None
    tasks: list[LocalTask] = Field(min_length=1)
    root: Path = Path(".")
    source: str = "<suite>"

    @field_validator("tasks")
    @classmethod
    def _unique(cls, tasks: list[Any]) -> list[Any]:
        return require_unique_names(tasks, "task")

    def data_path(self, relative: str) -> Path:
        """A task's data file, resolved against the suite directory."""
        path = Path(relative)
        return path if path.is_absolute() else self.root / path

    def task_files(self, task: Any) -> list[Path]:
        """The data files one task names."""
        return [
            self.data_path(getattr(task, field))
            for field in DATA_FIELDS
            if isinstance(getattr(task, field, None), str)
        ]

    def data_files(self) -> list[Path]:
        """Every data file the suite names."""
        return [path for task in self.tasks for path in self.task_files(task)]


def is_suite_spec(spec: str) -> bool:
    """Whether a task spec names a suite file (``.yaml``/``.yml``) rather than an mteb benchmark/task."""
    return spec.lower().endswith((".yaml", ".yml"))


def _task_lines(text: str) -> list[int]:
    """1-based line of each entry of the top-level ``tasks`` list (empty when the shape is unexpected)."""
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return []
    if not isinstance(root, yaml.MappingNode):
        return []
    for key, value in root.value:
        if key.value == "tasks" and isinstance(value, yaml.SequenceNode):
            return [item.start_mark.line + 1 for item in value.value]
    return []


def _format_errors(error: ValidationError, path: Path, data: dict[str, Any], lines: list[int]) -> str:
    messages = [f"{path}: invalid task suite ({error.error_count()} problem(s))"]
    tasks = data.get("tasks") if isinstance(data.get("tasks"), list) else []
    for item in error.errors():
        loc = list(item["loc"])
        where = str(path)
        if len(loc) >= 2 and loc[0] == "tasks" and isinstance(loc[1], int):
            index = loc[1]
            if index < len(lines):
                where = f"{path}:{lines[index]}"
            entry = tasks[index] if index < len(tasks) and isinstance(tasks[index], dict) else {}
            label = f"tasks[{index}] ({entry.get('name', '?')})"
            rest = [str(p) for p in loc[2:] if str(p) not in TASK_TYPES]
            field = ".".join([label, *rest])
        else:
            field = ".".join(str(p) for p in loc) or "(top level)"
        message = re.sub(r"^Value error, ", "", item["msg"])
        if item["type"] == "extra_forbidden":
            message = "unknown field"
        elif item["type"] == "union_tag_invalid":
            message = (
                f"unknown task type {item.get('input', {}).get('type')!r}; use one of {', '.join(TASK_TYPES)}"
            )
        messages.append(f"  {where}: {field}: {message}")
    return "\n".join(messages)


def load_suite(path: str | Path) -> Suite:
    """Read and strictly validate a suite file; data files must exist.

    Raises:
        SuiteError: Missing file, invalid YAML, unknown fields/types, missing data files (file + line).
    """
    path = Path(path)
    if not path.is_file():
        raise SuiteError(f"{path}: task suite file not found")
    text = read_text(path, error=SuiteError)
    try:
        data = load_yaml(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise SuiteError(f"{where}: not valid YAML: {getattr(error, 'problem', error)}") from None
    except DuplicateKeyError as error:
        raise SuiteError(f"{path}:{error.line}: {error}") from None
    if not isinstance(data, dict):
        raise SuiteError(f"{path}: a task suite must be a mapping with a 'tasks' list")
    lines = _task_lines(text)
    try:
        suite = Suite.model_validate({**data, "root": path.parent, "source": str(path)})
    except ValidationError as error:
        raise SuiteError(_format_errors(error, path, data, lines)) from None
    for index, task in enumerate(suite.tasks):
        for field in DATA_FIELDS:
            value = getattr(task, field, None)
            if isinstance(value, str) and not suite.data_path(value).is_file():
                where = f"{path}:{lines[index]}" if index < len(lines) else str(path)
                raise SuiteError(
                    f"{where}: task {task.name}: {field} file {suite.data_path(value)} not found "
                    "(paths are relative to the suite file)"
                )
    return suite


def task_texts(suite: Suite) -> dict[str, list[str]]:
    """Task name -> every text (non-id string field) in the task's data files."""
    return {
        task.name: [t for path in suite.task_files(task) for t in _file_texts(path)] for task in suite.tasks
    }


def suite_texts(suite: Suite) -> set[str]:
    """Every text in a suite's data files (for keeping other data disjoint from evaluation data)."""
    return {text for texts in task_texts(suite).values() for text in texts}


def jsonl_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of every non-empty line of a suite data file: the one reader of suite
    data, so that what evaluation scores and what contamination checks see are the same rows.

    Raises:
        SuiteError: A malformed line or one that is not an object, naming file and line.
    """
    try:
        return list(iter_jsonl(path))
    except SourceError as error:
        raise SuiteError(str(error)) from None


def _file_texts(path: Path) -> list[str]:
    return [text for _, row in jsonl_rows(path) for text in row_texts(row)]


def row_texts(value: Any) -> list[str]:
    """The texts of a suite data row: its strings, in lists and objects, but for fields named ``*id*``."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in row_texts(v)]
    if isinstance(value, dict):
        return [s for k, v in value.items() if "id" not in k for s in row_texts(v)]
    return []
