"""``lit3r browser``: serve Neo4j Browser with Lit3R's guide and graph style on 127.0.0.1.

The Browser application (Maven Central's ``org.neo4j.client:neo4j-browser``, :mod:`lit3r.present.browser_app`)
is served at ``/browser/`` and connects over Bolt to the configured Neo4j (``neo4j.uri``); ``/``
answers Neo4j's discovery document (``bolt_direct``) so the Browser finds that server. The command
prints one URL that opens the Browser, connects and plays the guide (``?connectURL=...&cmd=play``).
With ``--no-app`` (or when the jar cannot be had) only the guide and style are served, for the
Browser of ``docker compose`` at :7474. The served base is ``http://localhost:PORT``: Neo4j's
default ``browser.remote_content_hostname_allowlist`` holds ``localhost``.

The guide (``cypher/browser/guide.html``, Neo4j Browser's HTML guide format) is a template
whose ``{{NAME}}`` marks (lower case) are replaced by the named statements ``cypher/<name>.cypher``
(HTML-escaped), so the guide's queries are exactly those ``lit3r cypher NAME`` runs;
``{{style_url}}`` becomes the served style's address. The style is ``cypher/browser/lit3r.grass``
(GraSS). Neo4j Browser fetches both cross-origin, so every answer carries
``Access-Control-Allow-Origin: *``; the Neo4j server must allow the host
(``browser.remote_content_hostname_allowlist``, set in docker-compose.yml).
"""

from __future__ import annotations

import html
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Optional
from urllib.parse import quote

import click

from lit3r.backends.cypher_run import runs_cypher
from lit3r.present.browser_app import BrowserApp
from lit3r.present.server_errors import start_hint

#: Default port (docker-compose.yml's post-connect commands use it).
PORT = 7480
GUIDE, STYLE = "guide.html", "lit3r.grass"
_MARK = re.compile(r"\{\{([a-z_]+)\}\}")


def asset(name: str) -> str:
    """The text of ``cypher/browser/<name>``."""
    return (resources.files("cypher") / "browser" / name).read_text(encoding="utf-8")


def render_guide(style_url: str) -> str:
    """The guide page: its ``{{statement}}`` marks filled with the named statements (escaped),
    ``{{style_url}}`` with ``style_url``. Raises UnknownIdError for a mark naming no statement."""
    from graph.cypher import statement

    def fill(m: re.Match) -> str:
        return html.escape(style_url if m.group(1) == "style_url" else statement(m.group(1)), quote=False)

    return _MARK.sub(fill, asset(GUIDE))


def guide_queries(page: str) -> list[str]:
    """The runnable blocks of a rendered guide page (``<pre class="... runnable">``), unescaped,
    in page order: Cypher statements and Browser commands (``:params``, ``:style``)."""
    return [html.unescape(m) for m in re.findall(r'<pre class="[^"]*\brunnable\b[^"]*">(.*?)</pre>', page, re.S)]


def discovery(bolt: str) -> bytes:
    """Neo4j's discovery document (what a Neo4j server answers at ``/`` for JSON), naming ``bolt``."""
    return json.dumps({"bolt_direct": bolt, "bolt_routing": re.sub(r"^bolt", "neo4j", bolt),
                       "neo4j_version": "5", "neo4j_edition": "community"}).encode()


def _find(files: dict[str, tuple[str, bytes]], app: Optional[BrowserApp], bolt: Optional[str], path: str,
          accept: str) -> Optional[tuple[str, bytes]]:
    """What a GET of ``path`` (no query, no leading slash) answers, or None (404)."""
    if app is not None and (path == "browser" or path.startswith("browser/")):
        return app.get(path[len("browser"):])
    if path == "" and app is not None and bolt and "json" in accept:
        return "application/json", discovery(bolt)
    return files.get(path or GUIDE)


