"""A data folder remembers how it was built (lit3r/index/recipe.py): a later `lit3r ingest` of the same
folder without --metadata keeps the metadata records and parser settings, says so in one line,
and re-parses and re-encodes nothing; authors read from a PDF come without affiliation marks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from tests.conftest import CORPUS, ROOT

#: Two real papers whose page 1 glues affiliation marks to author names ("Kyle Loα", "Yossi AdiH").
PAPERS = ("papermage", "2401.06104")


def _ingest(home, pdfs, *extra):
    began = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), "ingest", str(pdfs), *extra],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-2000:]
    return res, time.monotonic() - began


def _authors(home) -> dict[str, list[str]]:
    lines = (home / "papers.jsonl").read_text(encoding="utf-8").splitlines()
    return {p["paper_id"]: p["authors"] for p in map(json.loads, lines)}


def _notes(res) -> list[str]:
    return [ln for ln in res.stderr.splitlines() if ln.startswith("reusing")]


def test_a_folder_keeps_its_metadata_and_settings_and_pdf_authors_lose_their_marks(shared_data, tmp_path):
    pdfs, home = tmp_path / "pdfs", tmp_path / "home"
    pdfs.mkdir()
    home.mkdir()
    for pid in PAPERS:
        os.symlink(CORPUS / "pdfs" / f"{pid}.pdf", pdfs / f"{pid}.pdf")
    (home / "config.toml").write_text('[models]\nchunk_encoder = "hashing:64"\npaper_encoder = "hashing:64"\n')
    manifest = CORPUS / "manifest.jsonl"
    first, t_first = _ingest(home, pdfs, "--metadata", str(manifest), "--no-images")
    assert _notes(first) == [] and "2 paper(s) encoded" in first.stdout
    records = (home / "papers.jsonl").read_bytes()
    given = {m["id"]: m["authors"] for m in map(json.loads, manifest.read_text().splitlines()) if m["id"] in PAPERS}
    assert _authors(home) == given
    # the README's next step: the same folder, no --metadata, no --no-images
    again, t_again = _ingest(home, pdfs)
    assert _notes(again) == [f"reusing what this folder was built with: the metadata of manifest.jsonl (kept as "
                             f"{home / 'recipe' / 'metadata.jsonl'}; --metadata FILE replaces it), --no-images "
                             f"(--no-reuse ignores it)"], again.stderr
    assert "(0 parsed, 2 unchanged, 0 skipped)" in again.stdout and "unchanged, kept" in again.stdout, again.stdout
    assert (home / "papers.jsonl").read_bytes() == records and not (home / "images").exists()
    # the same settings as kept: nothing to say
    same, _ = _ingest(home, pdfs, "--metadata", str(manifest), "--no-images")
    assert _notes(same) == [] and "2 unchanged" in same.stdout
    # --no-reuse: the PDFs' own page 1, authors without their affiliation marks
    fresh, _ = _ingest(home, pdfs, "--no-reuse", "--no-images")
    assert _notes(fresh) == [] and "2 parsed" in fresh.stdout
    authors = _authors(home)
    assert authors["papermage"][:4] == ["Kyle Lo", "Zejiang Shen", "Benjamin Newman", "Joseph Chee Chang"], authors
    assert "Yossi Adi" in authors["2401.06104"], authors
    assert not any(ch in name for names in authors.values() for name in names for ch in "αβγδ*†‡"), authors
    kept = json.loads((home / "recipe" / "recipe.json").read_text())
    assert kept == {"images": False, "metadata": None, "parser": "pymupdf"}
    print(f"first ingest {t_first:.1f} s, the same folder again without --metadata {t_again:.1f} s")
