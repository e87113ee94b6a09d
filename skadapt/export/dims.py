"""The dims tiers ``dims-<d>``: the final model's embedding reduced to ``d`` components and renormalized, as
a plain sentence-transformers directory.

Which ``d`` components (``export.dims_basis``):

- ``corpus`` (the default where the export has a corpus): the top ``d`` directions of the parent's
  embeddings of the corpus texts, each encoded with each of the parent's prompts (the right singular
  vectors of the uncentered embedding matrix, ordered by singular value). The full basis is a rotation:
  cosine similarities at the full dimension are unchanged, and every ``d`` keeps the most of the
  embeddings' energy on in-language text that any ``d``-dimensional projection can. Measured on the demo
  (``benchmark/README.md``): 128 of 384 dimensions lose 0.75–1.10 points this way against 3.5 for
  truncation; what the corpus lacks (English, for bitext mining) loses more.
- ``parallel`` (with ``export.corpus.parallel``): the top ``d`` directions of the corpus embeddings and
  of both sides of parallel text, each half weighted equally: directions for the other language of a
  cross-lingual task;
- ``first``: the first ``d`` components — plain truncation, what ``finetune.matryoshka_dims`` trains;
  the same vectors come from ``SentenceTransformer(parent, truncate_dim=d)`` and any cosine;
- ``auto`` (the default): chosen per ``d`` on the dev sets among them, the corpus basis kept unless another
  beats it beyond the noise (:mod:`skadapt.export.dims_choice`); the corpus basis without dev sets.

Each tier directory holds the parent's files (hard links where the file system allows, else copies: they
are never written again) and, after the parent's last module, a ``Dense`` (weight: the ``d`` basis
vectors, no bias, identity activation) and ``Normalize``, in the ``sentence_transformers.models`` format:
``SentenceTransformer(dir)`` gives the reduced unit vectors without skadapt or remote code. A
renormalization ``Dense`` of the parent runs first: the tier reduces the renormalized embedding and
normalizes again. The parent's ONNX files come along in ``onnx/``, so that
``SentenceTransformer(dir, backend="onnx", model_kwargs={"file_name": "onnx/model_qint8_<family>.onnx"})``
combines a dims tier with the int8 encoder.

Which dimensions: ``export.dims``, else the ones the model records from ``finetune.matryoshka_dims``
(below its own dimension). The encoder is the parent's: the tiers cost what it costs per text; what they
save is ``4 d`` bytes per float32 vector instead of ``4 D`` (index memory and search time).
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from skadapt import artifacts
from skadapt.config import dims_tier
from skadapt.export.onnx import ExportError
from skadapt.modeldir import MATRYOSHKA_KEY, MODULES, ST_CONFIG, finalize_model_dir, matryoshka_dims_of
from skadapt.tasks.backends import ONNX_DIR
from skadapt.tasks.projection import BASIS_TEXTS, Basis, dense_module, fit_basis

__all__ = ["BASIS_TEXTS", "Basis", "export_dims", "fit_basis", "tier_dims", "write_dims_tier"]
log = logging.getLogger("skadapt.export")

SKIPPED = {"README.md", "manifest.json"}
"""Files of the parent that would describe it, not the tier (its card, its stage manifest)."""
FLOAT32_BYTES = 4


def tier_dims(
    dims: list[int] | None, model_dir: Path, dimension: int | None, hidden: int | None = None
) -> list[int]:
    """The dimensions of the dims tiers, descending: ``dims``, else the model's recorded Matryoshka
    dimensions below ``dimension``.

    A model whose embedding is already smaller than its transformer's ``hidden`` size (renorm kept a
    projection) skips the asked dimensions from ``dimension`` up to ``hidden``, with a warning: the recipe
    could not know the dimension renorm would choose on dev.

    Raises:
        ExportError: A dimension not below ``hidden`` (else ``dimension``), or a model that does not say
            its dimension.
    """
    if dims is None:
        recorded = matryoshka_dims_of(model_dir) or []
        return sorted((d for d in recorded if not dimension or d < dimension), reverse=True)
    if not dims:
        return []
    if not dimension:
        raise ExportError("export.dims: the model does not say its embedding dimension; set export.dims: []")
    limit = max(dimension, hidden or 0)
    too_large = [d for d in dims if d >= limit]
    if too_large:
        raise ExportError(
            f"export.dims {dims}: {', '.join(map(str, too_large))} is not below the model's dimension "
            f"{limit} (a tier of the full dimension is the model itself); use dimensions below {limit}"
        )
    skipped = [d for d in dims if d >= dimension]
    if skipped:
        log.warning(
            "export.dims %s: %s skipped: the model's embedding is already %d-dimensional (a projection kept "
            "by renorm on dev)",
            dims,
            ", ".join(map(str, skipped)),
            dimension,
        )
    return sorted((d for d in dims if d < dimension), reverse=True)


def _link_tree(source: Path, target: Path) -> None:
    """``target`` with the files of ``source`` (not :data:`SKIPPED`, not hidden): hard links, else copies."""
    shutil.copytree(
        source,
        target,
        ignore=shutil.ignore_patterns(*SKIPPED, ".*"),
        copy_function=lambda src, dst: artifacts.link_or_copy(Path(src), Path(dst)),
        symlinks=False,
    )


def write_dims_tier(
    model_dir: Path, out: Path, dim: int, dimension: int, basis: Basis | None = None
) -> dict[str, Any]:
    """Write the tier of ``model_dir`` (a sentence-transformers directory of ``dimension``) reduced to ``dim``
    at ``out``: onto the top ``dim`` vectors of ``basis``, else its first ``dim`` components (see the module
    doc).

    Returns:
        ``{dimension, bytes_per_vector, size_mb}`` of the tier (its size without the ONNX files).

    Every file written replaces its link (:func:`skadapt.artifacts.write_json` writes a temporary file and
    renames it): the parent's files are never written through.
    """
    from sentence_transformers.sentence_transformer.modules import Normalize

    _link_tree(model_dir, out)
    modules = json.loads((out / MODULES).read_text(encoding="utf-8"))
    dense = dense_module(np.eye(dim, dimension) if basis is None else basis.vectors[:dim])
    for module, kind in ((dense, "Dense"), (Normalize(), "Normalize")):
        index = len(modules)
        path = f"{index}_{kind}"
        (out / path).mkdir()
        module.save(str(out / path))
        modules.append(
            {"idx": index, "name": str(index), "path": path, "type": f"sentence_transformers.models.{kind}"}
        )
    artifacts.write_json(out / MODULES, modules)
    config = artifacts.read_json(out / ST_CONFIG)
    if isinstance(config, dict) and MATRYOSHKA_KEY in config:
        artifacts.write_json(out / ST_CONFIG, {k: v for k, v in config.items() if k != MATRYOSHKA_KEY})
    finalize_model_dir(out)
    deployed = [f for f in out.rglob("*") if f.is_file() and ONNX_DIR not in f.relative_to(out).parts]
    return {
        "dimension": dim,
        "basis": "first" if basis is None else basis.name,
        "bytes_per_vector": FLOAT32_BYTES * dim,
        "size_mb": round(sum(f.stat().st_size for f in deployed) / 2**20, 2),
    }


def export_dims(
    model_dir: Path, out: Path, dims: list[int], dimension: int, bases: dict[int, Basis | None] | None = None
) -> dict[str, dict[str, Any]]:
    """Every dims tier of ``model_dir`` into ``out/dims-<d>`` (on ``bases[d]``, else by truncation): tier
    name -> ``{dimension, basis, bytes_per_vector, size_mb, path}`` (``path`` relative to ``out``)."""
    tiers = {}
    for dim in dims:
        name = dims_tier(dim)
        basis = (bases or {}).get(dim)
        tiers[name] = {**write_dims_tier(model_dir, out / name, dim, dimension, basis), "path": name}
    return tiers


def dims_markdown(report: dict[str, Any]) -> list[str]:
    """The export report's lines on the dims tiers (none without them): the tiers, the bases fitted and,
    when chosen on dev, each candidate's dev score per tier and why the chosen one was chosen."""
    dims = report.get("dims") or {}
    if not dims:
        return []
    parent = report["speed"]["pytorch"]
    full = FLOAT32_BYTES * int(report.get("dimension") or 0)
    lines = [
        "",
        "Dims tiers: the parent reduced to d components (on the basis in the table) and renormalized, its "
        f"encoder unchanged (texts/s: the parent's, {parent['texts_per_s']:.1f}); bytes per float32 vector"
        + (f" (parent: {full})." if full else "."),
        "",
        "| tier | dimension | basis | bytes per vector | size MB |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {name} | {tier['dimension']} | {tier.get('basis', 'first')} | {tier['bytes_per_vector']} | "
        f"{tier['size_mb']:.1f} |"
        for name, tier in dims.items()
    ]
    return lines + _basis_lines(report.get("dims_basis"))


