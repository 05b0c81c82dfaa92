"""The whole 60-paper real corpus, parsed once per session (about 20 s on 2 cores)."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from bench.ingest_bench import coverage
from graph.records import MAX_CHUNK_CHARS
from ingest.corpus import ingest_corpus, load_corpus
from tests.conftest import CORPUS


@pytest.fixture(scope="module")
def corpus(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus")
    report = ingest_corpus(CORPUS / "pdfs", out, metadata_file=CORPUS / "manifest.jsonl", workers=2, progress=False)
    papers, chunks, refs = load_corpus(out)
    return out, report, papers, chunks, refs


def test_every_paper_ingests(corpus):
    out, report, papers, chunks, refs = corpus
    assert report.failures == []
    assert len(papers) == 60 and report.pages_parsed == 1336
    manifest = {json.loads(line)["id"]: json.loads(line) for line in (CORPUS / "manifest.jsonl").open()}
    for p in papers:
        assert p.n_pages == manifest[p.paper_id]["pages"]
        assert p.source.sha256 == manifest[p.paper_id]["sha256"]
        assert p.title == manifest[p.paper_id]["title"]  # metadata overrides page 1


def test_chunk_invariants(corpus):
    _, _, papers, chunks, _ = corpus
    n_pages = {p.paper_id: p.n_pages for p in papers}
    by_paper = Counter(c.paper_id for c in chunks)
    assert set(by_paper) == set(n_pages)
    ids = [c.chunk_id for c in chunks]
    assert len(ids) == len(set(ids))
    for c in chunks:
        assert 1 <= c.page <= n_pages[c.paper_id]
        assert len(c.text) <= MAX_CHUNK_CHARS
    ta = [c for c in chunks if c.kind == "title_abstract"]
    assert len(ta) == 60 and all(c.page == 1 for c in ta)
    # [VENUE YEAR] tag where both are known
    attention = next(c for c in ta if c.paper_id == "1706.03762")
    assert attention.text.startswith("[NIPS 2017] Attention Is All You Need")


def test_objects_and_images(corpus):
    out, _, papers, chunks, _ = corpus
    kinds = Counter(c.kind for c in chunks)
    assert kinds["table"] >= 300 and kinds["figure"] >= 300 and kinds["equation"] >= 200
    with_images = [c for c in chunks if c.image]
    assert len(with_images) >= 600
    for c in with_images[:50]:
        png = out / c.image
        assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Table 1 of "Attention Is All You Need" keeps its rows and columns
    t1 = next(c for c in chunks if c.paper_id == "1706.03762" and c.object_id == "Table 1")
    assert t1.page == 6 and "Self-Attention" in t1.text and " | " in t1.text
    assert len([line for line in t1.text.splitlines() if "|" in line]) >= 4
    # numbered equations exist where papers number them
    eq = {c.object_id for c in chunks if c.paper_id == "2101.03961" and c.kind == "equation"}
    assert {"Equation 1", "Equation 4"} <= eq


def test_no_ligatures_or_broken_hyphenation(corpus):
    _, _, _, chunks, _ = corpus
    body = " ".join(c.text for c in chunks)
    assert not re.search("[\ufb00-\ufb06]", body)
    assert len(re.findall(r"\b(?:con|de|ef|ef)fi- \w", body)) == 0


def test_evidence_coverage_meets_targets(corpus):
    _, _, _, chunks, _ = corpus
    questions = [json.loads(line) for line in (CORPUS / "questions_dev.jsonl").open()]
    loc, txt, misses = coverage(chunks, questions)
    assert loc >= 0.90, misses
    assert txt >= 0.80, misses


def test_references_and_citation_graph(corpus):
    _, _, papers, chunks, refs = corpus
    per = Counter(r.paper_id for r in refs)
    assert all(per[p.paper_id] > 0 for p in papers)
    # counted by hand in the PDFs
    assert per["1706.03762"] == 40
    numbers = [r.number for r in refs if r.paper_id == "2511.11007"]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 67
    # the gold citation_context locator: [57] of 2511.11007 is on page 11 and names MuirBench
    r57 = next(r for r in refs if r.paper_id == "2511.11007" and r.number == 57)
    assert r57.page == 11 and "muirbench" in r57.raw.lower()
    c57 = next(c for c in chunks if c.paper_id == "2511.11007" and c.object_id == "Citation 57")
    assert c57.page == 11 and c57.section == "References"
    edges = {(r.paper_id, r.cited_paper_id) for r in refs if r.cited_paper_id}
    assert len(edges) >= 100
    assert ("2007.14062", "1706.03762") in edges  # Big Bird cites the Transformer
    # shared work ids make bibliographic coupling possible: many pairs share >= 5 works
    works: dict[str, set[str]] = {}
    for r in refs:
        works.setdefault(r.paper_id, set()).add(r.work_id)
    ids = sorted(works)
    coupled = sum(1 for i, a in enumerate(ids) for b in ids[i + 1:] if len(works[a] & works[b]) >= 5)
    assert coupled >= 150


def test_ids_are_stable_across_runs(corpus, tmp_path):
    out, _, _, chunks, _ = corpus
    sub = tmp_path / "pdfs"
    sub.mkdir()
    (sub / "2309.06275.pdf").symlink_to(CORPUS / "pdfs" / "2309.06275.pdf")
    ingest_corpus(sub, tmp_path / "again", metadata_file=CORPUS / "manifest.jsonl", workers=1, progress=False)
    _, again, _ = load_corpus(tmp_path / "again")
    first = [c.model_dump(exclude={"image"}) for c in chunks if c.paper_id == "2309.06275"]
    assert [c.model_dump(exclude={"image"}) for c in again] == first
