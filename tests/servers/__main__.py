"""``python -m tests.servers [WORKDIR]``: the no-Docker Neo4j and OpenSearch, in the foreground.

Builds both test servers once (Maven, ``java`` 17+), starts them on free ports on 127.0.0.1 with
their data under WORKDIR (default: a new temporary folder), prints the ``export`` line that points
Lit3R at them and the ``lit3r browser`` command, and runs until Ctrl-C; stopping deletes their
data (Neo4j's harness folder, ``WORKDIR/opensearch/opensearch-data``) and a temporary WORKDIR.
"""

from __future__ import annotations

import signal
import sys
import tempfile
import time
from pathlib import Path

from tests.servers import neo4j_server, opensearch_server


def main(argv: list[str]) -> int:
    # Ctrl-C (SIGINT) stops both even when this was started as a background job of a shell without
    # job control, which starts it with SIGINT ignored (and Python then raises no KeyboardInterrupt)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    temp = None if argv else tempfile.TemporaryDirectory(prefix="lit3r-servers-")
    work = Path(argv[0]) if argv else Path(temp.name)  # type: ignore[union-attr]
    try:
        neo4j_server.build()
        opensearch_server.build()
        # the full JIT (and Lucene's vector API on a JDK 20+): this Neo4j and OpenSearch take real loads
        with neo4j_server.start(work / "neo4j", full_jit=True) as neo, \
                opensearch_server.start(work / "opensearch", full_jit=True) as osr:
            print(f"export LIT3R_BACKEND=neo4j+opensearch LIT3R_NEO4J__URI={neo.uri} LIT3R_NEO4J__USER= "
                  f"LIT3R_OPENSEARCH__URL={osr.url}\n"
                  f"then `lit3r ingest PDF_DIR`; `lit3r browser` serves Neo4j Browser on this Neo4j. "
                  f"Ctrl-C stops both and deletes their data.", flush=True)
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        return 0
    except RuntimeError as exc:  # a build or start failure: Maven's or the server's own lines follow
        print(f"the test servers could not start: {exc}", file=sys.stderr)
        return 1
    finally:
        if temp is not None:
            temp.cleanup()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
