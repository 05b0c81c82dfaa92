"""The graph tools of ``lit3r mcp``: ``citations`` (what ``lit3r graph`` shows, on both backends:
:mod:`graph.explore`) and ``cypher`` (read-only Cypher on Neo4j, under the guard of ``lit3r
cypher``: :mod:`lit3r.backends.cypher_run`; never a write).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Optional

from graph import explore
from lit3r.backends.cypher_run import NEEDS_NEO4J, resolve, run_cypher, runs_cypher
from lit3r.errors import CypherFailed, CypherRefused
from lit3r.serve.errors import echoed

if TYPE_CHECKING:
    from lit3r.serve.session import Session

#: The fix of a refused statement here: the CLI's "pass --write" is no option of the tool.
READ_ONLY = ("the cypher tool only reads (a statement that writes runs with `lit3r cypher --write`, outside "
             "the assistant)")

#: The relations of the ``citations`` tool.
RELATIONS = ("cited", "citing", "coupling", "similar")


def citations(session: "Session", paper_id: str, relation: str, limit: int = 10, min_shared: int = 2) -> dict:
    """One relation of a paper, in the shapes of ``lit3r graph ... --json``:

    - ``cited``: ``{paper, references, cited}``, the corpus papers in its reference list
      (``cites`` of ``lit3r graph neighbourhood``: ``{number, paper_id, title}``);
    - ``citing``: ``{paper, citing}``, the corpus papers citing it (``cited_by`` of the
      neighbourhood: ``{paper_id, title}``);
    - ``coupling``: ``lit3r graph coupling PAPER``: bibliographic coupling, the ``limit`` papers
      with the highest Jaccard of cited-work sets sharing at least ``min_shared`` works;
    - ``similar``: ``lit3r graph similar PAPER``: the ``limit`` nearest SIMILAR_TO neighbours
      (paper-embedding cosine).

    Raises UnknownIdError for an unknown paper."""
    store = session.graph()
    if relation == "coupling":
        return explore.coupling(store, paper_id, min_shared, limit)
    if relation == "similar":
        return explore.similar(store, paper_id, limit)
    r = explore.neighbourhood(store, paper_id, limit, min_shared)
    if relation == "cited":
        return {"paper": r["paper"], "references": r["references"], "cited": r["cites"]}
    return {"paper": r["paper"], "citing": r["cited_by"]}


def cypher(session: "Session", statement: str, params: Optional[dict[str, Any]] = None, limit: int = 100) -> dict:
    """Run ``statement`` (a named statement of ``cypher/`` or Cypher) as a plain read on the
    Neo4j store: ``{statement, rows, more, plan}``, at most ``limit`` rows (``more``: there were
    others), the plan of an EXPLAIN or PROFILE query. Writes, LOAD CSV, procedures other than
    read-only ones and plugin functions are refused (CypherRefused); the embedded backend, an
    unknown statement, missing parameters and server errors raise CypherFailed."""
    settings = session.settings
    if not runs_cypher(settings):
        raise CypherFailed(NEEDS_NEO4J)
    query, values = resolve(statement, dict(params or {}), how='params {{"{}": VALUE}}', files=False)
    try:
        rows, plans = run_cypher(session.neo4j(), settings, query, values, limit + 1, write=False)
    except CypherRefused as exc:
        raise CypherRefused(re.sub(r"pass --write to run (it|a query that writes)", READ_ONLY, str(exc))) from None
    return {"statement": echoed(statement), "rows": json.loads(json.dumps(rows[:limit], default=str)),
            "more": len(rows) > limit, "plan": json.loads(json.dumps(plans[0], default=str)) if plans else None}
