"""The dims tiers' basis chosen on dev (corpus, corpus + parallel text, truncation) and the bitext dev set
it needs to see cross-lingual quality: mteb's own BitextMining score as the oracle, the choice with and
without parallel text, what the report says, and that no dev or evaluation text is ever fitted on."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from skadapt.export.config import ExportConfig, FitCorpus
from skadapt.export.corpus import parallel_corpus, read_corpus
from skadapt.export.dims_choice import choose_bases, fit_bases, wanted
from skadapt.sources.config import CorpusSource
from skadapt.tasks.backends import load_sentence_model
from skadapt.tasks.config import DevSetConfig, DevSets
from skadapt.tasks.dev import build_dev_sets, check_first_row, dev_keys
from skadapt.textsample import normalize_text

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "data/demo_sk/train"
PARALLEL = TRAIN / "parallel.jsonl"
BITEXT_DEV = TRAIN / "bitext_dev.jsonl"
BITEXT_COLUMNS = {"sentence1": "sk", "sentence2": "en"}


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _bitext_dev(path: Path | None = None) -> DevSets:
    return DevSets(sets=[{"kind": "bitext", "source": str(path or BITEXT_DEV), "columns": BITEXT_COLUMNS}])


def test_the_demo_parallel_text_and_bitext_dev_set_are_their_own() -> None:
    """The hand-written pairs: 150 fit pairs and 180 dev pairs (60 on different topics, then 40 groups of
    three near-duplicates: tests/test_demo_data.py), sharing no text with each other, with the evaluation
    suite's bitext task or with the other training files (the export would drop them anyway)."""
    parallel, dev = _rows(PARALLEL), _rows(BITEXT_DEV)
    assert len(parallel) == 150 and len(dev) == 180
    assert all(set(r) == {"sk", "en"} and r["sk"].strip() and r["en"].strip() for r in parallel + dev)
    keys = {normalize_text(t) for r in parallel for t in r.values()}
    assert not keys & {normalize_text(t) for r in dev for t in r.values()}
    suite = {normalize_text(t) for r in _rows(ROOT / "data/demo_sk/suite/bitext.jsonl") for t in r.values()}
    assert not (keys | {normalize_text(t) for r in dev for t in r.values()}) & suite
    assert sum(any(c in r["sk"] for c in "áäčďéíľĺňóôŕšťúýž") for r in parallel) > 120  # Slovak, diacritics


def test_the_bitext_dev_set_is_probed_like_the_others(tmp_path: Path) -> None:
    entry = DevSetConfig(kind="bitext", source=str(BITEXT_DEV), columns=BITEXT_COLUMNS)
    assert check_first_row(entry).startswith("columns sk, en")
    wrong = DevSetConfig(kind="bitext", source=str(BITEXT_DEV))  # default columns sentence1/sentence2
    with pytest.raises(Exception, match="no column sentence1, sentence2"):
        check_first_row(wrong)


def test_the_bitext_dev_score_is_mtebs_bitext_mining_score(
    tiny_models: dict[str, Path], tmp_path: Path
) -> None:
    """On the same pairs, our evaluator's F1 and the per-example scoring used by the choices equal the main
    score mteb's own BitextMining task computes (through skadapt's local suite runner, query prompt)."""
    from skadapt.tasks.dev_scores import encode_dev_set, score_candidate
    from skadapt.tasks.runner import evaluate_model
    from skadapt.tasks.selection import select_tasks

    rows = _rows(BITEXT_DEV)[:40]
    _write(tmp_path / "pairs.jsonl", [{"sentence1": r["sk"], "sentence2": r["en"]} for r in rows])
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "tasks:\n  - {name: DevBitext, type: BitextMining, data: pairs.jsonl, language: [slk, eng]}\n",
        encoding="utf-8",
    )
    model_dir = str(tiny_models["wordpiece"])
    scores = evaluate_model(
        model_dir,
        "tiny",
        select_tasks([str(suite)], language="slk"),
        cache_dir=tmp_path / "cache",
        prompt_policy={"BitextMining": "query: "},
    )
    mteb_f1 = scores[0].score / 100
    model = load_sentence_model(model_dir)
    pairs = DevSets(sets=[DevSetConfig(kind="bitext", source=str(tmp_path / "pairs.jsonl"))])
    dev_set = build_dev_sets(pairs, prompts=dict(model.prompts))[0]
    ours = dev_set.evaluator(model)[dev_set.metric]
    # Seen twice in full runs, never alone: mteb's F1 0.0. The message says what the model and ours gave.
    files = sorted(
        f"{p.relative_to(model_dir)}:{p.stat().st_size}" for p in Path(model_dir).rglob("*") if p.is_file()
    )
    assert 0 < mteb_f1 < 1, (mteb_f1, ours, scores[0], files)  # a tiny model: neither all right nor all wrong
    assert ours == pytest.approx(mteb_f1, abs=1e-6)
    encoded = encode_dev_set(model, dev_set)
    indices = [np.random.default_rng(0).integers(0, encoded.size, size=(50, encoded.size))]
    assert score_candidate([encoded], None, indices).mean == pytest.approx(mteb_f1, abs=1e-6)


