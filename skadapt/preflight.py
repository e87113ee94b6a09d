"""Preflight: resolve every input of a recipe in seconds, before any compute.

``skadapt train RECIPE --check`` (and ``skadapt recipe check``) run :func:`preflight`; ``skadapt train``
runs it first unless ``--no-check``. Each input is checked the way its stage will read it, through the
same readers: the base model, each data source and dev set (exists, config, split, revision and the
commit it resolves to, the first row's mapped columns, ClassLabel names against ``label_map``; for an nli
source, how its first rows group into triplets and pairs and the share dropped), each evaluation task
(in the installed mteb, with the recipe's language), the LLM endpoint and model, ``output_dir`` (a
directory, or one that can be made, where a test file can be written) and free disk. The Hub is probed once
first: when it cannot be reached, every Hub input is reported as unchecked with that one reason.

Gated datasets (e.g. SlovakNLI's ``natalia-nk/NLI-SK-annotated``) are found with one request per dataset
repository the run reads — training sources, the evaluation tasks' datasets, the contamination checks' —
(``auth_check``: the Hub answers ``GatedRepo`` when the current credentials cannot read it), and each one
the credentials cannot open is one problem line: the page to accept its terms, how to give a token, and,
for an evaluation task, ``evaluate.exclude_tasks`` as the alternative.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from skadapt.errors import SkadaptError
from skadapt.hub import ADVICE
from skadapt.hub_errors import HubRefusal, hub_refusal
from skadapt.llm.probe import probe_llm
from skadapt.outputs import OutputPathError, writable_dir
from skadapt.recipe import Recipe
from skadapt.stage import Input, RunFacts, model_input
from skadapt.stages import STAGES

HUB_PAGE = "https://huggingface.co/datasets"
"""Where a dataset's page (and its terms, when gated) is."""
GATED_THREADS = 8
MIN_FREE_GB = 2.0
"""Free disk below this (GB) in the run directory's file system is a problem."""


@dataclass
class Check:
    """One checked input: what it is, what was checked, and the problem (with what to do) if any."""

    input: str
    checked: str
    problem: str | None = None
    repo: str | None = None
    """The Hub dataset a gated-dataset check is about."""

    @property
    def ok(self) -> bool:
        """Whether the input passed."""
        return self.problem is None


def _run(item: str, checked: str, probe: Callable[[], str | None]) -> Check:
    """Run one probe; a skadapt error (or any error a reader raises) becomes the check's problem."""
    try:
        note = probe()
    except Exception as error:  # the readers' own messages say what is wrong and what to do
        message = str(error) if isinstance(error, SkadaptError) else f"{type(error).__name__}: {error}"
        return Check(item, checked, message.splitlines()[0][:400] if message else type(error).__name__)
    return Check(item, f"{checked}{f' ({note})' if note else ''}")


def _is_hub(spec: str) -> bool:
    return spec.startswith("hub:")


def _disk(run_dir: Path) -> str | None:
    existing = next(p for p in [run_dir, *run_dir.resolve().parents] if p.exists())
    free = shutil.disk_usage(existing).free / 1e9
    if free < MIN_FREE_GB:
        raise SkadaptError(f"{free:.1f} GB free at {existing}; free space or point output_dir elsewhere")
    return f"{free:.0f} GB free"


def _output_dir(run_dir: Path) -> None:
    """``output_dir`` is, or can be made, a directory a file can be written in (the check makes nothing)."""
    try:
        writable_dir(run_dir, "output_dir", create=False)
    except OutputPathError as error:  # its line names the directory already
        raise OutputPathError(str(error).removeprefix(f"output_dir {run_dir} ")) from error


def stage_inputs(recipe: Recipe, facts: RunFacts | None = None) -> list[Input]:
    """Every input the recipe's stages declare (:attr:`skadapt.stage.Stage.inputs`), in run order; the same
    input named by two stages (robustness scoring evaluate's tasks) once."""
    facts = facts or recipe.run_facts()
    found: dict[tuple[str, str], Input] = {}
    for stage in STAGES:
        section = getattr(recipe, stage.name)
        if section is None:
            continue
        for item in stage.inputs(section, facts):
            found.setdefault((item.checked, item.value), item)
    return list(found.values())


