"""The stores at the seed system's scale (issue 10): synthetic corpus, streamed build, cold open, asks.

Builds a synthetic corpus of ``--scale`` times the seed system's 27,487 papers (2,564,545
chunks: ~93 chunks and ~35 references per paper) from the real records of an ingested corpus
(default: the 60 papers, ingested on first use): each synthetic paper copies a real one under a
new id, keeps ~93 of its chunks, perturbs every text (words from a Zipf-distributed synthetic
vocabulary are mixed in, numbers change), and cites other synthetic papers of the same source
(bibliographic coupling and CITES edges among them) as well as shared external works. Then, each
in a fresh child process: the build (``build_stores``), a cold open of the stores, warm asks with
LLM ``none`` (questions_dev and validation questions), a 5-subquery Retrieve round on the stores,
and an incremental build after adding ``--add`` papers and pruning one.

    .venv/bin/python bench/scale_bench.py --scale 0.1 --fake-encoder [--keep HOME] [--json OUT]

``--fake-encoder``: the model-free ``hashing:384`` encoder (the real encoder would need 22-44 h
for 2.56M chunks on 2 cores), so the stores, not the model, are measured. Prints and writes one
JSON object: papers, chunks, build_s (and its encode share), build_peak_rss_gb, index_gb,
open_s, open_rss_gb (and its anonymous part; the rest is memory-mapped files in the page
cache), ask_p50_s, ask_p95_s, per-stage ask timings, round5_p50_s, incremental_s. ``--keep HOME``: leave the home (``lit3r --home HOME ask ...`` opens it).
``--servers``: start the test Neo4j and OpenSearch (tests/servers/, heaps ``NEO4J_TEST_HEAP`` /
``OPENSEARCH_HEAP``, default 3g each, Neo4j page cache ``NEO4J_TEST_PAGECACHE`` default 1g, the newest
JDK 17-25 with the full JIT: tests/servers/jvm.py) and run everything through them: the build loads the
servers (load rates are printed), and the asks read only the servers. ``--serial`` / ``--parallel``:
each batch's Neo4j and OpenSearch writes one after the other, or side by side (``sync_servers``'
``parallel``; neither: the loader's default, side by side); the servers are stopped when a step fails too.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.load_cpu import PIDS_VAR, add_write_mode, pids_value, write_mode  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
SEED_PAPERS, SEED_CHUNKS = 27_487, 2_564_545
CHUNKS_PER_PAPER = SEED_CHUNKS / SEED_PAPERS  # ~93.3
REFS_PER_PAPER = 35
_NUM = re.compile(r"\d+(?:\.\d+)?")


def _source(args) -> Path:
    src = args.source or (ROOT / "lit3r_data" / "pdfs")
    if not (src / "papers.jsonl").is_file():
        print(f"ingesting the 60 real papers into {src} (records only, no build)...", flush=True)
        subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(src), "ingest",
                        str(SHARED / "corpus" / "pdfs"), "--metadata", str(SHARED / "corpus" / "manifest.jsonl"),
                        "--no-images", "--no-build"], check=True, cwd=ROOT)
    return src


def _load_source(src: Path) -> list[dict]:
    papers: dict[str, dict] = {}
    for line in (src / "papers.jsonl").open(encoding="utf-8"):
        p = json.loads(line)
        papers[p["paper_id"]] = {"paper": p, "chunks": [], "refs": []}
    for name, key in (("chunks", "chunks"), ("references", "refs")):
        for line in (src / f"{name}.jsonl").open(encoding="utf-8"):
            r = json.loads(line)
            papers[r["paper_id"]][key].append(r)
    return [v for _, v in sorted(papers.items()) if v["chunks"]]


class Synth:
    """Synthetic records from real ones (see the module docstring). Deterministic per seed."""

    def __init__(self, sources: list[dict], n_papers: int, seed: int = 0) -> None:
        self.sources, self.n, self.seed = sources, n_papers, seed
        self.rng = random.Random(seed)
        # a Zipf-like vocabulary: rank r drawn with weight 1/r; ~n_papers*60 distinct words
        self.vocab_size = max(10_000, n_papers * 60)

    @staticmethod
    def pid(i: int) -> str:
        return f"syn{i:07d}"

    def word(self) -> str:
        r = int(self.vocab_size ** self.rng.random())  # log-uniform rank ~ Zipf(1)
        return f"zq{r:x}"

    def perturb(self, text: str) -> str:
        rng = self.rng
        text = _NUM.sub(lambda m: m.group(0) if rng.random() < 0.7 else f"{rng.uniform(0, 100):.1f}", text)
        words = text.split(" ")
        for _ in range(max(1, len(words) // 12)):
            words.insert(rng.randrange(len(words) + 1), self.word())
        return " ".join(words)[:2000]

    def paper(self, i: int) -> tuple[dict, list[dict], list[dict]]:
        """Synthetic paper ``i`` (the same on every call: its own random stream)."""
        rng = self.rng = random.Random(self.seed * 1_000_003 + i)
        src = self.sources[i % len(self.sources)]
        pid = self.pid(i)
        p = dict(src["paper"], paper_id=pid, title=f"{src['paper']['title']} {self.word()} {self.word()}")
        p["abstract"] = self.perturb(p.get("abstract") or "")
        cs = src["chunks"]
        want = max(1, round(rng.gauss(CHUNKS_PER_PAPER, 15)))
        keep = [cs[0]] + sorted(rng.sample(cs[1:], min(len(cs) - 1, want - 1)), key=lambda c: c["seq"])
        chunks = []
        for seq, c in enumerate(keep):
            chunks.append(dict(c, chunk_id=f"{pid}::c{seq:04d}", paper_id=pid, seq=seq, image=None,
                               text=self.perturb(c["text"]) or c["text"]))
        refs = []
        rs = src["refs"]
        n_src = len(self.sources)
        for num in range(1, REFS_PER_PAPER + 1):
            u = rng.random()
            if u < 0.25 and self.n > n_src:  # a synthetic paper of the same source, earlier or later
                j = (i % n_src) + n_src * rng.randrange(self.n // n_src or 1)
                if j != i and j < self.n:
                    refs.append({"paper_id": pid, "number": num, "page": None, "raw": f"synthetic citation of {self.pid(j)}",
                                 "title": None, "work_id": f"paper:{self.pid(j)}", "cited_paper_id": self.pid(j)})
                    continue
            if rs and u < 0.75:  # a real external work of the source paper (shared across its copies)
                r = rs[rng.randrange(len(rs))]
                refs.append(dict(r, paper_id=pid, number=num, cited_paper_id=None,
                                 work_id=r["work_id"] if not r.get("cited_paper_id") else f"title:{r['work_id']}"))
            else:  # a long-tail work
                w = self.word()
                refs.append({"paper_id": pid, "number": num, "page": None, "raw": f"{w} et al. 2024", "title": None,
                             "work_id": f"title:{w}", "cited_paper_id": None})
        # one entry per work keeps ids unique per paper
        seen, out = set(), []
        for r in refs:
            if r["work_id"] not in seen:
                seen.add(r["work_id"])
                out.append(dict(r, number=len(out) + 1))
        return p, chunks, out


def write_corpus(home: Path, synth: Synth, ids: range) -> tuple[int, int]:
    """Write the corpus files of the synthetic papers ``ids`` (in id order); (papers, chunks)."""
    home.mkdir(parents=True, exist_ok=True)
    n_chunks = 0
    with (home / "papers.jsonl").open("w", encoding="utf-8") as fp, \
            (home / "chunks.jsonl").open("w", encoding="utf-8") as fc, \
            (home / "references.jsonl").open("w", encoding="utf-8") as fr:
        for i in ids:
            p, cs, rs = synth.paper(i)
            fp.write(json.dumps(p, ensure_ascii=False) + "\n")
            for c in cs:
                fc.write(json.dumps(c, ensure_ascii=False) + "\n")
            for r in rs:
                fr.write(json.dumps(r, ensure_ascii=False) + "\n")
            n_chunks += len(cs)
    return len(ids), n_chunks


def _child(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON line last. Adds peak RSS (GiB)."""
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"child failed:\n{out.stderr[-3000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    return res


