"""``skadapt robustness``: models scored on LLM-rewritten evaluation texts against the originals."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from skadapt.commands.options import Options, config_command
from skadapt.console import console, handle_errors, out
from skadapt.llm.config import LLMConfig
from skadapt.robustness.config import RobustnessConfig

if TYPE_CHECKING:
    from skadapt.robustness.run import RobustnessPlan

# LLM fields that change no answer: a new server address or more requests in flight still resume
LLM_TRANSPORT = frozenset({"base_url", "api_key_env", "concurrency", "timeout_s", "http_retries", "cache"})


def work_dir_for(
    out_dir: Path, plan: RobustnessPlan, specs: list[str], language: str, llm: LLMConfig
) -> Path:
    """Work directory of a standalone run: a hidden sibling of ``--out`` kept until success, keyed by the
    run's inputs (models and their files, tasks and suite files, language, plan, LLM), so that only the
    same run resumes from it (its rewrites and mteb results)."""
    from skadapt import artifacts
    from skadapt.tasks.selection import suite_files

    settings: dict[str, Any] = {
        "models": {label: [path, artifacts.input_fingerprint(path)] for label, path in plan.models.items()},
        "tasks": specs,
        "suite_files": {str(p): artifacts.input_fingerprint(str(p)) for p in suite_files(specs)},
        "language": language,
        "plan": {k: v for k, v in vars(plan).items() if k not in ("models", "judge")},
        "llm": llm.model_dump(mode="json", exclude=set(LLM_TRANSPORT)),
    }
    if plan.judge is not None:  # its LLM's transport fields change no answer either
        settings["judge"] = plan.judge.model_dump(mode="json", exclude={"llm": set(LLM_TRANSPORT)})
    return out_dir.parent / f".{out_dir.name}.robustness-{artifacts.hash_json(settings)[:12]}"


@handle_errors
@config_command
def command(
    models: Annotated[
        list[str], typer.Argument(help="Model directories or Hub ids; LABEL=PATH names a row.")
    ],
    out_dir: Annotated[Path, typer.Option("--out", help="Directory for the report, figures and rewrites.")],
    language: Annotated[str, typer.Option(help="ISO 639-3 language of the texts (required).")],
    config: Annotated[
        RobustnessConfig,
        Options(
            "robustness",
            exclude=frozenset({"models"}),
            renamed={"--prompt": "prompt_policy"},
            comma_lists=frozenset({"transforms", "seeds"}),
            short={"tasks": "-t"},
        ),
    ],
    llm: Annotated[LLMConfig, Options("llm")],
    overwrite: Annotated[bool, typer.Option(help="Replace an existing --out directory.")] = False,
) -> None:
    """Rewrite the tasks' texts per transformation and seed, score every model, print the profile.

    The rewrites and mteb results are kept in a hidden work directory next to --out until the command
    succeeds: an interrupted run resumes (the LLM answers are cached too); --out appears only when done.
    """
    from skadapt.artifacts import atomic_dir, clean_stale, refuse_nonempty
    from skadapt.commands.evaluate import labelled_models
    from skadapt.languages import get_language
    from skadapt.robustness.run import RobustnessPlan, run_robustness
    from skadapt.robustness.stage import validated_settings
    from skadapt.robustness.transforms import resolve_settings
    from skadapt.tasks.selection import select_tasks

    lang = get_language(language)
    if not overwrite:
        refuse_nonempty(out_dir)
    settings, rejected = validated_settings(
        config,
        resolve_settings(config.preset, config.transforms, config.seeds, config.temperature, config.top_p),
    )
    plan = RobustnessPlan(
        models=labelled_models(models),
        prompt_policy=dict(config.prompt_policy or {}),
        batch_size=config.batch_size,
        rejected=rejected,
        judge=config.judge,
        **settings,  # type: ignore[arg-type]
    )
    specs = list(config.tasks) or list(lang.eval_tasks)
    selected = select_tasks(specs, language=lang.code)
    console.print(
        f"robustness: {len(plan.models)} model(s), {len(selected)} task(s), {', '.join(plan.transforms)} "
        f"x seeds {', '.join(map(str, plan.seeds))}; LLM {llm.backend}:{llm.model}"
    )
    work_dir = work_dir_for(out_dir, plan, specs, lang.code, llm)
    work_dir.mkdir(parents=True, exist_ok=True)
    clean_stale(out_dir.parent, [out_dir.name])
    try:
        run_robustness(selected, plan, llm, lang, work_dir)
        with atomic_dir(out_dir, overwrite=True) as tmp:
            shutil.copytree(work_dir, tmp, dirs_exist_ok=True, ignore=shutil.ignore_patterns("cache"))
    except BaseException:
        if not any(work_dir.iterdir()):  # failed before anything was made: nothing to resume from
            work_dir.rmdir()
        raise
    shutil.rmtree(work_dir, ignore_errors=True)
    out.print((out_dir / "robustness.md").read_text(encoding="utf-8"))
    out.print(f"[green]saved[/] {out_dir / 'robustness.json'}, figures in {out_dir / 'figures'}")
