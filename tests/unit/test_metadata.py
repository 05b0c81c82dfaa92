import json

import pytest

from ingest.metadata import MetadataError, load_metadata


def test_metadata_fields_and_aliases(tmp_path):
    f = tmp_path / "m.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in [
        {"paper_id": "a", "title": "T", "authors": "X Y; Z W", "venue": "ACL", "year": 2020, "pdf": "files/a1.pdf"},
        {"id": "b", "venue_or_arxiv": "NIPS 2017 / arXiv:1706.03762v7 [cs.CL]", "year": 2017},
        {"id": "c", "venue_or_arxiv": "arXiv:2002.09402v3 [cs.LG]"},
    ]) + "\n\n")
    m = load_metadata(f)
    assert m["a"].authors == ["X Y", "Z W"] and m["a1"].paper_id == "a"
    assert m["b"].venue == "NIPS" and m["c"].venue == "arXiv"


def test_bad_metadata_line_names_the_line(tmp_path):
    f = tmp_path / "m.jsonl"
    f.write_text('{"paper_id": "a"}\n{"title": "no id"}\n')
    with pytest.raises(MetadataError, match=r"m.jsonl:2"):
        load_metadata(f)
    with pytest.raises(MetadataError, match="not found"):
        load_metadata(tmp_path / "missing.jsonl")