BUILD = r"""
import functools, json, os, resource, sys, time
from lit3r.config import load_settings
from lit3r.index.build import build_stores
import lit3r.index.load
from bench.load_cpu import measured
# the servers' load, with the CPU seconds of each process (this one, the Neo4j and OpenSearch JVMs);
# argv[2]: sync_servers' keyword arguments as JSON ({"parallel": false} for --serial)
sync = functools.partial(lit3r.index.load.sync_servers, **json.loads(sys.argv[2]))
lit3r.index.load.sync_servers = measured(sync, os.environ.get("BENCH_SERVER_PIDS", ""))
s = load_settings(home=sys.argv[1])
t = time.perf_counter()
r = build_stores(s, progress=False)
print(json.dumps({"s": time.perf_counter() - t, "seconds": r.seconds, "encoded": r.encoded_papers, "servers": r.servers,
                  "removed": r.removed_papers, "papers": r.papers, "chunks": r.chunks,
                  "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}))
"""

ASK = r"""
import json, resource, statistics, sys, time
def rss(kind="VmRSS"):
    for line in open("/proc/self/status"):
        if line.startswith(kind + ":"):
            return int(line.split()[1]) / 2**20
t0 = time.perf_counter()
from lit3r.config import load_settings
from lit3r.pipeline.engine import Engine
from lit3r.pipeline.pool import Pool
s = load_settings(home=sys.argv[1])
t = time.perf_counter()
engine = Engine(s)
open_s = time.perf_counter() - t
open_rss, open_anon = rss(), rss("RssAnon")
questions = json.loads(sys.argv[2])
engine.ask(questions[0])  # warm the page cache and the encoder
asks, stages, lanes = [], {}, {}
for q in questions:
    r = engine.ask(q)
    asks.append(r.timings["total"])
    for k, v in r.timings.items():
        stages.setdefault(k, []).append(v)
    for tr in r.subqueries:
        for k, v in tr.seconds.items():
            lanes.setdefault(k, []).append(v)
rounds = []
for i in range(0, len(questions) - 4, 5):
    t = time.perf_counter()
    engine.search.run(questions[i:i + 5], Pool(engine.search.paper_of))
    rounds.append(time.perf_counter() - t)
idx = engine.index
qv = engine.encoder.encode_queries(questions[:5])
t = time.perf_counter(); idx.chunk_dense(qv[0], 100); dense1 = time.perf_counter() - t
t = time.perf_counter(); idx.chunk_dense_many(qv, 100); dense5 = time.perf_counter() - t
t = time.perf_counter(); [idx.chunk_bm25(q, 100) for q in questions]; bm25 = (time.perf_counter() - t) / len(questions)
dense_recall = None
from lit3r.backends import backend_of
if backend_of(s).load_targets is not None:  # the servers' approximate k-NN against the exact scan of the local build
    from graph.search.embedded import EmbeddedSearchIndex
    exact = EmbeddedSearchIndex.open(s.index_dir)
    qv = engine.encoder.encode_queries(questions)
    rs = [len({c for c, _ in idx.chunk_dense(v, 100)} & {c for c, _ in exact.chunk_dense(v, 100)}) / 100 for v in qv]
    dense_recall = sum(rs) / len(rs)
q = sorted(asks)
print(json.dumps({"open_s": open_s, "dense_recall_at_100_vs_exact": dense_recall, "open_rss_gb": open_rss, "open_rss_anon_gb": open_anon,
                  "ask_p50_s": statistics.median(asks), "ask_p95_s": q[min(len(q) - 1, int(0.95 * len(q)))],
                  "ask_stages_p50_s": {k: statistics.median(v) for k, v in stages.items()},
                  "subquery_steps_p50_s": {k: statistics.median(v) for k, v in lanes.items()},
                  "round5_p50_s": statistics.median(rounds) if rounds else None,
                  "dense_scan_1q_s": dense1, "dense_scan_5q_s": dense5, "chunk_bm25_s": bm25,
                  "rss_after_asks_gb": rss(), "rss_anon_after_asks_gb": rss("RssAnon"),
                  "rss_file_after_asks_gb": rss("RssFile"), "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}))
"""


