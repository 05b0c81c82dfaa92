"""CPU seconds of each process during a load into the servers (bench/scale_bench.py, bench/backends_bench.py).

:func:`measured` wraps :func:`lit3r.index.load.sync_servers`: the returned dict gains ``"cpu"``:
``{"python_s", "neo4j_s", "opensearch_s", "wall_s", "loadavg_1m_before", "loadavg_1m_after",
"python_s_per_1k_docs", "neo4j_nodes_per_cpu_s", "opensearch_docs_per_cpu_s"}``: user + system CPU
seconds (psutil) of this Python process (all its threads) and of the two server JVMs, over the
whole load, and the machine's 1-minute load average before and after. A machine shared with other
jobs lowers the rates per wall second; the rates per CPU second of a process say what it costs.
"""

from __future__ import annotations

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
