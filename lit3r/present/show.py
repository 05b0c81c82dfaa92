"""Pictures of an answer's evidence (``lit3r ask --show DIR``): one PNG per evidence locator,
the PDF page with the evidence region outlined in :data:`OUTLINE` (RGB).

Chunks record a page, not a box, so the region is found again on the page:

- a table or figure with a stored crop (``Chunk.image``, rendered by the parser at
  :data:`ingest.parsers.base.CROP_DPI`) is located on the page by template matching (least
  squared difference over the page rendered at the same resolution); the PNG is that region
  with a margin of :data:`MARGIN_PT` points around it; where the answer names a row of the table
  (or states a number of it), that row is outlined in :data:`OUTLINE` and the cells it states in
  :data:`CELL_OUTLINE` instead of the whole table (:mod:`lit3r.present.show_cells`);
- otherwise the chunk's words are aligned with the page's words (difflib, runs of at least 3
  words; short chunks must match whole) and each text block they fall in is outlined on the
  whole page, every part of the chunk (a chunk may run on after a figure or a column);
- when neither finds it, the whole page is outlined and a note says so.

A paper whose PDF is gone from the path recorded at ingest (``Paper.source.file``) is a
*problem* (one line: the path and the fix); the others are still drawn. Pages are rendered at
:data:`SHOW_DPI`; boxes are in the PNG's pixels.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np
import pymupdf

from graph.records import Chunk, Paper
from ingest.corpus import sha256_of
from ingest.document import BadInputError
from ingest.parsers.base import CROP_DPI
from ingest.parsers.pymupdf.parser import open_pdf
from lit3r.errors import InputError
from lit3r.littraceqa.format import evidence_chunks, evidence_item, evidence_key  # noqa: F401 (re-exported)
from lit3r.present.show_cells import find_cells

#: Resolution of the PNGs written, dots per inch.
SHOW_DPI = 144
#: The outline: colour (RGB), line width and its distance outside the region, in PNG pixels.
OUTLINE = (255, 0, 0)
#: The outline of a table cell the answer states (RGB); the row it names is outlined in :data:`OUTLINE`.
CELL_OUTLINE = (0, 64, 255)
OUTLINE_PX = 3
PAD_PX = 4
#: Context kept around a table or figure region in its PNG, in PDF points.
MARGIN_PT = 18
#: A crop counts as found where the root mean squared grey-level difference (0-255) is at most this.
_MAX_RMS = 12.0
#: Word runs shorter than this are not trusted as a match (unless the chunk is that short).
_MIN_RUN = 3
#: A chunk counts as found with this share of its words matched, or :data:`_ENOUGH_WORDS` words
#: (a chunk may go on to the next page); a chunk under 6 words must match whole.
_MIN_SHARE, _ENOUGH_WORDS = 0.25, 12
#: Matched runs further apart than this many page words belong to different places.
_MAX_GAP_WORDS = 40
#: A further part of a chunk (beyond its best-matched one) is outlined with this many words matched.
_MIN_PART_WORDS = 2 * _MIN_RUN
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class Shown:
    """One PNG written: ``path``; the ``chunk_id`` it shows; ``how`` the region was found
    ("region": the table/figure crop located on the page, "text": the chunk's words found on the
    page, "page": not found, the whole page outlined); the outlined ``boxes`` as
    ``(x0, y0, x1, y1)`` PNG pixels; ``note`` when the outline is a fallback."""

    path: Path
    chunk_id: str
    how: str
    boxes: list[tuple[int, int, int, int]]
    note: Optional[str] = None
    table: Optional[tuple[int, int, int, int]] = None
    cells: int = 0


@dataclass
class Answer:
    """What an answer states, for outlining it in a table chunk: its table ``rows`` (column ->
    value, the row key first) and its free ``text``."""

    rows: Optional[list[dict]] = None
    text: Optional[str] = None


@dataclass
class ShowReport:
    """What :func:`show_evidence` did: the PNGs written (``shown``, in evidence order),
    ``notes`` (fallback outlines, pages that could not be drawn) and ``problems`` (one line per
    paper whose PDF is missing or unreadable: nothing drawn for it)."""

    shown: list[Shown] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{"shown": [paths], "show_notes": [...], "show_problems": [...]}`` (strings)."""
        return {"shown": [str(s.path) for s in self.shown], "show_notes": self.notes,
                "show_problems": self.problems}


