"""Citation questions answered from the citation graph (issue 24, item 3), through `lit3r ask` on
the two-paper hashing home (1706.03762 "Attention Is All You Need", 2007.14062 "Big Bird", which
cites it)."""

import json
import subprocess
import sys

from tests.conftest import ROOT


def _ask(home, question: str, *extra: str) -> dict:
    res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(home), "ask", "--llm", "none", "--json",
                          question, *extra], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)["submission"]


def test_which_papers_cite_a_named_paper_come_from_the_citation_graph_with_their_reference_entries(hashing_home):
    sub = _ask(hashing_home, "Which corpus papers cite the paper Attention Is All You Need?")
    assert [p["paper_id"] for p in sub["gold_papers"]] == ["1706.03762", "2007.14062"]
    cited = [e for e in sub["evidence"] if e["paper_id"] == "2007.14062"]
    assert cited and cited[0]["locator"]["section"] == "References" and cited[0]["locator"].get("citation_id")
    assert "Big Bird" in sub["answer"]["freeform"]["text"]
