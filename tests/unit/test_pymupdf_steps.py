"""The steps of the PyMuPDF parser (ingest/parsers/pymupdf/), on real PDFs of the corpus
(../shared/data/corpus/pdfs) and on small hand-made lines where a rule needs a precise case."""

from __future__ import annotations

from typing import Optional

import pytest

from ingest.document import Block, ParsedDocument
from ingest.parsers.pymupdf import Crops, PyMuPDFParser, open_pdf
from ingest.parsers.pymupdf import parser as parser_module
from ingest.parsers.pymupdf.flow import _in_references, page_flow
from ingest.parsers.pymupdf.front import authors_after_title, read_abstract, read_front_matter, title_from_fonts
from ingest.parsers.pymupdf.layout import is_two_column, order
from ingest.parsers.pymupdf.objects import PageObjects, _caption, find_equations, find_objects, object_id
from ingest.parsers.pymupdf.pages import Line, PBlock, body_font_size, drop_margins, read_page, text_chars
from ingest.parsers.pymupdf.parser import page_blocks
from ingest.parsers.pymupdf.reference_list import (
    ReferenceSection,
    column_lefts,
    keep_references,
    numbering,
    split_hanging,
    split_numbered,
    split_references,
)
from tests.conftest import CORPUS


class _Pdf:
    """One real PDF read up to the page loop: pages after margin removal and the body font."""

    def __init__(self, paper_id: str) -> None:
        self.doc = open_pdf(CORPUS / "pdfs" / f"{paper_id}.pdf")
        self.raw = [read_page(self.doc[i]) for i in range(self.doc.page_count)]
        self.body = body_font_size(self.raw)
        self.pages = drop_margins(self.raw, self.body, self.doc[0].rect.height)

    def ordered(self, pno: int) -> list[PBlock]:
        return order(page_blocks(self.pages[pno - 1], self.body), self.doc[pno - 1].rect.width)

    def objects(self, pno: int, crops: Optional[Crops] = None) -> tuple[dict[int, Block], list[str]]:
        blocks = page_blocks(self.pages[pno - 1], self.body)
        page = self.doc[pno - 1]
        warnings: list[str] = []
        pg = PageObjects(page, pno, order(blocks, page.rect.width), self.body, is_two_column(blocks, page.rect.width),
                         "p", crops or Crops(), warnings)
        return find_objects(pg, set()), warnings


@pytest.fixture(scope="module")
def attention(shared_data):
    pdf = _Pdf("1706.03762")  # "Attention Is All You Need": one column, numbered references
    yield pdf
    pdf.doc.close()


@pytest.fixture(scope="module")
def bert(shared_data):
    pdf = _Pdf("1810.04805")  # BERT: two columns, author-year references
    yield pdf
    pdf.doc.close()


def _line(text: str, x0: float = 72.0, y0: float = 100.0, size: float = 10.0, bold: bool = False) -> Line:
    return Line(x0, y0, x0 + 6 * len(text), y0 + size, text, size, bold, [(x0, x0 + 6 * len(text), text)])


# ----------------------------------------------------------------------------- pages


def test_pages_lines_body_font_and_margins(attention):
    assert text_chars(attention.raw) > 10_000
    assert attention.body == 10.0
    first = [ln.text for b in attention.raw[0] for ln in b]
    assert "Attention Is All You Need" in first
    assert not any("arXiv:1706.03762" in t for t in first)  # the vertical arXiv stamp is not read
    assert "arXiv:1706.03762" in attention.doc[0].get_text()
    # the bare page number "2" at the foot of page 2 goes, the text stays
    raw2 = {ln.text for b in attention.raw[1] for ln in b}
    kept2 = {ln.text for b in attention.pages[1] for ln in b}
    assert raw2 - kept2 == {"2"}
    assert {ln.text for b in attention.raw[0] for ln in b} == {ln.text for b in attention.pages[0] for ln in b}


