from graph.records import MAX_CHUNK_CHARS
from ingest.chunking import build_chunks, split_text, title_abstract_text, venue_year_tag
from ingest.document import Block, ParsedDocument, RawReference
from ingest.references import build_references


def test_split_text_respects_limit_and_sentences():
    sent = "This sentence has exactly some words in it. "
    text = sent * 100
    pieces = split_text(text, limit=200)
    assert all(len(p) <= 200 for p in pieces)
    assert all(p.endswith(".") for p in pieces)
    assert " ".join(pieces).split() == text.split()


def test_split_text_cuts_a_giant_sentence_at_words():
    text = "word " * 1000
    pieces = split_text(text)
    assert all(len(p) <= MAX_CHUNK_CHARS for p in pieces)
    assert sum(len(p.split()) for p in pieces) == 1000


def test_venue_year_tag_only_when_both_known():
    assert venue_year_tag("ACL", 2020) == "[ACL 2020]"
    assert venue_year_tag("ACL", None) == ""
    assert title_abstract_text("T", "A", "ACL", 2020) == "[ACL 2020] T\n\nA"
    assert title_abstract_text("T", "", None, 2020) == "T"


def _doc():
    p = "A paragraph sentence. " * 20  # 440 chars
    return ParsedDocument(
        n_pages=3,
        blocks=[
            Block("heading", 1, "1 Introduction"),
            Block("paragraph", 1, p),
            Block("paragraph", 1, p),
            Block("paragraph", 2, p),  # page break: new chunk
            Block("heading", 2, "2 Method"),  # heading: new chunk
            Block("paragraph", 2, p),
            Block("table", 2, "a | b\n1 | 2", "Table 1", "Table 1: Results."),
            Block("paragraph", 2, p * 6),  # 2,640 chars: split
            Block("equation", 3, "y = f(x)", "Equation 2"),
            Block("algorithm", 3, "step 1", "Algorithm 1", "Algorithm 1 Search"),
        ],
    )


def test_build_chunks_boundaries_and_kinds():
    refs = build_references("p", [RawReference(3, "A. Author. 2020. A title of a work. In Venue.", 1)])
    chunks = build_chunks("p", _doc(), title="T", abstract="Abs", venue="ACL", year=2020, references=refs)
    assert [c.seq for c in chunks] == list(range(len(chunks)))
    assert chunks[0].kind == "title_abstract" and chunks[0].text.startswith("[ACL 2020] T")
    text = [c for c in chunks if c.kind == "text" and c.section != "References"]
    # page 1: two paragraphs packed; page 2 before the heading; after the heading; the long one in 2 parts
    assert [(c.page, c.section) for c in text] == [
        (1, "1 Introduction"), (2, "1 Introduction"), (2, "2 Method"), (2, "2 Method"), (2, "2 Method")]
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in chunks)
    table = next(c for c in chunks if c.kind == "table")
    assert table.object_id == "Table 1" and table.text.startswith("Table 1: Results.\na | b")
    eqs = [c for c in chunks if c.kind == "equation"]
    assert [c.object_id for c in eqs] == ["Equation 2", "Algorithm 1"]
    ref = chunks[-1]
    assert (ref.section, ref.object_id, ref.page) == ("References", "Citation 1", 3)


def test_build_chunks_is_deterministic():
    a = build_chunks("p", _doc(), title="T", abstract="", venue=None, year=None)
    b = build_chunks("p", _doc(), title="T", abstract="", venue=None, year=None)
    assert [c.model_dump() for c in a] == [c.model_dump() for c in b]
    assert a[0].section == "Title"
