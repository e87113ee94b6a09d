"""Tiny models for offline tests: real tokenizers trained on fixture text, random-weight encoders.

``build_tiny_model(path, kind)`` writes a sentence-transformers directory (Transformer + mean Pooling +
Normalize, ``query: ``/``passage: `` prompts) whose tokenizer is a Unigram (XLM-R style), WordPiece
(BERT style) or byte-level BPE (RoBERTa style) model trained by ``tokenizers`` on ``FIXTURE_TEXTS``.

``tokenizers``' trainers break ties in hash-map order, so two trainings on the same text can keep different
tokens. The tokenizers trained on ``FIXTURE_TEXTS`` are therefore kept in ``tiny_tokenizers/<kind>.json``
(written by ``python -m tests.support.tiny_models``): every test run sees the same tiny models.
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

TOKENIZER_KINDS = ("unigram", "wordpiece", "bpe")

FIXTURE_TEXTS = [
    "Bratislava je hlavné mesto Slovenska a leží na Dunaji.",
    "Vysoké Tatry sú najvyššie pohorie na Slovensku.",
    "Košice sú druhé najväčšie mesto na východe krajiny.",
    "Slovenčina patrí medzi západoslovanské jazyky.",
    "Dnes je pekné počasie, svieti slnko a je teplo.",
    "Zajtra bude pršať a fúkať silný vietor.",
    "Študenti sa učia na skúšku z matematiky.",
    "Knižnica je otvorená od pondelka do piatku.",
    "Vlak do Žiliny mešká pätnásť minút.",
    "Na trhu predávajú čerstvé ovocie a zeleninu.",
    "Futbalový zápas skončil remízou dva dva.",
    "Lekár odporučil pacientovi viac odpočívať.",
    "The quick brown fox jumps over the lazy dog.",
    "Embeddings map sentences to vectors in 2024.",
    "Cena je 12,50 € a zľava 30 %.",
    "Čo je to? Áno, nie! Ďakujem — prosím.",
]

_XLMR_SPECIALS = {"cls": "<s>", "pad": "<pad>", "sep": "</s>", "unk": "<unk>"}
_SPECIALS = {  # role -> token, in vocabulary order (ids 0..3)
    "unigram": _XLMR_SPECIALS,
    "bpe": _XLMR_SPECIALS,
    "wordpiece": {"pad": "[PAD]", "unk": "[UNK]", "cls": "[CLS]", "sep": "[SEP]"},
}
_MASK = {"unigram": "<mask>", "bpe": "<mask>", "wordpiece": "[MASK]"}


FROZEN = Path(__file__).with_name("tiny_tokenizers")


def build_tokenizer(kind: str, texts: list[str] | None = None, vocab_size: int = 300) -> Tokenizer:
    """A small fast tokenizer of ``kind`` (unigram, wordpiece, bpe) trained on ``texts``; the frozen one for
    the fixture texts at the default size."""
    frozen = FROZEN / f"{kind}.json"
    if texts is None and vocab_size == 300 and frozen.exists():
        return Tokenizer.from_file(str(frozen))
    return train_tokenizer(kind, texts or FIXTURE_TEXTS, vocab_size)


def train_tokenizer(kind: str, texts: list[str], vocab_size: int = 300) -> Tokenizer:
    """Train a small fast tokenizer of ``kind`` on ``texts`` (ties broken in ``tokenizers``' hash order)."""
    specials = [*_SPECIALS[kind].values(), _MASK[kind]]
    if kind == "unigram":
        tokenizer = Tokenizer(models.Unigram())
        tokenizer.normalizer = normalizers.Sequence(
            [normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
        )
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
        tokenizer.decoder = decoders.Metaspace()
        trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=specials, unk_token="<unk>")
        cls, sep = "<s>", "</s>"
    elif kind == "wordpiece":
        tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tokenizer.normalizer = normalizers.BertNormalizer(lowercase=False)
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.decoder = decoders.WordPiece()
        trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials)
        cls, sep = "[CLS]", "[SEP]"
    elif kind == "bpe":
        tokenizer = Tokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tokenizer.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=specials,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )
        cls, sep = "<s>", "</s>"
    else:
        raise ValueError(f"unknown tokenizer kind {kind!r}; use one of {TOKENIZER_KINDS}")
    tokenizer.train_from_iterator(texts, trainer)
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}",
        pair=f"{cls} $A {sep} {sep} $B {sep}",
        special_tokens=[(cls, tokenizer.token_to_id(cls)), (sep, tokenizer.token_to_id(sep))],
    )
    return tokenizer


def build_tiny_model(
    path: Path, kind: str = "unigram", texts: list[str] | None = None, seed: int = 0
) -> Path:
    """Write a tiny random-weight sentence-transformers model with a ``kind`` tokenizer to ``path``."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    tokenizer = build_tokenizer(kind, texts)
    roles = _SPECIALS[kind]
    cls, sep = roles["cls"], roles["sep"]
    hf_tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token=cls if kind != "wordpiece" else None,
        eos_token=sep if kind != "wordpiece" else None,
        cls_token=cls,
        sep_token=sep,
        pad_token=roles["pad"],
        unk_token=roles["unk"],
        mask_token=_MASK[kind],
        model_max_length=128,
    )
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=tokenizer.get_vocab_size(),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=130,
        pad_token_id=hf_tokenizer.pad_token_id,
    )
    raw = path / "_hf"
    BertModel(config).save_pretrained(raw)
    hf_tokenizer.save_pretrained(raw)
    transformer = Transformer(str(raw), max_seq_length=128)
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    model = SentenceTransformer(
        modules=[transformer, pooling, Normalize()],
        prompts={"query": "query: ", "passage": "passage: "},
        device="cpu",
    )
    model.save(str(path))
    import shutil

    shutil.rmtree(raw)
    return path


if __name__ == "__main__":
    FROZEN.mkdir(exist_ok=True)
    for name in TOKENIZER_KINDS:
        train_tokenizer(name, FIXTURE_TEXTS).save(str(FROZEN / f"{name}.json"))
