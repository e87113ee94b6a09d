"""A finished stage whose Hub branch has moved since it read it: kept, and said so when it is skipped.

A stage key covers the stage's config, whose ``hub:`` specs name a revision (``main``), not the commit it
is at now: that can only be told by asking the Hub, and a run must resume and skip offline. So a moved
branch does not invalidate a finished stage. Its manifest records the commit each source was read at
(``sources``); when the stage is skipped with the Hub reachable, each branch it read is looked up again and
a move is warned about, naming both commits and ``--from STAGE``.
"""

from __future__ import annotations

import logging

from skadapt.results import StageManifest
from skadapt.sources import resolve_commit
from skadapt.sources.commits import COMMIT_RE

log = logging.getLogger("skadapt")


def warn_moved_sources(stage: str, manifest: StageManifest) -> list[str]:
    """Warn about each branch source of a finished stage that is at another commit now; the moved specs.

    Nothing is looked up offline, with the Hub unreachable, or for sources pinned to a commit.
    """
    from skadapt.hub import offline, unreachable_reason

    branches = {
        spec: entry
        for spec, entry in manifest.sources.items()
        if not COMMIT_RE.fullmatch(str(entry.get("revision")))
        and COMMIT_RE.fullmatch(str(entry.get("commit")))
    }
    if not branches or offline() or unreachable_reason() is not None:
        return []
    moved = []
    for spec, entry in branches.items():
        now = resolve_commit(spec, collect=False)
        if now.resolved_by == "hub" and now.commit != entry["commit"]:
            log.warning(
                "stage %s is up to date with its recipe, but %s: %s has moved from commit %s to %s since the "
                "stage read it; run with --from %s to read the new commit",
                stage,
                spec,
                entry["revision"],
                entry["commit"],
                now.commit,
                stage,
            )
            moved.append(spec)
    return moved
