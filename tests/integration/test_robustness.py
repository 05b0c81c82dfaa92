"""Robustness suite (issue 16, item 8): faults met the way a user meets them, through the real
CLI in subprocesses, against real components (the real PDFs, the 10-paper subset built with the
default encoder, real Neo4j and OpenSearch servers, a misbehaving HTTP server on 127.0.0.1,
SIGKILL). Every case asserts a wall-time bound (2-3x what it took on 2 busy cores), the exit
code, what the user reads (one line naming the cause and the fix, never a traceback) and that no
data is lost (record files byte for byte; after a resume every question answered exactly once
and `lit3r eval` reads the submission).

The cases already covered elsewhere are listed with these in docs/robustness.md; this module
holds the ones that were not (``pytest -m robustness`` runs it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Optional

import pytest

from tests.conftest import CORPUS, ROOT
from tests.integration.conftest import SUBSET, send_json, server_settings

pytestmark = pytest.mark.robustness

INPUTS = CORPUS / "questions_dev_inputs.jsonl"
GOLD = CORPUS / "questions_dev.jsonl"
#: A paper outside SUBSET (11 pages) that the ingest-kill case adds to a copy of the subset.
NEW_PAPER = "2108.09084"
QUESTION = "Which sparse attention pattern does Big Bird use?"
STALE = "was built before the last ingest"
RECORDS = ("papers.jsonl", "chunks.jsonl", "references.jsonl", "corpus.json")
#: Progress lines on stderr (graph/progress.py) and the LLM rounds' notes: not messages.
PROGRESS = re.compile(r"^([a-zA-Z ]+: \d+/\d+ [a-z]+, \d+ s|retrieve round .*|synthesis from .*"
                      r"|updating the index in .*)$")
PREFIX = "lit3r-robust"  # this module's OpenSearch indices on the session's server


# ----------------------------------------------------------------------------- helpers

def _env(**extra: str) -> dict:
    return {**os.environ, "LIT3R_BACKEND": "embedded", "LIT3R_LLM__PROVIDER": "none", **extra}


def lit3r(home: Optional[Path], *args: str, env: Optional[dict] = None, timeout: float = 300):
    """``(CompletedProcess, wall seconds)`` of one real `lit3r` command."""
    home_args = ["--home", str(home)] if home is not None else []
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", *home_args, *args], cwd=ROOT, env=env or _env(),
                         capture_output=True, text=True, timeout=timeout)
    return res, time.perf_counter() - t0


def start(home: Path, *args: str, env: Optional[dict] = None, logs: Path) -> subprocess.Popen:
    """A real `lit3r` command in its own process group, stdout and stderr to ``logs``.out/.err."""
    logs.parent.mkdir(parents=True, exist_ok=True)
    out, err = open(f"{logs}.out", "w"), open(f"{logs}.err", "w")
    try:
        return subprocess.Popen([sys.executable, "-m", "lit3r.cli", "--home", str(home), *args], cwd=ROOT,
                                env=env or _env(), stdout=out, stderr=err, start_new_session=True)
    finally:
        out.close()
        err.close()


def wait_for(what, condition, timeout: float, proc: Optional[subprocess.Popen] = None) -> float:
    """Poll ``condition()`` every 20 ms; the seconds it took. Fails when ``proc`` ends first or at ``timeout``."""
    t0 = time.perf_counter()
    while not condition():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the command ended (exit {proc.returncode}) before {what}")
        if time.perf_counter() - t0 > timeout:
            pytest.fail(f"no {what} after {timeout} s")
        time.sleep(0.02)
    return time.perf_counter() - t0


def kill9(proc: subprocess.Popen) -> None:
    """SIGKILL to the command and its worker processes (its process group), as `kill -9 -PGID`."""
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)


def messages(stderr: str) -> list[str]:
    """The lines of ``stderr`` that are not progress lines."""
    return [line for line in stderr.splitlines() if line.strip() and not PROGRESS.match(line)]


def one_error_line(res, seconds: float, bound: float, *expected: str) -> str:
    """Exit 1, the user's one ``Error:`` line holds ``expected``, no traceback, within ``bound`` s."""
    lines = messages(res.stderr)
    assert res.returncode == 1, (res.returncode, res.stdout[-1000:], res.stderr[-2000:])
    assert "Traceback" not in res.stderr and len(lines) == 1 and lines[0].startswith("Error: "), res.stderr[-2000:]
    for text in expected:
        assert text in lines[0], (text, lines[0])
    assert seconds < bound, (seconds, bound)
    return lines[0]


