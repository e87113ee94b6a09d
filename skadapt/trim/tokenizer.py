"""Analysis and rewrite of a fast tokenizer (``tokenizer.json``) for a subset of its vocabulary.

Supported models: Unigram (XLM-R / multilingual-e5), WordPiece (BERT) and BPE (RoBERTa/GPT-2 byte-level,
or SentencePiece-style with byte fallback). Kept tokens keep their relative order, so the new ids are the
ranks of the kept old ids; every id in the file (added tokens, ``unk_id``, post-processor, padding) is
remapped with the same table.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skadapt.trim.errors import UnsupportedTokenizerError

SUPPORTED_MODELS = ("Unigram", "WordPiece", "BPE")

BOUNDARY_ROLES = ("cls_token", "sep_token", "bos_token", "eos_token")


@dataclass
class TokenizerInfo:
    """What trimming needs to know about a tokenizer.

    Attributes:
        data: The parsed ``tokenizer.json``.
        kind: ``Unigram``, ``WordPiece`` or ``BPE``.
        tokens: Token string per id (model vocabulary and added tokens).
        added_ids: Ids of added tokens (special or not) - always kept.
        special_ids: Ids of special tokens.
        encoding_special_ids: Special tokens that can appear in encoded text: those the post-processor
            inserts (``<s>``/``</s>``, ``[CLS]``/``[SEP]``) and the unknown token. They count towards
            ``vocab_size``; other specials (padding, mask, ...) are kept on top of it.
    """

    data: dict[str, Any]
    kind: str
    tokens: list[str]
    added_ids: set[int] = field(default_factory=set)
    special_ids: set[int] = field(default_factory=set)
    encoding_special_ids: set[int] = field(default_factory=set)
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def size(self) -> int:
        """Number of ids (model vocabulary + added tokens beyond it)."""
        return len(self.tokens)

    def token_id(self, token: str) -> int | None:
        """Id of a token string, or None."""
        if len(self._index) != len(self.tokens):
            self._index = {t: i for i, t in enumerate(self.tokens)}
        return self._index.get(token)

    @property
    def model(self) -> dict[str, Any]:
        """The ``model`` section."""
        return self.data["model"]


def read_tokenizer_json(model_dir: Path) -> str:
    """The ``tokenizer.json`` text of a model directory.

    Raises:
        UnsupportedTokenizerError: There is no ``tokenizer.json`` (only a slow tokenizer).
    """
    path = model_dir / "tokenizer.json"
    if not path.is_file():
        raise UnsupportedTokenizerError(
            f"{model_dir}: no tokenizer.json; trimming needs a fast (tokenizers) tokenizer. "
            "Convert it first: AutoTokenizer.from_pretrained(dir).save_pretrained(dir)"
        )
    return path.read_text(encoding="utf-8")


def analyse(tokenizer_json: str, where: str = "tokenizer.json") -> TokenizerInfo:
    """Parse and check a ``tokenizer.json``.

    Raises:
        UnsupportedTokenizerError: The model type is not Unigram, WordPiece or BPE.
    """
    data = json.loads(tokenizer_json)
    kind = data.get("model", {}).get("type")
    if kind not in SUPPORTED_MODELS:
        raise UnsupportedTokenizerError(
            f"{where}: tokenizer model type {kind!r} is not supported for trimming "
            f"(supported: {', '.join(SUPPORTED_MODELS)})"
        )
    model = data["model"]
    if kind == "Unigram":
        tokens = [piece for piece, _ in model["vocab"]]
    else:
        vocab: dict[str, int] = model["vocab"]
        tokens = [""] * len(vocab)
        for token, index in vocab.items():
            tokens[index] = token
    info = TokenizerInfo(data, kind, tokens)
    for added in data.get("added_tokens") or []:
        index = added["id"]
        while index >= len(tokens):
            tokens.append("")
        tokens[index] = added["content"]
        info.added_ids.add(index)
        if added.get("special"):
            info.special_ids.add(index)
    info.encoding_special_ids = {i for i in _post_processor_ids(data.get("post_processor"))}
    unk = unk_id(info)
    if unk is not None:
        info.encoding_special_ids.add(unk)
        info.special_ids.add(unk)
    info.special_ids |= info.encoding_special_ids
    return info


def unk_id(info: TokenizerInfo) -> int | None:
    """Id of the unknown token, if the model has one."""
    model = info.model
    if info.kind == "Unigram":
        return model.get("unk_id")
    token = model.get("unk_token")
    return info.token_id(token) if token is not None else None


def _post_processor_ids(processor: dict[str, Any] | None) -> Iterable[int]:
    if not processor:
        return
    kind = processor.get("type")
    if kind == "Sequence":
        for inner in processor.get("processors", []):
            yield from _post_processor_ids(inner)
    elif kind == "TemplateProcessing":
        for special in processor.get("special_tokens", {}).values():
            yield from special.get("ids", [])
    elif kind in ("RobertaProcessing", "BertProcessing"):
        yield processor["cls"][1]
        yield processor["sep"][1]


def _prefix(info: TokenizerInfo) -> str:
    """The word-start marker (Metaspace) or continuation prefix (WordPiece) spelling pieces carry."""
    if info.kind == "WordPiece":
        return info.model.get("continuing_subword_prefix") or "##"
    return _metaspace_replacement(info.data.get("pre_tokenizer")) or ""


def _metaspace_replacement(pre: dict[str, Any] | None) -> str | None:
    if not pre:
        return None
    if pre.get("type") == "Metaspace":
        return pre.get("replacement", "▁")
    for inner in pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else []:
        found = _metaspace_replacement(inner)
        if found:
            return found
    return None


def _is_byte_level(data: dict[str, Any]) -> bool:
    return "ByteLevel" in json.dumps(data.get("pre_tokenizer") or {})


def strip_marker(info: TokenizerInfo, token: str) -> str:
    """A token's characters without its word-start / continuation marker."""
    marker = _prefix(info)
    if marker and token.startswith(marker):
        return token[len(marker) :]
    return token


