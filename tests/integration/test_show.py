"""`lit3r ask --show DIR`: one PNG per evidence locator with the evidence region outlined, over a
one-paper corpus built from a real PDF (copied, so that a test can move it away). The model-free
``hashing`` encoder keeps the build to seconds (the pictures are under test, not the model), and
the reader never abstains, so every answer has evidence."""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pymupdf
import pytest
from click.testing import CliRunner

from lit3r.cli import main
from lit3r.present.show import CELL_OUTLINE, OUTLINE, OUTLINE_PX, Answer, show_evidence
from tests.conftest import CORPUS

PAPER = "1706.03762"
QUESTION = "What BLEU score does the big Transformer reach on WMT 2014 English-to-German, and how long did it train?"
CONFIG = """[models]
chunk_encoder = "hashing:64"
paper_encoder = "hashing:64"

[read]
abstain_cosine = -1.0
"""


@pytest.fixture(scope="module")
def show_home(shared_data, tmp_path_factory):
    """A data folder with PAPER ingested (table and figure crops on) and built; its PDF is a copy."""
    pdfs = tmp_path_factory.mktemp("show-pdfs")
    shutil.copy(CORPUS / "pdfs" / f"{PAPER}.pdf", pdfs / f"{PAPER}.pdf")
    home = tmp_path_factory.mktemp("show-home")
    (home / "config.toml").write_text(CONFIG)
    res = CliRunner().invoke(main, ["--home", str(home), "ingest", str(pdfs), "--workers", "1"])
    assert res.exit_code == 0, res.output
    return home, pdfs / f"{PAPER}.pdf"


def _pixels(path):
    pix = pymupdf.Pixmap(str(path))
    assert pix.n == 3 and not pix.alpha
    return np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.width, 3)


def _outlined(img, box) -> bool:
    """Are the pixels just outside ``box`` (x0, y0, x1, y1) the outline colour on all four sides?"""
    x0, y0, x1, y1 = box
    h, w = img.shape[:2]
    sides = [img[max(0, y0 - 5), x0:x1], img[min(h - 1, y1 + 4), x0:x1], img[y0:y1, max(0, x0 - 5)],
             img[y0:y1, min(w - 1, x1 + 4)]]
    return all((side == OUTLINE).all(axis=-1).mean() > 0.9 for side in sides)


def _outline_pixels(img) -> int:
    return int((img == OUTLINE).all(axis=-1).sum())


