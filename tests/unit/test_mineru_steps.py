"""The steps of the MinerU parser (ingest/parsers/mineru/): the body reader's block handlers
on small content lists, and the PDF side (finding MinerU output, venue, crops) on real MinerU
output (../shared/data/mineru)."""

from __future__ import annotations

import json

import pytest

from ingest.document import BadInputError, Block, ParsedDocument
from ingest.parsers.mineru import MinerUParser, find_content_list, parse_content_list
from ingest.parsers.mineru import parser as parser_module
from ingest.parsers.mineru.content_list import _BodyReader, _equation
from tests.conftest import MINERU

PAPER = MINERU / "2402.01865v3"  # ICML 2024 style: author-year references, figures and tables with images


def _reader(items: list[dict], title: str = "A Title") -> _BodyReader:
    return _BodyReader(items, ParsedDocument(n_pages=3, title=title), set(), {}, None)


def _text(text: str, page: int = 0, **kw) -> dict:
    return {"type": "text", "text": text, "page_idx": page, **kw}


def test_equation_numbers():
    assert _equation("$$ a = b \\tag{3} $$", 2) == Block("equation", 2, "a = b \\tag{3}", "Equation 3")
    assert _equation("$$x^2 \\quad (12)$$", 1).object_id == "Equation 12"
    assert _equation("$$ y = f(x) $$", 1).object_id is None
    assert _equation("$$ $$", 1) is None


def test_reference_list_modes():
    r = _reader([
        _text("Intro text."),
        _text("References", text_level=1),
        _text("Smith, J. A title of a paper. In Proc. of things, 2020."),
        _text("Impact Statement", 1, text_level=1),  # a heading inside the list pauses it ...
        _text("Jones, K. Another title of a paper. Journal of things, 2019.", 1),  # ... that reads as references
        _text("A. Appendix", 2, text_level=1),  # an appendix heading ends it
        _text("Appendix text that is not a reference.", 2),
        _text("A Title", 2),  # the title repeated as text: a running header
    ])
    modes = []
    for i, it in enumerate(r.items):
        r._text(i, it, it["text"], it["page_idx"] + 1)
        modes.append(r.mode)
    assert modes == ["body", "refs", "refs", "paused", "refs", "after", "after", "after"]
    assert [e.raw[:5] for e in r.refs.entries()] == ["Smith", "Jones"]
    assert [(b.kind, b.text) for b in r.doc.blocks] == [
        ("paragraph", "Intro text."), ("heading", "References"), ("heading", "Impact Statement"),
        ("heading", "A. Appendix"), ("paragraph", "Appendix text that is not a reference.")]


def test_references_prefix_lists_and_discarded_entries():
    r = _reader([])
    r._text(0, _text(""), "References\n[1] A. One. Title one. 2019.", 1)
    assert r.mode == "refs" and r.doc.blocks == [Block("heading", 1, "References", level=1)]
    r._skipped("[2] B. Two. Title two. 2020.", 2)  # the next number, marked discarded: kept
    r._skipped("Running header", 2)
    r._list({"type": "list", "list_items": ["[3] C. Three. Title three. 2021."]}, 2)
    r._text(1, _text(""), "", 3)  # only an empty block on page 3
    assert [e.number for e in r.refs.entries()] == [1, 2, 3]
    assert r.doc.warnings == ["recovered a reference entry MinerU marked discarded (page 2)"]
    r.finish()
    assert r.gaps == {3} and r.doc.references == r.refs.entries()
    assert r.doc.warnings[-1].startswith("reference list runs onto page(s) [3] where MinerU left only empty blocks")
    body = _reader([])
    body._list({"type": "list", "list_items": ["first item", "", "second item"]}, 1)
    assert [b.text for b in body.doc.blocks] == ["first item", "second item"]


def test_read_dispatches_by_type_and_skips_used_blocks():
    items = [_text("Used already."), {"type": "equation", "text": "$$e = mc^2 \\tag{1}$$", "page_idx": 0},
             {"type": "image", "image_caption": ["Figure 1: A plot."], "img_path": "images/a.jpg", "page_idx": 5},
             {"type": "unknown", "text": "ignored"}, _text("Algorithm 1 Search\nRequire: x\n1: return x", 1)]
    r = _BodyReader(items, ParsedDocument(n_pages=3), {0}, {}, None)
    r.read()
    assert [(b.kind, b.object_id, b.page) for b in r.doc.blocks] == [
        ("equation", "Equation 1", 1), ("figure", "Figure 1", 3), ("algorithm", "Algorithm 1", 2)]
    r.finish()
    assert "no reference entries found (no References heading or an empty list)" in r.doc.warnings


