"""A paper pool known only by metadata (LitTraceQA's paper_pool_partial.jsonl, real titles)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from lit3r.cli import main
from lit3r.config import load_settings
from lit3r.pipeline.engine import Engine
from tests.conftest import SHARED

POOL = SHARED / "littraceqa" / "paper_pool_partial.jsonl"


def test_metadata_only_pool_is_searchable_by_title(tmp_path):
    lines = POOL.read_text(encoding="utf-8").splitlines()[:400]
    pool = tmp_path / "pool.jsonl"
    odd = [{"paper_id": "cs/0112017", "title": "An old arXiv id with a slash"},
           {"paper_id": "../escape", "title": "An id that must not leave the corpus folder"}]
    pool.write_text("\n".join(lines + [json.dumps(o) for o in odd]) + "\n" + json.dumps({"paper_id": "untitled_1"}) + "\n")
    home = tmp_path / "home"
    runner = CliRunner()
    res = runner.invoke(main, ["--home", str(home), "ingest", "--metadata-only", "--metadata", str(pool)])
    assert res.exit_code == 0, res.output
    assert "402 paper(s)" in res.output and "1 skipped" in res.output
    assert not (tmp_path / "escape.json").exists() and (home / ".state" / "..%2Fescape.json").is_file()
    again = runner.invoke(main, ["--home", str(home), "ingest", "--metadata-only", "--metadata", str(pool), "--json"])
    assert json.loads(again.output)["ingest"]["unchanged"] == 402  # idempotent
    engine = Engine(load_settings(home=home))
    p = engine.graph.paper("acl2025_00005")
    assert p.parser == "metadata" and p.n_pages == 0 and p.venue == "ACL" and p.year == 2025
    [chunk] = engine.graph.chunks_of("acl2025_00005")
    assert chunk.kind == "title_abstract" and chunk.text.startswith("[ACL 2025] 500x")
    out = engine.ask("How much does 500xCompressor outperform ICAE on NaturalQ under 500-to-1 compression?",
                     answer=False)
    assert "acl2025_00005" in out.candidates[:3]
    assert out.relate.sources["coupling"] == []  # no references in a metadata-only pool
    assert engine.graph.paper("cs/0112017").title.startswith("An old arXiv id")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    res = runner.invoke(main, ["--home", str(tmp_path / "h2"), "ingest", "--metadata-only", "--metadata", str(empty)])
    assert res.exit_code == 1 and "no paper with a title" in res.output
    usage = runner.invoke(main, ["--home", str(home), "ingest", "--metadata-only"])
    assert usage.exit_code == 2 and "needs --metadata" in usage.output
