"""`lit3r mcp` as an assistant meets it: the server is started as a subprocess and driven by the
MCP SDK's own stdio client (``mcp.ClientSession`` over ``mcp.stdio_client``) on real built homes,
and every answer is checked against the CLI's (`lit3r ask --json`, `lit3r graph ... --json`,
`lit3r graph trace ... --json`).

Errors (an unknown id, a malformed argument, a write through cypher, Cypher on the embedded
backend) must come back as MCP tool errors of one line with their fix while the same server
goes on answering; no secret of the environment may appear in a result; the server's stderr
never holds a traceback. The Neo4j case runs on the session's real Neo4j and OpenSearch.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, AsyncIterator

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from tests.conftest import CORPUS, ROOT
from tests.integration.conftest import move_corpus, server_settings

#: Seconds a tool call may take on a loaded CI machine (the first call may wait for the models).
CALL_TIMEOUT = 600
TOOLS = {"search_papers", "find_evidence", "ask", "read", "citations", "cypher", "trace"}
QUESTION = "What is the BLEU score of the Transformer (big) model on English-to-German newstest2014?"
OPTIONS = {"A": "28.4", "B": "41.8"}
SECRET = "mcp-test-secret-5b1e0c"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIT3R_")}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


@contextlib.asynccontextmanager
async def served(home: Path, errlog: Path, **env: str) -> AsyncIterator[Any]:
    """A `lit3r --home HOME mcp` subprocess and an initialised client session on it; its stderr
    goes to ``errlog``."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "lit3r.cli", "--home", str(home), "mcp"],
                                   cwd=str(ROOT), env=_env(**env))
    with errlog.open("a") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT) as session:
                await session.initialize()
                yield session


async def call(session: Any, name: str, **args: Any) -> tuple[bool, Any]:
    """``(is_error, result)``: the tool's structured result, or the text of its error."""
    res = await session.call_tool(name, args)
    text = res.content[0].text if res.content else ""
    if res.is_error:
        return True, text
    return False, res.structured_content if res.structured_content is not None else json.loads(text)


def cli(home: Path, *args: str, **env: str) -> Any:
    """`lit3r --home HOME ARGS --json` as JSON (exit 0 asserted)."""
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), *args], cwd=ROOT,
                         capture_output=True, text=True, env=_env(**env))
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


def clean_stderr(errlog: Path) -> None:
    text = errlog.read_text() if errlog.exists() else ""
    assert "Traceback" not in text, text[-3000:]


def _run(scenario) -> None:
    anyio.run(scenario)


