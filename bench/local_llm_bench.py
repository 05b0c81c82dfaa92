"""The local LLM (llama.cpp in process, the packaged SmolLM2-135M) under threads, OpenMP wait
policy and a busy machine (issue 13, item 8).

Each configuration runs in a fresh process (OpenMP reads ``OMP_WAIT_POLICY`` once, when its
runtime loads) and makes ``--calls`` stage-1 calls: the real ``read_paper`` prompt over
``--chunks`` chunks of one paper of ``--home`` (``--chars`` characters each; the defaults are
the small LLM profile's, lit3r/profiles/small.toml), the ``PaperReading`` JSON schema,
``--max-tokens`` completion tokens at most. ``--busy N`` starts N busy-loop processes first
(another job on the same cores) and stops them after. Printed per configuration: the seconds
per call, llama.cpp's prompt and decoding speed (tokens/s; sampling with the JSON grammar is
outside those), and the tokens.

    .venv/bin/python bench/local_llm_bench.py --home DIR [--threads 0,1,2] [--wait unset,PASSIVE] [--busy 0,1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def prompt(home: Path, paper_id: str, chunks_per_paper: int = 6, chars: int = 1200) -> str:
    """The stage-1 prompt of ``paper_id`` over its first ``chunks_per_paper`` chunks of ``home``."""
    from lit3r.prompts import render

    chunks = []
    with (home / "chunks.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            c = json.loads(line)
            if c["paper_id"] == paper_id:
                chunks.append(c)
                if len(chunks) == chunks_per_paper:
                    break
    title = next(json.loads(line)["title"] for line in (home / "papers.jsonl").open(encoding="utf-8")
                 if json.loads(line)["paper_id"] == paper_id)
    passages = "\n\n".join(f"[P{i + 1}] ({c['kind']}, page {c['page']}) {c['text'][:chars]}" for i, c in enumerate(chunks))
    return render("read_paper", question="Which reinforcement-learning stage is used for math word problems, and "
                  "what GSM8K accuracy is reported?", paper_id=paper_id, title=title, venue="", passages=passages)


def child(args: argparse.Namespace) -> None:
    """One configuration, in this process: load, warm up, time ``args.calls`` calls; JSON on stdout."""
    import llama_cpp

    from lit3r.llm.providers import LlamaCppChat
    from lit3r.read.llm import PaperReading

    t = time.perf_counter()
    threads = int(args.threads)
    chat = LlamaCppChat(threads=threads or 1, threads_batch=threads or os.cpu_count(), n_ctx=args.n_ctx)
    load = time.perf_counter() - t
    text = prompt(args.home, args.paper, args.chunks, args.chars)
    schema = PaperReading.model_json_schema()
    msgs = [{"role": "user", "content": text}]
    chat.chat([{"role": "user", "content": "Say {}"}], None, 4, 0.0)  # warm-up
    walls, p_tps, d_tps, toks = [], [], [], []
    for i in range(args.calls):
        chat.llm.reset()  # no prompt reuse between calls: each call evaluates its prompt
        llama_cpp.llama_perf_context_reset(chat.llm._ctx.ctx)
        t = time.perf_counter()
        r = chat.chat(msgs + [{"role": "user", "content": f"(call {i})"}], schema, args.max_tokens, 0.0)
        walls.append(time.perf_counter() - t)
        perf = llama_cpp.llama_perf_context(chat.llm._ctx.ctx)
        p_tps.append(perf.n_p_eval / max(perf.t_p_eval_ms, 1e-6) * 1000)
        d_tps.append(perf.n_eval / max(perf.t_eval_ms, 1e-6) * 1000)
        toks.append((r.prompt_tokens, r.completion_tokens))
    print(json.dumps({"load_s": load, "wall_s": walls, "prompt_tps": p_tps, "decode_tps": d_tps, "tokens": toks,
                      "n_threads": chat.llm.n_threads, "n_threads_batch": chat.llm.n_threads_batch,
                      "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")}))


def run_config(args: argparse.Namespace, threads: int, wait: str, busy: int) -> dict:
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if wait != "lit3r":  # lit3r: what Lit3R sets when the variable is not set; unset: libgomp's own default
        env["OMP_WAIT_POLICY"] = "" if wait == "unset" else wait  # Lit3R leaves a set value (even empty) alone
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    try:
        out = subprocess.run([sys.executable, __file__, "--child", "--home", str(args.home), "--paper", args.paper,
                              "--threads", str(threads), "--calls", str(args.calls), "--max-tokens",
                              str(args.max_tokens), "--n-ctx", str(args.n_ctx), "--chunks", str(args.chunks),
                              "--chars", str(args.chars)],
                             env=env, capture_output=True, text=True, check=True)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True, help="a built corpus folder (its chunks.jsonl is read)")
    ap.add_argument("--paper", default="2312.08935", help="the paper whose chunks make the prompt")
    ap.add_argument("--threads", default="0,1,2",
                    help="comma-separated llama.cpp thread counts (0: llama-cpp-python's default, 1 decoding + all CPUs "
                         "for prompts; otherwise both)")
    ap.add_argument("--wait", default="unset,PASSIVE",
                    help="comma-separated OMP_WAIT_POLICY values: unset (libgomp's default), ACTIVE, PASSIVE, or lit3r "
                         "(what Lit3R chooses)")
    ap.add_argument("--busy", default="0,1", help="comma-separated numbers of busy-loop processes beside it")
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--chunks", type=int, default=3, help="chunks in the prompt (read.chunks_per_paper)")
    ap.add_argument("--chars", type=int, default=600, help="characters per chunk (read.chunk_chars)")
    ap.add_argument("--max-tokens", type=int, default=160)
    ap.add_argument("--n-ctx", type=int, default=8192)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f} before; {args.calls} calls per row")
    print(f"{'busy':>4} {'threads':>7} {'OMP_WAIT_POLICY':>15} {'s/call':>7} {'prompt tok/s':>12} "
          f"{'decode tok/s':>12} {'tokens':>10}")
    for busy in map(int, args.busy.split(",")):
        for wait in args.wait.split(","):
            for threads in map(int, args.threads.split(",")):
                r = run_config(args, threads, wait, busy)
                p, c = r["tokens"][-1]
                print(f"{busy:>4} {threads:>7} {wait:>15} {statistics.median(r['wall_s']):7.2f} "
                      f"{statistics.median(r['prompt_tps']):12.0f} {statistics.median(r['decode_tps']):12.1f} "
                      f"{p:>5}+{c:<4}", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
