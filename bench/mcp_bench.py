"""`lit3r mcp` against a cold `lit3r ask` on the same question, in one run (issue 29).

A cold `lit3r ask QUESTION --json` (a new process: imports, stores, models, the question) is timed
from the outside; then a `lit3r mcp` server is started and driven by the MCP SDK's stdio client:
the handshake, a first ``ask`` (it waits for the warm-up that loads the stores and models) and a
second ``ask`` of the same question (everything kept open; its query vector is cached), and an
``ask`` of another question (``--other``: nothing of it cached), each timed by the client. The
answer lines of the same question must be the same (query ids aside). Both store their traces, so the home is copied first
(``--work``; the home itself is never written).

    .venv/bin/python bench/mcp_bench.py --home /work/homes/H60 --work /tmp/mcp-bench \\
        --question "..."    # prints one JSON report
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
QUESTION = ("Which paper introduced the Transformer, and what BLEU score did the big model reach on WMT 2014 "
            "English-to-German?")
OTHER = "Which papers replace softmax attention with a kernel feature map, and what do they gain?"


def cold(home: Path, question: str) -> dict:
    """A cold `lit3r ask --json`: wall seconds of the process and its own stage timings."""
    t = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), "ask", question, "--json"],
                         cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if res.returncode != 0:
        raise SystemExit(f"lit3r ask failed: {res.stderr[-2000:]}")
    out = json.loads(res.stdout)
    return {"wall_s": round(wall, 2), "timings": out["timings"], "submission": out["submission"]}


async def served(home: Path, question: str, other: str) -> dict:
    """Handshake, first and second ``ask`` through one `lit3r mcp` server (client wall seconds)."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "lit3r.cli", "--home", str(home), "mcp"],
                                   cwd=str(ROOT), env=dict(os.environ))
    out: dict = {}
    t = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=1800) as s:
            await s.initialize()
            out["initialize_s"] = round(time.perf_counter() - t, 2)
            for key, text in (("first_ask", question), ("second_ask", question), ("other_question_ask", other)):
                t = time.perf_counter()
                res = await s.call_tool("ask", {"question": text})
                wall = time.perf_counter() - t
                if res.is_error:
                    raise SystemExit(f"ask failed: {res.content[0].text}")
                data = res.structured_content
                out[key] = {"wall_s": round(wall, 2), "timings": data["timings"], "answer": data["answer"]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True, help="A built data folder (copied, never written).")
    ap.add_argument("--work", type=Path, required=True, help="Scratch folder for the copy.")
    ap.add_argument("--question", default=QUESTION)
    ap.add_argument("--other", default=OTHER, help="A second question, asked last through the same server.")
    args = ap.parse_args()
    home = args.work / "home"
    if home.exists():
        shutil.rmtree(home)
    shutil.copytree(args.home, home, symlinks=True)
    report = {"home": str(args.home), "question": args.question, "cold_cli": cold(home, args.question)}
    report["mcp"] = anyio.run(served, home, args.question, args.other)
    lines = [report["cold_cli"]["submission"], report["mcp"]["first_ask"]["answer"], report["mcp"]["second_ask"]["answer"]]
    report["same_answer"] = all({**line, "query_id": ""} == {**lines[0], "query_id": ""} for line in lines)
    report["speedup_second_ask_vs_cold"] = round(report["cold_cli"]["wall_s"] / report["mcp"]["second_ask"]["wall_s"], 1)
    report["load_average"] = [round(x, 2) for x in os.getloadavg()]
    for part in (report["cold_cli"], *(report["mcp"][k] for k in ("first_ask", "second_ask", "other_question_ask"))):
        part.pop("submission", None)
        part.pop("answer", None)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
