"""Local suite tasks as mteb ``AbsTask*`` subclasses that load JSONL files; mteb computes every metric."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from skadapt import artifacts
from skadapt.languages import get_language
from skadapt.tasks.suite import (
    DATA_FIELDS,
    BitextMiningTask,
    ClassificationTask,
    ClusteringTask,
    PairClassificationTask,
    RerankingTask,
    RetrievalTask,
    STSTask,
    Suite,
    SuiteError,
    jsonl_rows,
)

if TYPE_CHECKING:
    from mteb.abstasks.abstask import AbsTask

MAIN_SCORES: dict[str, str] = {
    "STS": "cosine_spearman",
    "Retrieval": "ndcg_at_10",
    "PairClassification": "max_ap",
    "Classification": "accuracy",
    "Clustering": "v_measure",
    "Reranking": "map_at_1000",
    "BitextMining": "f1",
}
"""Default main score per task type: the ones SkMTEB (MTEB(slk, v1)) reports."""


class _Row(BaseModel):
    model_config = ConfigDict(extra="allow")


class _PairRow(_Row):
    sentence1: StrictStr
    sentence2: StrictStr


class _STSRow(_PairRow):
    score: float


class _LabelledPairRow(_PairRow):
    label: Literal[0, 1]


class _TextRow(_Row):
    text: StrictStr
    label: StrictStr | int


class _CorpusRow(_Row):
    id: StrictStr | int
    text: StrictStr
    title: StrictStr | None = None


class _QueryRow(_Row):
    id: StrictStr | int
    text: StrictStr


class _QrelRow(_Row):
    query_id: StrictStr | int = Field(alias="query-id")
    corpus_id: StrictStr | int = Field(alias="corpus-id")
    score: int = 1


class _RerankRow(_Row):
    query: StrictStr
    positive: list[StrictStr]
    negative: list[StrictStr]


def read_rows(path: Path, row_model: type[_Row]) -> list[Any]:
    """Read and validate a JSONL file, one object per line.

    Raises:
        SuiteError: Malformed JSON or a row without the expected fields, naming file and line.
    """
    rows = []
    for number, data in jsonl_rows(path):
        try:
            rows.append(row_model.model_validate(data))
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'row'}: {e['msg']}" for e in error.errors()
            )
            raise SuiteError(f"{path}:{number}: {problems}") from None
    if not rows:
        raise SuiteError(f"{path}: no rows")
    return rows


def lang_script(code: str) -> str:
    """An mteb language-script code (``slk-Latn``) from ``slk`` or ``sk`` (via the registry), or as given."""
    if "-" in code:
        return code
    language = get_language(code)
    return f"{language.code}-{language.script}"


def _metadata(spec: Any, suite: Suite, language: str) -> Any:
    from mteb.abstasks.task_metadata import TaskMetadata

    langs = spec.language or suite.language or language
    langs = [langs] if isinstance(langs, str) else list(langs)
    files = [
        suite.data_path(getattr(spec, f)) for f in DATA_FIELDS if isinstance(getattr(spec, f, None), str)
    ]
    revision = artifacts.hash_json(
        [spec.model_dump(mode="json"), [artifacts.path_fingerprint(f) for f in files]]
    )[:16]
    return TaskMetadata(
        name=spec.name,
        type=spec.type,
        description=spec.description or f"Local {spec.type} task from {suite.source}.",
        reference=None,
        dataset={"path": str(suite.data_path(".").resolve()), "revision": revision},
        category="t2t",
        eval_splits=[spec.split],
        eval_langs=[lang_script(code) for code in langs],
        main_score=spec.main_score or MAIN_SCORES[spec.type],
        date=None,
        domains=None,
        task_subtypes=None,
        license=None,
        annotations_creators=None,
        dialect=None,
        modalities=["text"],
        sample_creation=None,
        bibtex_citation="",
    )


def _columns(rows: list[Any], names: list[str]) -> dict[str, list[Any]]:
    return {name: [getattr(row, name) for row in rows] for name in names}


def _label_ids(labels: list[Any]) -> dict[Any, int]:
    return {label: index for index, label in enumerate(sorted(set(labels), key=str))}


def _sts_data(spec: STSTask, suite: Suite) -> Any:
    from datasets import Dataset

    rows = read_rows(suite.data_path(spec.data), _STSRow)
    return {spec.split: Dataset.from_dict(_columns(rows, ["sentence1", "sentence2", "score"]))}


def _pair_data(spec: PairClassificationTask, suite: Suite) -> Any:
    from datasets import Dataset

    rows = read_rows(suite.data_path(spec.data), _LabelledPairRow)
    columns = _columns(rows, ["sentence1", "sentence2"])
    return {spec.split: Dataset.from_dict({**columns, "labels": [row.label for row in rows]})}


def _classification_data(spec: ClassificationTask, suite: Suite) -> Any:
    from datasets import ClassLabel, Dataset, Features, Value

    train = read_rows(suite.data_path(spec.train), _TextRow)
    test = read_rows(suite.data_path(spec.test), _TextRow)
    ids = _label_ids([row.label for row in train + test])
    features = Features({"text": Value("string"), "label": ClassLabel(names=[str(label) for label in ids])})

    def split(rows: list[Any]) -> Any:
        return Dataset.from_dict(
            {"text": [r.text for r in rows], "label": [ids[r.label] for r in rows]}, features=features
        )

    return {"train": split(train), spec.split: split(test)}  # label names kept (human sheets show them)


def _clustering_data(spec: ClusteringTask, suite: Suite) -> Any:
    from datasets import Dataset

    rows = read_rows(suite.data_path(spec.data), _TextRow)
    ids = _label_ids([row.label for row in rows])
    return {
        spec.split: Dataset.from_dict(
            {"sentences": [r.text for r in rows], "labels": [ids[r.label] for r in rows]}
        )
    }


def _bitext_data(spec: BitextMiningTask, suite: Suite) -> Any:
    from datasets import Dataset

    rows = read_rows(suite.data_path(spec.data), _PairRow)
    return {spec.split: Dataset.from_dict(_columns(rows, ["sentence1", "sentence2"]))}


def _retrieval_data(spec: RetrievalTask, suite: Suite) -> Any:
    from datasets import Dataset

    corpus = read_rows(suite.data_path(spec.corpus), _CorpusRow)
    queries = read_rows(suite.data_path(spec.queries), _QueryRow)
    qrels = read_rows(suite.data_path(spec.qrels), _QrelRow)
    corpus_ids = {str(row.id) for row in corpus}
    query_ids = {str(row.id) for row in queries}
    relevant: dict[str, dict[str, int]] = {}
    for number, row in enumerate(qrels, 1):
        qid, cid = str(row.query_id), str(row.corpus_id)
        if qid not in query_ids or cid not in corpus_ids:
            missing = f"query-id {qid!r}" if qid not in query_ids else f"corpus-id {cid!r}"
            raise SuiteError(f"{suite.data_path(spec.qrels)}: row {number}: unknown {missing}")
        relevant.setdefault(qid, {})[cid] = row.score
    corpus_columns = {
        "id": [str(r.id) for r in corpus],
        "text": [r.text for r in corpus],
        "title": [r.title or "" for r in corpus],
    }
    split = {
        "corpus": Dataset.from_dict(corpus_columns),
        "queries": Dataset.from_dict({"id": [str(r.id) for r in queries], "text": [r.text for r in queries]}),
        "relevant_docs": relevant,
        "top_ranked": None,
    }
    return {spec.split: split}


def _reranking_data(spec: RerankingTask, suite: Suite) -> Any:
    from datasets import Dataset

    rows = read_rows(suite.data_path(spec.data), _RerankRow)
    documents: dict[str, str] = {}
    queries, relevant, top_ranked = [], {}, {}
    for index, row in enumerate(rows):
        qid = f"q{index}"
        queries.append({"id": qid, "text": row.query})
        ranked = []
        for text in [*row.positive, *row.negative]:
            documents.setdefault(text, f"d{len(documents)}")
            ranked.append(documents[text])
        relevant[qid] = {documents[t]: 0 for t in row.negative} | {documents[t]: 1 for t in row.positive}
        top_ranked[qid] = ranked
    split = {
        "corpus": Dataset.from_dict({"id": list(documents.values()), "text": list(documents)}),
        "queries": Dataset.from_list(queries),
        "relevant_docs": relevant,
        "top_ranked": top_ranked,
    }
    return {spec.split: split}


def _base_class(task_type: str) -> type[AbsTask]:
    from mteb.abstasks.classification import AbsTaskClassification
    from mteb.abstasks.clustering import AbsTaskClustering
    from mteb.abstasks.pair_classification import AbsTaskPairClassification
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.abstasks.sts import AbsTaskSTS
    from mteb.abstasks.text.bitext_mining import AbsTaskBitextMining

    return {
        "STS": AbsTaskSTS,
        "Retrieval": AbsTaskRetrieval,
        "Reranking": AbsTaskRetrieval,
        "PairClassification": AbsTaskPairClassification,
        "Classification": AbsTaskClassification,
        "Clustering": AbsTaskClustering,
        "BitextMining": AbsTaskBitextMining,
    }[task_type]


_LOADERS = {
    "STS": _sts_data,
    "Retrieval": _retrieval_data,
    "Reranking": _reranking_data,
    "PairClassification": _pair_data,
    "Classification": _classification_data,
    "Clustering": _clustering_data,
    "BitextMining": _bitext_data,
}


def build_task(spec: Any, suite: Suite, language: str, seed: int = 42) -> AbsTask:
    """An mteb task instance for one suite entry; its ``load_data`` reads the local files.

    Args:
        spec: The validated suite entry.
        suite: The suite it belongs to (for paths and the default language).
        language: Language used when neither the task nor the suite declares one.
        seed: mteb's task seed (classification/clustering sampling).
    """
    base = _base_class(spec.type)
    loader = _LOADERS[spec.type]

    def load_data(self: Any, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        from datasets import DatasetDict

        data = loader(spec, suite)
        if spec.type in ("Retrieval", "Reranking"):
            self.dataset = {"default": data}
        else:
            self.dataset = DatasetDict(data)
        if spec.type == "Clustering":
            self.max_documents_per_cluster = len(self.dataset[spec.split])
        self.data_loaded = True

    attributes: dict[str, Any] = {
        "metadata": _metadata(spec, suite, language),
        "load_data": load_data,
        "__module__": __name__,
        "__doc__": f"Local {spec.type} task {spec.name} ({suite.source}).",
    }
    if isinstance(spec, STSTask):
        attributes["min_score"], attributes["max_score"] = spec.score_range
    if isinstance(spec, ClassificationTask):
        attributes["samples_per_label"] = spec.samples_per_label
        attributes["n_experiments"] = spec.n_experiments
    if isinstance(spec, ClusteringTask):
        attributes["max_fraction_of_documents_to_embed"] = None
        attributes["max_document_to_embed"] = None
    cls = type(f"Local{spec.type}_{spec.name}", (base,), attributes)
    return cls(seed=seed)
