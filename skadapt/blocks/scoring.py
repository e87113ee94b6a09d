"""Models scored on evaluation tasks outside a run (the evaluate stage's runner and its item bootstrap),
and the robustness stage's rewritten tasks."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from mteb.abstasks import AbsTask

    from skadapt.languages import Language
    from skadapt.llm.config import LLMConfig
    from skadapt.robustness.config import RobustnessConfig
    from skadapt.robustness.run import Variant


class ModelScores(BaseModel):
    """Labelled models scored on the same tasks.

    Attributes:
        table: The models side by side (``rows``: per model its task scores, type means, ``All``).
        texts_encoded: Label -> texts the model encoded (those its embedding memo did not hold).
        draws: Label -> its bootstrap draws per local-suite task (``points``, ``values``, ``scales``);
            every model gets the same resamples, so differences are paired. Empty without ``bootstrap``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    table: Any
    texts_encoded: dict[str, int]
    draws: dict[str, Any] = Field(default_factory=dict)


def score_models(
    models: Mapping[str, str | Path],
    tasks: Sequence[str | AbsTask],
    *,
    language: Language | str = "slk",
    prompt_policy: Mapping[str, str] | None = None,
    cache_dir: str | Path | None = None,
    bootstrap: int = 0,
    seed: int = 42,
    batch_size: int = 32,
) -> ModelScores:
    """Score each labelled model (label -> directory or Hub id) on ``tasks`` with mteb, as the evaluate
    stage does (one model loaded at a time, each with fresh copies of the tasks), without writing a report.

    Args:
        models: Label -> model.
        tasks: Task specs (``select_tasks``'s: benchmarks, task names, suite files) or mteb task objects
            (scored as they are; one model: not copied).
        language: The language of local tasks that do not declare one.
        prompt_policy: Task type -> prompt, added to each model's prompts.
        cache_dir: mteb's result cache (None: none, everything is computed).
        bootstrap: Resamples of the local suites' items among the specs (0: no draws).
        seed: Seed of task selection and the resamples.
        batch_size: Encoding batch size.
    """
    from skadapt.evaluate.aggregate import aggregate
    from skadapt.evaluate.bootstrap import model_draws
    from skadapt.languages import Language
    from skadapt.tasks.runner import evaluate_model
    from skadapt.tasks.selection import select_tasks, suites_in

    code = language.code if isinstance(language, Language) else language
    specs = [task for task in tasks if isinstance(task, str)]
    objects = [task for task in tasks if not isinstance(task, str)]
    selected = [*select_tasks(specs, language=code, seed=seed), *objects] if specs else objects
    suites = suites_in(specs) if bootstrap else []
    policy = dict(prompt_policy or {})
    encoded: dict[str, int] = {}
    draws: dict[str, Any] = {}

    def on_model(label: str, loaded: Any) -> None:
        encoded[label] = int(getattr(getattr(loaded, "encode_memo", None), "misses", 0))
        if suites:
            draws[label] = model_draws(
                loaded, suites, policy=policy, count=bootstrap, seed=seed, batch_size=batch_size,
                name=str(models[label]),
            )  # fmt: skip

    scores = []
    for label, ref in models.items():
        fresh = selected if len(models) == 1 else [copy.deepcopy(task) for task in selected]
        scores.extend(
            evaluate_model(
                str(ref),
                label,
                fresh,
                cache_dir=Path(cache_dir) if cache_dir is not None else None,
                prompt_policy=policy,
                batch_size=batch_size,
                on_model=on_model,
            )
        )
    return ModelScores(table=aggregate(scores), texts_encoded=encoded, draws=draws)


def rewrite_tasks(
    tasks: Sequence[AbsTask],
    config: RobustnessConfig,
    *,
    llm: LLMConfig,
    language: Language | str,
    out: str | Path,
) -> list[Variant]:
    """The robustness stage's rewritten tasks: each task under each of ``config``'s transformations and
    seeds (its preset, temperature, top_p and judge applied), its rewrites in ``out/rewrites``. Each
    variant has ``transformed`` (the task on rewritten texts) and ``survivors`` (the original on the items
    whose rewrite passed, when some did not; else None).

    Raises:
        RobustnessError: A transformation or setting is invalid.
    """
    from skadapt.languages import Language, get_language
    from skadapt.robustness.run import RobustnessPlan, build_variants
    from skadapt.robustness.stage import validated_settings
    from skadapt.robustness.transforms import resolve_settings

    language = language if isinstance(language, Language) else get_language(language)
    settings, rejected = validated_settings(
        config,
        resolve_settings(config.preset, config.transforms, config.seeds, config.temperature, config.top_p),
    )
    plan = RobustnessPlan(
        models={},
        prompt_policy=dict(config.prompt_policy or {}),
        batch_size=config.batch_size,
        rejected=rejected,
        judge=config.judge,
        **settings,  # type: ignore[arg-type]
    )
    variants, _ = build_variants(list(tasks), plan, llm, language, Path(out))
    return variants


def task_test_texts(
    tasks: Sequence[str], *, language: Language | str, allow_unreachable: bool = False
) -> dict[str, list[str]]:
    """Task -> its test texts, for the evaluation tasks ``tasks`` (specs): what the stages keep out of
    training, corpus samples and dev sets.

    Raises:
        UnreachableTestDataError: A task's data is unreachable and ``allow_unreachable`` is False.
    """
    from skadapt.languages import Language
    from skadapt.tasks.contamination import gather_test_texts

    code = language.code if isinstance(language, Language) else language
    return gather_test_texts(list(tasks), allow_unreachable, language=code)[0]