BASIS_WORDS = {
    "corpus": "the top d directions of its embeddings of the corpus",
    "parallel": "the top d directions of its embeddings of the corpus and of parallel text, each half "
    "weighted equally",
    "first": "its first d components (truncation)",
}


def _basis_lines(choice: dict[str, Any] | None) -> list[str]:
    if not choice:
        return []
    lines = ["", f"### Dims bases (export.dims_basis: {choice.get('mode', 'corpus')})", ""]
    for name, basis in (choice.get("bases") or {}).items():
        kept = ", ".join(f"{d}: {share:.1%}" for d, share in (basis.get("energy_kept") or {}).items())
        texts = f"{basis.get('texts', 0)} corpus texts"
        if "parallel_texts" in basis:
            texts += f" and {basis['parallel_texts']} parallel texts"
        dropped = basis.get("dropped_dev_overlap")
        lines.append(
            f"- **{name}**: {BASIS_WORDS.get(name, name)}: {texts} with {len(basis.get('prompts') or [])} "
            f"prompt(s), fitted in {basis.get('seconds', 0):.0f} s"
            + (f", {dropped} dev texts left out of its text" if dropped else "")
            + f"; energy kept {kept}"
        )
    choices = choice.get("choices") or []
    scored = [c for c in choices if c.get("candidates")]
    if not scored:
        lines += ["", *(f"- dims-{c['dimension']}: {c['chosen']} ({c['reason']})" for c in choices)]
        return lines
    names = [c["name"] for c in scored[0]["candidates"]]
    confidence = choice.get("confidence") or 0.95
    lines += [
        "",
        "Chosen per tier on the dev sets (mean main score x100; Δ vs the default "
        f"{choice['default']} with its paired bootstrap interval, {confidence:.0%} over the candidates): a "
        "basis replaces the default only beyond the noise.",
        "",
        "| tier | " + " | ".join(names) + " | chosen | why |",
        "|---|" + "---|" * (len(names) + 2),
    ]
    for c in scored:
        cells = []
        for candidate in c["candidates"]:
            cell = f"{100 * candidate['mean']:.2f}"
            if candidate.get("interval"):
                low, high = candidate["interval"]
                cell += f" ({100 * candidate['difference']:+.2f} [{100 * low:+.2f}, {100 * high:+.2f}])"
            cells.append(cell)
        lines.append(
            f"| dims-{c['dimension']} | " + " | ".join(cells) + f" | **{c['chosen']}** | {c['reason']} |"
        )
    sets = scored[0]["candidates"][0]["scores"]
    lines += ["", "Per dev set (x100):", "", "| tier | basis | " + " | ".join(sets) + " |"]
    lines.append("|---|---|" + "---|" * len(sets))
    for c in scored:
        for candidate in c["candidates"]:
            values = " | ".join(f"{100 * candidate['scores'][name]:.2f}" for name in sets)
            lines.append(f"| dims-{c['dimension']} | {candidate['name']} | {values} |")
    return lines