def note(case: str, seconds: float, line: str = "") -> None:
    """What a case measured and what the user read (``pytest -s`` shows it; docs/robustness.md lists it)."""
    print(f"[robustness] {case}: {seconds:.1f} s: {line}")


def digests(folder: Path, names=None) -> dict[str, str]:
    """sha256 of every file under ``folder`` (or of ``names`` in it)."""
    paths = [folder / n for n in names] if names else [p for p in folder.rglob("*") if p.is_file()]
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(paths)}


def queries(tmp_path: Path, n: int) -> tuple[Path, Path, list[str]]:
    """``(inputs, gold, query ids)``: the first ``n`` dev questions and their gold lines."""
    rows = [json.loads(line) for line in INPUTS.open()][:n]
    ids = [r["query_id"] for r in rows]
    q, g = tmp_path / "q.jsonl", tmp_path / "gold.jsonl"
    q.write_text("".join(json.dumps(r) + "\n" for r in rows))
    g.write_text("".join(line for line in GOLD.open() if json.loads(line)["query_id"] in ids))
    return q, g, ids


def query_ids(path: Path) -> list[str]:
    return [json.loads(line)["query_id"] for line in path.read_text().splitlines() if line.strip()]


def check_resumed(out: Path, gold: Path, ids: list[str], kept: bytes) -> dict:
    """Every question answered exactly once, the lines written before the fault kept byte for
    byte, the traces file read whole, and `lit3r eval` scores the submission."""
    assert out.read_bytes().startswith(kept)
    assert Counter(query_ids(out)) == Counter(ids), query_ids(out)
    for line in Path(f"{out}.traces.jsonl").read_text().splitlines():
        json.loads(line)  # no torn line left
    res, seconds = lit3r(None, "eval", "--gold", str(gold), "--pred", str(out), "--json", timeout=60)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-2000:]
    scored = json.loads(res.stdout)
    assert scored["overall"]["questions"] == len(ids) and scored["missing_predictions"] == []
    assert seconds < 15, seconds  # measured 1 s
    return scored


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed once the socket is: connection refused