def show_dir(path: Path) -> Path:
    """The folder ``--show`` writes to, created when missing. Raises InputError when ``path``
    is a file or cannot be created."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise InputError(f"--show {path}: is a file, not a folder: name a folder for the PNGs (it is created "
                         f"if missing)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--show {path}: cannot create the folder ({exc.strerror or exc}): name a writable "
                         f"folder") from None
    return path


def png_name(chunk: Chunk) -> str:
    """``<paper_id>_p<page>[_<object id>].png`` in safe characters (``[A-Za-z0-9._-]``); an
    equation without an id gets ``_equation``."""
    tail = chunk.object_id or ("" if chunk.kind in ("text", "title_abstract") else chunk.kind)
    name = f"{_slug(chunk.paper_id)}_p{chunk.page}" + (f"_{_slug(tail.lower())}" if tail else "")
    return name + ".png"


def show_evidence(chunks: Sequence[Chunk], papers: Mapping[str, Paper], corpus_dir: Path, out_dir: Path,
                  answer: Optional[Answer] = None) -> ShowReport:
    """Write one PNG per chunk into ``out_dir`` (see the module docstring); ``papers``: the
    chunks' papers (their PDF path and hash), ``corpus_dir``: the folder ``Chunk.image`` is
    relative to; ``answer``: what the answer states (a table chunk then outlines the row and cells
    it names, :mod:`lit3r.present.show_cells`). Files of the same name are replaced."""
    report = ShowReport()
    by_paper: dict[str, list[Chunk]] = defaultdict(list)
    for c in chunks:
        by_paper[c.paper_id].append(c)
    names: set[str] = set()
    written: dict[str, Shown] = {}
    for pid, group in by_paper.items():
        doc = _open(papers[pid], report)
        if doc is None:
            continue
        try:
            for c in group:
                if c.page > doc.page_count:
                    report.notes.append(f"{pid} p{c.page}: the PDF has {doc.page_count} pages (it changed since it "
                                        f"was ingested): nothing drawn")
                    continue
                target = out_dir / _unique(png_name(c), names)
                try:
                    written[c.chunk_id] = shown = _draw(doc[c.page - 1], c, corpus_dir, target, answer)
                except (RuntimeError, pymupdf.mupdf.FzErrorBase) as exc:  # a page MuPDF cannot render
                    report.notes.append(f"{pid} p{c.page}: could not be drawn ({exc})")
                    continue
                if shown.note:
                    report.notes.append(shown.note)
        except OSError as exc:
            report.problems.append(f"--show {out_dir}: cannot write {target.name} ({exc.strerror or exc}): name a "
                                   f"writable folder with space left")
            break
        finally:
            doc.close()
    report.shown = [written[c.chunk_id] for c in chunks if c.chunk_id in written]
    return report


def _slug(text: str) -> str:
    return _UNSAFE.sub("-", text).strip("-") or "x"


def _unique(name: str, names: set[str]) -> str:
    stem, n = name[:-4], 2
    while name in names:
        name, n = f"{stem}-{n}.png", n + 1
    names.add(name)
    return name


def _open(paper: Paper, report: ShowReport) -> Optional[pymupdf.Document]:
    """The paper's PDF, or None with a problem (missing, unreadable) or a note (no PDF)."""
    pid, file = paper.paper_id, paper.source.file
    if paper.n_pages == 0:
        report.notes.append(f"{pid}: known by its metadata only (no PDF): nothing to show")
        return None
    if not file:
        report.problems.append(f"no PDF path is recorded for paper {pid}: ingest its PDF again (`lit3r ingest "
                               f"PDF_DIR`)")
        return None
    path = Path(file)
    if not path.is_file():
        report.problems.append(f"the PDF of paper {pid} is not at {path} (moved or deleted?): put it back there (a "
                               f"symlink will do) and run the command again")
        return None
    try:
        doc = open_pdf(path)
    except (BadInputError, OSError) as exc:
        report.problems.append(f"the PDF of paper {pid} at {path} cannot be read ({exc}): nothing drawn for it")
        return None
    if sha256_of(path) != paper.source.sha256:
        report.notes.append(f"{pid}: {path} changed since it was ingested: outlines may be off (run `lit3r ingest` "
                            f"on its folder again)")
    return doc