def make_server(host: str = "127.0.0.1", port: int = PORT, app: Optional[BrowserApp] = None,
                bolt: Optional[str] = None) -> ThreadingHTTPServer:
    """An HTTP server (not yet serving) for ``/guide.html`` and ``/lit3r.grass`` and, given ``app``,
    the Browser at ``/browser/`` with ``/`` answering the discovery document for ``bolt``; ``port`` 0
    picks a free one (``server.server_address``); ``server.base_url`` is ``http://localhost:PORT``.
    Raises OSError when the port is taken."""
    files: dict[str, tuple[str, bytes]] = {}

    class Handler(BaseHTTPRequestHandler):
        def _send(self, body: bool) -> None:
            path = self.path.split("?", 1)[0].lstrip("/")
            if path == "" and app is not None and "json" not in self.headers.get("Accept", ""):
                self.send_response(302)
                self.send_header("Location", "/browser/")
                self.end_headers()
                return
            found = _find(files, app, bolt, path, self.headers.get("Accept", ""))
            if found is None:
                self.send_response(404)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()
                if body:
                    self.wfile.write(f"not found: /{path} (this server has /{GUIDE} and /{STYLE})\n".encode())
                return
            ctype, data = found
            self.send_response(200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            if body:
                self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self._send(True)

        def do_HEAD(self) -> None:  # noqa: N802
            self._send(False)

        def do_OPTIONS(self) -> None:  # noqa: N802 (a CORS preflight)
            self.send_response(204)
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
            self.send_header("Access-Control-Allow-Headers", "*")
            self.end_headers()

        def log_message(self, format: str, *args) -> None:  # noqa: A002 (quiet: the commands are printed once)
            return

    server = ThreadingHTTPServer((host, port), Handler)
    base = f"http://localhost:{server.server_address[1]}"
    files[GUIDE] = ("text/html; charset=utf-8", render_guide(f"{base}/{STYLE}").encode())
    files[STYLE] = ("text/plain; charset=utf-8", asset(STYLE).encode())
    server.base_url = base  # type: ignore[attr-defined]
    return server


def commands(base: str) -> list[str]:
    """The Neo4j Browser commands that load the style and play the guide served at ``base``."""
    return [f":style {base}/{STYLE}", f":play {base}/{GUIDE}"]


def open_url(base: str, bolt: str) -> str:
    """The one address to open: the Browser at ``base``, connecting to ``bolt`` and playing the guide."""
    return f"{base}/browser/?connectURL={quote(bolt, safe='')}&cmd=play&arg={quote(f'{base}/{GUIDE}', safe='')}"


def answers(bolt: str, timeout: float = 1.0) -> bool:
    """Whether a TCP connection to the host and port of the Bolt URI ``bolt`` opens within ``timeout``
    seconds (default port 7687); a URI without a host counts as answering (nothing to check)."""
    import socket
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(bolt)
        host, port = parts.hostname, parts.port or 7687
    except ValueError:
        return True
    if not host:
        return True
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _app(enabled: bool) -> tuple[Optional[BrowserApp], str]:
    """The Browser app (fetched when missing) and, when it cannot be had, the reason (one line)."""
    from lit3r.present.browser_app import BrowserAppMissing, fetch_jar

    if not enabled:
        return None, ""
    try:
        return BrowserApp(fetch_jar(say=lambda line: click.echo(line, err=True))), ""
    except BrowserAppMissing as exc:
        return None, str(exc)


def _announce(base: str, bolt: str, app: Optional[BrowserApp], why: str) -> None:
    style, play = commands(base)
    if app is not None:
        from lit3r.present.browser_app import VERSION

        click.echo(f"Open Neo4j Browser {VERSION}, connected to {bolt}, with Lit3R's guide:\n  {open_url(base, bolt)}\n"
                   f"(served with the guide and the style on {base}; Ctrl-C stops. The guide's first slide loads the "
                   f"style: {style}; a server with auth asks for its user and password.)")
        return
    click.echo(f"Serving the Lit3R guide and style on {base} (Ctrl-C stops).\n"
               f"In Neo4j Browser (http://localhost:7474) run:\n  {style}\n  {play}\n"
               f"The Neo4j server must allow this host: browser.remote_content_hostname_allowlist=localhost "
               f"(docker-compose.yml sets it, and runs both commands on connect when the port is {PORT}).")
    if why:
        click.echo(f"Neo4j Browser itself is not served: {why}", err=True)


@click.command()
@click.option("--port", type=click.IntRange(0, 65535), default=PORT, show_default=True,
              help="Port on 127.0.0.1 (0: a free one).")
@click.option("--app/--no-app", default=True, show_default=True,
              help="Serve Neo4j Browser itself (Maven Central's neo4j-browser jar, fetched with mvn once); "
                   "--no-app: only the guide and style, for the Browser of docker compose at :7474.")
@click.option("--bolt", default=None, metavar="URI",
              help="The Neo4j the Browser connects to (default: neo4j.uri of the settings).")
@click.pass_context
def browser(ctx: click.Context, port: int, app: bool, bolt: Optional[str]) -> None:
    """Serve Neo4j Browser with Lit3R's guide and graph style on 127.0.0.1 until Ctrl-C, and print the
    one URL to open (it connects to Neo4j and plays the guide)."""
    from lit3r.cli.common import settings_of

    settings = settings_of(ctx)
    if bolt is None and not runs_cypher(settings):
        click.echo(f"warning: this data folder uses the {settings.backend} backend, which has no Neo4j: the Browser "
                   f"shows what a Neo4j holds once `lit3r ingest` loaded it with backend = \"neo4j+opensearch\" "
                   f"(docs/BROWSER.md); --bolt URI names another server", err=True)
    bolt = bolt or settings.neo4j.uri
    if not answers(bolt):
        click.echo(f"warning: nothing answers at {bolt}: {start_hint('neo4j')}, or pass --bolt URI", err=True)
    served, why = _app(app)
    try:
        server = make_server("127.0.0.1", port, app=served, bolt=bolt)
    except OSError as exc:
        raise click.ClickException(f"port {port} on 127.0.0.1 cannot be used ({exc.strerror or exc}): pass --port N "
                                   f"(and use that port in the :style / :play commands)") from None
    _announce(server.base_url, bolt, served, why)  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
        if served is not None:
            served.close()
