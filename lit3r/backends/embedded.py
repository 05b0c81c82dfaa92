"""The embedded backend: :class:`graph.embedded.EmbeddedGraphStore` +
:class:`graph.search.embedded.EmbeddedSearchIndex` over ``home/index`` (SQLite + memory-mapped
files; nothing is loaded at open), traces in ``home/traces.sqlite``. The stores are the local
build itself: nothing is loaded anywhere else.

Settings are read by attribute only (no runtime import of :mod:`lit3r.config`, which takes the
backend names from :mod:`lit3r.backends`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from lit3r.errors import IndexDamaged, PermissionDenied

if TYPE_CHECKING:
    from graph.search.protocol import SearchIndex
    from graph.store import GraphStore
    from graph.trace import TraceStore
    from lit3r.config import Settings

#: The files a published embedded index has besides its database (:mod:`lit3r.index.build`); one
#: missing means a part of the index was lost, and no answer is given from the rest.
INDEX_FILES = ("manifest.json", "chunk_vectors.f32")

#: The embedded backend's trace store file, in the data folder (not in ``index/``, which a
#: rebuild replaces).
TRACES_FILE = "traces.sqlite"


def open_stores(settings: "Settings") -> tuple["GraphStore", "SearchIndex"]:
    """``(graph_store, search_index)`` over ``settings.index_dir``, one SQLite connection per
    thread for both (one snapshot). Raises IndexDamaged / PermissionDenied from
    :func:`check_manifest`, NotBuiltError when nothing was built."""
    from graph.embedded import EmbeddedGraphStore
    from graph.search.embedded import DB_NAME, EmbeddedSearchIndex
    from graph.sqlite import Database

    check_manifest(settings.index_dir, DB_NAME)
    r = settings.retrieve
    db = Database(settings.index_dir / DB_NAME)  # one connection per thread for both stores: one snapshot
    index = EmbeddedSearchIndex.open(settings.index_dir, k1=r.bm25_k1, b=r.bm25_b, db=db)
    return EmbeddedGraphStore.open(settings.index_dir / DB_NAME, db=db), index


def check_manifest(index_dir: Path, db_name: str) -> None:
    """Raise IndexDamaged naming the file and the fix (``lit3r doctor``, then a rebuild) when the
    index in ``index_dir`` has its database but lacks one of :data:`INDEX_FILES` (so it would
    answer from a part of itself) or its ``manifest.json`` is not a JSON object (cut short);
    PermissionDenied when the manifest cannot be read by this user; nothing when there is no
    database (the store says so)."""
    if not (index_dir / db_name).is_file():
        return
    for name in INDEX_FILES:
        if not (index_dir / name).is_file():
            raise IndexDamaged(f"the index in {index_dir} is missing part of itself ({name}): no answer is given "
                               f"from the rest; run `lit3r doctor` to check it, then `lit3r ingest PDF_DIR "
                               f"--rebuild` to rebuild it (parsed papers are kept)")
    try:
        manifest = json.loads((index_dir / "manifest.json").read_bytes())
    except PermissionError as exc:  # the fix is its permissions, never a rebuild
        raise PermissionDenied.of(exc, index_dir / "manifest.json") from None
    except (OSError, ValueError):  # ValueError: not UTF-8, not JSON
        manifest = None
    if not isinstance(manifest, dict):
        raise IndexDamaged(f"the index in {index_dir} is damaged (manifest.json is not a JSON object: cut short or "
                           f"overwritten): no answer is given from the rest; run `lit3r doctor` to check it, then "
                           f"`lit3r ingest PDF_DIR --rebuild` to rebuild it (parsed papers are kept)")


def open_graph(settings: "Settings", **_: object) -> "GraphStore":
    """The graph store alone (``lit3r graph``); driver settings are ignored."""
    from graph.embedded import EmbeddedGraphStore
    from graph.search.embedded import DB_NAME

    return EmbeddedGraphStore.open(settings.index_dir / DB_NAME)


def open_traces(settings: "Settings", graph: Optional["GraphStore"]) -> "TraceStore":
    """The trace store in ``home/`` :data:`TRACES_FILE` over ``graph`` (opened, and owned, when None)."""
    from graph.trace import EmbeddedTraceStore

    return EmbeddedTraceStore(Path(settings.home) / TRACES_FILE, graph if graph is not None else open_graph(settings),
                              own_corpus=graph is None)