def test_the_resampled_bitext_f1_is_sklearns_on_the_pairs_as_drawn() -> None:
    from sklearn.metrics import f1_score

    from skadapt.tasks.dev_scores import EncodedSet, replicate_metrics

    rng = np.random.default_rng(1)
    n = 25
    predicted = np.where(rng.random(n) < 0.5, np.arange(n), rng.integers(0, n, n))
    encoded = EncodedSet("b", "bitext", "b_f1", {"first": np.zeros((n, 2)), "second": np.zeros((n, 2))})
    indices = rng.integers(0, n, size=(20, n))
    expected = [f1_score(np.arange(n)[i], predicted[i], average="weighted", zero_division=0) for i in indices]
    assert np.allclose(replicate_metrics(encoded, predicted, indices), expected)


def test_a_bitext_dev_row_holding_a_training_or_evaluation_text_is_caught(tmp_path: Path) -> None:
    """The bitext kind joins the dev sets' overlap checks: a row whose English side is an evaluation test
    text is dropped, one sharing a training text is counted."""
    from skadapt.tasks.dev import overlap_with_test_texts

    rows = _rows(BITEXT_DEV)[:6]
    path = _write(tmp_path / "dev.jsonl", rows)
    entry = DevSetConfig(kind="bitext", source=str(path), columns=BITEXT_COLUMNS)
    found = overlap_with_test_texts(entry, {"Suite": [rows[2]["en"]]})
    assert found["dropped"] == 1 and found["by_task"] == {"Suite": 1}
    sets = build_dev_sets(DevSets(sets=[entry]), test_texts={"Suite": [rows[2]["en"]]})
    assert sets[0].size == 5 and sets[0].report[0]["contamination"]["rows"] == 1


def test_dev_and_evaluation_texts_never_enter_the_fitting_text(tmp_path: Path) -> None:
    """Corpus and parallel text leave out every dev text (and its sentences) and every evaluation text,
    each counted: the basis is chosen on dev, so it must not be fitted on it."""
    parallel_rows = _rows(PARALLEL)[:20]
    dev_rows = _rows(BITEXT_DEV)[:5]
    leaked = [*parallel_rows[:2], {"sk": dev_rows[0]["sk"], "en": "A sentence nobody evaluates."}]
    path = _write(tmp_path / "parallel.jsonl", parallel_rows[2:] + leaked)
    fit = FitCorpus(parallel=[{"source": str(path), "columns": ["sk", "en"]}])
    held_out = dev_keys(_bitext_dev(_write(tmp_path / "dev.jsonl", dev_rows)), "sk")
    evaluation = {normalize_text(parallel_rows[0]["en"])}
    read = parallel_corpus(fit, exclude=evaluation, held_out=held_out, language="sk", seed=0)
    assert read is not None
    texts = {normalize_text(t) for t in read.texts}
    assert not texts & held_out and not texts & evaluation
    assert read.dropped_dev_overlap == 1 and read.dropped_eval_overlap == 1
    assert len(read.texts) == 2 * (len(parallel_rows) + 1) - 2  # both sides of 21 rows, less the two left out
    corpus_path = _write(tmp_path / "corpus.jsonl", [{"text": dev_rows[1]["sk"] + " Potom prišla búrka."}])
    with pytest.raises(Exception, match=r"export\.corpus\.sources: no text to fit on .*1 were dev texts"):
        read_corpus(
            [CorpusSource(source=str(corpus_path))], FitCorpus(), exclude=set(), language="sk", seed=0,
            held_out=held_out,
        )  # fmt: skip


def test_parallel_sources_need_both_sides_and_the_parallel_basis_needs_them() -> None:
    with pytest.raises(Exception, match="columns"):
        FitCorpus(parallel=[{"source": "p.jsonl"}])
    with pytest.raises(Exception, match=r"export\.dims_basis: parallel needs parallel text"):
        ExportConfig(dims=[8], dims_basis="parallel")
    assert ExportConfig().dims_basis == "auto"


@pytest.fixture(scope="module")
def fitted(tiny_models: dict[str, Path]) -> tuple:
    model = load_sentence_model(str(tiny_models["wordpiece"]))
    sts = TRAIN / "sts.jsonl"
    sources = [CorpusSource(source=str(sts), columns=["sentence1", "sentence2"])]
    corpus = read_corpus(sources, FitCorpus(), exclude=set(), language="sk", seed=0)
    fit = FitCorpus(parallel=[{"source": str(PARALLEL), "columns": ["sk", "en"]}])
    parallel = parallel_corpus(fit, exclude=set(), held_out=None, language="sk", seed=0)
    return model, corpus, parallel


