"""``skadapt publish-dataset``: a synthetic STS dataset directory (``skadapt synth-sts``) to a Hub dataset.

The upload folder holds the splits as Parquet (``data/<split>-00000-of-00001.parquet``, which the Hub's
dataset viewer and ``load_dataset(repo_id)`` read), the dataset card (the generation card with Hub metadata
-- license, ``configs``, size -- and the human agreement when the annotation sheets were scored), the
generation report, the output checks' error rates, the failures, and the annotation sheets.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skadapt import artifacts
from skadapt.artifacts import link_or_copy
from skadapt.publish.config import PublishConfig
from skadapt.publish.errors import PublishError
from skadapt.publish.model import PUBLISH_REPORT, UPLOAD_DIR, list_files, report_header

REPORT = "generation_report.json"
COPIED = ("generation_report.json", "error_rates.md", "failures.jsonl")
ANNOTATION = "annotation"
AGREEMENT = "agreement.json"


@dataclass
class DatasetSource:
    """A synthetic STS directory.

    Attributes:
        path: The directory (``synth-sts --out``, or a run's ``synth_sts/``).
        report: Its generation report.
    """

    path: Path
    report: dict[str, Any]

    @property
    def agreement(self) -> dict[str, Any] | None:
        """The annotators' agreement (``annotation/agreement.json``), once the sheets were scored."""
        for candidate in (self.path / ANNOTATION / AGREEMENT, self.path / ANNOTATION / "sheets" / AGREEMENT):
            found = artifacts.read_json(candidate)
            if isinstance(found, dict):
                return found
        return None


def find_dataset(path: Path) -> DatasetSource:
    """The synthetic STS directory at ``path``.

    Raises:
        PublishError: ``path`` has no ``dataset/`` (saved DatasetDict) or no generation report.
    """
    path = Path(path)
    report = artifacts.read_json(path / REPORT)
    if not (path / "dataset" / "dataset_dict.json").is_file() or not isinstance(report, dict):
        raise PublishError(
            f"{path}: not a synthetic STS directory (needs dataset/ and {REPORT}, as "
            "`skadapt synth-sts --out` writes; a pilot run has no dataset)"
        )
    return DatasetSource(path, report)


def write_parquet(dataset_dir: Path, folder: Path) -> dict[str, int]:
    """Each split of the saved DatasetDict as ``folder/data/<split>-00000-of-00001.parquet``; split sizes."""
    from datasets import load_from_disk

    splits = load_from_disk(str(dataset_dir))
    (folder / "data").mkdir(parents=True, exist_ok=True)
    sizes = {}
    for name, split in splits.items():
        split.to_parquet(str(folder / "data" / f"{name}-00000-of-00001.parquet"))
        sizes[name] = len(split)
    return sizes


def _size_category(rows: int) -> str:
    for limit, label in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if rows < limit:
            return label
    return "n>1M"


def agreement_lines(agreement: dict[str, Any] | None) -> list[str]:
    """The human agreement section (Markdown), or a note that the sheets are not scored yet."""
    lines = ["## Human agreement", ""]
    if not agreement:
        return [*lines, "The annotation sheets (`annotation/`) have not been scored yet.", ""]
    from skadapt.annotate.agreement import agreement_markdown

    return [*lines, agreement_markdown(agreement), ""]


def dataset_card(source: DatasetSource, sizes: dict[str, int], license_id: str | None) -> str:
    """The dataset card: the generation card with Hub metadata, files and agreement added."""
    from huggingface_hub import DatasetCard

    readme = source.path / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.is_file() else "---\n---\n# Synthetic STS\n"
    card = DatasetCard(text)
    data = card.data
    report = source.report
    if license_id:
        data.license = license_id
    data.pretty_name = f"Synthetic STS ({report.get('language_name') or report.get('language')})"
    data.task_categories = ["sentence-similarity"]
    data.size_categories = [_size_category(sum(sizes.values()))]
    data.configs = [
        {
            "config_name": "default",
            "data_files": [{"split": name, "path": f"data/{name}-*.parquet"} for name in sizes],
        }
    ]
    spec = str((report.get("sources") or {}).get("spec") or "")
    if spec.startswith("hub:"):
        data.source_datasets = [f"extended|{spec[4:].split(':', 1)[0].split('@', 1)[0]}"]
    files = [
        "## Files",
        "",
        *(f"- `data/{name}-00000-of-00001.parquet`: {rows:,} pairs" for name, rows in sizes.items()),
        "- `generation_report.json`: sources, generator, sampling, checks and contamination",
        "- `error_rates.md`: how often each output check failed",
        "- `annotation/`: the annotation sheets of the held-out pairs, `key.jsonl` (item -> pair, intended "
        "score)" + (" and the agreement" if source.agreement else ""),
        "",
    ]
    body = card.text.rstrip("\n") + "\n\n" + "\n".join([*files, *agreement_lines(source.agreement)])
    if not license_id:
        body += "\n**License:** not set by the publisher; see the License section above.\n"
    card.text = body
    return str(card)


def prepare_dataset(source: DatasetSource, config: PublishConfig, out_dir: Path) -> dict[str, Any]:
    """Write ``out_dir/upload`` (Parquet splits, card, reports, sheets) and ``out_dir/publish.json``;
    ``out_dir`` is replaced, and appears only when complete."""
    with artifacts.atomic_dir(out_dir) as tmp:
        return _prepare(source, config, tmp)


def _prepare(source: DatasetSource, config: PublishConfig, out_dir: Path) -> dict[str, Any]:
    folder = out_dir / UPLOAD_DIR
    folder.mkdir(parents=True, exist_ok=True)
    sizes = write_parquet(source.path / "dataset", folder)
    for name in COPIED:
        if (source.path / name).is_file():
            link_or_copy(source.path / name, folder / name)
    annotation = source.path / ANNOTATION
    for path in sorted(annotation.rglob("*")) if annotation.is_dir() else []:
        if path.is_file():
            link_or_copy(path, folder / ANNOTATION / path.relative_to(annotation))
    license_id = config.license or _existing_license(source.path)
    (folder / "README.md").write_text(dataset_card(source, sizes, license_id), encoding="utf-8")
    warnings = []
    if not license_id:
        spec = (source.report.get("sources") or {}).get("spec")
        warnings.append(
            f"no --license: the dataset card sets none; the sentences derive from {spec} (its license "
            f"applies) and were written by {(source.report.get('llm') or {}).get('model')} (check its terms)"
        )
    report = {
        **report_header(config, "dataset", source.path),
        "license": license_id,
        "splits": sizes,
        "warnings": warnings,
        "files": list_files(folder),
        "uploaded": None,
    }
    artifacts.write_json(out_dir / PUBLISH_REPORT, report)
    return report


def _existing_license(path: Path) -> str | None:
    from skadapt.publish.licenses import card_license

    return card_license(path / "README.md")