def test_show_writes_one_outlined_png_per_evidence_locator(show_home, tmp_path):
    home, _pdf = show_home
    out = tmp_path / "new" / "pngs"  # created, parents too
    res = CliRunner().invoke(main, ["--home", str(home), "ask", QUESTION, "--papers", PAPER, "--show", str(out),
                                    "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    evidence, shown = data["submission"]["evidence"], data["shown"]
    assert len(evidence) >= 1, evidence
    assert len(shown) == len(evidence) and data["show_problems"] == []
    for item, path in zip(evidence, shown):
        loc = item["locator"]
        obj = next((str(v) if k != "citation_id" else f"Citation {v}" for k, v in loc.items() if k.endswith("_id")), None)
        name = f"{PAPER}_p{loc['page']}" + (f"_{obj.lower().replace(' ', '-')}" if obj else "") + ".png"
        assert path == str(out / name) and re.fullmatch(r"[A-Za-z0-9._-]+", name)
        raw = (out / name).read_bytes()
        assert raw.startswith(b"\x89PNG\r\n\x1a\n") and len(raw) > 10_000
        img = _pixels(out / name)
        assert min(img.shape[:2]) > 100 and _outline_pixels(img) > 4 * 100 * OUTLINE_PX
    readable = CliRunner().invoke(main, ["--home", str(home), "ask", QUESTION, "--papers", PAPER, "--show", str(out)])
    assert readable.exit_code == 0, readable.output
    lines = readable.stdout.splitlines()
    assert "Evidence:" in lines  # the answer comes first, then the paths, one a line
    assert lines[-len(shown):] == shown and lines.index("Evidence:") < len(lines) - len(shown)


def test_table_region_and_text_are_outlined_where_they_are(show_home, tmp_path):
    from ingest.corpus import load_corpus

    home, _pdf = show_home
    papers, chunks, _ = load_corpus(home)
    table = next(c for c in chunks if c.object_id == "Table 1")
    text = next(c for c in chunks if c.kind == "text" and c.page == 4 and len(c.text) > 400)
    moved = text.model_copy(update={"page": 1, "chunk_id": text.chunk_id + "-p1"})  # its text is not on page 1
    report = show_evidence([table, text, moved], {p.paper_id: p for p in papers}, home, tmp_path)
    assert [s.how for s in report.shown] == ["region", "text", "page"] and report.problems == []
    region, para, whole = report.shown
    page = _pixels(para.path)
    assert _pixels(region.path).shape[0] < page.shape[0] / 2  # the table with a margin, not the page
    for s in (region, para):
        img = _pixels(s.path)
        assert s.boxes and all(_outlined(img, box) for box in s.boxes), s
    x0, y0, x1, y1 = para.boxes[0]
    assert x1 - x0 > page.shape[1] / 2 and y1 - y0 > 30  # a paragraph, in the text column
    assert whole.note and "whole page" in whole.note and report.notes == [whole.note]
    assert whole.boxes == [(0, 0, page.shape[1], page.shape[0])]


def _inside(box, outer) -> bool:
    return outer[0] <= box[0] <= box[2] <= outer[2] and outer[1] <= box[1] <= box[3] <= outer[3]


def _area(box) -> int:
    return (box[2] - box[0]) * (box[3] - box[1])


def test_a_table_answer_outlines_its_row_and_cells_not_the_table(show_home, tmp_path):
    """Table 4 of the paper names "Transformer (4 layers)" in two rows, and 91.3 in three: the row
    whose band holds the answer's other values is outlined (red), with the cells it states (blue)."""
    from ingest.corpus import load_corpus

    home, _pdf = show_home
    papers, chunks, _ = load_corpus(home)
    table = next(c for c in chunks if c.object_id == "Table 4")
    row = {"Parser": "Transformer (4 layers)", "Training": "semi-supervised", "WSJ 23 F1": 92.7}
    report = show_evidence([table], {p.paper_id: p for p in papers}, home, tmp_path, Answer([row]))
    shown = report.shown[0]
    assert shown.how == "cells" and shown.cells == 2 and len(shown.boxes) == 3, shown
    row_box, cells = shown.boxes[0], shown.boxes[1:]
    assert all(_inside(b, shown.table) and _area(b) < _area(shown.table) / 5 for b in shown.boxes), shown
    assert all(_inside(c, (row_box[0], row_box[1] - 1, row_box[2], row_box[3] + 1)) for c in cells)
    # the lower of the two "Transformer (4 layers)" rows: in the table's lower third
    assert row_box[1] > shown.table[1] + 2 * (shown.table[3] - shown.table[1]) / 3
    img = _pixels(shown.path)
    assert (img == CELL_OUTLINE).all(axis=-1).sum() > 2 * OUTLINE_PX * (cells[0][2] - cells[0][0])
    assert (img == OUTLINE).all(axis=-1).sum() > 2 * OUTLINE_PX * (row_box[2] - row_box[0])
    # a free-text answer: the number it states (once in Table 2) and its row
    table2 = next(c for c in chunks if c.object_id == "Table 2")
    (tmp_path / "t2").mkdir()
    (tmp_path / "none").mkdir()
    text = show_evidence([table2], {p.paper_id: p for p in papers}, home, tmp_path / "t2",
                         Answer(None, "The big Transformer reaches 28.4 BLEU on English-to-German.")).shown[0]
    assert text.how == "cells" and text.cells == 1 and len(text.boxes) == 2
    assert all(_inside(b, text.table) and _area(b) < _area(text.table) / 5 for b in text.boxes)
    # an answer the table does not state: the whole table region, as before
    other = show_evidence([table2], {p.paper_id: p for p in papers}, home, tmp_path / "none",
                          Answer([{"Model": "No such model", "BLEU": 1.5}])).shown[0]
    assert other.how == "region" and other.boxes == [other.table]


def test_every_part_of_a_text_chunk_is_outlined(show_home, tmp_path):
    """Page 1's chunk starts in the permission note at the top and goes on in the footnotes at the
    bottom (the title, authors and abstract between): both parts are outlined."""
    from ingest.corpus import load_corpus

    home, _pdf = show_home
    papers, chunks, _ = load_corpus(home)
    chunk = next(c for c in chunks if c.page == 1 and c.kind == "text" and "Equal contribution" in c.text)
    assert not chunk.text.startswith("Equal") and "Listing order" in chunk.text
    shown = show_evidence([chunk], {p.paper_id: p for p in papers}, home, tmp_path).shown[0]
    height = _pixels(shown.path).shape[0]
    assert shown.how == "text" and len(shown.boxes) >= 2, shown
    assert min(b[1] for b in shown.boxes) < height / 6 and max(b[3] for b in shown.boxes) > height * 3 / 4
    assert all(_outlined(_pixels(shown.path), b) for b in shown.boxes)


def test_show_folder_that_is_a_file_is_refused(show_home, tmp_path):
    home, _pdf = show_home
    a_file = tmp_path / "f.png"
    a_file.write_bytes(b"x")
    res = CliRunner().invoke(main, ["--home", str(home), "ask", QUESTION, "--papers", PAPER, "--show", str(a_file)])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert res.output.strip().count("\n") == 0 and f"--show {a_file}: is a file" in res.output


def test_missing_pdf_is_one_line_and_the_answer_is_still_printed(show_home, tmp_path):
    home, pdf = show_home
    away = tmp_path / "away.pdf"
    pdf.rename(away)
    try:
        res = CliRunner().invoke(main, ["--home", str(home), "ask", QUESTION, "--papers", PAPER, "--show",
                                        str(tmp_path / "pngs")])
    finally:
        away.rename(pdf)
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert "Evidence:" in res.stdout and "Supporting papers:" in res.stdout
    err = res.stderr.strip()
    assert err.count("\n") == 0 and str(pdf) in err and "put it back there" in err, err
    assert not list((tmp_path / "pngs").iterdir())