def _hub_datasets(recipe: Recipe, declared: list[Input], facts: RunFacts) -> dict[str, dict[str, list[str]]]:
    """Every Hub dataset repository the run reads (the data sources among the stages' ``declared`` inputs,
    the evaluation tasks' datasets): repo id -> {"uses": what reads it, "tasks": the evaluation tasks
    among them (names ``evaluate.exclude_tasks`` can leave out)}."""
    from skadapt.sources import parse_source
    from skadapt.tasks.selection import mteb_tasks
    from skadapt.tasks.suite import is_suite_spec

    repos: dict[str, dict[str, list[str]]] = {}

    def add(repo: str, use: str, task: str | None = None) -> None:
        entry = repos.setdefault(repo, {"uses": [], "tasks": []})
        if use not in entry["uses"]:
            entry["uses"].append(use)
        if task is not None and task not in entry["tasks"]:
            entry["tasks"].append(task)

    for source in declared:
        if source.source and _is_hub(source.value):
            add(parse_source(source.value).name, source.field)
    mirrors, excluded = facts.dataset_mirrors, set(facts.excluded_tasks)
    readers = [
        reads
        for stage in STAGES
        if stage.task_data is not None and getattr(recipe, stage.name) is not None
        for reads in stage.task_data(getattr(recipe, stage.name), facts)
    ]
    for reads in readers:
        use, honours_exclusion = reads.use, reads.excludable
        for spec in dict.fromkeys(reads.specs):
            if is_suite_spec(spec):
                continue
            try:
                tasks = mteb_tasks(spec, recipe.language)
            except SkadaptError:
                continue  # the task's own check reports it
            for task in tasks:
                name, path = task.metadata.name, task.metadata.dataset.get("path")
                if name in mirrors or not path or (honours_exclusion and name in excluded):
                    continue
                add(
                    path,
                    f"{use} {name}" if use.endswith("task") else use,
                    name if honours_exclusion else None,
                )
    return repos


def _refusal(repo: str) -> HubRefusal | str | None:
    """How the Hub refuses a dataset to the current credentials (:class:`skadapt.hub_errors.HubRefusal`:
    gated, an invalid token, a rate limit, forbidden), or why it cannot be reached; None when it opens, or
    when it is not there (the readers' own checks say so)."""
    from huggingface_hub import HfApi

    from skadapt.sources import is_network_error

    try:
        HfApi().auth_check(repo, repo_type="dataset")
    except Exception as error:
        refusal = hub_refusal(error)
        if refusal is None:
            return f"{type(error).__name__}: {error}".splitlines()[0] if is_network_error(error) else None
        return None if refusal.kind in ("repository", "revision", "file", "http") else refusal
    return None


def gated_checks(
    recipe: Recipe, declared: list[Input] | None = None, facts: RunFacts | None = None
) -> list[Check]:
    """One problem per gated dataset the run reads that the current credentials cannot open, one per other
    refusal of the check (an invalid token, a rate limit, the Hub unreachable: for all the datasets it
    hit), else one OK line for all of them; none offline (the stages read the local caches then) or with
    the Hub unreachable before the check (the inputs that need it say so). ``declared``: the stages'
    inputs, when the caller has them already (:func:`stage_inputs`)."""
    from skadapt.hub import offline, unreachable_reason

    if offline():
        return []
    facts = facts or recipe.run_facts()
    repos = _hub_datasets(recipe, stage_inputs(recipe, facts) if declared is None else declared, facts)
    if not repos or unreachable_reason() is not None:
        return []
    with ThreadPoolExecutor(GATED_THREADS) as pool:
        refusals = dict(zip(repos, pool.map(_refusal, repos), strict=True))
    checks = []
    others: dict[str, list[str]] = {}  # one problem -> the datasets it stopped the check of
    for repo, refusal in refusals.items():
        uses, tasks = repos[repo]["uses"], repos[repo]["tasks"]
        if refusal is None:
            continue
        if isinstance(refusal, str) or refusal.kind != "gated":
            why = (
                f"the Hub cannot be reached ({refusal}); {ADVICE}"
                if isinstance(refusal, str)
                else refusal.advice()
            )
            others.setdefault(why, []).append(f"{repo} (read by {', '.join(uses)})")
            continue
        page = f"{HUB_PAGE}/{repo}"
        if refusal.status == 403:
            why = f"the token in use has no access: accept its terms at {page} with that token's account"
        else:
            why = (
                f"no token is given: accept its terms at {page}, then give a token of that account "
                "(HF_TOKEN=hf_... in the environment, or `hf auth login`)"
            )
        alternative = f"; or leave it out with evaluate.exclude_tasks: [{', '.join(tasks)}]" if tasks else ""
        checks.append(
            Check(
                f"gated dataset {repo}",
                f"readable (read by {', '.join(uses)})",
                f"gated on the Hub (read by {', '.join(uses)}), {why}{alternative}",
                repo,
            )
        )
    for why, which in others.items():
        checked = f"access to {len(which)} of {len(repos)} repositories"
        checks.append(Check("Hub datasets", checked, f"{why} (checking {', '.join(which)})"))
    return checks or [Check("Hub datasets", f"{len(repos)} repositories, none gated beyond the credentials")]


