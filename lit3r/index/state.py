"""Whether the published index holds the corpus as last ingested (read by ``ask``, ``run``, ``doctor``).

The corpus folder's ``corpus.json`` names the version of its record files (:mod:`ingest.stamp`);
the index manifest names the version it was built from (:mod:`lit3r.index.build`). They differ when an
ingest ran with ``--no-build`` or its build was interrupted (the previous index still answers,
published whole) or when the record files are being rewritten.
"""

from __future__ import annotations

import json
from typing import Optional

from ingest.stamp import read_version
from lit3r.config import Settings


def stale_index_message(settings: Settings) -> Optional[str]:
    """One line saying that the index in ``settings.index_dir`` is older than the corpus in
    ``settings.home`` and what to run; None when they agree, when there is no index (the readers
    say so themselves), or when neither side has a version (a home written before versions)."""
    index_dir, home = settings.index_dir, settings.home
    try:
        manifest = json.loads((index_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    built = manifest.get("corpus_version") if isinstance(manifest, dict) else None
    current = read_version(home)
    if built == current or "report" not in manifest:  # a stub manifest: no build has finished there
        return None
    return (f"the index was built before the last ingest (a build was interrupted or skipped with --no-build), "
            f"so answers come from the older corpus: run `lit3r ingest PDF_DIR` again to update it "
            f"(index {index_dir}, corpus {home})")