def test_exponents_are_kept_and_footnote_marks_and_subscripts_are_not_exponents(attention, shared_data):
    """Issue 16, item 7c: a raised superscript span becomes ``^N`` after a digit or a math-font
    symbol; a footnote mark after a word and a lowered subscript (flagged superscript by PyMuPDF
    too) stay as they are."""
    lines = {ln.text for p in attention.raw for b in p for ln in b}
    assert "1.0 · 10^20" in lines and any("2.3 · 10^19 1.4 · 10^20" in t for t in lines)
    assert any("softmax(QK^T" in t for t in lines) and "O(n^2 · d)" in lines
    assert "Ashish Vaswani∗" in lines  # an author's footnote mark
    assert any("of dimension dk, and values of dimension dv" in t for t in lines)  # d_k, d_v: subscripts
    assert any("q · k = dk" in t for t in lines) and not any("d^k" in t or "qi^ki" in t for t in lines)
    objects, _ = attention.objects(8)  # Table 2: rows rebuilt from the page's words, exponents marked in them
    table = next(b for b in objects.values() if b.object_id == "Table 2")
    assert "2.3 · 10^19 | 1.4 · 10^20" in table.text and "1020" not in table.text
    linformer = open_pdf(CORPUS / "pdfs" / "2006.04768.pdf")
    try:
        first = " ".join(ln.text for b in read_page(linformer[0]) for ln in b)
    finally:
        linformer.close()
    assert "O(n^2) time and space" in first and "from O(n^2) to O(n) in both time and space" in first
    assert "O(n2)" not in first


def _lines(paper_id: str, pages: Optional[list[int]] = None) -> list[str]:
    doc = open_pdf(CORPUS / "pdfs" / f"{paper_id}.pdf")
    try:
        return [ln.text for i in (pages or range(1, doc.page_count + 1)) for b in read_page(doc[i - 1]) for ln in b]
    finally:
        doc.close()


def test_footnote_marks_become_superscript_digits_apart_from_the_words(bert, shared_data):
    """Issue 28, item 5: a note number raised after a word, or set raised before a footnote or an
    affiliation, is written as superscript digits apart from the words (PyMuPDF's superscript flag
    is not set on the footnote's own number); exponents and code line numbers stay."""
    page5 = [ln.text for b in bert.raw[4] for ln in b]
    assert "from the exact same pre-trained model.⁷ We de-" in page5
    assert any(t.startswith("⁷ For example, the BERT SQuAD model") for t in page5)
    assert not any("model.7" in t or "7For" in t for t in page5)
    page3 = [ln.text for b in bert.raw[2] for ln in b]
    assert "the tensor2tensor library.¹ Because the use" in page3
    assert "¹ https://github.com/tensorflow/tensor2tensor" in page3
    page6 = [ln.text for b in bert.raw[5] for ln in b]
    assert "sifier layer initialization.⁹" in page6 and "¹⁰ https://gluebenchmark.com/leaderboard" in page6
    objects, _ = bert.objects(6)  # Table 1 (GLUE), on a page with marks: its rows are the page's words, unchanged
    table = next(b for b in objects.values() if b.object_id == "Table 1")
    assert table.text.startswith("System | MNLI-(m/mm) | QQP")
    assert not any(ch in table.text for ch in "⁰¹²³⁴⁵⁶⁷⁸⁹")
    linear = _lines("2006.16236", [1])  # affiliation numbers before the names of institutions
    assert "¹ Idiap Research Institute, Switzerland ² EPFL, Switzerland" in linear
    listing = _lines("2102.11174")  # a code listing: its line numbers sit on the baseline
    assert "1 import torch" in listing and "10 return x_repeat * x_rolled" in listing
    assert "² Source code used in this paper is available at" in listing
    assert "guage modelling task (Sec. 6.3)²." in listing


def test_reading_order_of_two_columns(bert):
    page = bert.doc[1]
    blocks = page_blocks(bert.pages[1], bert.body)
    assert is_two_column(blocks, page.rect.width)
    ordered = order(blocks, page.rect.width)
    assert sorted(map(id, ordered)) == sorted(map(id, blocks))
    mid = page.rect.width / 2
    sides = ["L" if b.x1 <= mid + 12 else "R" if b.x0 >= mid - 12 else "S" for b in ordered]
    # within each band between full-width blocks, the left column comes first
    for band in "".join(sides).split("S"):
        assert band == "L" * band.count("L") + "R" * band.count("R")