def test_tools_and_resources_are_listed_with_schemas(hashing_home, tmp_path):
    errlog = tmp_path / "stderr.txt"

    async def scenario() -> None:
        async with served(hashing_home, errlog) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == TOOLS
            for t in tools.values():
                assert len(t.description or "") > 80, t.name  # a description an assistant can act on
                assert t.input_schema["type"] == "object" and t.input_schema["properties"], t.name
            assert tools["citations"].input_schema["properties"]["relation"]["enum"] == ["cited", "citing",
                                                                                         "coupling", "similar"]
            assert tools["ask"].input_schema["required"] == ["question"]
            listed = json.loads((await s.read_resource("lit3r://papers")).contents[0].text)
            assert listed == cli(hashing_home, "graph", "papers", "--json")
            one = json.loads((await s.read_resource("lit3r://papers/1706.03762")).contents[0].text)
            assert one["title"] == "Attention Is All You Need" and one["abstract"] and one["pages"] >= 10
            templates = (await s.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["lit3r://papers/{paper_id}"]

    _run(scenario)
    clean_stderr(errlog)


def test_ask_find_evidence_read_and_trace_agree_with_the_cli(hashing_home, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(hashing_home, home)  # the answers' traces are written into it
    errlog = tmp_path / "stderr.txt"
    free = cli(home, "ask", QUESTION, "--json", "--no-trace-graph")
    mc = cli(home, "ask", QUESTION, "--option", "A=28.4", "--option", "B=41.8", "--json", "--no-trace-graph")
    fixed = cli(home, "ask", QUESTION, "--papers", "1706.03762", "--json", "--no-trace-graph")
    out: dict[str, Any] = {}

    async def scenario() -> None:
        async with served(home, errlog) as s:
            for key, args in (("free", {}), ("again", {}), ("mc", {"options": OPTIONS}),
                              ("fixed", {"papers": ["1706.03762"]})):
                err, out[key] = await call(s, "ask", question=QUESTION, **args)
                assert not err, out[key]
            err, out["evidence"] = await call(s, "find_evidence", question=QUESTION, limit=5)
            assert not err, out["evidence"]
            err, out["evidence_fixed"] = await call(s, "find_evidence", question=QUESTION, limit=3,
                                                    papers=["1706.03762"])
            assert not err, out["evidence_fixed"]
            reads = []
            for loc in out["free"]["evidence"]:
                reads.append(await call(s, "read", chunk_id=loc["chunk_id"]))
                reads.append(await call(s, "read", paper_id=loc["paper_id"], page=loc["page"]))
            out["reads"] = reads
            err, out["trace"] = await call(s, "trace", **out["free"]["trace"])
            assert not err, out["trace"]
            err, out["search"] = await call(s, "search_papers", query="sparse attention long sequences", limit=2)
            assert not err, out["search"]

    _run(scenario)
    clean_stderr(errlog)

    def same(line: dict, cli_json: dict) -> None:
        assert {**line, "query_id": "cli"} == cli_json["submission"]

    same(out["free"]["answer"], free)
    same(out["again"]["answer"], free)  # the second call, on stores and models kept open
    same(out["mc"]["answer"], mc)
    same(out["fixed"]["answer"], fixed)
    assert out["mc"]["answer"]["answer"]["multiple_choice"]["gold"] == "A"  # 28.4 BLEU: Table 2 of 1706.03762
    answer = out["free"]
    assert answer["evidence"], answer  # the question has an answer in the corpus: evidence with locators
    gold = [g["paper_id"] for g in free["submission"]["gold_papers"]]
    assert gold and [p["paper_id"] for p in answer["papers"]] == gold
    for loc in answer["evidence"]:
        assert set(loc) >= {"chunk_id", "paper_id", "page", "kind", "object_id", "section", "text"}
    assert [c["paper_id"] for c in answer["candidates"]] == free["candidates"][:10]
    assert answer["trace"]["query_id"] == "q1" and answer["trace"]["run"].startswith("mcp-")
    assert out["again"]["trace"]["query_id"] == "q2" and "load" not in out["again"]["timings"]

    ev = out["evidence"]
    assert [c["paper_id"] for c in ev["candidates"]] == free["candidates"]
    ranking_a = [r["paper_id"] for r in free["ranking_a"]]
    for c in ev["candidates"]:
        assert c["rank_a"] == (ranking_a.index(c["paper_id"]) + 1 if c["paper_id"] in ranking_a else None)
        assert c["rank_b"] == (free["ranking_b"].index(c["paper_id"]) + 1 if c["paper_id"] in free["ranking_b"]
                               else None)
    pooled = {c for sq in free["trace"]["subqueries"] for c, _ in sq["pooled_chunks"]}
    assert len(ev["chunks"]) == 5 and {c["chunk_id"] for c in ev["chunks"]} <= pooled
    assert [c["score"] for c in ev["chunks"]] == sorted((c["score"] for c in ev["chunks"]), reverse=True)
    assert {c["paper_id"] for c in out["evidence_fixed"]["chunks"]} == {"1706.03762"}
    assert [c["paper_id"] for c in out["evidence_fixed"]["candidates"]] == ["1706.03762"]

    for (err_c, by_chunk), (err_p, by_page) in zip(out["reads"][::2], out["reads"][1::2]):
        assert not err_c and not err_p
        loc = by_chunk["chunks"][0]
        assert loc["chunk_id"] in [c["chunk_id"] for c in by_page["chunks"]]
        assert all(c["page"] == loc["page"] for c in by_page["chunks"])
    evidence_text = {e["chunk_id"]: e["text"] for e in answer["evidence"]}
    assert all(r[1]["chunks"][0]["text"] == evidence_text[r[1]["chunks"][0]["chunk_id"]] for r in out["reads"][::2])

    stored = cli(home, "graph", "trace", "q1", "--run", answer["trace"]["run"], "--json")
    assert out["trace"] == stored
    assert out["trace"]["question"]["query_id"] == "q1" and out["trace"]["evidence_path"]

    found = out["search"]["papers"]
    assert [p["paper_id"] for p in found] == ["2007.14062", "1706.03762"]  # Big Bird is the sparse-attention paper
    assert found[0]["why"].startswith("matched by ") and found[0]["passage"]["paper_id"] == "2007.14062"


def test_citations_are_what_lit3r_graph_shows(hashing_home, tmp_path):
    errlog = tmp_path / "stderr.txt"
    got: dict[tuple[str, str], Any] = {}

    async def scenario() -> None:
        async with served(hashing_home, errlog) as s:
            for pid in ("1706.03762", "2007.14062"):
                for relation in ("cited", "citing", "coupling", "similar"):
                    err, got[pid, relation] = await call(s, "citations", paper_id=pid, relation=relation,
                                                         limit=5, min_shared=1)
                    assert not err, got[pid, relation]

    _run(scenario)
    clean_stderr(errlog)
    for pid in ("1706.03762", "2007.14062"):
        hood = cli(hashing_home, "graph", "neighbourhood", pid, "--limit", "5", "--min-shared", "1", "--json")
        assert got[pid, "cited"] == {"paper": hood["paper"], "references": hood["references"], "cited": hood["cites"]}
        assert got[pid, "citing"] == {"paper": hood["paper"], "citing": hood["cited_by"]}
        assert got[pid, "coupling"] == cli(hashing_home, "graph", "coupling", pid, "--limit", "5", "--min-shared",
                                           "1", "--json")
        assert got[pid, "similar"] == cli(hashing_home, "graph", "similar", pid, "--limit", "5", "--json")
    assert got["2007.14062", "cited"]["cited"][0]["paper_id"] == "1706.03762"  # Big Bird cites the Transformer
    assert got["1706.03762", "citing"]["citing"][0]["paper_id"] == "2007.14062"


def test_bad_calls_are_one_line_tool_errors_and_the_server_keeps_answering(hashing_home, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(hashing_home, home)  # the answers' traces are written into it
    errlog = tmp_path / "stderr.txt"
    results: list[tuple[str, bool, Any]] = []
    huge = "What does the Transformer replace recurrence with? " * 3000

    async def scenario() -> None:
        async with served(home, errlog, LIT3R_NEO4J__PASSWORD=SECRET, OPENAI_API_KEY=SECRET + "-key") as s:
            calls = [
                ("unknown paper", "citations", {"paper_id": "9999.99999", "relation": "similar"}),
                ("unknown paper in ask", "ask", {"question": QUESTION, "papers": ["9999.99999"]}),
                ("unknown chunk", "read", {"chunk_id": "x" * 5000}),
                ("page out of range", "read", {"paper_id": "1706.03762", "page": 999}),
                ("neither chunk nor page", "read", {}),
                ("bad relation", "citations", {"paper_id": "1706.03762", "relation": "cocited"}),
                ("limit not a number", "search_papers", {"query": "attention", "limit": "ten"}),
                ("limit too big", "find_evidence", {"question": QUESTION, "limit": 10_000}),
                ("missing argument", "ask", {}),
                ("one option", "ask", {"question": QUESTION, "options": {"A": "1"}}),
                ("bad table schema", "ask", {"question": QUESTION, "table_schema": [{"type": "number"}]}),
                ("unknown provider", "ask", {"question": QUESTION, "llm": "gpt-9"}),
                ("cypher on embedded", "cypher", {"statement": "MATCH (p:Paper) RETURN count(p) AS n"}),
                ("unknown trace", "trace", {"query_id": "q999"}),
                ("blank query", "search_papers", {"query": "   "}),
                ("secret in the question", "find_evidence", {"question": f"attention {SECRET}", "limit": 2}),
                ("huge question", "find_evidence", {"question": huge, "limit": 1}),
                ("huge question in ask", "ask", {"question": huge}),
                ("still answering", "citations", {"paper_id": "2007.14062", "relation": "cited"}),
            ]
            for label, name, args in calls:
                err, res = await call(s, name, **args)
                results.append((label, err, res))
            huge_ask = next(res for label, _, res in results if label == "huge question in ask")
            err, res = await call(s, "trace", **huge_ask["trace"])
            results.append(("huge question's trace", err, res))

    _run(scenario)
    clean_stderr(errlog)
    by = {label: (err, res) for label, err, res in results}
    expected_errors = {
        "unknown paper": "unknown paper id '9999.99999': the search_papers tool or the lit3r://papers resource",
        "unknown paper in ask": "unknown paper id(s) '9999.99999'",
        "unknown chunk": "(5,000 characters)",
        "page out of range": "has no stored text on page 999 (its pages: 1 to",
        "neither chunk nor page": "pass either chunk_id, or paper_id and page",
        "bad relation": "relation",
        "limit not a number": "limit",
        "limit too big": "limit",
        "missing argument": "question",
        "one option": "options",
        "bad table schema": "name",
        "unknown provider": "llm",
        "cypher on embedded": "Cypher needs the Neo4j backend",
        "unknown trace": "q999",
        "blank query": "the query is empty",
    }
    for label, part in expected_errors.items():
        err, text = by[label]
        assert err and part in text, (label, text)
        assert "Traceback" not in text and "\n" not in text and len(text) < 2000, (label, text)  # one line
    for label in ("bad relation", "limit not a number", "limit too big", "missing argument", "bad table schema"):
        assert by[label][1].endswith(": fix the argument (the tool's input schema gives each argument's type and "
                                     "limits)"), by[label]
    err, res = by["secret in the question"]
    assert not err and SECRET not in json.dumps(res) and "***" in res["question"]
    for label in ("huge question", "huge question in ask"):
        err, res = by[label]
        assert not err and res["question"].endswith(f"... ({len(huge):,} characters)"), (label, str(res)[:300])
        assert len(json.dumps(res)) < 100_000, label  # the question is never echoed whole
    err, res = by["huge question's trace"]
    assert not err and res["question"]["text"].endswith(f"... ({len(huge):,} characters)")
    assert len(json.dumps(res)) < 100_000
    err, res = by["still answering"]
    assert not err and res["cited"][0]["paper_id"] == "1706.03762"


def test_a_home_built_again_is_seen_without_a_restart(hashing_home, tmp_path):
    """`lit3r ingest --rebuild` while the server runs builds a new index beside the open one and
    swaps it in: the next call must read the new one (a server that kept its stores open on the
    swapped-out files still answers from the two papers it started with)."""
    home = tmp_path / "home"
    shutil.copytree(hashing_home, home)
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    for pid in ("1706.03762", "2007.14062", "2006.04768"):
        os.symlink(CORPUS / "pdfs" / f"{pid}.pdf", pdfs / f"{pid}.pdf")
    errlog = tmp_path / "stderr.txt"
    seen: list[Any] = []

    async def scenario() -> None:
        async with served(home, errlog) as s:
            seen.append(await call(s, "search_papers", query="Linformer self-attention linear complexity", limit=5))
            res = await anyio.to_thread.run_sync(lambda: subprocess.run(
                [sys.executable, "-m", "lit3r.cli", "--home", str(home), "ingest", str(pdfs), "--no-images",
                 "--rebuild"],  # a new index, built beside the open one and swapped in
                cwd=ROOT, capture_output=True, text=True, env=_env()))
            assert res.returncode == 0 and "1 parsed" in res.stdout, res.stderr[-2000:]
            seen.append(await call(s, "search_papers", query="Linformer self-attention linear complexity", limit=5))
            seen.append(json.loads((await s.read_resource("lit3r://papers")).contents[0].text))

    _run(scenario)
    clean_stderr(errlog)
    (err0, before), (err1, after), listed = seen
    assert not err0 and not err1
    assert "2006.04768" not in [p["paper_id"] for p in before["papers"]]
    assert after["papers"][0]["paper_id"] == "2006.04768"  # Linformer, ingested while the server ran
    assert [p["paper_id"] for p in listed] == ["1706.03762", "2006.04768", "2007.14062"]


@pytest.fixture(scope="module")
def neo4j_home(hashing_home, servers, tmp_path_factory):
    """``(home, env)``: a copy of the two-paper hashing home loaded into the session's Neo4j and
    OpenSearch, and the environment that points `lit3r` at them (the servers backend)."""
    from lit3r.index.build import build_stores

    home = tmp_path_factory.mktemp("mcp-servers") / "home"
    shutil.copytree(hashing_home, home)
    move_corpus(servers[0])  # the session's servers may hold another module's corpus
    report = build_stores(server_settings(home, servers, "lit3r-mcp"))
    assert report.servers["written"] == 2
    neo, osr = servers
    return home, {"LIT3R_BACKEND": "neo4j+opensearch", "LIT3R_NEO4J__URI": neo.uri, "LIT3R_NEO4J__USER": "",
                  "LIT3R_NEO4J__PASSWORD": "", "LIT3R_OPENSEARCH__URL": osr.url,
                  "LIT3R_OPENSEARCH__INDEX_PREFIX": "lit3r-mcp"}


def test_on_neo4j_cypher_reads_and_a_write_is_a_tool_error(neo4j_home, hashing_home, tmp_path):
    home, env = neo4j_home
    errlog = tmp_path / "stderr.txt"
    out: dict[str, Any] = {}
    write = "CREATE (n:McpWriteProbe {at: 1}) RETURN n"

    async def scenario() -> None:
        async with served(home, errlog, **env) as s:
            out["count"] = await call(s, "cypher", statement="MATCH (p:Paper) RETURN count(p) AS n")
            out["named"] = await call(s, "cypher", statement="explore_neighbourhood",
                                      params={"paper_id": "2007.14062"})
            out["write"] = await call(s, "cypher", statement=write)
            out["merge"] = await call(s, "cypher", statement="MATCH (p:Paper) SET p.title = 'x' RETURN p")
            out["missing"] = await call(s, "cypher", statement="explore_neighbourhood")
            out["syntax"] = await call(s, "cypher", statement="MATCH (p:Paper RETURN p")
            out["bad params"] = await call(s, "cypher", statement="MATCH (p) RETURN p", params="paper_id=1")
            out["probe"] = await call(s, "cypher", statement="MATCH (n:McpWriteProbe) RETURN count(n) AS n")
            out["citations"] = await call(s, "citations", paper_id="2007.14062", relation="cited")
            out["unknown"] = await call(s, "citations", paper_id="9999.99999", relation="citing")
            out["ask"] = await call(s, "ask", question=QUESTION)

    _run(scenario)
    clean_stderr(errlog)
    err, res = out["count"]
    assert not err and res["rows"] == [{"n": 2}] and res["more"] is False
    err, res = out["named"]
    assert not err and res["rows"], res
    for key in ("write", "merge"):
        err, text = out[key]
        assert err and "not a plain read" in text and "the cypher tool only reads" in text, text
        assert "pass --write" not in text
    err, text = out["missing"]
    assert err and "statement explore_neighbourhood needs $paper_id" in text and 'params {"paper_id"' in text, text
    err, text = out["syntax"]
    assert err and "Cypher failed on bolt://" in text, text
    err, text = out["bad params"]
    assert err and "params" in text, text
    err, res = out["probe"]
    assert not err and res["rows"] == [{"n": 0}]  # nothing was written
    err, res = out["citations"]
    embedded = cli(hashing_home, "graph", "neighbourhood", "2007.14062", "--json")
    assert not err and res["cited"] == embedded["cites"]
    err, text = out["unknown"]
    assert err and "unknown paper id '9999.99999'" in text, text
    err, res = out["ask"]  # the whole pipeline on Neo4j + OpenSearch answers as on the embedded backend
    assert not err, res
    assert {**res["answer"], "query_id": "cli"} == cli(hashing_home, "ask", QUESTION, "--json",
                                                       "--no-trace-graph")["submission"]
