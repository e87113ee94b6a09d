"""The real multilingual-e5-small: 60,000 -> 60,002 rows / 44.7M parameters, and exact parity on Slovak.

wordfreq:sk alone yields only ~24,000 distinct e5 tokens (with capitalised and upper-case forms), so the
60,000-token test counts a word corpus built from several wordfreq lists (sk first, then cs, uk, de, en,
pl, ru; each word also capitalised), which has ~63,000 distinct tokens. The exactness test trims to 60,000
on the ~2,000 Slovak texts of tests/data, whose ~2,750 tokens all fit, so every one of them must tokenize
exactly as before.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from skadapt.trim import parity
from skadapt.trim.config import TrimConfig
from skadapt.trim.report import REPORT_FILE
from skadapt.trim.trimmer import trim_model

SLOVAK = [
    "Bratislava je hlavné a zároveň najväčšie mesto Slovenskej republiky.",
    "Vysoké Tatry patria medzi najnavštevovanejšie pohoria v strednej Európe.",
    "Národná rada Slovenskej republiky schválila v utorok novelu zákona o dani z príjmov.",
    "Teplota by sa mala cez víkend pohybovať od 18 do 24 °C, v horách bude chladnejšie.",
    "Ďakujeme za vašu objednávku č. 2024/118; tovar odošleme do troch pracovných dní.",
    "Kľúčovým faktorom úspechu bola dôsledná príprava a spolupráca celého tímu.",
    "Dunaj preteká cez Bratislavu a tvorí časť hranice s Maďarskom a Rakúskom.",
    "Žiaci základných škôl budú mať jarné prázdniny od 3. do 7. marca.",
    "Hrad Devín stojí na sútoku Dunaja a Moravy a je národnou kultúrnou pamiatkou.",
    "Podľa Štatistického úradu SR vzrástla inflácia v januári na 5,6 percenta.",
    "Ľudovít Štúr kodifikoval spisovnú slovenčinu v roku 1843.",
    "„Áno, prídem zajtra ráno,“ povedala a zavrela dvere.",
    "Cena lístka je 1,20 € a platí 60 minút vo všetkých linkách MHD.",
    "Čo ak sa rozhodneme inak? Nikto nevie, aké budú následky!",
    "E-mail pošlite na adresu info@example.sk alebo volajte +421 2 1234 5678.",
]
LANGUAGES = ("sk", "cs", "uk", "de", "en", "pl", "ru")
WORDS_PER_LANGUAGE = 60_000
DATA = Path(__file__).parent / "data"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKADAPT_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def word_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Lines of 20 words from several wordfreq lists, each word also capitalised (~9 MB)."""
    import wordfreq

    lines: list[str] = []
    for lang in LANGUAGES:
        words = list(itertools.islice(wordfreq.iter_wordlist(lang, "best"), WORDS_PER_LANGUAGE))
        words += [w[:1].upper() + w[1:] for w in words]
        lines += [" ".join(words[i : i + 20]) for i in range(0, len(words), 20)]
    path = tmp_path_factory.mktemp("corpus") / "words.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_trim_to_60000_gives_60002_rows_and_44_7m_parameters(
    e5_small: Path, word_corpus: Path, tmp_path: Path
) -> None:
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer

    out = tmp_path / "e5-trimmed"
    out.mkdir()
    config = TrimConfig(corpus=str(word_corpus), vocab_size=60_000, parity_documents=50, workers=2)
    summary = trim_model(str(e5_small), config, out)
    assert summary["embedding_rows_before"] == 250_037
    assert summary["embedding_rows"] == 60_002
    assert summary["parameters"] == pytest.approx(44.7e6, abs=0.1e6)
    assert summary["warnings"] == []
    assert summary["parity"]["passed"] and summary["parity"]["identically_tokenized"] > 0

    model = SentenceTransformer(str(out), device="cpu")
    tokenizer = AutoTokenizer.from_pretrained(out)
    assert len(tokenizer) == 60_002
    original = SentenceTransformer(str(e5_small), device="cpu").prompts
    assert model.prompts == {**original, "document": "passage: "}
    assert model.prompts["query"] == "query: "
    assert model.max_seq_length == 512
    assert model.encode(SLOVAK[:2], prompt_name="query").shape == (2, 384)
    assert tokenizer.convert_ids_to_tokens([0, 1, 2, 3]) == ["<s>", "<pad>", "</s>", "<unk>"]
    assert tokenizer.mask_token_id == 60_001
    report = json.loads((out / REPORT_FILE).read_text())
    assert report["embedding_rows"] == {"before": 250_037, "after": 60_002}
    assert report["parameters"]["before"] == 117_653_760
    assert report["selection"]["special_tokens_on_top"] == 2
    coverage = report["coverage"]  # ~63,000 distinct tokens into 60,000: a cut, reported as such
    assert not report["exact"] and report["verdict"].startswith("not exact:")
    assert 0.99 < coverage["corpus_coverage"] < 1.0 and len(coverage["top_dropped_tokens"]) == 20
    assert 0.0 < report["parity"]["identical_fraction"] < 1.0


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