class SilentPort:
    """A port that accepts TCP connections and never answers (a hung server, a firewall that
    lets the handshake through)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.held.append(self.sock.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


# ----------------------------------------------------------------------------- interruptions

def test_kill_9_of_a_run_then_the_same_command_resumes(subset_home, tmp_path):
    """`lit3r run` killed with SIGKILL once its first submission line is out (a torn line left
    in both files, as a kill mid-write leaves them); the same command again answers the rest,
    each question once, and `lit3r eval` reads the result."""
    q, gold, ids = queries(tmp_path, 4)
    out = tmp_path / "sub.jsonl"
    args = ("run", "--queries", str(q), "--out", str(out))
    t0 = time.perf_counter()
    proc = start(subset_home, *args, logs=tmp_path / "killed")
    wait_for("submission line", lambda: out.is_file() and out.read_bytes().count(b"\n") >= 1, 180, proc)
    kill9(proc)
    assert proc.returncode == -signal.SIGKILL
    kept = out.read_bytes()
    kept = kept[: kept.rfind(b"\n") + 1]  # the complete lines
    assert 1 <= kept.count(b"\n") < len(ids), "the run was not interrupted mid-batch"
    for path, torn in ((out, b'{"query_id": "c60_0'), (Path(f"{out}.traces.jsonl"), b'{"query_id": "c60_004", "tr')):
        with path.open("ab") as fh:
            fh.write(torn)
    killed_after = time.perf_counter() - t0
    res, seconds = lit3r(subset_home, *args)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-2000:]
    done = kept.count(b"\n")
    assert f"{len(ids) - done} answered, {done} already in {out}, 0 failed (of {len(ids)})" in res.stdout, res.stdout
    # nothing to report but where the traces went: the torn lines are repaired silently
    assert [m for m in messages(res.stderr) if not m.startswith("trace graph stored: ")] == [], res.stderr
    check_resumed(out, gold, ids, kept)
    note("run killed", killed_after, f"{done} line(s) kept")
    note("run resumed", seconds, res.stdout.strip().splitlines()[-1])
    assert killed_after < 60 and seconds < 75, (killed_after, seconds)  # measured 13-16 s and 21-23 s


def test_kill_9_of_an_ingest_during_its_build(subset_home, tmp_path):
    """`lit3r ingest` of one more paper into a built data folder, killed with SIGKILL while it
    builds the index: `lit3r doctor` says in one line that the index is older than the corpus
    and what to run, `lit3r ask` warns in one line and answers from the previous index, the
    record files are whole; the same ingest again brings the index up to date."""
    from ingest.stamp import read_version
    from lit3r.config import Settings
    from lit3r.index.state import stale_index_message

    home = tmp_path / "home"
    shutil.copytree(subset_home, home)
    pdfs = tmp_path / "new"
    pdfs.mkdir()
    (pdfs / f"{NEW_PAPER}.pdf").symlink_to(CORPUS / "pdfs" / f"{NEW_PAPER}.pdf")
    args = ("ingest", str(pdfs), "--metadata", str(CORPUS / "manifest.jsonl"), "--no-images")
    built_before = json.loads((home / "index" / "manifest.json").read_text())["corpus_version"]
    t0 = time.perf_counter()
    # one text per encoder run: the default OpenVINO encoder embeds one paper in about a second in
    # runs of 64, too soon for the kill below to land inside the build
    proc = start(home, *args, env=_env(LIT3R_MODELS__BATCH_SIZE="1"), logs=tmp_path / "killed")
    err = Path(f"{tmp_path / 'killed'}.err")
    wait_for("build", lambda: "updating the index in" in err.read_text(), 120, proc)
    time.sleep(1.0)  # inside the build: the encoder loads and encodes (several seconds)
    kill9(proc)
    assert proc.returncode == -signal.SIGKILL
    killed_after = time.perf_counter() - t0
    manifest = json.loads((home / "index" / "manifest.json").read_text())
    assert manifest["corpus_version"] == built_before != read_version(home), "the build was not interrupted"
    papers = [json.loads(line)["paper_id"] for line in (home / "papers.jsonl").read_text().splitlines()]
    assert sorted(papers) == sorted([*SUBSET, NEW_PAPER])  # the parse was complete: the records are whole

    res, doctor_s = lit3r(home, "doctor", timeout=120)
    failed = [line for line in res.stdout.splitlines() if line.startswith("[FAIL]")]
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert len(failed) == 1 and failed[0].startswith("[FAIL] index: ") and STALE in failed[0], res.stdout[-2000:]
    assert "run `lit3r ingest PDF_DIR` again" in failed[0]

    res, ask_s = lit3r(home, "ask", QUESTION, "--no-trace-graph", timeout=120)
    assert res.returncode == 0 and res.stdout.startswith("Answer: ") and "2007.14062" in res.stdout, res.stderr[-2000:]
    lines = messages(res.stderr)
    assert len(lines) == 1 and lines[0].startswith("warning: ") and STALE in lines[0], res.stderr

    res, again_s = lit3r(home, *args)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert "11 paper(s) in" in res.stdout and "(0 parsed, 1 unchanged" in res.stdout, res.stdout
    assert "1 paper(s) encoded" in res.stdout, res.stdout
    assert stale_index_message(Settings(home=home)) is None
    assert json.loads((home / "index" / "manifest.json").read_text())["corpus_version"] == read_version(home)
    from graph.embedded import EmbeddedGraphStore
    from graph.search.embedded import DB_NAME

    store = EmbeddedGraphStore.open(home / "index" / DB_NAME)
    assert store.neighbours_of(NEW_PAPER)  # the new paper is in the index, linked to the others
    note("ingest killed", killed_after)
    note("doctor after the kill", doctor_s, failed[0])
    note("ask after the kill", ask_s, lines[0])
    note("ingest again", again_s, res.stdout.strip().splitlines()[-1])
    # measured: killed 5 s after the start, doctor 11-17 s, ask 13-21 s, the ingest again 25-29 s
    assert killed_after < 30 and doctor_s < 45 and ask_s < 50 and again_s < 90, \
        (killed_after, doctor_s, ask_s, again_s)


# ----------------------------------------------------------------------------- bad input files and batch input

def test_a_folder_of_only_bad_files_changes_nothing_in_the_data_folder(hashing_home, tmp_path):
    """Zero-byte, not-a-PDF, truncated and looping files ingested into a built data folder: one
    line each naming the file, the cause and the fix, exit 1, and the records byte for byte as
    before (the index still the one of the same corpus)."""
    home = tmp_path / "home"
    shutil.copytree(hashing_home, home)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "empty.pdf").write_bytes(b"")
    (bad / "notes.pdf").write_text("meeting notes, not a PDF\n")
    (bad / "cut.pdf").write_bytes((CORPUS / "pdfs" / f"{NEW_PAPER}.pdf").read_bytes()[:3000])
    os.symlink("loop2.pdf", bad / "loop1.pdf")
    os.symlink("loop1.pdf", bad / "loop2.pdf")
    before = digests(home, RECORDS)
    version = json.loads((home / "index" / "manifest.json").read_text())["corpus_version"]
    res, seconds = lit3r(home, "ingest", str(bad), "--no-images")
    lines = messages(res.stderr)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    want = ["skipped empty.pdf: empty file (0 bytes): re-download or remove it",
            "skipped notes.pdf: not a PDF (no %PDF header): convert it to PDF or remove it",
            "skipped cut.pdf: unreadable PDF (",
            f"warning: {bad / 'loop1.pdf'}: symbolic link loop: skipped (point the link at a file or folder)",
            f"warning: {bad / 'loop2.pdf'}: symbolic link loop: skipped (point the link at a file or folder)",
            "Error: none of the 3 PDF file(s) could be ingested (reasons above)"]
    for text in want:
        assert sum(line.startswith(text) for line in lines) == 1, (text, lines)
    assert len(lines) == len(want), lines
    assert digests(home, RECORDS) == before
    assert json.loads((home / "index" / "manifest.json").read_text())["corpus_version"] == version
    note("bad files", seconds, lines[-1])
    assert seconds < 15, seconds  # measured 4-5 s


def test_batch_input_faults_touch_no_file(hashing_home, tmp_path):
    """`lit3r run` with --fail-fast and a bad line, with a --queries file that is not UTF-8, and
    with an --out that is not a submission file (a metadata file given by mistake): one line
    each, exit 1, before any question runs, and the --out file byte for byte as before."""
    q, _, _ = queries(tmp_path, 2)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(q.read_text() + '{"query_id": "x", "question": "q", "answer_types": ["essay"]}\n')
    out = tmp_path / "sub.jsonl"
    res, seconds = lit3r(hashing_home, "run", "--queries", str(bad), "--out", str(out), "--fail-fast")
    note("fail-fast", seconds, one_error_line(res, seconds, 10, f"{bad}:3 (query_id 'x'): field \"answer_types[0]\"",
                                              "(--fail-fast: no question was run)"))
    assert not out.exists()

    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"query_id": "c", "question": "Caf\u00e9?"}\n'.encode("latin-1"))
    res, seconds = lit3r(hashing_home, "run", "--queries", str(latin), "--out", str(out))
    note("not UTF-8", seconds, one_error_line(res, seconds, 10, str(latin), "UTF-8"))
    assert not out.exists()

    meta = tmp_path / "manifest.jsonl"
    shutil.copyfile(CORPUS / "manifest.jsonl", meta)
    before = digests(tmp_path, ["manifest.jsonl"])
    res, seconds = lit3r(hashing_home, "run", "--queries", str(q), "--out", str(meta))
    note("--out not a submission", seconds, one_error_line(
        res, seconds, 15, f"--out {meta}:1: not a submission line: choose another --out", "never overwritten"))
    assert digests(tmp_path, ["manifest.jsonl"]) == before
    assert not Path(f"{meta}.traces.jsonl").exists()


# ----------------------------------------------------------------------------- LLM faults, through `lit3r ask`

class _LLMHandler(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that misbehaves as its URL path says: ``/<mode>/v1/...``."""

    requests: list = []
    stop = threading.Event()

    def log_message(self, *args) -> None:
        pass

    def handle(self) -> None:
        try:
            super().handle()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self) -> None:
        mode = self.path.split("/")[1]
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        _LLMHandler.requests.append(mode)
        if mode == "hang":
            _LLMHandler.stop.wait(120)
            return
        code, error, headers = {
            "auth": (401, {"message": "Incorrect API key provided", "code": "invalid_api_key"}, {}),
            "quota": (429, {"message": "You exceeded your current quota, please check your plan and billing details.",
                            "type": "insufficient_quota", "code": "insufficient_quota"}, {}),
            "retry_after": (429, {"message": "Rate limit reached"}, {"retry-after": "300"}),
        }[mode]
        send_json(self, code, {"error": error}, headers)


