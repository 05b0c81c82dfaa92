"""Ingest benchmark on the 60 real papers of ../shared/data/corpus (issue 2).

Prints: parse throughput (pages/s, chunking and references included), chunks per kind, objects
and references per paper (papers with none flagged), evidence coverage against
questions_dev.jsonl, and corpus-to-corpus citation edges.

    .venv/bin/python bench/ingest_bench.py [--workers 2] [--no-images] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ingest.corpus import ingest_corpus, load_corpus  # noqa: E402
from ingest.text import normalize_key  # noqa: E402

SHARED = ROOT.parent / "shared" / "data" / "corpus"

KIND_OF_SOURCE = {
    "table": {"table"},
    "figure": {"figure"},
    "equation_algorithm": {"equation"},
    "text_span": {"text", "title_abstract"},
    "citation_context": {"text", "title_abstract"},
}


def gold_object_id(source_type: str, loc: dict) -> str | None:
    """Normalised object id of a gold locator ("Table 4", "Equation 4", "Citation 57")."""
    for key, label in (("table_id", "Table"), ("figure_id", "Figure"), ("equation_id", "Equation"),
                       ("algorithm_id", "Algorithm"), ("citation_id", "Citation")):
        if key in loc:
            m = re.search(r"\d+", str(loc[key]))
            return f"{label} {m.group(0)}" if m else None
    return None


def coverage(chunks, questions) -> tuple[float, float, list[str]]:
    """(locator coverage, text coverage, misses) of the gold evidence items."""
    by_page = defaultdict(list)
    for c in chunks:
        by_page[(c.paper_id, c.page)].append(c)
    hit_loc = hit_txt = n = 0
    misses = []
    for q in questions:
        for ev in q["evidence"]:
            n += 1
            loc, st = ev["locator"], ev["source_type"]
            page = loc.get("page")
            here = by_page.get((ev["paper_id"], page), [])
            oid = gold_object_id(st, loc)
            ok = any(c.kind in KIND_OF_SOURCE[st] and (oid is None or c.object_id == oid) for c in here)
            hit_loc += ok
            value = ev["evidence_text_or_value"]
            page_text = normalize_key(" ".join(c.text for c in here))
            pieces = [p for p in re.split(r"\.\.\.|…|;|\(|\)| vs | - ", value) if len(normalize_key(p)) >= 4]
            found = bool(pieces) and sum(normalize_key(p) in page_text for p in pieces) >= max(1, len(pieces) // 2)
            # numeric values: all numbers of the gold text present on the page
            nums = re.findall(r"\d+(?:\.\d+)?", value)
            if nums and not found:
                found = all(num.replace(".", "") and num in " ".join(c.text for c in here) for num in nums)
            hit_txt += found
            if not ok or not found:
                misses.append(f"{q['query_id']} {ev['paper_id']} p{page} {st} {oid} loc={'ok' if ok else 'MISS'} "
                              f"text={'ok' if found else 'MISS'}: {value[:70]}")
    return hit_loc / n, hit_txt / n, misses


def page1_quality(tmp: Path) -> None:
    """Title / first author / abstract read from page 1 (no metadata) against the manifest."""
    out = tmp.with_name(tmp.name + "-nometa")
    ingest_corpus(SHARED / "pdfs", out, workers=2, images=False, progress=False)
    papers, _, _ = load_corpus(out)
    man = {json.loads(line)["id"]: json.loads(line) for line in (SHARED / "manifest.jsonl").open()}
    titles = sum(normalize_key(p.title) == normalize_key(man[p.paper_id]["title"]) for p in papers)
    first = sum(any(man[p.paper_id]["authors"][0].split()[-1].lower() in a.lower() for a in p.authors)
                for p in papers)
    abstracts = sum(len(p.abstract) >= 200 for p in papers)
    print(f"page 1 without metadata: exact titles {titles}/{len(papers)}, first author found {first}/{len(papers)},"
          f" abstract found {abstracts}/{len(papers)}")
    shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-images", action="store_true")
    ap.add_argument("--keep", type=Path, help="write the corpus here instead of a temp folder")
    ap.add_argument("--misses", action="store_true", help="print the evidence items not covered")
    ap.add_argument("--page1", action="store_true", help="also measure title/author/abstract reading without metadata")
    args = ap.parse_args()
    out = args.keep or Path(tempfile.mkdtemp(prefix="lit3r-bench-"))
    if out.exists():
        shutil.rmtree(out)
    rep = ingest_corpus(SHARED / "pdfs", out, metadata_file=SHARED / "manifest.jsonl",
                        workers=args.workers, images=not args.no_images, progress=False)
    papers, chunks, refs = load_corpus(out)
    print(f"papers {rep.papers}  pages {rep.pages_parsed}  failures {len(rep.failures)}  workers {args.workers}"
          f"  images {'off' if args.no_images else 'on'}")
    print(f"parse throughput: {rep.pages_parsed / rep.seconds:.1f} pages/s ({rep.seconds:.1f} s wall, "
          "chunking + references + merge included)")
    kinds = Counter(c.kind for c in chunks)
    print("chunks per kind:", dict(kinds), " total", len(chunks))
    per = defaultdict(Counter)
    for c in chunks:
        if c.object_id:
            per[c.paper_id][c.object_id.split()[0]] += 1
    nref = Counter(r.paper_id for r in refs)
    for label in ("Table", "Figure", "Equation", "Algorithm"):
        vals = {p.paper_id: len({c.object_id for c in chunks if c.paper_id == p.paper_id and c.object_id and
                                 c.object_id.startswith(label)}) for p in papers}
        none = sorted(pid for pid, v in vals.items() if v == 0)
        print(f"{label:9s} per paper: mean {statistics.fmean(vals.values()):.1f}  median "
              f"{statistics.median(vals.values())}  papers with none: {len(none)}"
              + (f" {none}" if len(none) <= 5 else ""))
    rv = [nref[p.paper_id] for p in papers]
    print(f"references per paper: mean {statistics.fmean(rv):.1f} median {statistics.median(rv)}; "
          f"papers with none: {[p.paper_id for p in papers if nref[p.paper_id] == 0]}")
    edges = {(r.paper_id, r.cited_paper_id) for r in refs if r.cited_paper_id}
    print(f"corpus-to-corpus citation edges: {len(edges)}")
    questions = [json.loads(line) for line in (SHARED / "questions_dev.jsonl").open()]
    loc, txt, misses = coverage(chunks, questions)
    print(f"evidence coverage: locator {loc:.3f} (target 0.90)   text {txt:.3f} (target 0.80)")
    if args.page1:
        page1_quality(out)
    if args.misses:
        print("\n".join(misses))
    print("reference counts (for checking by hand):",
          {p: nref[p] for p in ("1706.03762", "2007.14062", "2201.11903", "papermage", "2511.11007")})


if __name__ == "__main__":
    main()
