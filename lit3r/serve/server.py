"""The MCP server of ``lit3r mcp`` (the official ``mcp`` SDK's :class:`MCPServer`, stdio): the tools,
their JSON schemas and descriptions, and the paper resources, over one open
:class:`lit3r.serve.session.Session`.

Each tool's arguments are typed (pydantic), so the SDK refuses a malformed argument with a tool
error naming the field before the tool runs. A tool runs under the session's lock after the
stores are refreshed (:meth:`Session.refresh`); whatever it raises becomes an MCP tool error
(``isError``) with the one line of :func:`lit3r.serve.errors.error_line`, and every result
passes :func:`lit3r.present.redact.redact_data`, so no secret of the settings or the environment leaves
the server.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
from typing import Annotated, Any, Callable, Literal, Optional

from pydantic import Field

from lit3r.errors import UnknownIdError
from lit3r.littraceqa.inputs import Column
from lit3r.llm.providers import NAMES as PROVIDER_NAMES
from lit3r.present.redact import redact_data
from lit3r.serve import answers, corpus, graphs
from lit3r.serve.errors import error_line
from lit3r.serve.session import Session

#: The LLM providers of the ``ask`` tool (the keys of :data:`lit3r.llm.providers.PROVIDERS`).
LLMName = Literal[PROVIDER_NAMES]  # type: ignore[valid-type]
#: The relations of the ``citations`` tool (:data:`lit3r.serve.graphs.RELATIONS`).
Relation = Literal["cited", "citing", "coupling", "similar"]

INSTRUCTIONS = """Lit3R answers questions over a local corpus of research papers with evidence: every passage comes
with its locator (paper id, page, chunk kind, table/figure object id, section). Find papers with search_papers,
gather passages with find_evidence (Retrieve + Relate, no reading), read a chunk or a whole page with read, and
explore the citation graph with citations (cypher on a Neo4j backend). ask runs the whole pipeline and returns
the answer line, its evidence locators and a trace id for trace. Cite evidence by paper id and page."""

Limit = Annotated[int, Field(ge=1, le=100, description="How many results at most (1-100).")]
PaperIds = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1, max_length=200)]


def build_server(session: Session) -> Any:
    """An :class:`mcp.server.mcpserver.MCPServer` with Lit3R's tools and resources over ``session``."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("lit3r", instructions=INSTRUCTIONS, log_level="WARNING", middleware=[_one_line_errors])

    def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with session.lock:
            try:
                session.refresh()
                return redact_data(fn(session, *args, **kwargs), session.secrets)
            except Exception as exc:  # noqa: BLE001 - every failure is a tool error, the server goes on
                raise ToolError(error_line(exc, session.settings, session.secrets,
                                           lambda: session.graph().paper_ids())) from None

    _add_tools(server, call)
    _add_resources(server, session)
    return server