def _draw(page: pymupdf.Page, chunk: Chunk, corpus_dir: Path, target: Path, answer: Optional[Answer] = None) -> Shown:
    """Render ``page``, outline ``chunk``'s region (a table's: the row and cells of ``answer``), write ``target``."""
    zoom = SHOW_DPI / 72
    pix = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), alpha=False, colorspace=pymupdf.csRGB)
    img = np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.stride)[:, : pix.width * 3]
    img = img.reshape(pix.height, pix.width, 3).copy()
    to_px = page.rotation_matrix * pymupdf.Matrix(zoom, zoom)
    note, clip, table = None, None, None
    region = _find_crop(page, corpus_dir / chunk.image) if chunk.image and chunk.kind in ("table", "figure") else None
    if region is not None:
        s = SHOW_DPI / CROP_DPI
        table = _pixels((region[0] * s, region[1] * s, region[2] * s, region[3] * s), img)
        boxes, how = [table], "region"
        m = MARGIN_PT * zoom
        clip = _pixels((table[0] - m, table[1] - m, table[2] + m, table[3] + m), img)
        tab_pt = pymupdf.Rect(region) * (72 / CROP_DPI) * page.derotation_matrix
    else:
        found = _find_text(page, chunk.text)
        boxes = [_pixels(tuple(r * to_px), img) for r in found]
        how = "text" if boxes else "page"
        tab_pt = _union(found) if found and chunk.kind == "table" else None
        if not boxes:
            boxes = [(0, 0, img.shape[1], img.shape[0])]
            note = f"{chunk.paper_id} p{chunk.page} {chunk.object_id or chunk.kind}: its text was not found on the " \
                   f"page: the whole page is outlined"
    colours = [OUTLINE] * len(boxes)
    if chunk.kind == "table" and tab_pt is not None and answer is not None and (answer.rows or answer.text):
        row_pt, cell_pt = find_cells(page, tab_pt, answer.rows, answer.text)
        if row_pt or cell_pt:
            table = table or _pixels(tuple(tab_pt * to_px), img)
            boxes = [_pixels(tuple(r * to_px), img) for r in row_pt + cell_pt]
            colours = [OUTLINE] * len(row_pt) + [CELL_OUTLINE] * len(cell_pt)
            how = "cells"
    for box, colour in zip(boxes, colours):
        _outline(img, box, pad=0 if how == "page" else PAD_PX if colour == OUTLINE else 1, colour=colour)
    if clip is not None:
        x0, y0, x1, y1 = clip
        img = np.ascontiguousarray(img[y0:y1, x0:x1])
        boxes = [(b[0] - x0, b[1] - y0, b[2] - x0, b[3] - y0) for b in boxes]
        table = (table[0] - x0, table[1] - y0, table[2] - x0, table[3] - y0) if table else None
    target.write_bytes(pymupdf.Pixmap(pymupdf.csRGB, img.shape[1], img.shape[0], img.tobytes(), False).tobytes("png"))
    return Shown(target, chunk.chunk_id, how, boxes, note, table=table, cells=colours.count(CELL_OUTLINE))


def _union(rects: Sequence[pymupdf.Rect]) -> pymupdf.Rect:
    out = pymupdf.Rect(rects[0])
    for r in rects[1:]:
        out |= r
    return out


def _pixels(box: Sequence[float], img: np.ndarray) -> tuple[int, int, int, int]:
    """A float box rounded outwards and clipped to ``img`` ((H, W, 3))."""
    h, w = img.shape[:2]
    x0, y0, x1, y1 = min(box[0], box[2]), min(box[1], box[3]), max(box[0], box[2]), max(box[1], box[3])
    return (max(0, int(np.floor(x0))), max(0, int(np.floor(y0))), min(w, int(np.ceil(x1))), min(h, int(np.ceil(y1))))


def _outline(img: np.ndarray, box: tuple[int, int, int, int], pad: int,
             colour: tuple[int, int, int] = OUTLINE) -> None:
    """Draw a :data:`OUTLINE_PX` wide rectangle of ``colour`` ``pad`` pixels outside ``box`` into ``img``."""
    h, w = img.shape[:2]
    x0, y0 = max(0, box[0] - pad - OUTLINE_PX), max(0, box[1] - pad - OUTLINE_PX)
    x1, y1 = min(w, box[2] + pad + OUTLINE_PX), min(h, box[3] + pad + OUTLINE_PX)
    t = OUTLINE_PX
    img[y0:y0 + t, x0:x1] = colour
    img[max(y0, y1 - t):y1, x0:x1] = colour
    img[y0:y1, x0:x0 + t] = colour
    img[y0:y1, max(x0, x1 - t):x1] = colour


def _grey(pix: pymupdf.Pixmap) -> np.ndarray:
    """A pixmap as (H, W) float32 grey levels."""
    if pix.alpha:
        pix = pymupdf.Pixmap(pix, 0)
    if pix.colorspace is None or pix.colorspace.n != 1:
        pix = pymupdf.Pixmap(pymupdf.csGRAY, pix)
    return np.frombuffer(pix.samples, np.uint8).reshape(pix.height, pix.stride)[:, : pix.width].astype(np.float32)