@pytest.fixture(scope="module")
def llm_server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _LLMHandler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    _LLMHandler.stop.clear()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    _LLMHandler.stop.set()
    httpd.shutdown()
    httpd.server_close()


KEY = "sk-planted-robustness-0123456789"

#: mode: (what the one LLM line says, the most requests the endpoint may get).
LLM_CASES = {
    "auth": (["HTTP 401, the endpoint refuses the key", "check llm.api_key / OPENAI_API_KEY",
              "not called again in this run"], 1),
    "quota": (["HTTP 429 insufficient_quota", "add credit, or use another llm.api_key", "not called again"], 1),
    "retry_after": (["asks to wait 300 s", "HTTP 429 rate limited", "raise llm.retry_budget_s"], 1),
    "hang": (["llm.retry_budget_s = 6 s spent", "(last: ", "llm.timeout", "take the extractive answer"], 6),
    "refused": (["cannot connect ([Errno 111] Connection refused)", "check llm.base_url"], 0),
}


@pytest.mark.parametrize("mode", list(LLM_CASES))
def test_an_llm_fault_is_one_line_and_the_question_is_still_answered(hashing_home, llm_server, mode):
    """`lit3r ask --llm openai` against an endpoint that fails in one way: the extractive answer,
    one line naming the fault and its setting, the key never printed, bounded requests and time.
    (The model-free encoder's home, its abstention off: every LLM step is asked.)"""
    says, most = LLM_CASES[mode]
    url = f"http://127.0.0.1:{_free_port()}/v1" if mode == "refused" else f"{llm_server}/{mode}/v1"
    env = _env(LIT3R_READ__ABSTAIN_COSINE="-1", LIT3R_LLM__BASE_URL=url, LIT3R_LLM__MODEL="m", LIT3R_LLM__API_KEY=KEY,
               LIT3R_LLM__CACHE="false", LIT3R_LLM__VISION="false", LIT3R_LLM__TIMEOUT="2",
               LIT3R_LLM__RETRY_BUDGET_S="6", LIT3R_LLM__BACKOFF="0.2")
    _LLMHandler.requests = []
    res, seconds = lit3r(hashing_home, "ask", QUESTION, "--llm", "openai", "--no-trace-graph", env=env, timeout=120)
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert res.stdout.startswith("Answer: ") and "[2007.14062]" in res.stdout, res.stdout[:500]  # the extractive answer
    lines = [line for line in messages(res.stderr) if line.startswith("LLM ")]
    assert len(lines) == 1, res.stderr
    for text in says:
        assert text in lines[0], (text, lines[0])
    assert len(_LLMHandler.requests) <= most, _LLMHandler.requests
    assert KEY not in res.stdout + res.stderr
    note(f"llm {mode}", seconds, f"{len(_LLMHandler.requests)} request(s): {lines[0]}")
    assert seconds < 40, seconds  # measured 5-8 s, the hang 13-14 s


