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


# Entries as the PyMuPDF parser reads them from the reference lists of corpus PDFs (issue 16, item 7a).
ADAM_NEURIPS = "Diederik Kingma and Jimmy Ba. Adam: A method for stochastic optimization. In ICLR, 2015."
ADAM_LNCS = "Kingma, D. P. and Ba, J. Adam: A method for stochastic optimization. Preprint arXiv:1412.6980, 2014."
ADAM_ICML = ("Kingma, D. P. and Ba, J. Adam: A method for stochastic optimization. arXiv preprint arXiv:1412.6980, "
             "2014.")
ADAM_ACL = ("Diederik Kingma and Jimmy Ba. 2014. Adam: A method for stochastic optimization. In International "
            "Conference on Learning Representations.")
GPT2_BLOG = ("Radford, A., Wu, J., Child, R., Luan, D., Amodei, D., and Sutskever, I. Language models are "
             "unsupervised multitask learners. OpenAI Blog, 2019.")
GPT2_VOLUME = ("Radford, A., Wu, J., Child, R., Luan, D., Amodei, D., and Sutskever, I. Language models are "
               "unsupervised multitask learners. OpenAI Blog, 1(8):9, 2019.")
GPT2_NAMES = ("Alec Radford, Jeffrey Wu, Rewon Child, David Luan, Dario Amodei, and Ilya Sutskever. Language models "
              "are unsupervised multitask learners. OpenAI Blog, 1(8):9, 2019.")
LSTM = "Hochreiter, S. and Schmidhuber, J. Long short-term memory. Neural computation, 9(8):1735–1780, 1997."
LNCS_COLON = ("Ballé, J., Laparra, V., Simoncelli, E.P.: End-to-end optimized image compression. In: 5th International "
              "Conference on Learning Representations, ICLR 2017 (2017)")


def test_titles_without_venue_or_author_prefix():
    for raw in (ADAM_NEURIPS, ADAM_LNCS, ADAM_ICML, ADAM_ACL):
        assert parse_title(raw) == "Adam: A method for stochastic optimization", raw
    for raw in (GPT2_BLOG, GPT2_VOLUME, GPT2_NAMES):
        assert parse_title(raw) == "Language models are unsupervised multitask learners", raw
    assert parse_title(LSTM) == "Long short-term memory"
    assert parse_title(LNCS_COLON) == "End-to-end optimized image compression"
    assert parse_title("Tri Dao and Albert Gu. Transformers are ssms: Generalized models and efficient algorithms. "
                       "arXiv preprint arXiv:2405.21060, 2024.").startswith("Transformers are ssms")  # not "Trans..."


def test_a_title_that_ends_in_a_year_is_not_taken_for_a_venue():
    assert parse_title("Stephen Merity, Caiming Xiong, James Bradbury, and Richard Socher. Pointer sentinel mixture "
                       "models, 2016.") == "Pointer sentinel mixture models"
    assert parse_title("Noam Shazeer. Glu variants improve transformer, 2020.") == "Glu variants improve transformer"
    assert parse_title("Hyung Won Chung, Le Hou, Ed H. Chi, Denny Zhou, Quoc V. Le, and Jason Wei. Scaling "
                       "instruction-finetuned language models, 2022.") == "Scaling instruction-finetuned language models"
    assert parse_title("Joel Hestness, Heewoo Jun, Md. Mostofa Ali Patwary, and Yanqi Zhou. Deep learning scaling is "
                       "predictable, empirically, 2017.") == "Deep learning scaling is predictable, empirically"


def test_one_work_id_for_a_work_cited_in_several_styles_by_several_papers():
    from ingest.references import consolidate_work_ids

    refs = []
    for i, raw in enumerate((ADAM_NEURIPS, ADAM_LNCS, ADAM_ICML, ADAM_ACL, GPT2_BLOG, GPT2_VOLUME, GPT2_NAMES)):
        refs += build_references(f"p{i}", [RawReference(9, raw, 1), RawReference(9, LSTM, 2)])
    ids = {r.raw: r.work_id for r in consolidate_work_ids(refs)}
    assert {ids[r] for r in (ADAM_NEURIPS, ADAM_LNCS, ADAM_ICML, ADAM_ACL)} == {
        "title:adamamethodforstochasticoptimization"}
    assert {ids[r] for r in (GPT2_BLOG, GPT2_VOLUME, GPT2_NAMES)} == {
        "title:languagemodelsareunsupervisedmultitasklearners"}
    assert ids[LSTM] == "title:longshorttermmemory"
