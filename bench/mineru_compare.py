"""Compare the MinerU adapter with the PyMuPDF parser on the 10 real MinerU outputs (issue 2).

For each paper of ../shared/data/mineru: parse time, chunks, tables, figures, numbered
equations, references for both parsers, and the overlap (Jaccard) of their table and figure ids.

    .venv/bin/python bench/mineru_compare.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pymupdf  # noqa: E402

from ingest.chunking import build_chunks  # noqa: E402
from ingest.parsers.mineru import parse_content_list  # noqa: E402
from ingest.parsers.pymupdf import PyMuPDFParser  # noqa: E402
from ingest.references import build_references  # noqa: E402

MINERU = ROOT.parent / "shared" / "data" / "mineru"


def summary(pid: str, doc) -> dict:
    refs = build_references(pid, doc.references)
    chunks = build_chunks(pid, doc, title=doc.title, abstract=doc.abstract, venue=None, year=None, references=refs)
    ids = {b.object_id for b in doc.blocks if b.object_id}
    return {
        "chunks": len(chunks),
        "tables": {i for i in ids if i.startswith("Table")},
        "figures": {i for i in ids if i.startswith("Figure")},
        "equations": sum(1 for b in doc.blocks if b.kind == "equation" and b.object_id),
        "refs": len(refs),
    }


def jaccard(a: set, b: set) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def main() -> None:
    print(f"{'paper':14s} {'parser':7s} {'ms':>6s} {'chunks':>6s} {'tab':>4s} {'fig':>4s} {'eq#':>4s} {'refs':>5s}")
    jt, jf, times = [], [], {"mineru": 0.0, "pymupdf": 0.0}
    pages = 0
    for folder in sorted(p for p in MINERU.iterdir() if (p / "content_list.json").is_file()):
        pdf = folder / "paper.pdf"
        n_pages = pymupdf.open(pdf).page_count
        pages += n_pages
        t = time.perf_counter()
        m = summary(folder.name, parse_content_list(folder / "content_list.json", n_pages=n_pages))
        tm = time.perf_counter() - t
        t = time.perf_counter()
        p = summary(folder.name, PyMuPDFParser().parse(pdf, folder.name))
        tp = time.perf_counter() - t
        times["mineru"] += tm
        times["pymupdf"] += tp
        for name, s, dt in (("mineru", m, tm), ("pymupdf", p, tp)):
            print(f"{folder.name:14s} {name:7s} {dt * 1000:6.0f} {s['chunks']:6d} {len(s['tables']):4d} "
                  f"{len(s['figures']):4d} {s['equations']:4d} {s['refs']:5d}")
        jt.append(jaccard(m["tables"], p["tables"]))
        jf.append(jaccard(m["figures"], p["figures"]))
    print(f"\n{pages} pages; table-id Jaccard mean {sum(jt) / len(jt):.3f}, figure-id Jaccard mean "
          f"{sum(jf) / len(jf):.3f}; adapter {pages / times['mineru']:.0f} pages/s (MinerU's own parse "
          f"not included), PyMuPDF parser {pages / times['pymupdf']:.0f} pages/s (one process)")


if __name__ == "__main__":
    main()