# ----------------------------------------------------------------------------- front matter


def test_title_and_abstract_of_page_1(attention):
    first = attention.pages[0]
    height = attention.doc[0].rect.height
    assert title_from_fonts(first, height, attention.body) == "Attention Is All You Need"
    assert title_from_fonts(first, height, attention.body + 10) == ""  # not larger than the body font
    ordered = order([PBlock(b) for b in first], attention.doc[0].rect.width)
    parts = read_abstract(ordered, attention.body)
    assert parts[0].startswith("The dominant sequence transduction models")
    assert "BLEU" in " ".join(parts) and "Introduction" not in " ".join(parts)
    assert sum(b.consumed for b in ordered) == len(parts) + 1  # the parts and the "Abstract" label


def test_front_matter_and_authors(attention, bert):
    front = read_front_matter(attention.doc, attention.pages[0], attention.body)
    assert (front.title, front.venue, front.year) == ("Attention Is All You Need", "NIPS", 2017)
    assert front.authors[:3] == ["Ashish Vaswani", "Noam Shazeer", "Niki Parmar"]
    assert front.abstract.startswith("The dominant sequence transduction models")
    assert front.abstract_blocks and front.bottom > 0
    assert authors_after_title(attention.pages[0], "") == []
    b = read_front_matter(bert.doc, bert.pages[0], bert.body)
    assert b.title.startswith("BERT: Pre-training of Deep Bidirectional Transformers")
    assert b.abstract.startswith("We introduce a new language representation model called BERT")
    assert (b.venue, b.year) == ("arXiv", 2019)  # the arXiv stamp's date


# ----------------------------------------------------------------------------- objects


def test_caption_rules():
    seen: set[str] = set()
    assert _caption(PBlock([_line("Table 1 shows the results of the ablation")]), seen) is None  # a sentence
    assert _caption(PBlock([_line("Table 2: Results on GLUE")]), seen) == ("tab", "Table 2")
    assert _caption(PBlock([_line("Figure 3", bold=True)]), seen) == ("fig", "Figure 3")
    prose = PBlock([_line("Table 2. On average, the models we compare here reach similar scores on every task of the")] * 2)
    assert _caption(prose, seen) is None  # body text after the real Table 2
    assert seen == {"Table 2", "Figure 3"}
    assert object_id("Tab.", "IV") == "Table 4" and object_id("Fig", "A.1") == "Figure A1"


def test_tables_and_equations_of_real_pages(attention, tmp_path):
    objects, warnings = attention.objects(6, Crops(tmp_path, "images/x/"))  # page 6: Table 1
    table = next(b for b in objects.values() if b.object_id == "Table 1")
    assert table.kind == "table" and table.caption.startswith("Table 1: Maximum path lengths")
    assert any(row.startswith("Self-Attention |") for row in table.text.splitlines())
    assert table.image == "images/x/p006-table-1.png" and (tmp_path / "p006-table-1.png").is_file()
    assert warnings == []
    objects, warnings = attention.objects(10)  # Table 4: no ruled grid, its header row right under the caption
    rows = next(b for b in objects.values() if b.object_id == "Table 4").text.splitlines()
    assert rows[0] == "Parser | Training | WSJ 23 F1" and warnings == []
    assert any(r.startswith("Vinyals & Kaiser el al. (2014) [37] | WSJ only, discriminative | 88.3") for r in rows)
    ordered = attention.ordered(4)
    eqs = list(find_equations(ordered, attention.doc[3].rect.width, False))
    assert [(b.object_id, b.page) for _, b in eqs] == [("Equation 1", 0)]
    assert "softmax" in eqs[0][1].text and ordered[eqs[0][0]].consumed