def _du(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**30


def _start_servers(work: Path):
    """The test servers (tests/servers/), with heaps sized for a large corpus unless set."""
    from tests.servers import jvm, neo4j_server, opensearch_server

    # production-like JVMs: bigger heaps and page cache, and the full JIT with Lucene's vector API
    # on a JDK 20+ (tests/servers/jvm.py; the test launchers stop at C1 to start faster, which
    # makes HNSW indexing and Cypher several times slower)
    os.environ.setdefault("NEO4J_TEST_HEAP", "3g")
    os.environ.setdefault("NEO4J_TEST_PAGECACHE", "1g")
    os.environ.setdefault("OPENSEARCH_HEAP", "3g")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    neo4j_server.build()
    opensearch_server.build()
    neo = neo4j_server.start(work / "neo4j", full_jit=True)
    osr = opensearch_server.start(work / "opensearch", timeout=300, full_jit=True)
    print(f"JDK: {jvm.choose().java}", flush=True)
    os.environ[PIDS_VAR] = pids_value(neo.process.pid, osr.proc.pid)  # the build child counts their CPU seconds
    print(f"servers: {neo.uri}, {osr.url}", flush=True)
    return neo, osr


def _measure(args, sources: list[dict], n: int, home: Path, config: str, servers) -> dict:
    """Generate the corpus in ``home``, build (and load the ``servers``), ask, add papers: the result object."""
    if servers:
        neo, osr = servers
        config = ('backend = "neo4j+opensearch"\n' + config +
                  f'[neo4j]\nuri = "{neo.uri}"\nuser = ""\n[opensearch]\nurl = "{osr.url}"\nindex_prefix = "scale"\n')
    if config:
        (home / "config.toml").write_text(config)
    synth = Synth(sources, n)  # citations among the first n papers
    t = time.perf_counter()
    papers, chunks = write_corpus(home, synth, range(n))
    gen_s = time.perf_counter() - t
    print(f"synthetic corpus: {papers:,} papers, {chunks:,} chunks in {home} ({gen_s:.0f} s)", flush=True)
    load_options = json.dumps(write_mode(args))
    build = _child(BUILD, str(home), load_options)
    print(f"build: {build['s']:.0f} s, peak RSS {build['peak_rss_gb']:.2f} GiB", flush=True)
    index_gb = _du(home / "index")
    qs = [json.loads(line)["question"] for name in ("corpus/questions_dev_inputs.jsonl", "littraceqa/validation_inputs.jsonl")
          for line in (SHARED / name).open()][: max(6, args.questions)]
    ask = _child(ASK, str(home), json.dumps(qs))
    print(f"open {ask['open_s']:.2f} s, ask p50 {ask['ask_p50_s']:.2f} s", flush=True)
    t = time.perf_counter()
    cold = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), "ask", "--json", qs[1]],
                          cwd=ROOT, capture_output=True, text=True)
    cold_s = time.perf_counter() - t
    if cold.returncode != 0:
        raise SystemExit(f"cold ask failed: {cold.stderr[-2000:]}")
    inc = None
    if args.add:
        # add --add papers and prune the first one; rewrite the corpus files as `lit3r ingest` would
        write_corpus(home, synth, range(1, n + args.add))
        inc = _child(BUILD, str(home), load_options)
        print(f"incremental (+{args.add} papers, -1): {inc['s']:.1f} s", flush=True)
    enc = build["seconds"].get("encode", 0.0)
    result = {
        "scale": args.scale, "papers": papers, "chunks": chunks, "encoder": "hashing:384" if args.fake_encoder else "configured",
        "generate_s": gen_s, "build_s": build["s"], "build_encode_s": enc, "build_without_encode_s": build["s"] - enc,
        "build_steps_s": build["seconds"], "build_peak_rss_gb": build["peak_rss_gb"], "index_gb": index_gb,
        "index_files_gb": {p.name: round(_du(p) if p.is_dir() else p.stat().st_size / 2**30, 3)
                           for p in sorted((home / "index").iterdir())},
        **{k: v for k, v in ask.items() if k != "peak_rss_gb"}, "ask_peak_rss_gb": ask["peak_rss_gb"],
        "cold_ask_cli_s": cold_s,
        "incremental_s": inc["s"] if inc else None, "incremental_steps_s": inc["seconds"] if inc else None,
        "incremental_without_encode_s": (inc["s"] - inc["seconds"].get("encode", 0.0)) if inc else None,
        "incremental_encoded": inc["encoded"] if inc else None, "incremental_removed": inc["removed"] if inc else None,
        "home": str(home),
    }
    if servers:
        sv = build["servers"]
        result["servers"] = {"load_s": build["seconds"].get("servers"), "parallel": sv.get("parallel"),
                             "neo4j_nodes": sv["neo4j"]["nodes"],
                             "neo4j_nodes_per_s": sv["neo4j"]["nodes_per_s"], "opensearch_docs": sv["opensearch"]["docs"],
                             "opensearch_docs_per_s": sv["opensearch"]["docs_per_s"],
                             "incremental_load_s": inc["seconds"].get("servers") if inc else None,
                             "incremental_written": inc["servers"]["written"] if inc else None,
                             "incremental_deleted": inc["servers"]["deleted"] if inc else None,
                             "load_cpu": sv.get("cpu")}
        cpu = sv.get("cpu") or {}
        mode = "side by side" if sv.get("parallel") else "one after the other"
        print(f"servers ({mode}): load {build['seconds'].get('servers', 0):.0f} s; Neo4j {sv['neo4j']['nodes_per_s']:,.0f} nodes/s "
              f"({cpu.get('neo4j_nodes_per_cpu_s', 0):,.0f} per Neo4j CPU s), OpenSearch "
              f"{sv['opensearch']['docs_per_s']:,.0f} docs/s ({cpu.get('opensearch_docs_per_cpu_s', 0):,.0f} per "
              f"OpenSearch CPU s); Python {cpu.get('python_s_per_1k_docs', 0):.2f} CPU s per 1k docs; load average "
              f"{cpu.get('loadavg_1m_before', 0):.1f} -> {cpu.get('loadavg_1m_after', 0):.1f}", flush=True)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, required=True, help="fraction of the seed's 27,487 papers (1.0 = all)")
    ap.add_argument("--fake-encoder", action="store_true", help="the model-free hashing:384 encoder")
    ap.add_argument("--keep", type=Path, default=None, help="build in this home and leave it there")
    ap.add_argument("--json", type=Path, default=None, help="also write the result object here")
    ap.add_argument("--source", type=Path, default=None, help="ingested corpus folder with the real records")
    ap.add_argument("--questions", type=int, default=30, help="warm asks to time")
    ap.add_argument("--add", type=int, default=10, help="papers added for the incremental build (0: skip)")
    ap.add_argument("--servers", action="store_true",
                    help="start the test servers (tests/servers/) and run through Neo4j + OpenSearch")
    add_write_mode(ap, "--servers")
    args = ap.parse_args()
    if args.scale <= 0:
        ap.error("--scale must be above 0")
    sources = _load_source(_source(args))
    n = max(2, round(SEED_PAPERS * args.scale))
    home = args.keep or Path(tempfile.mkdtemp(prefix="lit3r-scale-"))
    if home.exists() and any(home.iterdir()):
        if not (home / "papers.jsonl").is_file():
            raise SystemExit(f"{home} is not empty and holds no corpus: pass an empty or new folder to --keep")
        shutil.rmtree(home)
    home.mkdir(parents=True, exist_ok=True)
    config = '[models]\nchunk_encoder = "hashing:384"\npaper_encoder = "hashing:384"\n' if args.fake_encoder else ""
    servers = _start_servers(home.parent / f"{home.name}-servers") if args.servers else None
    try:
        result = _measure(args, sources, n, home, config, servers)
    finally:  # a failed step stops the servers too
        for server in servers or ():
            server.stop()
        if servers:
            shutil.rmtree(home.parent / f"{home.name}-servers", ignore_errors=True)
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    if not args.keep:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