def test_the_choice_with_parallel_text_scores_every_basis_on_dev_and_reports_why(fitted: tuple) -> None:
    """With parallel text and a bitext dev set: corpus, parallel and first are scored per d on the same dev
    embeddings, the report gives each one's per-set scores, mean, paired interval against the corpus basis
    and the chosen basis with its reason; the parallel basis is the top directions of the two halves,
    each weighted equally (an independent oracle: the SVD of the scaled stacked embeddings)."""
    from skadapt.tasks.projection import sample_embeddings

    model, corpus, parallel = fitted
    bases = fit_bases(model, corpus, parallel, 32, wanted("auto", True))
    assert set(bases.fitted) == {"corpus", "parallel"} and bases.default == "corpus"
    a = sample_embeddings(model, corpus.texts)
    b = sample_embeddings(model, parallel.texts)
    _, _, oracle = np.linalg.svd(np.concatenate([a / np.sqrt(len(a)), b / np.sqrt(len(b))]).astype(float))
    cosines = np.linalg.svd(oracle[:8] @ bases.fitted["parallel"].vectors[:8].T, compute_uv=False)
    assert cosines.min() > 1 - 1e-6
    dev = DevSets(
        sets=[
            {"kind": "sts", "source": str(TRAIN / "sts_dev.jsonl")},
            {"kind": "bitext", "source": str(BITEXT_DEV), "columns": BITEXT_COLUMNS},
        ]
    )
    chosen, report = choose_bases(model, [16, 8], bases, "auto", dev=dev, seed=0)
    assert [c.dimension for c in report.choices] == [16, 8]
    for choice in report.choices:
        names = [c.name for c in choice.candidates]
        assert names == ["corpus", "parallel", "first"]
        assert all(set(c.scores) == {"sts-0", "bitext-1"} for c in choice.candidates)
        corpus_c = choice.candidates[0]
        assert corpus_c.difference is None and corpus_c.interval is None and not corpus_c.beats_default
        for c in choice.candidates[1:]:
            assert c.difference == pytest.approx(c.mean - corpus_c.mean, abs=2e-6)
            assert c.interval is not None and c.interval[0] <= c.difference <= c.interval[1]
            assert c.beats_default == (c.interval[0] > 0)
        winners = [c for c in choice.candidates if c.beats_default]
        expected = max(winners, key=lambda c: c.mean).name if winners else "corpus"
        assert choice.chosen == expected and expected in choice.reason
        assert chosen[choice.dimension] is (None if expected == "first" else bases.fitted[expected])
    assert report.bases["parallel"]["parallel_texts"] == len(parallel.texts)
    from skadapt.export.dims import dims_markdown

    tiers = {f"dims-{d}": {"dimension": d, "basis": "corpus", "bytes_per_vector": 4 * d, "size_mb": 1.0}
             for d in (16, 8)}  # fmt: skip
    lines = dims_markdown({"dims": tiers, "speed": {"pytorch": {"texts_per_s": 1.0}}, "dimension": 32,
                           "dims_basis": report.model_dump()})  # fmt: skip
    text = "\n".join(lines)
    assert "| tier | corpus | parallel | first | chosen | why |" in text
    for choice in report.choices:
        row = next(
            line
            for line in lines
            if line.startswith(f"| dims-{choice.dimension} | {100 * choice.candidates[0].mean:.2f}")
        )
        assert f"**{choice.chosen}**" in row and choice.reason in row
    assert "| dims-8 | parallel | " in text  # per dev set
    assert report.dev_sets is not None and {s["kind"] for s in report.dev_sets} == {"sts", "bitext"}
    # the same choice without parallel text: corpus and first only
    plain = fit_bases(model, corpus, None, 32, wanted("auto", False))
    _, without = choose_bases(model, [8], plain, "auto", dev=dev, seed=0)
    assert [c.name for c in without.choices[0].candidates] == ["corpus", "first"]
    assert without.choices[0].candidates[0].scores == report.choices[1].candidates[0].scores


def test_without_dev_sets_the_corpus_basis_is_kept_and_the_report_says_so(fitted: tuple) -> None:
    model, corpus, parallel = fitted
    bases = fit_bases(model, corpus, parallel, 32, wanted("auto", True))
    chosen, report = choose_bases(model, [8], bases, "auto", dev=None)
    assert chosen[8] is bases.fitted["corpus"] and report.choices[0].chosen == "corpus"
    assert "no dev sets" in report.choices[0].reason and report.dev_sets is None
    fixed, fixed_report = choose_bases(model, [8], bases, "parallel", dev=None)
    assert (
        fixed[8] is bases.fitted["parallel"]
        and fixed_report.choices[0].reason == "export.dims_basis: parallel"
    )