# ----------------------------------------------------------------------------- server faults

def _server_env(neo_uri: str, os_url: str, **extra: str) -> dict:
    """The servers backend; no abstention (the hashing encoder's cosines are low): every question
    runs Retrieve, Relate and Read against both servers."""
    return _env(**{"LIT3R_READ__ABSTAIN_COSINE": "-1", "LIT3R_BACKEND": "neo4j+opensearch",
                   "LIT3R_NEO4J__URI": neo_uri, "LIT3R_NEO4J__USER": "", "LIT3R_OPENSEARCH__URL": os_url,
                   "LIT3R_OPENSEARCH__INDEX_PREFIX": PREFIX, **extra})


def test_a_silent_neo4j_port_is_one_line_in_bounded_time(hashing_home):
    """Neo4j's port accepts the connection and never answers: one line within the driver's
    bounds, the planted password never printed."""
    silent = SilentPort()
    try:
        env = _server_env(f"bolt://127.0.0.1:{silent.port}", f"http://127.0.0.1:{_free_port()}",
                          LIT3R_NEO4J__USER="neo4j", LIT3R_NEO4J__PASSWORD="pw-planted-4711")
        res, seconds = lit3r(hashing_home, "ask", QUESTION, "--no-trace-graph", env=env, timeout=120)
    finally:
        silent.close()
    line = one_error_line(res, seconds, 35, f"Neo4j at bolt://127.0.0.1:{silent.port} cannot be reached",
                          "LIT3R_NEO4J__URI")  # measured 11-13 s (the Bolt handshake's 10 s deadline)
    assert "pw-planted-4711" not in res.stdout + res.stderr, line
    note("silent neo4j", seconds, line)