def test_bold_header_rows_belong_to_their_tables(shared_data):
    """PaSa page 8: two tables captioned below, each with a bold header row that starts with
    "Method" (a section name): the rows between the two captions belong to the caption under
    them, and each header row stays in its table instead of becoming a section heading."""
    pdf = _Pdf("2501.10120")
    try:
        objects, warnings = pdf.objects(8)
        tables = {b.object_id: b.text.splitlines() for b in objects.values() if b.kind == "table"}
        header = "Method | Crawler Recall | Precision | Recall | Recall@100 | Recall@50 | Recall@20"
        assert tables["Table 5"][0] == header and tables["Table 6"][0] == header
        assert "PaSa-7b | 0.7931 | 0.1448 | 0.4834 | 0.6947 | 0.6334 | 0.5301" in tables["Table 5"]
        assert "PaSa-7b | 0.7071 | 0.5146 | 0.6111 | 0.6929 | 0.6563 | 0.5798" in tables["Table 6"]
        assert warnings == []
    finally:
        pdf.doc.close()


def test_a_caption_at_the_top_of_a_page_is_not_a_running_header(shared_data):
    """Satori page 6 opens with "Table 1: ..." above the body box: the caption stays, and the
    table under it is read with its rows."""
    pdf = _Pdf("2502.02508")
    try:
        objects, _ = pdf.objects(6)
        tables = {b.object_id: b.text.splitlines() for b in objects.values() if b.kind == "table"}
        assert set(tables) == {"Table 1", "Table 2"}
        assert "Satori-Qwen-7B (Round 2) | 93.9 | 83.6 | 48.5 | 72.5 | 23.3 | 64.4" in tables["Table 1"]
        assert any(ln.text.startswith("Table 1:") for b in pdf.pages[5] for ln in b)
    finally:
        pdf.doc.close()


# ----------------------------------------------------------------------------- page flow


def test_page_flow_leaves_out_front_matter_and_collects_references(attention):
    front = read_front_matter(attention.doc, attention.pages[0], attention.body)
    out = ParsedDocument(n_pages=attention.doc.page_count, title=front.title)
    refs = ReferenceSection()
    for pno in (1, 10):
        page_flow(pno, attention.ordered(pno), {}, attention.body, attention.doc[pno - 1].rect.width, front, refs, out)
    texts = [b.text for b in out.blocks if b.page == 1]
    assert texts and not any("Attention Is All You Need" == t or t.startswith("The dominant") for t in texts)
    assert Block("heading", 10, "References", level=1) in out.blocks and refs.active
    assert refs.lines[0][2].text.startswith("[1] Jimmy Lei Ba")


def test_section_names_come_only_from_headings(shared_data):
    """Issue 16, item 7b: bold lines of LaTeX, equations and reference entries are not headings
    (2502.02508 sets its worked examples' equations and its reference list in a heading-like font),
    nor are bold labels inside a figure, set smaller than the body."""
    from ingest.parsers.pymupdf.layout import heading_text, heading_words

    pdf = _Pdf("2502.02508")
    try:
        blocks = pdf.ordered(29)
        latex = [b for b in blocks if "\\frac{5}{8}x = 15" in b.text]
        assert latex  # the line is on the page ...
        assert all(heading_text(b, pdf.body) is None for b in latex)  # ... and names no section
        doc = PyMuPDFParser().parse(CORPUS / "pdfs" / "2502.02508.pdf", "2502.02508")
    finally:
        pdf.doc.close()
    heads = [b.text for b in doc.blocks if b.kind == "heading"]
    assert "1. Introduction" in heads and "4.1. Format Tuning Through Imitation Learning" in heads
    assert not [h for h in heads if "\\" in h or "=" in h or "arXiv" in h or "\u201c" in h]
    assert len(doc.references) > 80  # the reference section is no longer cut short by an entry read as a heading
    dsi = _Pdf("2202.06991")  # figure 1 holds bold labels set at 6.3 pt (the body is 10 pt)
    try:
        labels = [b for b in dsi.ordered(2) if b.text.startswith("Learning to encode")]
        assert labels and all(heading_text(b, dsi.body) is None for b in labels)
        assert any(heading_text(b, dsi.body) == "3 Differentiable Search Index" for b in dsi.ordered(4))
    finally:
        dsi.doc.close()
    for name in ("3.2 Multi-Head Attention", "Acknowledgements", "B.1. Post-training LLMs for Reasoning", "β-VAE"):
        assert heading_words(name), name
    for name in ("2 √", "i=1 ∪D+", "restart ←∅ for i = 1, 2, . . . , n do", "D. Hendrycks, C. Burns, S. Kadavath,",
                 "Y. Wu, and Z. Sui, “Math-Shepherd: Verify and reinforce", "\uf8f4 \uf8f3"):
        assert not heading_words(name), name


