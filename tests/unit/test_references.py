from ingest.document import RawReference
from ingest.references import TitleResolver, build_references, parse_title, work_id_for

# Invented entries in the common styles.
ACL = "Ada Lovelace and Alan Turing. 2021. Counting sheep with transformers. In Proceedings of ACL, pages 1-9."
NEURIPS = "Ada Lovelace, Alan Turing, and Grace Hopper. Counting sheep with transformers. In NeurIPS, 2021."
IEEE = '[3] A. Lovelace and A. Turing, "Counting sheep with transformers," in Proc. ACL, 2021.'
ELSEVIER = "Lovelace, A., Turing, A., 2021. Counting sheep with transformers. Journal of Sheep 12, 1-9."


def test_parse_title_in_common_styles():
    for raw in (ACL, NEURIPS, IEEE, ELSEVIER):
        assert parse_title(raw) == "Counting sheep with transformers", raw


def test_same_work_same_id_across_styles():
    ids = {work_id_for(r, parse_title(r), None) for r in (ACL, NEURIPS, IEEE, ELSEVIER)}
    assert ids == {"title:countingsheepwithtransformers"}


def test_work_id_fallbacks():
    assert work_id_for("x arXiv:2007.14062", None, None) == "arxiv:2007.14062"
    assert work_id_for("see doi 10.1000/xyz123.", None, None) == "doi:10.1000/xyz123"
    assert work_id_for("anything", "Counting sheep with transformers", "p9") == "paper:p9"
    assert work_id_for("???", None, None).startswith("raw:")


def test_resolver_matches_corpus_titles_inside_raw_text():
    res = TitleResolver({"p9": "Counting Sheep with Transformers", "p1": "Short"})
    assert res.resolve(ACL) == "p9"
    assert res.resolve(ACL, citing="p9") is None  # never itself
    assert res.resolve("Short. 2020. Something else entirely.") is None  # too short to trust


def test_build_references_numbering():
    numbered = [RawReference(5, ACL, 1), RawReference(5, NEURIPS, 2), RawReference(6, ELSEVIER, 3)]
    refs = build_references("p", numbered)
    assert [r.number for r in refs] == [1, 2, 3] and refs[2].page == 6
    author_year = [RawReference(5, ACL), RawReference(5, NEURIPS)]
    assert [r.number for r in build_references("p", author_year)] == [1, 2]
    broken = [RawReference(5, ACL, 4), RawReference(5, NEURIPS, 2)]
    assert [r.number for r in build_references("p", broken)] == [1, 2]