def _add_tools(server: Any, call: Callable[..., Any]) -> None:
    """The tools, each a thin typed wrapper of a function of :mod:`lit3r.serve` run by ``call``."""
    from mcp.server.mcpserver.exceptions import ToolError

    @server.tool()
    def search_papers(query: Annotated[str, Field(min_length=1, description="Keywords or a question.")],
                      limit: Limit = 10) -> dict[str, Any]:
        """Find papers of the corpus: the best `limit` papers for `query` by Lit3R's hybrid retrieval (chunk BM25,
        paper BM25 and dense chunk search fused by RRF). Each paper comes with id, title, venue, year, authors and why
        it matches (its rank in each search lane and its best passage with page and section). Use the paper ids with
        find_evidence(papers=...), ask(papers=...), read and citations."""
        if not query.strip():
            raise ToolError("the query is empty: pass keywords or a question")
        return call(corpus.search_papers, query, limit)

    @server.tool()
    def find_evidence(question: Annotated[str, Field(min_length=1, description="The question to find evidence for.")],
                      limit: Limit = 10,
                      papers: Annotated[Optional[PaperIds], Field(description=(
                          "Only these paper ids (Retrieve and Relate are skipped)."))] = None) -> dict[str, Any]:
        """Retrieve + Relate without reading: the `limit` best passages (chunks) for `question` with paper id, page,
        kind (text, table, figure, caption, ...), object id (Table 3), section, text and score, and the candidate
        papers with their rank in Ranking A (the passages' papers) and Ranking B (citation neighbours, coupling,
        similar papers). Read the passages yourself to answer; cite them by paper id and page."""
        return call(corpus.find_evidence, question, limit, papers)

    @server.tool()
    def ask(question: Annotated[str, Field(min_length=1, description="The question.")],
            options: Annotated[Optional[dict[str, str]], Field(
                min_length=2, description='Multiple-choice options by label, e.g. {"A": "78.8", "B": "81.2"}.')] = None,
            table_schema: Annotated[Optional[list[Column]], Field(
                min_length=1, description="Ask for a table answer with these columns "
                '(e.g. [{"name": "Method", "type": "string", "is_row_key": true}]).')] = None,
            papers: Annotated[Optional[PaperIds], Field(description="Read only these paper ids.")] = None,
            llm: Annotated[Optional[LLMName], Field(description=(
                "LLM reader for this call: none (the offline extractive reader), local or openai; default: the "
                "configured one."))] = None) -> dict[str, Any]:
        """Answer a question with Lit3R's whole pipeline (Retrieve, Relate, Read): the answer as a LitTraceQA line
        (freeform text, the chosen option, table rows, the supporting papers and evidence items), the evidence
        passages with their locators and text, the top candidate papers and the id of the stored evidence trace
        (pass its query_id and run to trace). Slower than find_evidence; use it when a checked answer line is
        wanted."""
        schema = [c.model_dump() for c in table_schema] if table_schema else None
        return call(answers.ask, question, options, schema, papers, llm)

    @server.tool()
    def read(chunk_id: Annotated[Optional[str], Field(min_length=1, description="A chunk id.")] = None,
             paper_id: Annotated[Optional[str], Field(min_length=1, description="A paper id (with page).")] = None,
             page: Annotated[Optional[int], Field(ge=1, description="A page number of paper_id (1-based).")] = None,
             ) -> dict[str, Any]:
        """Read the stored text of one chunk (chunk_id), or of every chunk on one page of a paper (paper_id and
        page), in reading order, with their locators (page, kind, object id, section)."""
        return call(corpus.read, chunk_id, paper_id, page)

    @server.tool()
    def citations(paper_id: Annotated[str, Field(min_length=1, description="A paper id.")],
                  relation: Annotated[Relation, Field(description=(
                      "cited: corpus papers it cites; citing: corpus papers citing it; coupling: papers sharing "
                      "cited works (bibliographic coupling, Jaccard); similar: nearest papers by embedding."))],
                  limit: Limit = 10,
                  min_shared: Annotated[int, Field(ge=1, le=1000, description=(
                      "coupling: cited works a coupled paper shares at least."))] = 2) -> dict[str, Any]:
        """The citation graph around a paper, as `lit3r graph` shows it: the corpus papers it cites or that cite it,
        its bibliographically coupled papers (with the works both cite) or its most similar papers."""
        return call(graphs.citations, paper_id, relation, limit, min_shared)

    @server.tool(description=_cypher_description())
    def cypher(statement: Annotated[str, Field(min_length=1, description=(
                   "A named statement of Lit3R's cypher/ folder (e.g. explore_neighbourhood) or a read-only Cypher "
                   "query."))],
               params: Annotated[Optional[dict[str, Any]], Field(description=(
                   'Query parameters, e.g. {"paper_id": "2007.14062"}.'))] = None,
               limit: Annotated[int, Field(ge=1, le=1000, description="Rows at most.")] = 100) -> dict[str, Any]:
        return call(graphs.cypher, statement, params, limit)

    @server.tool()
    def trace(query_id: Annotated[str, Field(min_length=1, description="The query_id an ask result names.")],
              run: Annotated[Optional[str], Field(min_length=1, description=(
                  "The run an ask result names (default: the newest question of that id)."))] = None) -> dict[str, Any]:
        """The stored evidence trace of an answered question: its retrieval rounds and subqueries, the candidate
        papers with their Ranking A/B ranks and the Relate sources that brought them, the answer and the path from
        the answer to each evidence passage."""
        return call(answers.trace, query_id, run)


def _add_resources(server: Any, session: Session) -> None:
    """``lit3r://papers`` and ``lit3r://papers/{paper_id}``; an unknown paper is ResourceNotFoundError."""
    from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError

    def resource(fn: Callable[..., Any], *args: Any) -> str:
        with session.lock:
            try:
                session.refresh()
                return json.dumps(redact_data(fn(session, *args), session.secrets), ensure_ascii=False)
            except UnknownIdError as exc:
                raise ResourceNotFoundError(error_line(exc, session.settings, session.secrets)) from None
            except Exception as exc:  # noqa: BLE001
                raise ResourceError(error_line(exc, session.settings, session.secrets)) from None

    @server.resource("lit3r://papers", name="papers", mime_type="application/json",
                     description="Every paper of the corpus: id, title, year, venue, authors.")
    def papers_resource() -> str:
        return resource(corpus.paper_list)

    @server.resource("lit3r://papers/{paper_id}", name="paper", mime_type="application/json",
                     description="One paper's metadata: id, title, year, venue, authors, abstract, pages.")
    def paper_resource(paper_id: str) -> str:
        return resource(corpus.paper_record, paper_id)


