"""Ingest fidelity on real PDFs (issue 16, item 7): a work cited by several corpus papers in
different styles gets one work id and its own title; exponents survive into the chunks."""

from __future__ import annotations

import json

from ingest.corpus import ingest_corpus
from tests.conftest import CORPUS

#: Four papers citing Adam in three styles ("Diederik Kingma and Jimmy Ba. Adam: ...",
#: "Kingma, D. P. and Ba, J. Adam: ... Preprint arXiv:1412.6980, 2014.", ACL "... 2014. Adam: ...").
PAPERS = ["1706.03762", "2006.16236", "2020.acl-main.447", "2102.11174"]


def test_one_work_id_and_the_work_title_across_citation_styles(shared_data, tmp_path):
    pdfs, out = tmp_path / "pdfs", tmp_path / "home"
    pdfs.mkdir()
    for pid in PAPERS:
        (pdfs / f"{pid}.pdf").symlink_to(CORPUS / "pdfs" / f"{pid}.pdf")
    ingest_corpus(pdfs, out, metadata_file=CORPUS / "manifest.jsonl", images=False, progress=False, workers=1)
    refs = [json.loads(line) for line in (out / "references.jsonl").open()]
    adam = [r for r in refs if "adam: a method for stochastic optimization" in r["raw"].lower()]
    assert {r["paper_id"] for r in adam} == set(PAPERS)
    assert {r["work_id"] for r in adam} == {"title:adamamethodforstochasticoptimization"}
    assert {r["title"] for r in adam} == {"Adam: A method for stochastic optimization"}
    lstm = [r for r in refs if r["raw"].startswith("Hochreiter, S. and Schmidhuber, J. Long short-term memory.")]
    assert lstm and all(r["title"] == "Long short-term memory" for r in lstm)  # not "Neural computation, 9(8)..."
    chunks = (out / "chunks.jsonl").read_text(encoding="utf-8")
    assert "10^20" in chunks and "O(n^2" in chunks  # 1706.03762: training FLOPs, self-attention cost
