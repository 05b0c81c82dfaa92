"""Fault class: hostile parser output (issue 25, item 2). MinerU output names image files by
``img_path``; a path that leads out of the output's folder (``../..``, absolute, a link out) is
refused with the path named, and nothing outside the output is copied into the data folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import MINERU
from tests.faults.conftest import errors, lit3r

PAPER = MINERU / "2306.17806v1"
#: A system file whose bytes must never reach the data folder.
SECRET = Path("/etc/passwd")


def _hostile_output(folder: Path, img_path: str, link: bool = False) -> Path:
    """``folder/p.pdf`` (a link to a real PDF) with MinerU output beside it whose first image
    names ``img_path`` (``link``: ``img_path`` is a link inside the folder that points to SECRET)."""
    folder.mkdir()
    os.symlink(PAPER / "paper.pdf", folder / "p.pdf")
    items = json.loads((PAPER / "content_list.json").read_text(encoding="utf-8"))
    first = next(it for it in items if it.get("img_path"))
    first["img_path"] = img_path
    if link:
        (folder / "images").mkdir()
        os.symlink(SECRET, folder / img_path)
    (folder / "p_content_list.json").write_text(json.dumps(items), encoding="utf-8")
    return folder


@pytest.mark.parametrize("img_path, link", [("../../../../../../../../../../etc/passwd", False),
                                            ("/etc/passwd", False),
                                            ("images/inside.jpg", True)],
                         ids=["climbs-out", "absolute", "link-out"])
def test_an_image_path_out_of_the_mineru_folder_is_refused_and_nothing_is_copied(tmp_path, img_path, link):
    folder = _hostile_output(tmp_path / "pdfs", img_path, link)
    home = tmp_path / "home"
    res, seconds = lit3r(home, "ingest", str(folder), "--parser", "mineru", "--no-build", "--workers", "1")
    lines = errors(res.stderr)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert any(line.startswith("skipped p.pdf: ") and f"img_path {img_path!r}" in line and "refused" in line
               for line in lines), lines
    secret = SECRET.read_bytes()
    copied = [p for p in home.rglob("*") if p.is_file() and p.stat().st_size == len(secret)
              and p.read_bytes() == secret]
    assert copied == [], copied
    assert not (home / "papers.jsonl").is_file() or (home / "papers.jsonl").read_text() == ""
    assert seconds < 120, seconds  # measured about 8 s on 2 busy cores


def test_a_content_list_linked_from_outside_the_pdf_folder_is_refused(tmp_path):
    """MinerU output beside the PDF that is a link to a content list elsewhere: not followed."""
    (tmp_path / "pdfs").mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(PAPER / "paper.pdf", tmp_path / "pdfs" / "p.pdf")
    items = json.loads((PAPER / "content_list.json").read_text(encoding="utf-8"))
    (tmp_path / "elsewhere" / "content_list.json").write_text(json.dumps(items), encoding="utf-8")
    os.symlink(tmp_path / "elsewhere" / "content_list.json", tmp_path / "pdfs" / "p_content_list.json")
    home = tmp_path / "home"
    res, seconds = lit3r(home, "ingest", str(tmp_path / "pdfs"), "--parser", "mineru", "--no-build", "--workers", "1")
    lines = errors(res.stderr)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert any(line.startswith("skipped p.pdf: MinerU output 'p_content_list.json' points to ") and "refused" in line
               for line in lines), lines
    assert seconds < 120, seconds
