"""The real Neo4j Browser, driven in headless Chromium, on a real Neo4j holding real papers and a trace.

`lit3r browser` serves Maven Central's Neo4j Browser (5.24.0) next to Lit3R's guide and style; the
test opens the one URL it prints in Chromium (Debian's ``chromium`` and ``chromium-driver``, which
``.ci/chromium`` installs; driven with Selenium), connects to the test Neo4j over Bolt, applies
``lit3r.grass``, plays the guide and runs one query of each slide by clicking it and the editor's Run
button, as a user does. It checks what the Browser drew: nodes filled with the style's colours and
captioned with the style's properties, and the trace slide's graph Question -> Round -> Subquery ->
Chunk <- Answer. Screenshots of the run go to ``tmp_path``, and to ``docs/img/`` with
``BROWSER_SHOTS=docs/img`` (each PNG under 300 KB).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import CORPUS, ROOT
from tests.integration.conftest import move_corpus

#: A few real papers: attention, two linear-attention papers citing it, chain of thought.
PAPERS = ("1706.03762", "2007.14062", "2006.04768", "2201.11903")
QUESTION = "Which method reduces the complexity of self-attention to linear time, and how?"
#: Seconds the Browser may take for one step (loading, connecting, one query) on a loaded machine.
STEP = 90
#: lit3r.grass's fill colours of the labels checked here.
FILL = {"Paper": "#4C8EDA", "Question": "#DA7194", "Round": "#ECB5C9", "Subquery": "#F3D6E0", "Answer": "#604A0E"}
#: lit3r.grass's relationship colours (``default``: relationships it does not style, captioned by type).
REL = {"CITES": "#2870C2", "POOLED": "#DA7298", "SUPPORTED_BY": "#604A0E", "default": "#A5ABB6"}
CHUNK_FILLS = {"#8DCC93", "#C990C0", "#F16667", "#F79767", "#57C7E3"}  # Chunk and its five kinds
SHOT_LIMIT = 300_000


@pytest.fixture(scope="module")
def neo_with_trace(servers, tmp_path_factory):
    """``(neo4j server, env of the servers backend)``: PAPERS ingested with their metadata (the
    model-free hashing encoder), loaded into the test servers, and one `lit3r ask` trace stored."""
    from lit3r.index.build import build_stores
    from tests.integration.conftest import server_settings

    pdfs, home = tmp_path_factory.mktemp("browser-pdfs"), tmp_path_factory.mktemp("browser-home")
    for pid in PAPERS:
        os.symlink(CORPUS / "pdfs" / f"{pid}.pdf", pdfs / f"{pid}.pdf")
    (home / "config.toml").write_text('[models]\nchunk_encoder = "hashing:64"\npaper_encoder = "hashing:64"\n')
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), "ingest", str(pdfs), "--metadata",
                          str(CORPUS / "manifest.jsonl"), "--no-images"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]
    neo, osr = servers
    move_corpus(neo)  # the session's servers may hold another module's corpus
    build_stores(server_settings(home, servers, "lit3r-browser"))
    env = {**os.environ, "LIT3R_BACKEND": "neo4j+opensearch", "LIT3R_NEO4J__URI": neo.uri, "LIT3R_NEO4J__USER": "",
           "LIT3R_NEO4J__PASSWORD": "", "LIT3R_OPENSEARCH__URL": osr.url,
           "LIT3R_OPENSEARCH__INDEX_PREFIX": "lit3r-browser"}
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), "ask", QUESTION, "--json"], cwd=ROOT,
                         capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout)["trace_graph"]["questions"] == 1
    return neo, env


@pytest.fixture(scope="module")
def chrome():
    """A headless Chromium driven by Selenium through Debian's chromedriver."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    assert binary and driver, "no chromium / chromedriver: run .ci/chromium (Debian: apt-get install chromium " \
                              "chromium-driver)"
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,900", "--hide-scrollbars"):
        options.add_argument(flag)
    browser = webdriver.Chrome(service=Service(driver), options=options)
    browser.set_page_load_timeout(STEP)
    yield browser
    browser.quit()


