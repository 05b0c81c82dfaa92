"""`lit3r browser`'s server: Neo4j Browser from Maven Central's jar at /browser/, the discovery
document at /, the guide and style beside them; a missing jar is one line and the guide still served."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from lit3r.cli.browser import make_server, open_url
from lit3r.present.browser_app import BrowserApp, BrowserAppMissing, fetch_jar


@pytest.fixture(scope="module")
def app():
    """The real Browser jar (fetched with mvn into ~/.m2 the first time)."""
    served = BrowserApp(fetch_jar(say=print))
    yield served
    served.close()


def _get(url: str, accept: str = "*/*"):
    req = urllib.request.Request(url, headers={"Accept": accept})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read()


def test_the_browser_the_discovery_document_the_guide_and_the_style_come_from_one_server(app):
    server = make_server("127.0.0.1", 0, app=app, bolt="bolt://127.0.0.1:7999")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = server.base_url
    try:
        assert base.startswith("http://localhost:")  # Neo4j's default remote-content allowlist holds localhost
        status, ctype, page = _get(f"{base}/browser/")
        assert status == 200 and ctype.startswith("text/html") and b"<script" in page
        script = next(part.split('"', 1)[0] for part in page.decode().split('src="')[1:] if ".js" in part)
        status, ctype, body = _get(f"{base}/browser/{script.lstrip('./')}")
        assert status == 200 and "javascript" in ctype and len(body) > 1000
        _, ctype, body = _get(f"{base}/", accept="application/json")
        assert json.loads(body)["bolt_direct"] == "bolt://127.0.0.1:7999"
        _, ctype, body = _get(f"{base}/guide.html")
        assert b'class="guide"' in body and f"{base}/lit3r.grass".encode() in body
        with pytest.raises(urllib.error.HTTPError) as err:
            _get(f"{base}/browser/no-such-file.js")
        assert err.value.code == 404
    finally:
        server.shutdown()
        server.server_close()
    url = open_url(base, "bolt://127.0.0.1:7999")
    assert url.startswith(f"{base}/browser/?connectURL=bolt%3A%2F%2F127.0.0.1%3A7999&cmd=play&arg=http%3A%2F%2F")


def test_a_jar_that_is_not_there_or_no_browser_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("NEO4J_BROWSER_JAR", str(tmp_path / "missing.jar"))
    with pytest.raises(BrowserAppMissing) as err:
        fetch_jar()
    assert "NEO4J_BROWSER_JAR" in str(err.value) and "\n" not in str(err.value)
    bad = tmp_path / "bad.jar"
    bad.write_text("not a jar")
    monkeypatch.setenv("NEO4J_BROWSER_JAR", str(bad))
    with pytest.raises(BrowserAppMissing, match="is no jar"):
        fetch_jar()


def test_lit3r_browser_without_the_app_serves_the_guide_and_says_why(tmp_path):
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    env = {**os.environ, "NEO4J_BROWSER_JAR": str(tmp_path / "missing.jar")}
    proc = subprocess.Popen([sys.executable, "-m", "lit3r.cli", "--home", str(tmp_path), "browser", "--port", "0"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out = [proc.stdout.readline() for _ in range(4)]
        assert out[0].startswith("Serving the Lit3R guide and style on http://localhost:"), out
        assert "http://localhost:7474" in out[1] and out[3].strip().startswith(":play http://localhost:")
        why = proc.stderr.readline()
        while why.startswith("warning: "):  # no Neo4j here (the embedded backend, none at the URI), then why
            why = proc.stderr.readline()
        assert why.startswith("Neo4j Browser itself is not served: NEO4J_BROWSER_JAR names"), why
        status, _, body = _get(out[3].strip().split(" ", 1)[1])
        assert status == 200 and b'class="guide"' in body
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_on_the_embedded_backend_or_with_neo4j_down_lit3r_browser_says_so_and_still_serves(tmp_path):
    """A new user ran `lit3r browser` on the folder `make demo` built: the URL pointed at a Bolt port
    where nothing listened, without a word. Now two warning lines name why and what to do."""
    import socket
    import subprocess
    import sys

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    env = {**__import__("os").environ, "LIT3R_NEO4J__URI": f"bolt://127.0.0.1:{closed}"}
    proc = subprocess.Popen([sys.executable, "-m", "lit3r.cli", "--home", str(tmp_path), "browser", "--port", "0",
                             "--no-app"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = proc.stdout.readline()  # the server is up once it says where it serves
        assert "Serving the Lit3R guide" in first, first
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "embedded backend, which has no Neo4j" in err and "docs/BROWSER.md" in err, err
    assert f"nothing answers at bolt://127.0.0.1:{closed}" in err and "python -m tests.servers" in err, err
    assert "Traceback" not in err