@pytest.fixture(scope="module")
def dedicated(hashing_home, servers, tmp_path_factory):
    """A Neo4j of this module alone (its cases kill it) beside the session's OpenSearch, with a
    copy of the two-paper hashing home loaded under PREFIX (seconds to load):
    ``{"neo", "osr", "home", "work"}``; "neo" is replaced when a case restarts it. Everything is
    stopped and the indices deleted at the end."""
    from lit3r.index.build import build_stores
    from tests.servers import neo4j_server

    work = tmp_path_factory.mktemp("robust-servers")
    home = work / "home"
    shutil.copytree(hashing_home, home)
    neo4j_server.build()
    state = {"neo": neo4j_server.start(work / "neo4j-1"), "osr": servers[1], "home": home, "work": work}
    try:
        build_stores(server_settings(home, (state["neo"], state["osr"]), PREFIX))
        yield state
    finally:
        state["neo"].stop()
        _delete_indices(state["osr"].url)


def _delete_indices(url: str) -> None:
    import urllib.request

    with urllib.request.urlopen(f"{url}/_cat/indices/{PREFIX}-*?format=json", timeout=30) as reply:
        names = [row["index"] for row in json.load(reply)]
    for name in names:
        urllib.request.urlopen(urllib.request.Request(f"{url}/{name}", method="DELETE"), timeout=30).close()


def _node_count(uri: str) -> int:
    import neo4j

    with neo4j.GraphDatabase.driver(uri, auth=None) as driver:
        return driver.execute_query("MATCH (n) RETURN count(n) AS n").records[0]["n"]