def _wait(what, check, timeout: float = STEP):
    """The first truthy ``check()`` within ``timeout`` seconds; fails naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            got = check()
        except Exception:  # an element replaced while React re-renders: look again
            got = None
        if got:
            return got
        assert time.monotonic() < deadline, f"Neo4j Browser: {what} not seen within {timeout:.0f} s"
        time.sleep(0.5)


def _norm(text: str) -> str:
    return " ".join(text.split())


class Session:
    """The Browser page: click a guide query, run it, read the newest result frame."""

    def __init__(self, driver, shots: Path) -> None:
        self.d, self.shots = driver, shots

    def frames(self):
        return self.d.find_elements("css selector", "[data-testid=frame]")

    def run_guide_query(self, query: str, graph: bool = False, table: bool = False):
        """Click the guide's runnable block holding ``query`` (it goes to the editor), press Run,
        wait for the result frame; returns that frame (graph: once nodes are drawn; table: once
        rows are shown). Right after connecting the Browser may still answer "No connection
        found" while it selects the database: the query is then run again, as a user would."""
        deadline = time.monotonic() + STEP
        while True:
            frame = self._run_once(query)
            if "No connection found" not in frame.text or time.monotonic() > deadline:
                break
            time.sleep(2)
        want = _norm(query)
        if graph:
            _wait(f"nodes drawn for {want[:60]!r}", lambda: frame.find_elements("css selector", "svg g.node"))
            time.sleep(3)  # the force layout settles
        elif table:
            _wait(f"rows of {want[:60]!r}", lambda: frame.find_elements("css selector", "table td, [role=cell]"))
        lines = frame.text.split("\n")[:4]
        assert not any(line.startswith("ERROR") for line in lines), frame.text[:500]
        return frame

    def _run_once(self, query: str):
        want = _norm(query)
        block = _wait(f"the guide block {want[:60]!r}", lambda: next(
            (p for p in self.d.find_elements("css selector", "pre.runnable")
             if p.is_displayed() and _norm(p.text) == want), None))
        before = len(self.frames())
        self.d.execute_script("arguments[0].scrollIntoView({block: 'center'})", block)
        block.click()
        _wait("the query in the editor", lambda: want[:20] in _norm(self.d.find_element(
            "css selector", "[data-testid=activeEditor]").text))
        self.d.find_element("css selector", "[data-testid=editor-Run]").click()
        _wait(f"a result frame for {want[:60]!r}", lambda: len(self.frames()) > before)
        frame = self.frames()[0]
        head = frame.find_element("css selector", "[data-testid=frameCommand]").get_attribute("textContent")
        assert _norm(head)[:20] == want[:20], (head, want)
        _wait(f"the result of {want[:60]!r}", lambda: len(_norm(frame.text)) > len(_norm(head)) + 10)
        return frame

    def drawn(self, frame) -> tuple[list[tuple[str, str]], set[tuple[str, str]]]:
        """``([(fill colour, caption)] of the nodes, {(colour, caption)} of the relationships)`` of a
        graph frame, colours in upper case."""
        nodes = self.d.execute_script(
            "return Array.from(arguments[0].querySelectorAll('svg g.node')).map(g => ["
            "g.querySelector('circle.b-outline').getAttribute('fill'),"
            "Array.from(g.querySelectorAll('text.caption')).map(t => t.textContent.trim()).join(' ')])", frame)
        rels = self.d.execute_script(
            "return Array.from(arguments[0].querySelectorAll('svg g.relationship')).map(g => ["
            "g.querySelector('path.b-outline').getAttribute('fill'),"
            "Array.from(g.querySelectorAll('text')).map(t => t.textContent.trim()).join(' ')])", frame)
        return [(f.upper(), c) for f, c in nodes], {(f.upper(), c) for f, c in rels}

    def shot(self, name: str, frame=None) -> Path:
        path = self.shots / name
        if frame is not None:
            self.d.execute_script("arguments[0].scrollIntoView({block: 'start'})", frame)
            time.sleep(0.5)
        self.d.save_screenshot(str(path))
        return path


def _caption_of(caption: str, values) -> bool:
    """A drawn caption (cut to the circle, maybe ending in an ellipsis) that starts one of ``values``."""
    text = caption.replace("…", "").strip()
    return bool(text) and any(_norm(str(v)).startswith(text) for v in values)


def _start_browser(env) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "lit3r.cli", "browser", "--port", "0"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = [proc.stdout.readline() for _ in range(2)]
    assert lines[0].startswith("Open Neo4j Browser 5.24.0, connected to " + env["LIT3R_NEO4J__URI"]), \
        (lines, proc.stderr.read() if proc.poll() is not None else "")
    url = lines[1].strip()
    assert re.fullmatch(r"http://localhost:\d+/browser/\?connectURL=\S+&cmd=play&arg=\S+guide\.html", url), url
    return proc, url


def _connect(session: Session, url: str) -> None:
    from selenium.webdriver.support.ui import Select

    d = session.d
    d.get(url)
    method = _wait("the connect form", lambda: d.find_element("css selector", "[data-testid=authenticationMethod]"))
    address = d.find_element("css selector", "[data-testid=boltaddress]").get_attribute("value")
    assert address == url.split("connectURL=bolt%3A%2F%2F", 1)[1].split("&", 1)[0].replace("%3A", ":")
    Select(method).select_by_value("NO_AUTH")  # the test server runs without auth
    # a click in JavaScript: a banner drawn over the form (the Browser's telemetry notice) intercepted a
    # pointer click once in CI ("element click intercepted")
    d.execute_script("arguments[0].click();", d.find_element("css selector", "[data-testid=connect]"))
    _wait("the connection", lambda: not d.find_elements("css selector", "[data-testid=disconnectedBanner]"))
    _wait("the guide", lambda: d.find_elements("css selector", "[data-testid=carousel]"))


