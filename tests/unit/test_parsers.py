"""The parser registry (ingest/parsers/) and the steps of the corpus runner (ingest/corpus.py)."""

from __future__ import annotations

import json
import os

import pytest

from ingest import corpus, discover
from ingest.corpus import PARSERS, IngestReport, Job, ingest_corpus
from ingest.document import BadInputError
from ingest.parsers import REGISTRY, UnknownParserError, get_parser, parser_names
from ingest.parsers.base import Parser
from ingest.parsers.mineru import MinerUParser
from ingest.parsers.pymupdf import PyMuPDFParser
from tests.conftest import CORPUS

PDF = CORPUS / "pdfs" / "1706.03762.pdf"


# ----------------------------------------------------------------------------- registry


def test_registry_names_and_factories(tmp_path):
    assert parser_names() == ("pymupdf", "mineru") == PARSERS == tuple(REGISTRY)
    for name, cls in [("pymupdf", PyMuPDFParser), ("mineru", MinerUParser)]:
        parser: Parser = get_parser(name)(tmp_path, "images/x/", 72)
        assert isinstance(parser, cls) and parser.name == name and callable(parser.parse)
    p = get_parser("pymupdf")()
    assert (p.image_dir, p.image_ref, p.dpi) == (None, "", 110)


def test_unknown_parser_names_the_valid_ones(tmp_path):
    with pytest.raises(UnknownParserError, match=r"unknown parser 'grobid': use one of pymupdf, mineru"):
        get_parser("grobid")
    with pytest.raises(ValueError, match="use one of pymupdf, mineru"):
        get_parser(["pymupdf"])  # not even a name
    with pytest.raises(ValueError, match=r"unknown parser 'x'"):
        ingest_corpus(tmp_path, tmp_path / "out", parser="x")
    assert not (tmp_path / "out").exists()  # checked before anything is written


# ----------------------------------------------------------------------------- corpus steps


def test_corpus_folder_and_journal_check(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(BadInputError, match="is a file"):
        corpus._corpus_folder(tmp_path / "file")
    assert corpus._corpus_folder(str(tmp_path)) == tmp_path
    journal = tmp_path / "j.json"
    assert not corpus._journaled(journal, "k")
    journal.write_text(json.dumps({"key": "k"}))
    assert corpus._journaled(journal, "k") and not corpus._journaled(journal, "other")
    journal.write_text('{"key": "k"')  # torn
    assert not corpus._journaled(journal, "k")


def test_plan_skips_duplicates_and_unchanged_files(shared_data, tmp_path):
    out = tmp_path / "out"
    (out / ".state").mkdir(parents=True)
    found = [("a", PDF, None), ("a", PDF.with_name("1810.04805.pdf"), None), ("b", PDF, None)]
    report = IngestReport(files=3)
    jobs, kept = corpus._plan(found, out, "pymupdf", False, report)
    # "b" has the bytes of "a": one paper per content, the copy reported
    assert [(j.paper_id, j.parser, j.images, j.meta) for j in jobs] == [("a", "pymupdf", False, None)]
    assert jobs[0].sha256 == corpus.sha256_of(PDF) and kept[jobs[0].sha256] == "a"
    assert [d for d, _ in report.duplicates] == [str(PDF)] and "ingested once, as paper 'a'" in report.duplicates[0][1]
    assert report.failures == [(str(found[1][1]), "1810.04805.pdf: duplicate paper id 'a': rename the file or fix --metadata")]
    (out / ".state" / "a.json").write_text(json.dumps({"key": jobs[0].key}))
    again = IngestReport()
    assert [j.paper_id for j in corpus._plan(found[:1], out, "pymupdf", False, again)[0]] == []
    assert again.unchanged == 1
    assert corpus._plan(found[:1], out, "pymupdf", True, IngestReport())[0][0].key != jobs[0].key  # images on


def test_record_run_and_prune(shared_data, tmp_path):
    out = tmp_path / "out"
    state = out / ".state"
    state.mkdir(parents=True)
    report = IngestReport()
    job = Job("cs/0112017", str(PDF), corpus.sha256_of(PDF), "pymupdf", str(out), False, None, "k")
    bad = Job("bad", str(tmp_path / "missing.pdf"), "", "pymupdf", str(out), False, None, "k")
    corpus._run([job, bad], 1, False, lambda entry: corpus._record(entry, state, report))
    assert (report.parsed, report.pages_parsed) == (1, 15)
    assert report.failures[0][0] == bad.pdf and "missing.pdf: cannot be read" in report.failures[0][1]
    entry = json.loads((state / "cs%2F0112017.json").read_text(encoding="utf-8"))
    assert entry["paper"]["title"] == "Attention Is All You Need" and entry["key"] == "k"
    (state / "pool.json").write_text(json.dumps({"paper": {"parser": "metadata"}}))
    (out / "images" / "cs%2F0112017").mkdir(parents=True)
    corpus._prune(out, {"other"}, report)
    assert report.pruned == 1 and sorted(os.listdir(state)) == ["pool.json"]  # metadata-only papers stay
    assert not (out / "images" / "cs%2F0112017").exists()


def test_links_to_a_folder_above_the_corpus_and_empty_copies(shared_data, tmp_path):
    """Robustness battery (issue 16): a link to the corpus folder's parent was followed (PDFs from
    outside PDF_DIR ingested); two empty files were reported as copies of a paper that does not
    exist."""
    root, other = tmp_path / "d" / "in", tmp_path / "d" / "other"
    root.mkdir(parents=True)
    other.mkdir()
    (root / "a.pdf").write_bytes(PDF.read_bytes())
    (other / "b.pdf").write_bytes(PDF.read_bytes())
    (root / "up").symlink_to("..")
    problems: list[str] = []
    assert discover._pdf_files(root, problems) == [(root / "a.pdf").absolute()]
    assert len(problems) == 1 and "a folder that holds" in problems[0] and "not followed" in problems[0]
    (root / "e1.pdf").write_bytes(b"")
    (root / "e2.pdf").write_bytes(b"")
    found = [(p.stem, p, None) for p in discover._pdf_files(root, [])]
    report = IngestReport(files=len(found))
    jobs, _ = corpus._plan(found, tmp_path / "out", "pymupdf", False, report)
    assert report.duplicates == [] and sorted(j.paper_id for j in jobs) == ["a", "e1", "e2"]
