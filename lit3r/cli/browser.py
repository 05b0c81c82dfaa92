"""``lit3r browser``: serve Lit3R's Neo4j Browser guide and graph style on 127.0.0.1.

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
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources

import click

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


def make_server(host: str = "127.0.0.1", port: int = PORT) -> ThreadingHTTPServer:
    """An HTTP server (not yet serving) for ``/guide.html`` and ``/lit3r.grass``; ``port`` 0
    picks a free one (``server.server_address``). Raises OSError when the port is taken."""
    files: dict[str, tuple[str, bytes]] = {}

    class Handler(BaseHTTPRequestHandler):
        def _send(self, body: bool) -> None:
            path = self.path.split("?", 1)[0].lstrip("/") or GUIDE
            if path not in files:
                self.send_response(404)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()
                if body:
                    self.wfile.write(f"not found: /{path} (this server has /{GUIDE} and /{STYLE})\n".encode())
                return
            ctype, data = files[path]
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
    base = f"http://{host}:{server.server_address[1]}"
    files[GUIDE] = ("text/html; charset=utf-8", render_guide(f"{base}/{STYLE}").encode())
    files[STYLE] = ("text/plain; charset=utf-8", asset(STYLE).encode())
    server.base_url = base  # type: ignore[attr-defined]
    return server


def commands(base: str) -> list[str]:
    """The Neo4j Browser commands that load the style and play the guide served at ``base``."""
    return [f":style {base}/{STYLE}", f":play {base}/{GUIDE}"]


@click.command()
@click.option("--port", type=click.IntRange(0, 65535), default=PORT, show_default=True,
              help="Port on 127.0.0.1 (0: a free one).")
def browser(port: int) -> None:
    """Serve Lit3R's Neo4j Browser guide and graph style on 127.0.0.1 until Ctrl-C, and print the
    :style and :play commands to run in Neo4j Browser."""
    try:
        server = make_server("127.0.0.1", port)
    except OSError as exc:
        raise click.ClickException(f"port {port} on 127.0.0.1 cannot be used ({exc.strerror or exc}): pass --port N "
                                   f"(and use that port in the :style / :play commands)") from None
    base = server.base_url  # type: ignore[attr-defined]
    style, play = commands(base)
    click.echo(f"Serving the Lit3R guide and style on {base} (Ctrl-C stops).\n"
               f"In Neo4j Browser (http://localhost:7474) run:\n  {style}\n  {play}\n"
               f"The Neo4j server must allow this host: browser.remote_content_hostname_allowlist=127.0.0.1 "
               f"(docker-compose.yml sets it, and runs both commands on connect when the port is {PORT}).")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
