"""Task builders: columns, prompts, label mapping, score scaling, and row-naming errors on bad data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skadapt.prompts import E5_PROMPTS, model_prompts
from skadapt.tasks.rows import RowSource, TrainingDataError
from skadapt.train.config import FinetuneDataset
from skadapt.train.datasets import build_task_dataset
from skadapt.train.losses import check_loss

DATA = Path(__file__).parent / "data" / "finetune"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def entry(**fields) -> FinetuneDataset:
    return FinetuneDataset.model_validate({"name": "d"} | fields)


def test_pairs_columns_and_prompts(tmp_path: Path) -> None:
    source = write_jsonl(
        tmp_path / "p.jsonl", [{"q": "Kde je Bratislava?", "p": "Bratislava leží na Dunaji."}]
    )
    built = build_task_dataset(
        entry(kind="pairs", source=str(source), columns={"anchor": "q", "positive": "p"}),
        model_prompts=E5_PROMPTS,
    )
    assert built.columns == ["anchor", "positive"]
    assert built.prompts == {"anchor": "query: ", "positive": "passage: "}
    bare = build_task_dataset(
        entry(kind="pairs", source=str(source), columns={"anchor": "q", "positive": "p"})
    )
    bare.resolve_prompts({})  # a model without prompts: no prompt anywhere
    assert bare.prompts == {"anchor": "", "positive": ""}
    other = build_task_dataset(
        entry(kind="pairs", source=str(source), columns={"anchor": "q", "positive": "p"}),
        model_prompts={"query": "Instruct: find the answer\nQuery: ", "document": ""},
    )
    assert other.prompts == {"anchor": "Instruct: find the answer\nQuery: ", "positive": ""}
    assert built.loss == "mnrl"
    assert built.to_hf()[0] == {"anchor": "Kde je Bratislava?", "positive": "Bratislava leží na Dunaji."}


def test_nli_triplets_from_fixture() -> None:
    built = build_task_dataset(
        entry(kind="nli", source=str(DATA / "sk_train_nli.jsonl")), model_prompts=E5_PROMPTS
    )
    assert built.columns == ["anchor", "positive", "negative"]
    assert len(built) == 144  # one triplet per premise (entailed + contradicted), neutral rows dropped
    assert built.stats["dropped"] == {"neutral": 144}
    assert set(built.prompts.values()) == {"query: "}
    row = built.to_hf()[0]
    assert row["anchor"].startswith("Peter") and row["positive"] != row["negative"]


def test_nli_label_map_and_classlabel_names() -> None:
    rows = [
        ("row 1", {"premise": "Prší.", "hypothesis": "Je mokro.", "label": 0}),
        ("row 2", {"premise": "Prší.", "hypothesis": "Je sucho.", "label": 2}),
    ]
    by_names = build_task_dataset(
        entry(kind="nli", source="hub:x"),
        RowSource("hub:x", iter(rows), {"label": ["entailment", "neutral", "contradiction"]}),
    )
    assert by_names.to_hf()[0] == {"anchor": "Prší.", "positive": "Je mokro.", "negative": "Je sucho."}
    mapped = build_task_dataset(
        entry(kind="nli", source="hub:x", label_map={"0": "entailment", "2": "contradiction"}),
        RowSource("hub:x", iter(rows)),
    )
    assert len(mapped) == 1


def test_rte_keeps_entailment_pairs_and_finds_text1_text2(tmp_path: Path) -> None:
    source = write_jsonl(
        tmp_path / "rte.jsonl",
        [
            {"text1": "Mesto má nový most.", "text2": "V meste je most.", "label": "entailment"},
            {"text1": "Mesto má nový most.", "text2": "Mesto nemá most.", "label": "not_entailment"},
        ],
    )
    built = build_task_dataset(entry(kind="rte", source=str(source)))
    assert built.to_hf()[:] == {"anchor": ["Mesto má nový most."], "positive": ["V meste je most."]}


def test_sts_scores_scaled_to_unit_interval() -> None:
    built = build_task_dataset(
        entry(kind="sts", source=str(DATA / "sk_train_sts.jsonl"), max_samples=50), model_prompts=E5_PROMPTS
    )
    assert len(built) == 50 and built.loss == "cosine"
    assert built.columns == ["sentence1", "sentence2", "score"]
    assert all(0.0 <= s <= 1.0 for s in built.data["score"])
    assert built.prompts == {"sentence1": "query: ", "sentence2": "query: "}


def test_custom_prompts_override_defaults(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "p.jsonl", [{"anchor": "a text", "positive": "b text"}])
    built = build_task_dataset(
        entry(kind="pairs", source=str(source), prompts={"positive": ""}), model_prompts=E5_PROMPTS
    )
    assert built.prompts == {"anchor": "query: ", "positive": ""}
    with pytest.raises(TrainingDataError, match="prompts has 'premise'"):
        build_task_dataset(entry(kind="pairs", source=str(source), prompts={"premise": "x"}))


@pytest.mark.parametrize(
    ("kind", "rows", "extra", "message"),
    [
        (
            "pairs",
            [{"anchor": "a", "positive": "b"}, {"anchor": "a"}],
            {},
            r":2: no column 'positive' \(positive\)",
        ),
        (
            "pairs",
            [{"anchor": "", "positive": "b"}],
            {},
            r":1: field 'anchor' \(anchor\) must be a non-empty",
        ),
        (
            "pairs",
            [{"question": "a", "context": "b"}],
            {},
            r"no column for 'anchor'.*columns: \{anchor: COLUMN\}",
        ),
        (
            "nli",
            [{"premise": "a", "hypothesis": "b", "label": "maybe"}],
            {},
            r":1: unknown label 'maybe'",
        ),
        (
            "nli",
            [{"premise": "a", "hypothesis": "b", "label": 1}],
            {"label_map": {"0": "entailment"}},
            "unknown label 1",
        ),
        (
            "sts",
            [{"sentence1": "a", "sentence2": "b", "score": 7}],
            {},
            r":1: score 7 .* outside score_range \[0, 5\]",
        ),
        (
            "sts",
            [{"sentence1": "a", "sentence2": "b", "score": "high"}],
            {},
            r"score 'high' .* is not a number",
        ),
        ("nli", [{"premise": "a", "hypothesis": "b", "label": "neutral"}], {}, r"no training examples left"),
    ],
)
def test_bad_rows_name_dataset_row_and_field(
    tmp_path: Path, kind: str, rows: list, extra: dict, message: str
) -> None:
    source = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(TrainingDataError, match=message) as error:
        build_task_dataset(entry(kind=kind, source=str(source), **extra))
    assert "dataset 'd'" in str(error.value)


def test_empty_missing_and_malformed_sources(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("\n", encoding="utf-8")
    with pytest.raises(TrainingDataError, match=r"dataset 'd': .*empty\.jsonl is empty"):
        build_task_dataset(entry(kind="pairs", source=str(tmp_path / "empty.jsonl")))
    with pytest.raises(TrainingDataError, match=r"dataset 'd': .*no such file"):
        build_task_dataset(entry(kind="pairs", source=str(tmp_path / "nope.jsonl")))
    (tmp_path / "bad.jsonl").write_text('{"anchor": "a", "positive": "b"}\n{oops\n', encoding="utf-8")
    with pytest.raises(TrainingDataError, match=r"bad\.jsonl:2: malformed JSON"):
        build_task_dataset(entry(kind="pairs", source=str(tmp_path / "bad.jsonl")))


def test_csv_and_parquet_sources(tmp_path: Path) -> None:
    import pandas as pd

    frame = pd.DataFrame(
        {"sentence1": ["Ide vlak.", "Svieti slnko."], "sentence2": ["Vlak ide.", "Prší."], "s": [5, 0]}
    )
    frame.to_csv(tmp_path / "sts.csv", index=False)
    frame.to_parquet(tmp_path / "sts.parquet")
    for name in ("sts.csv", "sts.parquet"):
        built = build_task_dataset(entry(kind="sts", source=str(tmp_path / name), columns={"score": "s"}))
        assert built.data["score"] == [1.0, 0.0]


def test_loss_must_fit_the_kind(tmp_path: Path) -> None:
    source = write_jsonl(tmp_path / "sts.jsonl", [{"sentence1": "a", "sentence2": "b", "score": 1}])
    with pytest.raises(TrainingDataError, match=r"loss 'mnrl' needs .* use loss cosine or cosent"):
        check_loss(build_task_dataset(entry(kind="sts", source=str(source), loss="mnrl")))
    pairs = write_jsonl(tmp_path / "p.jsonl", [{"anchor": "a", "positive": "b"}])
    with pytest.raises(TrainingDataError, match="loss 'cosent' needs scored pairs"):
        check_loss(build_task_dataset(entry(kind="pairs", source=str(pairs), loss="cosent")))


def test_unreachable_hub_dataset_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(
        TrainingDataError,
        match=r"^dataset 'sts': HF_DATASETS_OFFLINE=1 is set: hub:slovak-nlp/sklep:sts:train cannot be read; "
        "unset it or use a local copy$",
    ):
        build_task_dataset(entry(name="sts", kind="sts", source="hub:slovak-nlp/sklep:sts:train"))


@pytest.mark.parametrize(
    ("own", "name", "expected"),
    [
        ({"query": "q> ", "document": ""}, "anything", {"query": "q> "}),
        ({"document": ""}, "intfloat/multilingual-e5-large", E5_PROMPTS),  # family defaults
        ({}, "/models/multilingual-e5-small-trimmed", E5_PROMPTS),
        ({"document": ""}, "sentence-transformers/all-MiniLM-L6-v2", {}),
    ],
)
def test_model_prompts_own_then_family_defaults(own: dict, name: str, expected: dict) -> None:
    assert model_prompts(own, name) == expected


def _nli_with_classlabels():
    from datasets import ClassLabel, Dataset, Features, Value

    features = Features(
        {
            "premise": Value("string"),
            "hypothesis": Value("string"),
            "label": ClassLabel(names=["entailment", "neutral", "contradiction"]),
        }
    )
    rows = {
        "premise": ["Prší.", "Prší.", "Prší."],
        "hypothesis": ["Je mokro.", "Je zima.", "Je sucho."],
        "label": [0, 1, 2],
    }
    return Dataset.from_dict(rows, features)


@pytest.mark.parametrize("form", ["save_to_disk", "datasetdict", "parquet"])
def test_local_classlabel_columns_are_read_as_names(tmp_path: Path, form: str) -> None:
    """A local dataset with a ClassLabel column: integer labels are read through its names."""
    from datasets import DatasetDict

    data = _nli_with_classlabels()
    if form == "save_to_disk":
        data.save_to_disk(str(tmp_path / "nli"))
        source = tmp_path / "nli"
    elif form == "datasetdict":  # the directory of a saved DatasetDict: its train split
        DatasetDict({"train": data, "test": data.select([0])}).save_to_disk(str(tmp_path / "nli"))
        source = tmp_path / "nli"
    else:
        data.to_parquet(str(tmp_path / "nli.parquet"))
        source = tmp_path / "nli.parquet"
    built = build_task_dataset(entry(kind="nli", source=str(source)))
    assert built.to_hf()[:] == {"anchor": ["Prší."], "positive": ["Je mokro."], "negative": ["Je sucho."]}
    assert built.stats["dropped"] == {"neutral": 1}
    rte = build_task_dataset(entry(kind="rte", source=str(source)))
    assert rte.to_hf()[:] == {"anchor": ["Prší."], "positive": ["Je mokro."]}


QA_ROWS = [
    {
        "question": "Kde leží Bratislava?",
        "context": "Bratislava leží na Dunaji.",
        "answers": {"text": ["na Dunaji"], "answer_start": [17]},
    },
    {
        "question": "Kto je prezident Marsu?",
        "context": "Bratislava leží na Dunaji.",
        "answers": {"text": [], "answer_start": []},
    },
    {
        "question": "Aká rieka tečie Košicami?",
        "context": "Košicami tečie Hornád.",
        "answers": {"text": ["Hornád"], "answer_start": [15]},
    },
    {"question": "Koľko je hodín?", "context": "", "answers": {"text": [], "answer_start": []}},
]


def test_unanswerable_qa_rows_are_skipped_and_counted(tmp_path: Path) -> None:
    """SQuAD-v2-style rows without an answer never become positives (skLEP question-answering)."""
    source = write_jsonl(tmp_path / "qa.jsonl", QA_ROWS)
    built = build_task_dataset(
        entry(kind="pairs", source=str(source), columns={"anchor": "question", "positive": "context"})
    )
    assert built.data["anchor"] == ["Kde leží Bratislava?", "Aká rieka tečie Košicami?"]
    assert built.stats["dropped"] == {"unanswerable": 2}
    assert built.stats["source_columns"]["answer"] == "answers"  # found without mapping it
    assert built.stats["rows_read"] == 4 and built.columns == ["anchor", "positive"]


def test_answer_role_and_empty_positives(tmp_path: Path) -> None:
    rows = [
        {"q": "Kde?", "p": "Tu.", "a": "tu"},
        {"q": "Kedy?", "p": "Včera.", "a": None},
        {"q": "Prečo?", "p": "  ", "a": "preto"},
        {"q": "Ako?", "p": None, "a": ""},
        {"q": "Kto?", "p": "Ja.", "a": ["ja"]},
        {"q": "Čo?", "p": "Nič.", "a": "nič"},
    ]
    source = write_jsonl(tmp_path / "qa.jsonl", rows)
    mapped = {"anchor": "q", "positive": "p", "answer": "a"}
    built = build_task_dataset(entry(kind="pairs", source=str(source), columns=mapped))
    assert built.data == {"anchor": ["Kde?", "Kto?", "Čo?"], "positive": ["Tu.", "Ja.", "Nič."]}
    assert built.stats["dropped"] == {"unanswerable": 2, "blank": 1}  # a blank answer is by design
    # without an answer column an empty positive is a blank row, lost data: 2 of 6 refuse the source
    with pytest.raises(TrainingDataError, match=r"2 of 6 rows \(33%\) are blank \(2 without a positive\)"):
        build_task_dataset(entry(kind="pairs", source=str(source), columns={"anchor": "q", "positive": "p"}))
    # max_samples counts answered rows: reading goes on past the unanswerable ones, and stops there
    first_two = build_task_dataset(entry(kind="pairs", source=str(source), columns=mapped, max_samples=2))
    assert first_two.data["anchor"] == ["Kde?", "Kto?"] and first_two.stats["rows_read"] == 5


QA = {"anchor": "q", "positive": "p"}


@pytest.mark.parametrize(
    ("kind", "rows", "columns", "message"),
    [
        ("pairs", [{"q": "", "p": "Tu."}], QA, r"field 'q' \(anchor\) must be a non-empty"),
        (
            "pairs",
            [{"q": "Kde?", "p": "Tu.", "a": "x"}, {"q": "Kde?", "p": "Tu."}],
            QA | {"answer": "a"},
            r":2: no column 'a' \(answer\)",
        ),
        ("pairs", [{"q": "Kde?", "p": ""}], QA, r"no training examples left .*\{'blank': 1\}"),
        ("pairs", [{"q": "Kde?", "p": 5}], QA, r"field 'p' \(positive\) must be a non-empty"),
        (
            "triplets",
            [{"anchor": "a", "positive": "b", "negative": "c", "answer": "x"}],
            {"answer": "answer"},
            r"unknown role\(s\) answer for kind 'triplets'",
        ),
        (
            "triplets",
            [{"anchor": "a", "positive": "", "negative": "c"}],
            {},
            r"field 'positive' \(positive\) must be",
        ),
    ],
)
def test_answer_rules_stay_strict_elsewhere(
    tmp_path: Path, kind: str, rows: list, columns: dict, message: str
) -> None:
    source = write_jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(TrainingDataError, match=message):
        build_task_dataset(entry(kind=kind, source=str(source), columns=columns))


NLI_SPLIT_PREMISE = [  # a premise whose contradicted row differs by one character from its entailed rows
    {"premise": "Prší.", "hypothesis": "Je mokro.", "label": "entailment"},
    {"premise": "Prší.", "hypothesis": "Je sucho.", "label": "contradiction"},
    {"premise": "Sneží na horách.", "hypothesis": "Na horách je sneh.", "label": "entailment"},
    {"premise": "Sneží na horách.", "hypothesis": "Hory sú biele.", "label": "entailment"},
    {"premise": "Sneží na horách.", "hypothesis": "Možno je zima.", "label": "neutral"},
    {"premise": "Sneží na horách ", "hypothesis": "Na horách je leto.", "label": "contradiction"},
]


def test_nli_entailed_without_contradiction_is_kept_as_pairs(tmp_path: Path) -> None:
    """Grouped on the exact premise text, the entailed rows of a premise without a contradicted one are
    (anchor, positive) pairs in their own dataset; the lone contradiction is dropped and counted."""
    from skadapt.train.datasets import build_task_datasets, drop_summary

    source = write_jsonl(tmp_path / "nli.jsonl", NLI_SPLIT_PREMISE)
    triplets, pairs = build_task_datasets(entry(kind="nli", source=str(source)), model_prompts=E5_PROMPTS)
    assert (triplets.name, triplets.columns) == ("d", ["anchor", "positive", "negative"])
    assert triplets.to_hf()[:] == {"anchor": ["Prší."], "positive": ["Je mokro."], "negative": ["Je sucho."]}
    assert (pairs.name, pairs.entry, pairs.columns, pairs.loss) == (
        "d_pairs",
        "d",
        ["anchor", "positive"],
        "mnrl",
    )
    assert pairs.to_hf()[:] == {
        "anchor": ["Sneží na horách.", "Sneží na horách."],
        "positive": ["Na horách je sneh.", "Hory sú biele."],
    }
    assert pairs.prompts == {"anchor": "query: ", "positive": "query: "}
    stats = triplets.stats
    assert stats["dropped"] == {"neutral": 1, "contradiction_without_entailment": 1}
    assert (stats["premises"], stats["triplets"], stats["pairs"], stats["rows_read"]) == (3, 1, 2, 6)
    line, warn = drop_summary(stats)  # 1 of the 5 non-neutral rows
    assert warn and line.startswith("dropped 20.0% of 5 rows (1 contradiction_without_entailment)")
    assert "by design, not counted: 1 neutral" in line
    with pytest.raises(TrainingDataError, match="builds 2 datasets"):
        build_task_dataset(entry(kind="nli", source=str(source)))
    capped = build_task_datasets(entry(kind="nli", source=str(source), max_samples=2))
    assert [len(d) for d in capped] == [1, 1]  # max_samples counts triplets first, then pairs


def test_nli_pairs_name_is_reserved() -> None:
    from pydantic import ValidationError

    from skadapt.train.config import FinetuneConfig

    datasets = [
        {"name": "nli", "kind": "nli", "source": "a.jsonl"},
        {"name": "nli_pairs", "kind": "pairs", "source": "b.jsonl"},
    ]
    with pytest.raises(ValidationError, match="'nli_pairs' is reserved for the pairs of dataset 'nli'"):
        FinetuneConfig.model_validate({"datasets": datasets})


@pytest.mark.slow  # ~3 s: 392,702 rows built in memory
def test_nli_grouping_is_linear_at_the_real_size() -> None:
    """392,702 rows like skLEP's NLI train split: grouped in one pass, in seconds."""
    import time

    from skadapt.train.datasets import build_task_datasets

    labels = ("entailment", "neutral", "contradiction")
    rows = [
        (
            f"row {i}",
            {
                "premise": f"Premisa číslo {i // 3} o niečom.",
                "hypothesis": f"Hypotéza {i}.",
                "label": labels[i % 3],
            },
        )
        for i in range(392_702)
    ]
    start = time.perf_counter()
    triplets, pairs = build_task_datasets(entry(kind="nli", source="hub:x"), RowSource("hub:x", iter(rows)))
    seconds = time.perf_counter() - start
    assert (triplets.stats["premises"], len(triplets), len(pairs)) == (130_901, 130_900, 1)  # last: 2 rows
    assert seconds < 10, f"grouping 392,702 NLI rows took {seconds:.1f} s"
