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


def test_each_bad_metadata_line_is_reported_and_the_rest_is_read(tmp_path):
    f = tmp_path / "m.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join([  # a UTF-8 byte-order mark and Windows line ends
        json.dumps({"id": "a", "title": "First", "pdf": "files/a1.pdf"}).encode(),
        b'{"id": "b", "title": ',
        json.dumps({"id": "a", "title": "Second"}).encode(),
        json.dumps({"id": "c", "pdf": "other/a1.pdf"}).encode(),
        '{"id": "d", "title": "Caf\u00e9"}'.encode("latin-1"),
        b'["a list"]',
        json.dumps({"id": "e", "year": "soon"}).encode(),
        json.dumps({"id": "f", "title": "Caf\u00e9"}).encode(),
    ]) + b"\r\n")
    problems: list[str] = []
    m = load_metadata(f, problems)
    assert sorted({x.paper_id for x in m.values()}) == ["a", "f"]
    assert m["a"].title == "First" and m["a"].where == f"{f}:1" and m["f"].title == "Caf\u00e9"
    assert [p.split(": ", 1)[0] for p in problems] == [f"{f}:{n}" for n in (2, 3, 4, 5, 6, 7)]
    assert "not valid JSON" in problems[0] and "paper_id 'a' is already on line 1" in problems[1]
    assert "pdf 'other/a1.pdf' is already named on line 1" in problems[2]
    assert "not UTF-8 (byte 0xe9" in problems[3] and "not a JSON object" in problems[4]
    assert "field 'year'" in problems[5]
    with pytest.raises(MetadataError, match=r"m.jsonl:2: not valid JSON"):  # without a list: the first raises
        load_metadata(f)
    f.write_text(json.dumps({"id": "u", "title": "Unicode \u00e9"}) + "\n", encoding="utf-16")  # with its BOM
    assert load_metadata(f, problems := [])["u"].title == "Unicode \u00e9" and problems == []


def test_ids_from_file_names_and_the_papers_quoting_rule():
    from click import BadParameter

    from ingest.corpus import paper_id_from_name
    from lit3r.cli.params import PAPER_IDS

    names = {"Big Bird, v2 (2020)": "Big_Bird_v2_2020", "2007.14062": "2007.14062", "a  b": "a_b",
             "x;y=z": "x_y_z", "Ünïcode-naïve_1": "Ünïcode-naïve_1", "(1)": "1", "!!!": "paper"}
    assert {n: paper_id_from_name(n) for n in names} == names
    ids = [paper_id_from_name(n) for n in names]
    assert PAPER_IDS.convert(",".join(ids), None, None) == ids  # every such id passes back as it is
    # ids from metadata with a comma, a space or a quote: CSV quoting
    assert PAPER_IDS.convert('2007.14062, "my paper, v2","say ""hi"""', None, None) == \
        ["2007.14062", "my paper, v2", 'say "hi"']
    for bad, msg in (('"unclosed', "bad quoting"), ("a b", "separate paper ids with commas"), (" , ", "is empty")):
        with pytest.raises(BadParameter, match=msg):
            PAPER_IDS.convert(bad, None, None)
