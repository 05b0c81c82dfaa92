"""Encoder backends side by side in one run: chunks/s (per wall and per CPU second), load time and
the cosine of each backend's vectors with PyTorch's, on a built home's chunks (issue 27).

Backends: ``torch`` (sentence-transformers, dtype auto: bfloat16 on CPUs with native bf16),
``torch-fp32``, ``onnx`` (lit3r/encoders/onnx_encoder.py, float32), ``onnx-int8`` (ONNX Runtime's dynamic
int8 quantisation), ``openvino`` (lit3r/encoders/openvino_encoder.py: bfloat16 where the CPU has it) and
``openvino-fp32``, ``openvino-latency`` (the ``LATENCY`` hint, one run at a time, instead of the
default's ``THROUGHPUT`` hint with two runs in flight; all skipped with a line when the ``openvino``
package is missing). ``server`` needs ``--server-url`` (an OpenAI-compatible /v1/embeddings endpoint).
Each backend encodes the same chunks; the cosine is taken with ``torch-fp32`` (always run first) and
with the vectors stored in the home's index (what it was built with). A backend is "correct" when
its minimum cosine is >= 0.99.

``--recall``: the candidate rankings of questions_dev (+ dev2) on the home as built, and on a copy
of it whose chunk and paper vectors are the ONNX backend's (encoded here, the encoder loader serves
them), with questions encoded by each home's own backend: candidate recall@5/10 and how many
questions' top-10 candidate lists are identical.

CPU seconds are the process's (all its threads); on a shared machine they are the fairer figure.

    .venv/bin/python bench/encoder_bench.py --home H60 [--sample N] [--backends torch,onnx,...] [--recall]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lit3r.config import PACKAGED_MINILM  # noqa: E402

DEV = ROOT.parent / "shared" / "data" / "corpus"


def _load(name: str, args):
    if name in ("torch", "torch-fp32"):
        from lit3r.models import SentenceEncoder

        return SentenceEncoder(args.model, device="cpu", batch_size=args.batch_size,
                               dtype="float32" if name == "torch-fp32" else "auto")
    if name in ("onnx", "onnx-int8"):
        from lit3r.encoders.onnx_encoder import OnnxEncoder

        return OnnxEncoder(args.model, batch_size=args.batch_size, quantize=name == "onnx-int8")
    if name in ("openvino", "openvino-fp32", "openvino-latency"):
        from lit3r.encoders.openvino_encoder import INFLIGHT, OpenVinoEncoder

        return OpenVinoEncoder(args.model, batch_size=args.batch_size,
                               dtype="float32" if name == "openvino-fp32" else "auto",
                               inflight=1 if name == "openvino-latency" else INFLIGHT)
    if name == "server":
        from lit3r.encoders.remote_models import RemoteEncoder

        return RemoteEncoder(args.server_url, args.server_model, batch_size=args.batch_size)
    raise SystemExit(f"unknown backend {name!r}: torch, torch-fp32, onnx, onnx-int8, openvino, openvino-fp32, "
                     f"openvino-latency, server")


def _texts(home: Path, sample: int) -> tuple[list[str], list[str]]:
    rows = [json.loads(line) for line in (home / "chunks.jsonl").open(encoding="utf-8")]
    if sample and sample < len(rows):  # evenly spaced over the corpus, so every paper is represented
        rows = [rows[int(i)] for i in np.linspace(0, len(rows) - 1, sample)]
    return [r["chunk_id"] for r in rows], [r["text"] for r in rows]


def _stored(home: Path, ids: list[str]) -> np.ndarray | None:
    from graph.search.embedded import EmbeddedSearchIndex

    try:
        index = EmbeddedSearchIndex.open(home / "index")
        return index.vectors_of(ids)
    except Exception as exc:  # no index, or built from other chunks
        print(f"(no stored vectors to compare with: {str(exc).splitlines()[0]})")
        return None


def throughput(args, home: Path) -> dict[str, np.ndarray]:
    ids, texts = _texts(home, args.sample)
    stored = _stored(home, ids)
    names = ["torch-fp32"] + [b for b in args.backends.split(",") if b != "torch-fp32"]
    print(f"{len(texts)} chunks of {home}, batch {args.batch_size}")
    print(f"{'backend':11s} {'load s':>7s} {'wall s':>8s} {'chunks/s':>9s} {'per CPU s':>9s} {'x torch':>7s} "
          f"{'cos min':>8s} {'cos mean':>8s} {'vs index':>8s}")
    out: dict[str, np.ndarray] = {}
    base_cpu = None
    for name in names:
        if name.startswith("openvino"):
            try:
                import openvino  # noqa: F401
            except ImportError:
                print(f"{name:11s} skipped: the openvino package is not installed")
                continue
        t, c = time.perf_counter(), time.process_time()
        enc = _load(name, args)
        load = time.perf_counter() - t
        enc.encode(texts[:8])  # warm-up: first-run allocations are not throughput
        t, c = time.perf_counter(), time.process_time()
        vecs = enc.encode(texts)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        out[name] = vecs
        ref = out["torch-fp32"]
        cos = (vecs * ref).sum(axis=1)
        vs_index = f"{(vecs * stored).sum(axis=1).min():8.4f}" if stored is not None else "       -"
        per_cpu = len(texts) / cpu
        base_cpu = base_cpu or per_cpu
        ok = "" if cos.min() >= 0.99 else "  (fails cosine 0.99)"
        print(f"{name:11s} {load:7.1f} {wall:8.1f} {len(texts) / wall:9.1f} {per_cpu:9.1f} {per_cpu / base_cpu:7.2f} "
              f"{cos.min():8.4f} {cos.mean():8.4f} {vs_index}{ok}", flush=True)
    return out


def recall(args, home: Path) -> None:
    """Candidate recall@5/10 and identical top-10 lists: the home as built vs a copy encoded with
    ``--recall-backend``."""
    from lit3r.config import load_settings
    from lit3r.index.build import build_stores
    from lit3r.littraceqa.metrics import recall_at_k
    from lit3r.models import load_encoder
    from lit3r.pipeline.engine import Engine

    golds = [json.loads(line) for name in ("questions_dev.jsonl", "questions_dev2.jsonl")
             for line in (DEV / name).open(encoding="utf-8")]
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        copy = args.copy or Path(tmp) / "home"
        if not (copy / "index" / "manifest.json").is_file():
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(home, copy, ignore=shutil.ignore_patterns("index", "index.new", "images", "llm-cache"))
        (copy / "config.toml").write_text(f'[models]\nencoder_backend = "{args.recall_backend}"\n', encoding="utf-8")
        t = time.perf_counter()
        build_stores(load_settings(home=copy), batch_chunks=args.batch_chunks,
                     encoder_loader=lambda spec, **kw: load_encoder(spec, **kw))
        print(f"\n{args.recall_backend} copy of {home} built in {time.perf_counter() - t:.0f} s")
        _every_chunk(home, copy)
        runs = {}
        built = json.loads((home / "index" / "manifest.json").read_text(encoding="utf-8"))["models"]
        for label, h in (("as built", home), (args.recall_backend, copy)):
            backend = built.get("encoder_backend", "torch") if h == home else args.recall_backend
            engine = Engine(load_settings(home=h, models={"encoder_backend": backend}))
            runs[label] = [engine.ask(g["question"], query_id=g["query_id"], answer=False).candidates for g in golds]
    print(f"{len(golds)} questions (questions_dev + dev2): candidate recall@5 / @10")
    for label, cands in runs.items():
        r5 = statistics.fmean(recall_at_k(c, {p["paper_id"] for p in g["gold_papers"]}, 5) for c, g in zip(cands, golds))
        r10 = statistics.fmean(recall_at_k(c, {p["paper_id"] for p in g["gold_papers"]}, 10)
                               for c, g in zip(cands, golds))
        print(f"  {label:9s} {r5:.3f} / {r10:.3f}")
    same = sum(a[:10] == b[:10] for a, b in zip(runs["as built"], runs[args.recall_backend]))
    same5 = sum(set(a[:5]) == set(b[:5]) for a, b in zip(runs["as built"], runs[args.recall_backend]))
    print(f"  identical top-10 lists: {same}/{len(golds)}; same top-5 sets: {same5}/{len(golds)}")


def _every_chunk(home: Path, copy: Path) -> None:
    """Cosine of every chunk vector of the rebuilt copy with the home's stored one."""
    from graph.search.embedded import EmbeddedSearchIndex

    ids = [json.loads(line)["chunk_id"] for line in (home / "chunks.jsonl").open(encoding="utf-8")]
    a = EmbeddedSearchIndex.open(home / "index").vectors_of(ids)
    b = EmbeddedSearchIndex.open(copy / "index").vectors_of(ids)
    cos = (a * b).sum(axis=1)
    print(f"every chunk ({len(ids)}): cosine copy vs as built: min {cos.min():.4f}, mean {cos.mean():.4f}, "
          f"{int((cos < 0.99).sum())} below 0.99")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", type=Path, required=True, help="a built home (its chunks.jsonl and index)")
    ap.add_argument("--sample", type=int, default=512, help="chunks to encode, evenly spaced (0: all)")
    ap.add_argument("--backends", default="torch,onnx,openvino")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--model", default=PACKAGED_MINILM)
    ap.add_argument("--server-url", default=None)
    ap.add_argument("--server-model", default="all-MiniLM-L6-v2")
    ap.add_argument("--recall", action="store_true", help="also compare candidate rankings on questions_dev(+2)")
    ap.add_argument("--recall-backend", default="onnx", help="the backend of the copy that --recall builds")
    ap.add_argument("--batch-chunks", type=int, default=2000)
    ap.add_argument("--tmp", default=None, help="where the onnx copy of the home is built")
    ap.add_argument("--copy", type=Path, default=None, help="build the onnx copy here and keep it (reused when built)")
    args = ap.parse_args()
    throughput(args, args.home)
    if args.recall:
        recall(args, args.home)


if __name__ == "__main__":
    main()