@pytest.mark.parametrize("query, says", [
    ("LOAD CSV FROM 'file:///etc/passwd' AS l RETURN l", "LOAD CSV reads files and URLs on the Neo4j server"),
    ("MATCH (n) DETACH DELETE n", "the query writes (query type 'w'): pass --write"),
    ("CALL dbms.listConfig() YIELD name RETURN name", "CALL dbms.listConfig is not one of the read-only procedures"),
])
def test_cypher_without_write_refuses_and_the_graph_is_unchanged(dedicated, query, says):
    neo = dedicated["neo"]
    before = _node_count(neo.uri)
    res, seconds = lit3r(dedicated["home"], "cypher", query, env=_server_env(neo.uri, dedicated["osr"].url))
    note(f"cypher {query[:12]}", seconds, one_error_line(res, seconds, 10, "not a plain read: ", says))  # 1-2 s
    assert _node_count(neo.uri) == before > 0


def test_neo4j_killed_mid_run_then_restarted_and_the_run_resumed(dedicated, tmp_path):
    """The Neo4j server process gets SIGKILL while `lit3r run` on the servers backend is mid-batch:
    the run stops with the one-line server message and exit 1, the lines answered before are kept;
    once the server runs again (a new one, loaded by the next ingest's server sync) the same
    command answers the rest, each question once."""
    from lit3r.index.build import build_stores
    from tests.servers import neo4j_server

    home, osr = dedicated["home"], dedicated["osr"]
    q, gold, ids = queries(tmp_path, 6)
    out = tmp_path / "sub.jsonl"
    args = ("run", "--queries", str(q), "--out", str(out))
    neo = dedicated["neo"]
    proc = start(home, *args, env=_server_env(neo.uri, osr.url), logs=tmp_path / "stopped")
    t0 = time.perf_counter()
    wait_for("submission line", lambda: out.is_file() and out.read_bytes().count(b"\n") >= 1, 180, proc)
    neo.process.kill()  # SIGKILL to the server's JVM
    neo.process.wait(30)
    proc.wait(120)
    stopped_s = time.perf_counter() - t0
    stdout, stderr = Path(f"{tmp_path / 'stopped'}.out").read_text(), Path(f"{tmp_path / 'stopped'}.err").read_text()
    assert proc.returncode == 1 and "Traceback" not in stderr, stderr[-2000:]
    kept = out.read_bytes()
    done = kept.count(b"\n")
    assert 1 <= done < len(ids) and kept.endswith(b"\n"), kept
    summary = stdout.strip().splitlines()[-1]
    assert f"{done} answered, 0 already in {out}, 0 failed (of {len(ids)})" in summary, stdout
    assert (f"stopped, {len(ids) - done} not run: Neo4j at {neo.uri} cannot be reached" in summary
            and "LIT3R_NEO4J__URI" in summary and "(then run the same command again)" in summary), summary
    lines = messages(stderr)  # at most the trace graph's warning, which names the fix
    assert len(lines) <= 1 and all(line.startswith("warning: the trace graph was not stored") for line in lines), stderr

    # the server again (the test server starts empty: the next ingest's server sync loads it)
    neo = dedicated["neo"] = neo4j_server.start(dedicated["work"] / "neo4j-2")
    build_stores(server_settings(home, (neo, osr), PREFIX))
    res, seconds = lit3r(home, *args, env=_server_env(neo.uri, osr.url))
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert f"{len(ids) - done} answered, {done} already in {out}, 0 failed (of {len(ids)})" in res.stdout, res.stdout
    check_resumed(out, gold, ids, kept)
    note("neo4j killed", stopped_s, summary + " || " + " | ".join(lines))
    note("rerun after restart", seconds, res.stdout.strip().splitlines()[-1])
    # measured: stopped 13-20 s after the start (the kill comes with the first line), the rerun 9-18 s
    assert stopped_s < 50 and seconds < 45, (stopped_s, seconds)