def spelling_ids(info: TokenizerInfo, characters: Iterable[str]) -> set[int]:
    """Ids needed to spell each character anywhere in a word, so no seen character becomes unknown.

    Unigram: the character and the word-start marker; WordPiece: the character and ``##`` + character;
    BPE: the single-character tokens, the whole byte alphabet for byte-level BPE and the ``<0xNN>`` byte
    tokens when byte fallback is on.
    """
    wanted: set[str] = set()
    marker = _prefix(info)
    for char in characters:
        wanted.add(char)
        if info.kind == "WordPiece":
            wanted.add(marker + char)
    if info.kind == "Unigram" and marker:
        wanted.add(marker)
    if info.kind == "BPE" and _is_byte_level(info.data):
        from tokenizers.pre_tokenizers import ByteLevel

        wanted.update(ByteLevel.alphabet())
    if info.model.get("byte_fallback"):
        wanted.update(f"<0x{b:02X}>" for b in range(256))
    return {i for token in wanted if (i := info.token_id(token)) is not None}


def _merge_pairs(info: TokenizerInfo) -> list[tuple[str, str]]:
    return [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in info.model["merges"]]  # type: ignore[misc]


def _merge_result(info: TokenizerInfo, left: str, right: str) -> str:
    prefix = info.model.get("continuing_subword_prefix") or ""
    if prefix and right.startswith(prefix):
        right = right[len(prefix) :]
    return left + right


def bpe_closure(info: TokenizerInfo, ids: set[int]) -> set[int]:
    """``ids`` plus every token a kept BPE token is merged from (recursively).

    BPE builds a token through intermediate tokens; keeping them (and the merges between them) makes the
    trimmed tokenizer apply exactly the merges the original applied.
    """
    if info.kind != "BPE":
        return set(ids)
    parents: dict[str, list[tuple[str, str]]] = {}
    for left, right in _merge_pairs(info):
        parents.setdefault(_merge_result(info, left, right), []).append((left, right))
    closed = set(ids)
    stack = [info.tokens[i] for i in ids]
    while stack:
        token = stack.pop()
        for pair in parents.get(token, []):
            for part in pair:
                index = info.token_id(part)
                if index is not None and index not in closed:
                    closed.add(index)
                    stack.append(part)
    return closed


