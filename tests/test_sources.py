"""Source specs (pinned Hub revisions), saved local datasets, the shared row reader and column helper."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skadapt.sources import (
    SourceError,
    SourceSpec,
    column_text,
    column_value,
    is_blank,
    iter_texts,
    parse_source,
    read_rows,
    resolve_files,
)
from skadapt.trim import counting


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("hub:org/ds", SourceSpec("hub", "org/ds")),
        ("hub:org/ds@v1.0", SourceSpec("hub", "org/ds", revision="v1.0")),
        ("hub:org/ds:cfg@main", SourceSpec("hub", "org/ds", "cfg", revision="main")),
        ("hub:org/ds:cfg:test@0a1b2c", SourceSpec("hub", "org/ds", "cfg", "test", "0a1b2c")),
        ("hub:org/ds::validation@refs/pr/3", SourceSpec("hub", "org/ds", None, "validation", "refs/pr/3")),
    ],
)
def test_hub_spec_with_revision(spec: str, expected: SourceSpec) -> None:
    parsed = parse_source(spec)
    assert parsed == expected
    assert parse_source(str(parsed)) == parsed  # the canonical form round-trips, revision included


def test_revision_is_part_of_the_spec_identity() -> None:
    assert str(parse_source("hub:org/ds:cfg")) == "hub:org/ds:cfg:train"  # unpinned: unchanged identity
    assert str(parse_source("hub:org/ds:cfg@v2")) == "hub:org/ds:cfg:train@v2"
    keys = {
        json.dumps(counting.source_fingerprint(spec), sort_keys=True)
        for spec in ("hub:org/ds:cfg", "hub:org/ds:cfg@v1", "hub:org/ds:cfg@v2")
    }
    assert len(keys) == 3  # the count cache key (built from the fingerprint) tells revisions apart


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("hub:org/ds@", "an empty revision after '@'"),
        ("hub:org/ds:cfg:train@", "an empty revision after '@'"),
        ("hub:org/ds@v1@v2", "'@' more than once"),
        ("hub:org/ds@v1:cfg", "the @REVISION must come last"),
        ("hub:@v1", "no dataset id"),
        ("hub:a:b:c:d", "more than DATASET:CONFIG:SPLIT"),
    ],
)
def test_bad_hub_specs_give_one_clear_message(spec: str, problem: str) -> None:
    with pytest.raises(SourceError) as error:
        parse_source(spec)
    message = str(error.value)
    assert message.startswith(f"{spec!r}: expected hub:DATASET[:CONFIG[:SPLIT]][@REVISION]")
    assert message.endswith(f"({problem})")


def _labelled_dataset():
    from datasets import ClassLabel, Dataset, Features, Value

    features = Features(
        {
            "text": Value("string"),
            "label": ClassLabel(names=["entailment", "neutral", "contradiction"]),
        }
    )
    return Dataset.from_dict({"text": ["Prší.", "Je sucho.", "Svieti slnko."], "label": [0, 2, 1]}, features)


def test_saved_dataset_directory_is_a_source(tmp_path: Path) -> None:
    from datasets import DatasetDict

    data = _labelled_dataset()
    data.save_to_disk(str(tmp_path / "saved"))
    DatasetDict({"train": data, "test": data.select([0])}).save_to_disk(str(tmp_path / "dict"))

    assert resolve_files(str(tmp_path / "saved")) == [tmp_path / "saved"]
    assert resolve_files(str(tmp_path / "dict")) == [tmp_path / "dict" / "train"]  # a DatasetDict: train
    assert resolve_files(str(tmp_path / "dict" / "test")) == [tmp_path / "dict" / "test"]
    assert list(iter_texts(str(tmp_path / "saved"))) == ["Prší.", "Je sucho.", "Svieti slnko."]
    assert list(iter_texts(str(tmp_path / "dict" / "test"))) == ["Prší."]

    source = read_rows(str(tmp_path / "saved"))
    rows = list(source.rows)
    assert source.label_names == {"label": ["entailment", "neutral", "contradiction"]}
    assert rows[1] == (f"{tmp_path / 'saved'} row 2", {"text": "Je sucho.", "label": 2})

    with pytest.raises(SourceError, match=r"no column 'body' \(columns: text, label\)"):
        list(iter_texts(str(tmp_path / "saved"), "body"))
    # a directory holding a saved dataset further down is not read file by file
    with pytest.raises(SourceError, match=r"holds a saved dataset at .*dict; name that directory"):
        resolve_files(str(tmp_path))


def test_saved_datasetdict_without_train_names_its_splits(tmp_path: Path) -> None:
    from datasets import DatasetDict

    DatasetDict({"validation": _labelled_dataset()}).save_to_disk(str(tmp_path / "dict"))
    with pytest.raises(
        SourceError, match=r"without a train split; name a split's directory \(.*validation\)"
    ):
        resolve_files(str(tmp_path / "dict"))


def test_parquet_written_by_datasets_keeps_classlabel_names(tmp_path: Path) -> None:
    _labelled_dataset().to_parquet(str(tmp_path / "a.parquet"))
    source = read_rows(str(tmp_path / "a.parquet"))
    assert [row["label"] for _, row in source.rows] == [0, 2, 1]
    assert source.label_names == {"label": ["entailment", "neutral", "contradiction"]}


def test_files_with_conflicting_classlabel_names_are_refused(tmp_path: Path) -> None:
    from datasets import ClassLabel

    data = _labelled_dataset()
    data.to_parquet(str(tmp_path / "a.parquet"))
    other = data.cast_column("label", ClassLabel(names=["contradiction", "neutral", "entailment"]))
    other.to_parquet(str(tmp_path / "b.parquet"))
    with pytest.raises(SourceError, match=r"b\.parquet: column 'label' has ClassLabel names"):
        list(read_rows(str(tmp_path / "*.parquet")).rows)


def test_one_reader_for_rows_and_texts(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text('{"text": "jeden"}\n\n{"text": "dva"}\n', encoding="utf-8")
    (tmp_path / "b.txt").write_text("tri\n\nštyri\n", encoding="utf-8")
    assert list(iter_texts(str(tmp_path))) == ["jeden", "dva", "tri", "štyri"]
    assert [where for where, _ in read_rows(str(tmp_path / "a.jsonl")).rows] == [
        f"{tmp_path / 'a.jsonl'}:1",
        f"{tmp_path / 'a.jsonl'}:3",
    ]
    with pytest.raises(SourceError, match=r"b\.txt: unsupported file type '\.txt' for rows"):
        read_rows(str(tmp_path))
    with pytest.raises(SourceError, match="is a word list, not a table of rows"):
        read_rows("wordfreq:sk")


def test_text_stream_state_resumes_a_local_read(tmp_path: Path) -> None:
    texts = [f"veta {i}" for i in range(10)]
    (tmp_path / "c.txt").write_text("\n".join(texts) + "\n", encoding="utf-8")
    limits = {"max_documents": 8, "max_bytes": 10_000}
    stream = iter_texts(str(tmp_path / "c.txt"), **limits)
    first = [next(stream) for _ in range(3)]
    state = json.loads(json.dumps(stream.state()))  # JSON-serializable, e.g. for a checkpoint
    assert (state["documents"], state["bytes"]) == (3, sum(len(t.encode()) for t in first))
    rest = list(iter_texts(str(tmp_path / "c.txt"), **limits, resume_state=state))
    assert first + rest == texts[:8]  # the limit counts the texts read before the resume too
    bytes_cut = list(iter_texts(str(tmp_path / "c.txt"), max_bytes=state["bytes"] + 20, resume_state=state))
    assert bytes_cut == texts[3:6]  # 6 bytes each: three more fit in 20, a fourth would not
    unlimited = iter_texts(str(tmp_path / "c.txt"))
    next(unlimited)
    assert unlimited.state()["bytes"] is None  # bytes are counted only under a max_bytes
    with pytest.raises(SourceError, match="taken without max_bytes; resume with its limits"):
        next(iter_texts(str(tmp_path / "c.txt"), max_bytes=100, resume_state=unlimited.state()))
    with pytest.raises(SourceError, match="resume_state belongs to another source"):
        next(iter_texts(str(tmp_path / "other.txt"), resume_state=state))
    with pytest.raises(SourceError, match="resume_state is for column 'text'"):
        next(iter_texts(str(tmp_path / "c.txt"), "body", resume_state=state))


def test_column_helpers_name_the_row_and_role() -> None:
    row = {"question": "Kde?", "context": " "}
    assert column_value(row, "question", "f.jsonl:3") == "Kde?"
    with pytest.raises(
        SourceError, match=r"^f\.jsonl:3: no column 'answer' \(answer\) \(columns: question, context\)$"
    ):
        column_value(row, "answer", "f.jsonl:3", "answer")

    class Custom(ValueError):
        pass

    with pytest.raises(Custom, match=r"field 'context' \(positive\) must be a non-empty text, got ' '"):
        column_text(row, "context", "f.jsonl:3", "positive", error=Custom)


@pytest.mark.parametrize(
    ("value", "blank"),
    [
        (None, True),
        ("", True),
        ("  ", True),
        (float("nan"), True),
        ([], True),
        (["", None], True),
        ({"text": [], "answer_start": []}, True),
        ({"text": ["Bratislava"], "answer_start": [4]}, False),
        ("Bratislava", False),
        (["", "Dunaj"], False),
        (0, False),
    ],
)
def test_is_blank(value: object, blank: bool) -> None:
    assert is_blank(value) is blank