def _find_crop(page: pymupdf.Page, png: Path) -> Optional[tuple[int, int, int, int]]:
    """Where the crop ``png`` lies on ``page``: ``(x0, y0, x1, y1)`` pixels of the page rendered
    at :data:`CROP_DPI`, or None (no file, blank crop, no place within :data:`_MAX_RMS`).
    Squared difference at every offset = window sum of page^2 - 2 correlation + sum of crop^2
    (the correlation by FFT, the window sums by an integral image)."""
    if not png.is_file():
        return None
    try:
        tpl = _grey(pymupdf.Pixmap(str(png)))
    except (RuntimeError, ValueError):  # not an image PyMuPDF can read
        return None
    img = _grey(page.get_pixmap(dpi=CROP_DPI, colorspace=pymupdf.csGRAY, alpha=False))
    h, w = tpl.shape
    if h > img.shape[0] or w > img.shape[1] or tpl.std() < 2.0:
        return None
    shape = (_fast_len(img.shape[0] + h - 1), _fast_len(img.shape[1] + w - 1))
    full = np.fft.irfft2(np.fft.rfft2(img, shape) * np.fft.rfft2(tpl[::-1, ::-1], shape), shape)
    corr = full[h - 1 : img.shape[0], w - 1 : img.shape[1]]  # the offsets where the crop fits
    ii = np.pad((img.astype(np.float64) ** 2).cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    window = ii[h:, w:] - ii[:-h, w:] - ii[h:, :-w] + ii[:-h, :-w]
    ssd = window - 2 * corr + float((tpl.astype(np.float64) ** 2).sum())
    y, x = np.unravel_index(int(np.argmin(ssd)), ssd.shape)
    if np.sqrt(max(float(ssd[y, x]), 0.0) / (h * w)) > _MAX_RMS:
        return None
    return int(x), int(y), int(x) + w, int(y) + h


def _fast_len(n: int) -> int:
    """The smallest 5-smooth number (2^a 3^b 5^c) >= ``n``: an FFT length that is fast."""
    best, p5 = 2 * n, 1
    while p5 < best:
        p35 = p5
        while p35 < best:
            p = p35
            while p < n:
                p *= 2
            best, p35 = min(best, p), p35 * 3
        p5 *= 5
    return best


def _norm(word: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", word).lower() if ch.isalnum())


def _find_text(page: pymupdf.Page, text: str) -> list[pymupdf.Rect]:
    """The page's text blocks holding ``text``, each as the box of its matched lines (page
    points, unrotated); [] when too little of it is on the page."""
    words = page.get_text("words", flags=pymupdf.TEXT_DEHYPHENATE)
    pw = [(i, _norm(w[4])) for i, w in enumerate(words)]
    pw = [(i, t) for i, t in pw if t]
    cw = [t for t in (_norm(w) for w in text.split()) if t]
    if not pw or len(cw) < 2:
        return []
    min_run = min(_MIN_RUN, len(cw))
    sm = difflib.SequenceMatcher(None, [t for _, t in pw], cw, autojunk=False)
    runs = [(b.a, b.size) for b in sm.get_matching_blocks() if b.size >= min_run]
    if not runs:
        return []
    groups: list[list[tuple[int, int]]] = [[runs[0]]]
    for a, size in runs[1:]:
        prev_a, prev_size = groups[-1][-1]
        if a - (prev_a + prev_size) > _MAX_GAP_WORDS:
            groups.append([])
        groups[-1].append((a, size))
    best = max(groups, key=lambda g: sum(size for _, size in g))
    matched = sum(size for _, size in best)
    need = len(cw) if len(cw) < 2 * _MIN_RUN else min(_ENOUGH_WORDS, max(_MIN_RUN, round(_MIN_SHARE * len(cw))))
    if matched < need:
        return []
    # every part of the chunk on the page (a chunk runs on after a figure, a column, a footnote area)
    parts = [g for g in groups if g is best or sum(size for _, size in g) >= _MIN_PART_WORDS]
    lines: dict[tuple[int, int], pymupdf.Rect] = {}
    for a, size in (run for g in parts for run in g):
        for k in range(a, a + size):
            w = words[pw[k][0]]
            key = (w[5], w[6])
            lines[key] = lines[key] | pymupdf.Rect(w[:4]) if key in lines else pymupdf.Rect(w[:4])
    blocks: dict[int, pymupdf.Rect] = {}
    for (block, _line), rect in lines.items():
        blocks[block] = blocks[block] | rect if block in blocks else rect
    return _merged(list(blocks.values()))


def _merged(rects: list[pymupdf.Rect], gap: float = 2.0) -> list[pymupdf.Rect]:
    """``rects`` with every two that overlap (or lie within ``gap`` points) replaced by their union."""
    out: list[pymupdf.Rect] = []
    for r in rects:
        r = pymupdf.Rect(r)
        while True:
            near = [o for o in out if pymupdf.Rect(o.x0 - gap, o.y0 - gap, o.x1 + gap, o.y1 + gap).intersects(r)]
            if not near:
                break
            for o in near:
                out.remove(o)
                r |= o
        out.append(r)
    return out