def rewrite(info: TokenizerInfo, keep: list[int]) -> dict[str, Any]:
    """A new ``tokenizer.json`` (as a dict) with only the ``keep`` ids (sorted ascending), renumbered.

    Raises:
        ValueError: ``keep`` misses an added token (callers always keep them).
    """
    mapping = {old: new for new, old in enumerate(keep)}
    missing = info.added_ids - mapping.keys()
    if missing:
        raise ValueError(f"added tokens must be kept, missing ids {sorted(missing)}")
    data = copy.deepcopy(info.data)
    model = data["model"]
    if info.kind == "Unigram":
        model["vocab"] = [info.model["vocab"][old] for old in keep if old < len(info.model["vocab"])]
        if model.get("unk_id") is not None:
            model["unk_id"] = mapping[model["unk_id"]]
            _keep_unknown_penalty(info, model)
    else:
        model_vocab = info.model["vocab"]
        model["vocab"] = {
            info.tokens[old]: new for new, old in enumerate(keep) if info.tokens[old] in model_vocab
        }
    if info.kind == "BPE":
        kept = model["vocab"]
        merges = info.model["merges"]
        model["merges"] = [
            merge
            for merge, (left, right) in zip(merges, _merge_pairs(info), strict=True)
            if left in kept and right in kept and _merge_result(info, left, right) in kept
        ]
    for added in data.get("added_tokens") or []:
        added["id"] = mapping[added["id"]]
    data["post_processor"] = _remap_processor(data.get("post_processor"), mapping)
    if data.get("padding"):
        data["padding"]["pad_id"] = mapping.get(data["padding"]["pad_id"], 0)
    return data


def _keep_unknown_penalty(info: TokenizerInfo, model: dict[str, Any]) -> None:
    """Give the unknown piece the original lowest score, so a trimmed Unigram scores unknowns as before.

    ``tokenizers`` scores an unknown character ``min(vocabulary scores) - 10``; dropping the rarest pieces
    raises that minimum, which can make a path through an unknown character beat the original
    segmentation. The unknown piece's own score is otherwise unused when it is an added token (added
    tokens are split off before the model sees the text), so it carries the original minimum.
    """
    old_unk = info.model["unk_id"]
    if old_unk not in info.added_ids or not model["vocab"]:
        return
    lowest = min(score for _, score in info.model["vocab"])
    if min(score for _, score in model["vocab"]) > lowest:
        piece = model["vocab"][model["unk_id"]]
        model["vocab"][model["unk_id"]] = [piece[0], lowest]


def _remap_processor(processor: dict[str, Any] | None, mapping: dict[int, int]) -> dict[str, Any] | None:
    if not processor:
        return processor
    kind = processor.get("type")
    if kind == "Sequence":
        processor["processors"] = [_remap_processor(p, mapping) for p in processor.get("processors", [])]
    elif kind == "TemplateProcessing":
        for special in processor.get("special_tokens", {}).values():
            special["ids"] = [mapping[i] for i in special.get("ids", [])]
    elif kind in ("RobertaProcessing", "BertProcessing"):
        for role in ("cls", "sep"):
            token, old = processor[role]
            processor[role] = [token, mapping[old]]
    return processor


def remap_tokenizer_config(config: dict[str, Any], mapping: dict[int, int]) -> dict[str, Any]:
    """``tokenizer_config.json`` with ``added_tokens_decoder`` keys renumbered (other fields unchanged)."""
    config = copy.deepcopy(config)
    decoder = config.get("added_tokens_decoder")
    if isinstance(decoder, dict):
        config["added_tokens_decoder"] = {
            str(mapping[int(old)]): value for old, value in decoder.items() if int(old) in mapping
        }
    return config