class _Input(NamedTuple):
    """One input check to make: its label, what is checked, the probe, whether it needs the Hub, and the
    Hub dataset it reads (if any)."""

    item: str
    checked: str
    probe: Callable[[], str | None]
    needs_hub: bool
    dataset: str | None = None
    network: bool = False
    """It asks a server other than the Hub (an LLM endpoint)."""


def _inputs(recipe: Recipe, declared: list[Input], facts: RunFacts) -> list[_Input]:
    """The input checks of the recipe: its base model, what its stages declare (:func:`stage_inputs`;
    sources an earlier stage of the run writes, such as a synth_sts dataset, are named, not read), the LLM
    of the stages that generate text, free disk."""
    from skadapt.sources import parse_source

    items: list[_Input] = []
    later = "written by an earlier stage of this run"
    base = model_input("base_model", recipe.base_model, recipe.language_entry)
    items.append(_Input(f"base_model {base.value}", base.checked, base.probe, base.hub))
    for one in declared:
        item = f"{one.field}: {one.value}" if one.source else f"{one.field} {one.value}"
        if one.source and facts.made_by_run(one.value):
            items.append(_Input(item, later, lambda: None, False))
        elif one.source:
            repo = parse_source(one.value).name if _is_hub(one.value) else None
            items.append(_Input(item, one.checked, one.probe, repo is not None, repo))
        else:
            items.append(_Input(item, one.checked, one.probe, one.hub, network=one.network))
    if recipe.llm is not None and any(getattr(recipe, s.name) is not None for s in STAGES if s.uses_llm):
        items.append(
            _Input(
                f"llm {recipe.llm.backend} {recipe.llm.model}",
                "endpoint and model",
                partial(probe_llm, recipe.llm),
                False,
                network=recipe.llm.backend == "openai",
            )
        )
    writable = partial(_output_dir, recipe.run_dir)
    items.append(_Input(f"output_dir {recipe.run_dir}", "a writable directory", writable, False))
    items.append(_Input(f"disk {recipe.run_dir}", "free space", lambda: _disk(recipe.run_dir), False))
    return items


def preflight(recipe: Recipe, *, local: bool = False) -> list[Check]:
    """Check every input of ``recipe``; see the module docstring. Never raises for a bad input.

    Args:
        recipe: The recipe.
        local: Check only what needs no network (no Hub, no LLM server): what ``--plan`` stands on.
    """
    from skadapt.hub import unreachable_reason

    facts = recipe.run_facts()  # once: the stages' inputs, the input checks and the gated check read them
    declared = stage_inputs(recipe, facts)
    inputs = _inputs(recipe, declared, facts)
    if local:
        kept = [i for i in inputs if not (i.needs_hub or i.dataset or i.network)]
        return [_run(i.item, i.checked, i.probe) for i in kept]
    down = unreachable_reason() if any(i.needs_hub or i.dataset for i in inputs) else None
    checks = []
    if down is not None:
        checks.append(
            Check(
                "Hugging Face Hub",
                "endpoint answers",
                f"{down}; {ADVICE}",
            )
        )
    gated = gated_checks(recipe, declared, facts) if down is None else []
    refused = {c.repo for c in gated if not c.ok}
    for item, checked, probe, needs_hub, dataset, _ in inputs:
        if needs_hub and down is not None:
            checks.append(Check(item, checked, "not checked: the Hub is unreachable"))
        elif dataset is not None and dataset in refused:
            checks.append(Check(item, f"{checked}: not read, its dataset is gated (see that line)"))
        else:
            checks.append(_run(item, checked, probe))
    return checks + gated


def problems(checks: list[Check]) -> list[Check]:
    """The failed checks."""
    return [check for check in checks if not check.ok]


def as_rows(checks: list[Check]) -> list[dict[str, Any]]:
    """JSON-ready checks."""
    return [{"input": c.input, "checked": c.checked, "ok": c.ok, "problem": c.problem} for c in checks]
