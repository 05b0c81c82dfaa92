"""CPU seconds of each process during a load into the servers (bench/scale_bench.py, bench/backends_bench.py).

:func:`measured` wraps :func:`lit3r.index.load.sync_servers`: the returned dict gains ``"cpu"``:
``{"python_s", "neo4j_s", "opensearch_s", "wall_s", "loadavg_1m_before", "loadavg_1m_after",
"python_s_per_1k_docs", "neo4j_nodes_per_cpu_s", "opensearch_docs_per_cpu_s"}``: user + system CPU
seconds (psutil) of this Python process (all its threads) and of the two server JVMs, over the
whole load, and the machine's 1-minute load average before and after. A machine shared with other
jobs lowers the rates per wall second; the rates per CPU second of a process say what it costs.
"""

from __future__ import annotations

import argparse
import functools
import os
import time
from typing import Callable

#: The environment variable that names the server JVMs: ``"neo4j=PID,opensearch=PID"``.
PIDS_VAR = "BENCH_SERVER_PIDS"


def pids_value(neo4j_pid: int, opensearch_pid: int) -> str:
    """The value of :data:`PIDS_VAR` for the two JVMs."""
    return f"neo4j={neo4j_pid},opensearch={opensearch_pid}"


def _cpu(pid: int) -> float:
    import psutil

    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


def measured(sync: Callable, pids: str) -> Callable:
    """``sync`` (``sync_servers``) with the CPU accounting of the module docstring added to its
    result; ``pids`` as :func:`pids_value` gives (empty: the JVMs are not counted)."""
    named = {k: int(v) for k, v in (part.split("=") for part in pids.split(",") if part)}

    @functools.wraps(sync)
    def run(*args, **kwargs) -> dict:
        before = {k: _cpu(pid) for k, pid in named.items()}
        me, t, la = _cpu(os.getpid()), time.perf_counter(), os.getloadavg()[0]
        res = sync(*args, **kwargs)
        cpu = {f"{k}_s": _cpu(pid) - before[k] for k, pid in named.items()}
        cpu.update(python_s=_cpu(os.getpid()) - me, wall_s=time.perf_counter() - t,
                   loadavg_1m_before=la, loadavg_1m_after=os.getloadavg()[0])
        docs, nodes = res["opensearch"]["docs"], res["neo4j"]["nodes"]
        cpu["python_s_per_1k_docs"] = 1000 * cpu["python_s"] / docs if docs else None
        if cpu.get("neo4j_s"):
            cpu["neo4j_nodes_per_cpu_s"] = nodes / cpu["neo4j_s"]
        if cpu.get("opensearch_s"):
            cpu["opensearch_docs_per_cpu_s"] = docs / cpu["opensearch_s"]
        return {**res, "cpu": cpu}

    return run


def add_write_mode(ap: "argparse.ArgumentParser", needs: str) -> None:
    """``--serial`` / ``--parallel`` (mutually exclusive): how ``sync_servers`` writes each batch,
    Neo4j's and OpenSearch's writes one after the other or side by side; ``needs``: the flag they go
    with (``--servers``, ``--load-only``). :func:`write_mode` turns them into its options."""
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--serial", action="store_true", help=f"with {needs}: each batch's Neo4j and OpenSearch "
                      "writes one after the other (sync_servers(parallel=False))")
    mode.add_argument("--parallel", action="store_true", help=f"with {needs}: Neo4j's write beside OpenSearch's "
                      "(sync_servers(parallel=True)); neither flag: the loader's default (side by side)")


def write_mode(args: "argparse.Namespace") -> dict:
    """The ``sync_servers`` options of :func:`add_write_mode`'s flags: ``{"parallel": bool}``, or ``{}``."""
    return {"parallel": False} if args.serial else {"parallel": True} if args.parallel else {}