async def _one_line_errors(ctx: Any, call_next: Callable[[Any], Any]) -> Any:
    """Server middleware: the SDK's own tool errors (arguments refused by the input schema: a
    pydantic report over several lines with a link) as one line with the fix. The result is
    the wire form of a ``tools/call`` result (``{"content": [...], "isError": true}``)."""
    result = await call_next(ctx)
    if not (isinstance(result, dict) and result.get("isError") and isinstance(result.get("content"), list)):
        return result
    content = []
    for c in result["content"]:
        if isinstance(c, dict) and c.get("type") == "text" and "\n" in str(c.get("text")):
            lines = [x.strip() for x in c["text"].splitlines() if x.strip() and not x.strip().startswith("For further")]
            text = " ".join(lines)
            if "validation error" in text:
                text += ": fix the argument (the tool's input schema gives each argument's type and limits)"
            c = {**c, "text": text}
        content.append(c)
    return {**result, "content": content}


def _cypher_description() -> str:
    from lit3r.backends.cypher_run import statement_list

    named = [f"{r['name']}({r['parameters']})".replace("(-)", "()") for r in statement_list()
             if r["name"].startswith(("explore_", "guide_", "relate_"))]
    return ("Run a read-only Cypher query on the Neo4j store (backend neo4j+opensearch only): (Paper {paper_id, title, "
            "year, venue})-[:HAS_CHUNK]->(Chunk {chunk_id, kind, page, section, object_id, text}), (Paper)-[:CITES "
            "{number}]->(Work {work_id, title}) (a corpus paper's work_id is 'paper:<paper_id>'), (Paper)-[:AUTHORED_BY]"
            "->(Author {name}), (Paper)-[:SIMILAR_TO {score, rank}]->(Paper). Writes, LOAD CSV, procedures other than "
            "read-only ones and plugin functions are refused. Named statements (parameters, defaults after =): "
            + ", ".join(named))


def serve(session: Session, warm: bool = True, announce: Optional[str] = None) -> None:
    """Serve ``session`` over stdio until the client closes the connection; ``warm``: load the
    stores and models in the background at once, so the first call does not wait for them
    (a failure there is said on stderr and again, with its fix, by the first tool call);
    ``announce``: a line for stderr once Ctrl-C is handled (the CLI's, on a terminal)."""
    server = build_server(session)
    signal.signal(signal.SIGINT, _interrupted)  # stdin is read in a worker thread that Ctrl-C cannot end
    if announce:
        print(announce, file=sys.stderr, flush=True)
    if warm:
        threading.Thread(target=_warm, args=(session,), daemon=True).start()
    try:
        server.run("stdio")
    except Exception as exc:
        if not _stdin_gone(exc):
            raise
        print("lit3r mcp: the client's side of stdin went away (hung up); stopped", file=sys.stderr, flush=True)
    finally:
        with session.lock:
            session.close()


def _interrupted(signum: int, frame: object) -> None:
    """Ctrl-C: one line and exit 130 at once (SQLite writes are transactional; nothing is half-stored)."""
    print("lit3r mcp: stopped (Ctrl-C)", file=sys.stderr, flush=True)
    os._exit(130)


def _stdin_gone(exc: BaseException) -> bool:
    """Whether ``exc`` (or every exception of its group) is an OSError of a hung-up stdin (EIO, EBADF)."""
    import errno

    group = getattr(exc, "exceptions", None)
    if group:
        return all(_stdin_gone(e) for e in group)
    return isinstance(exc, OSError) and exc.errno in (errno.EIO, errno.EBADF)


def _warm(session: Session) -> None:
    with session.lock:
        try:
            session.engine()
        except Exception as exc:  # noqa: BLE001 - said again by the first tool call
            logging.getLogger("lit3r.serve").debug("warm-up failed", exc_info=True)
            print(f"lit3r mcp: {error_line(exc, session.settings, session.secrets)}", file=sys.stderr, flush=True)


__all__ = ["build_server", "serve"]