def test_reference_section_ends_at_an_appendix_heading():
    refs = ReferenceSection(active=True)
    body = PBlock([_line("[3] A. Author. A title. In Proc. 2020.")])
    assert _in_references(body, None, 9, 612.0, refs) and len(refs.lines) == 1
    assert _in_references(PBlock([_line("References")]), "References", 9, 612.0, refs)  # repeated header
    assert not _in_references(PBlock([_line("A Appendix")]), "A Appendix", 10, 612.0, refs)
    assert (refs.active, refs.done) == (False, True)


# ----------------------------------------------------------------------------- references


def _ref_lines(monkeypatch, paper_id: str) -> list:
    """The reference-section lines the real parser collects for one paper."""
    got = []
    monkeypatch.setattr(parser_module, "split_references", lambda lines: got.extend(lines) or [])
    PyMuPDFParser().parse(CORPUS / "pdfs" / f"{paper_id}.pdf", paper_id)
    return got


def test_numbered_references_of_a_real_paper(shared_data, monkeypatch):
    lines = _ref_lines(monkeypatch, "1706.03762")
    pat = numbering([ln.text for _, _, ln in lines])
    assert pat is not None and pat.pattern.startswith(r"^\[")
    entries = split_numbered(lines, pat)
    assert [e.number for e in entries] == list(range(1, 41))
    assert entries[0].raw.startswith("Jimmy Lei Ba, Jamie Ryan Kiros") and entries[0].page == 10
    monkeypatch.undo()
    assert split_references(lines) == entries


def test_author_year_references_of_a_real_paper(shared_data, monkeypatch):
    lines = _ref_lines(monkeypatch, "1810.04805")
    assert numbering([ln.text for _, _, ln in lines]) is None
    lefts = column_lefts(lines)
    assert any(v is not None for v in lefts.values())  # hanging indents
    entries = keep_references(split_hanging(lines))
    assert len(entries) == 56 and all(e.number is None for e in entries)
    assert entries[0].raw.startswith("Alan Akbik, Duncan Blythe, and Roland Vollgraf. 2018.")


def test_numbering_breaks_and_hanging_indents():
    texts = ["[1] A. One. Title one. 2019.", "[2] B. Two. Title two. 2020.", "[3] C. Three. Title three. 2021.",
             "[1] Not a reference any more, a new list"]
    lines = [(5, 0, _line(t, y0=100 + 12 * k)) for k, t in enumerate(texts)]
    pat = numbering(texts)
    assert [e.number for e in split_numbered(lines, pat)] == [1, 2, 3]  # the numbering went back: over
    assert numbering(["1. Alpha", "2. Beta"]) is None  # too few markers
    hang = [(3, 1, _line("Smith, J. 2020. A long title of a", x0=310)), (3, 1, _line("paper. In Proc.", x0=320)),
            (3, 1, _line("Jones, K. 2019. Another title.", x0=310)), (3, 1, _line("Journal of things.", x0=320))]
    assert column_lefts(hang) == {(3, 1): 310}
    assert [e.raw for e in split_hanging(hang)] == ["Smith, J. 2020. A long title of a paper. In Proc.",
                                                    "Jones, K. 2019. Another title. Journal of things."]
    junk = split_hanging([(3, 0, _line(t)) for t in ["x" * 30] * 3])  # one entry, no year: not a reference
    assert keep_references(split_hanging(hang) + junk * 3 + split_hanging(hang)) == split_hanging(hang)
    assert split_references([]) == []
