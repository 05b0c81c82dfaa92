"""Real PDFs known to trip parsers (../shared/data/hard)."""

from __future__ import annotations

import re

import pymupdf
import pytest

from ingest.chunking import build_chunks
from ingest.parsers.pymupdf import PyMuPDFParser
from ingest.references import build_references
from tests.conftest import HARD


@pytest.fixture(scope="module")
def parser(shared_data):
    return PyMuPDFParser()


def _chunks(doc, pid):
    refs = build_references(pid, doc.references)
    return build_chunks(pid, doc, title=doc.title, abstract=doc.abstract, venue=None, year=None, references=refs)


def test_ligatures_hyphenation_and_running_headers(parser):
    doc = parser.parse(HARD / "ligatures_hyphenation_headers.pdf", "lig")
    raw = pymupdf.open(HARD / "ligatures_hyphenation_headers.pdf")[0].get_text()
    assert "\ufb01" in raw  # the file really has ligature glyphs and hyphenated breaks
    body = " ".join(c.text for c in _chunks(doc, "lig") if c.kind == "text")
    assert not re.search("[\ufb00-\ufb06]", body)
    assert "identified a persistent" in body and "offset by" in body
    assert "locali- sation" not in body and "localisation region" in body
    assert "e-MERLIN image" in body
    # the running header (paper title + page number) and the journal footer stay out
    assert "observations of three localised FRBs" not in body
    assert "MNRAS" not in body


def test_dense_tables_keep_their_numbers(parser):
    path = HARD / "dense_tables_report.pdf"
    doc = parser.parse(path, "dense")
    pdf = pymupdf.open(path)
    tables = [b for b in doc.blocks if b.kind == "table"]
    assert len(tables) >= 10
    t2 = next(b for b in tables if b.object_id == "Table 2")
    rows = t2.text.splitlines()
    mmlu = next(r for r in rows if r.startswith("MMLU |"))
    assert mmlu.split(" | ")[1:] == ["77.8", "79.5", "77.5", "80.4", "84.2"]
    # every number in any table chunk is a number of that page's own text: no "842" + "."
    number = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])")
    for t in tables:
        page_numbers = set(number.findall(pdf[t.page - 1].get_text()))
        assert set(number.findall(t.text)) <= page_numbers, t.object_id
        assert not re.search(r"\d \.(?:\s|$)", t.text), t.object_id


def test_author_lists_after_references_are_not_references(parser):
    doc = parser.parse(HARD / "author_lists_after_references.pdf", "cms")
    refs = build_references("cms", doc.references)
    numbers = [r.number for r in refs]
    assert numbers == list(range(1, len(refs) + 1))
    assert 30 <= len(refs) <= 60  # the list on pages 13-15, not the 30 pages of author names
    assert max(len(r.raw) for r in refs) < 900
    assert all(r.page <= 16 for r in refs)


def test_mineru_demo_pdf_references_split(parser):
    doc = parser.parse(HARD / "mineru_demo.pdf", "demo")
    refs = build_references("demo", doc.references)
    assert len(refs) >= 20
    for r in refs:  # one entry each: a single "Surname, X., YYYY." start
        assert len(re.findall(r"\b[A-Z][a-z]+, (?:[A-Z]\.)+,? (?:19|20)\d\d\.", r.raw)) <= 1, r.raw