def test_parse_content_list_of_real_output(shared_data):
    doc = parse_content_list(PAPER / "content_list.json")
    assert doc.title.startswith("What Will My Model Forget?") and doc.authors == ["Xisen Jin", "Xiang Ren"]
    assert len(doc.references) == 51 and doc.references[0].raw.startswith("Aljundi, R., Belilovsky, E.")
    assert doc.warnings == [] and (doc.venue, doc.year) == (None, None)
    assert [b.object_id for b in doc.blocks if b.kind == "table"][:3] == ["Table 1", "Table 2", "Table 3"]


def test_find_content_list(tmp_path):
    pdf = tmp_path / "p.pdf"
    pdf.write_bytes(b"%PDF-")
    assert find_content_list(pdf) is None
    for rel in ["content_list.json", "p/content_list.json", "p/auto/p_content_list.json", "p_content_list.json"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("[]")
        assert find_content_list(pdf) == tmp_path / rel  # each later one takes precedence


def test_mineru_parser_on_a_real_pdf(shared_data, tmp_path):
    doc = MinerUParser().parse(PAPER / "paper.pdf", "x")
    assert (doc.venue, doc.year) == ("arXiv", 2024)  # MinerU has no venue: page 1 of the PDF
    assert doc.n_pages == 15 and all(b.image is None for b in doc.blocks)
    with_images = MinerUParser(tmp_path, "images/x/").parse(PAPER / "paper.pdf", "x")
    figure = next(b for b in with_images.blocks if b.object_id == "Figure 1")
    assert figure.image == "images/x/p002-figure-1.png"  # MinerU's image is absent: cropped from its region
    assert (tmp_path / "p002-figure-1.png").stat().st_size > 1000


def test_mineru_parser_copies_mineru_crops(shared_data, tmp_path):
    out = tmp_path / "out"
    src = tmp_path / "src"
    (src / "images").mkdir(parents=True)
    items = json.loads((PAPER / "content_list.json").read_text(encoding="utf-8"))
    name = next(it["img_path"] for it in items if it.get("img_path"))
    (src / name).write_bytes(b"\x89PNG")
    parser = MinerUParser(out, "images/x/")
    block = Block("figure", 2, "", "Figure 1", image=name, region=(0.1, 0.1, 0.5, 0.5))
    with parser_module.open_pdf(PAPER / "paper.pdf") as pdf:
        parser._image(block, pdf, src)
    assert block.image == "images/x/" + name.split("/")[-1] and (out / name.split("/")[-1]).read_bytes() == b"\x89PNG"


def test_mineru_parser_without_output_or_command(tmp_path, monkeypatch):
    pdf = tmp_path / "p.pdf"
    pdf.write_bytes((PAPER / "paper.pdf").read_bytes())
    monkeypatch.setattr(parser_module.shutil, "which", lambda name: None)
    with pytest.raises(BadInputError, match="the mineru command is not installed"):
        MinerUParser().parse(pdf, "p")
    (tmp_path / "bad.pdf").write_bytes(b"")
    with pytest.raises(BadInputError, match="empty file"):
        MinerUParser().parse(tmp_path / "bad.pdf", "bad")  # the PDF is checked first


def test_reference_pages_come_from_the_pdf_text(shared_data):
    """Issue 16, item 7d: MinerU moves a reference list that runs onto later pages into a block
    of its first page; each entry gets the page whose PDF text holds it."""
    import pymupdf

    from ingest.parsers.mineru.parser import place_references
    from ingest.text import normalize_key

    pdf = MINERU / "2306.17806v1" / "paper.pdf"  # MinerU left pages 12-15 of its list as empty blocks
    raw = parse_content_list(find_content_list(pdf), n_pages=pymupdf.open(pdf).page_count)
    assert {r.page for r in raw.references} == {11}  # all on the page of the block that holds them
    doc = MinerUParser().parse(pdf, "p")
    with pymupdf.open(pdf) as pd:
        texts = [normalize_key(page.get_text()) for page in pd]
    pages = [r.page for r in doc.references]
    assert pages == sorted(pages) and set(pages) == {11, 12, 13, 14, 15}
    for r in doc.references:
        assert normalize_key(r.raw)[:40] in texts[r.page - 1], r.raw
    assert any("placed on the page whose text holds them" in w for w in doc.warnings)
    # an entry whose start is not in the text keeps its page; entries never move back
    from ingest.document import RawReference

    refs = [RawReference(2, "Lovelace, A. Counting sheep with transformers."), RawReference(1, "Nowhere to be found at all")]
    assert place_references(refs, ["", "", "x Lovelace, A. Counting sheep with transformers. y"]) == 1
    assert [r.page for r in refs] == [3, 1]
