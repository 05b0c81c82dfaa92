import pytest
from pydantic import ValidationError

from graph.records import MAX_CHUNK_CHARS, Chunk, Paper, Reference, Source, chunk_id_for


def chunk(**kw):
    base = dict(chunk_id=chunk_id_for("p1", 0), paper_id="p1", kind="text", page=1, text="x", seq=0)
    base.update(kw)
    return Chunk(**base)


def test_chunk_round_trips_as_json():
    c = chunk(kind="table", object_id="Table 4", section="Results", image="images/p1/p001-table-4.png")
    assert Chunk.model_validate_json(c.model_dump_json()) == c


@pytest.mark.parametrize("bad", [dict(page=0), dict(kind="caption"), dict(text="y" * (MAX_CHUNK_CHARS + 1)),
                                 dict(text=""), dict(object_id="table four"), dict(seq=-1)])
def test_chunk_validation_rejects(bad):
    with pytest.raises(ValidationError):
        chunk(**bad)


def test_object_id_forms():
    for oid in ("Table 4", "Figure 12", "Equation 3", "Algorithm 1", "Citation 57", "Table A1"):
        assert chunk(object_id=oid).object_id == oid


def test_ids_are_stable_strings():
    assert chunk_id_for("2007.14062", 12) == "2007.14062::c0012"


def test_paper_and_reference_validation():
    src = Source(file="a.pdf", sha256="0" * 64)
    assert Paper(paper_id="a", source=src, n_pages=3).model_dump(mode="json")["n_pages"] == 3
    with pytest.raises(ValidationError):
        Paper(paper_id="a", source=src, n_pages=-1)
    with pytest.raises(ValidationError):
        Source(file="a.pdf", sha256="xyz")
    with pytest.raises(ValidationError):
        Reference(paper_id="a", number=0, raw="x", work_id="w")