def _next_slide(session: Session) -> None:
    session.d.find_element("css selector", "[data-testid=nextSlide]").click()
    time.sleep(1)


def test_the_real_browser_connects_styles_plays_the_guide_and_draws_the_trace(neo_with_trace, chrome, tmp_path):
    from graph.cypher import statement
    from graph.neo4j_store import Neo4jGraphStore, connect
    from lit3r.cli.browser import guide_queries

    neo, env = neo_with_trace
    store = Neo4jGraphStore(connect(neo.uri))
    try:
        papers = store.run_read("MATCH (p:Paper) RETURN p.paper_id AS id", {})
        questions = store.run_read("MATCH (q:Question) RETURN q.query_id AS id", {})
    finally:
        store.close()
    paper_ids = {r["id"] for r in papers}
    assert paper_ids == set(PAPERS) and questions
    shots = Path(os.environ.get("BROWSER_SHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    proc, url = _start_browser(env)
    began = time.monotonic()
    try:
        s = Session(chrome, shots)
        _connect(s, url)
        with urllib.request.urlopen(url.split("/browser/", 1)[0] + "/guide.html", timeout=30) as r:
            page = r.read().decode()  # the guide as served: its style address is this server's
        slides = [guide_queries(part) for part in page.split("<slide")[1:]]
        assert len(slides) == 5 and all(slides), slides
        for setup in slides[0][:3]:  # :params, :param limit, :param coupled
            s.run_guide_query(setup)
        style = s.run_guide_query(next(q for q in slides[0] if q.startswith(":style ")))
        assert "node.Question" in style.text or "Question" in style.text
        # slide 1: the corpus counts, a table
        corpus = s.run_guide_query(statement("guide_corpus"), table=True)
        assert re.search(rf"\b{len(PAPERS)}\b", corpus.text), corpus.text[:400]
        s.shot("browser_guide.png", chrome.find_element("css selector", "[data-testid=carousel]"))
        # slide 2: the citation graph among the papers, Paper nodes in the style's blue, captioned by paper_id
        _next_slide(s)
        cites = s.run_guide_query(statement("guide_citation_graph"), graph=True)
        nodes, rels = s.drawn(cites)
        assert nodes and {f for f, _ in nodes} == {FILL["Paper"]}, nodes
        assert (REL["CITES"], "") in rels, rels  # the Browser also draws the SIMILAR_TO edges among them
        assert all(_caption_of(c, paper_ids) for _, c in nodes), nodes
        s.shot("browser_citations.png", cites)
        # slide 3: bibliographic coupling of the most cited paper
        _next_slide(s)
        coupling = s.run_guide_query(slides[2][0], graph=True)
        nodes, _ = s.drawn(coupling)
        assert FILL["Paper"] in {f for f, _ in nodes}, nodes
        # slide 4: the stored trace drawn as a graph: Question -> Round -> Subquery -> Chunk <- Answer
        _next_slide(s)
        trace = s.run_guide_query(statement("trace_evidence_graph"), graph=True)
        nodes, rels = s.drawn(trace)
        fills = {f for f, _ in nodes}
        assert {FILL["Question"], FILL["Round"], FILL["Subquery"], FILL["Answer"]} <= fills, nodes
        assert fills & CHUNK_FILLS, nodes
        assert {(REL["default"], t) for t in ("HAS_ROUND", "HAS_SUBQUERY", "HAS_ANSWER")} <= rels, rels
        assert any(f == REL["POOLED"] and re.fullmatch(r"#\d+", c) for f, c in rels), rels
        assert any(f == REL["SUPPORTED_BY"] and re.fullmatch(r"evidence #\d+", c) for f, c in rels), rels
        assert any(f == FILL["Question"] and _caption_of(c, [r["id"] for r in questions]) for f, c in nodes), nodes
        s.shot("browser_trace.png", trace)
        # slide 5: why a paper was a candidate (a table or a graph)
        _next_slide(s)
        why = s.run_guide_query(slides[4][1], table=True)
        assert any(pid in why.text for pid in paper_ids), why.text[:500]
    except BaseException:
        chrome.save_screenshot(str(shots / "failure.png"))  # what the Browser showed when it failed
        raise
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    print(f"Browser session: {time.monotonic() - began:.1f} s")
    for name in ("browser_guide.png", "browser_citations.png", "browser_trace.png"):
        png = shots / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and 10_000 < png.stat().st_size < SHOT_LIMIT, \
            (name, png.stat().st_size)