@pytest.fixture(scope="module")
def slovak_texts() -> list[str]:
    """The ~2,000 distinct Slovak texts of tests/data (corpus, training and suite files)."""
    texts = (DATA / "sk_corpus.txt").read_text(encoding="utf-8").splitlines()
    for path in sorted(DATA.glob("finetune/*.jsonl")) + sorted(DATA.glob("suite_sk/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            texts += [t for t in _strings(json.loads(line)) if " " in t.strip() and len(t) > 15]
    return list(dict.fromkeys(t.strip() for t in texts if t.strip()))


def test_every_slovak_corpus_text_tokenizes_identically_at_60000(
    e5_small: Path, slovak_texts: list[str], tmp_path: Path
) -> None:
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

    assert len(slovak_texts) > 1_500
    corpus = tmp_path / "slovak.txt"
    corpus.write_text("\n".join(slovak_texts) + "\n", encoding="utf-8")
    out = tmp_path / "e5-sk-60k"
    out.mkdir()
    config = TrimConfig(corpus=str(corpus), vocab_size=60_000, parity_documents=100, workers=2)
    summary = trim_model(str(e5_small), config, out)
    assert summary["embedding_rows"] < 60_000  # every counted token fits

    before = Tokenizer.from_file(str(e5_small / "tokenizer.json"))
    after = Tokenizer.from_file(str(out / "tokenizer.json"))
    differing = [
        text
        for text, old, new in zip(
            slovak_texts, before.encode_batch(slovak_texts), after.encode_batch(slovak_texts), strict=True
        )
        if [before.id_to_token(i) for i in old.ids] != [after.id_to_token(i) for i in new.ids]
    ]
    assert differing == []  # EVERY corpus text, not only the parity sample
    assert summary["coverage"]["all_counted_tokens_kept"] and summary["exact"]
    assert summary["parity"]["texts"] == 100 and summary["parity"]["identical_fraction"] == 1.0
    sample = slovak_texts[::150]
    a = SentenceTransformer(str(e5_small), device="cpu").encode(sample, prompt_name="passage")
    b = SentenceTransformer(str(out), device="cpu").encode(sample, prompt_name="passage")
    assert abs(a - b).max() <= 1e-5
    assert not list(out.rglob("*.onnx")) and (out / "README.md").is_file()


def test_slovak_text_is_unchanged_when_every_used_token_is_kept(e5_small: Path, tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    corpus = tmp_path / "slovak.txt"
    corpus.write_text("\n".join(SLOVAK) + "\n", encoding="utf-8")
    out = tmp_path / "e5-sk"
    out.mkdir()
    config = TrimConfig(corpus=str(corpus), vocab_size=250_000, parity_documents=0, workers=1)
    summary = trim_model(str(e5_small), config, out)
    assert summary["embedding_rows"] < 2_000
    result = parity.check_parity(e5_small, out, SLOVAK)
    assert result.identical == len(SLOVAK)
    assert result.max_abs_diff <= 1e-5
    original = SentenceTransformer(str(e5_small), device="cpu")
    trimmed = SentenceTransformer(str(out), device="cpu")
    for prompt in ("query", "passage"):
        a = original.encode(SLOVAK, prompt_name=prompt, convert_to_numpy=True)
        b = trimmed.encode(SLOVAK, prompt_name=prompt, convert_to_numpy=True)
        assert abs(a - b).max() <= 1e-5
