"""General methods of the extractive reader (issue 24, item 3): table header lines, numbers with
thousands separators, factor options read as the quotient of two table cells."""

from graph.records import Chunk
from lit3r.read.ratios import factor_options, pick_factor
from lit3r.read.rows import _cell
from lit3r.read.tables import parse_table

SPEED = ("Table 1: Efficiency in tokens per GPU per second.\n"
         "Model | PS | 1024 | 2048 | 94208\n"
         "LLaMA-FA2 | 0.4B | 35931 | 32453 | 4078\n"
         "TNL-LA1 | 0.4B | 41789 | 39043 | 6012\n"
         "TNL-LA2 | 0.4B | 38615 | 38680 | 38596\n"
         "LLaMA-FA2 | 1B | 14897 | 13990 | 3167\n"
         "TNL-LA2 | 1B | 20052 | 19967 | 20186")


def _table(text: str, page: int = 3, oid: str = "Table 1") -> Chunk:
    return Chunk(chunk_id=f"p::{oid}", paper_id="p", kind="table", page=page, section="4 Results", object_id=oid,
                 text=text, seq=page)


def test_a_header_line_that_starts_with_the_stub_header_is_never_a_value_row():
    t = parse_table(SPEED)
    assert t.columns == ["PS", "1024", "2048", "94208"]
    assert [r.key for r in t.rows][:2] == ["LLaMA-FA2", "TNL-LA1"]
    short = parse_table("Table 2: Speed.\nMethod | Bits/dim | Images/sec\nSoftmax | 3.47 | 0.004 | (1x)\n"
                        "LSH-1 | 3.39 | 0.015 | (3.75x)")
    assert short.columns[:2] == ["Bits/dim", "Images/sec"]  # labelled from the left, after the stub's header


def test_numbers_keep_their_thousands_separators_and_years_are_skipped():
    assert _cell("1,603 slides", {"type": "number"}) == 1603
    assert _cell("Gu et al., 2023 report 12.5", {"type": "number"}) == 12.5
    assert _cell("2,010 documents", {"type": "number"}) == 2010
    assert _cell("about 1,234.5 s", {"type": "number"}) == 1234.5


def test_a_factor_option_is_stated_by_the_quotient_of_the_cells_the_question_names():
    options = {"A": "about 1.07x", "B": "about 6.4x", "C": "about 9.5x", "D": "about 8.8x"}
    assert factor_options(options) == {"A": 1.07, "B": 6.4, "C": 9.5, "D": 8.8}
    q = ("A linear-attention paper reports throughput. By roughly what factor does TNL-LA2 exceed LLaMA-FA2 "
         "for the 0.4B models at the longest context listed (94,208 tokens)?")
    pick = pick_factor(q, options, [_table(SPEED)])
    assert pick is not None and pick.label == "C" and "38596 / 4078" in pick.text
    # 1B at 94208: 20186 / 3167 = 6.37: the question names the other column's size
    q1b = q.replace("0.4B", "1B")
    assert pick_factor(q1b, options, [_table(SPEED)]).label == "B"
    assert pick_factor("What is the throughput of TNL-LA2?", options, [_table(SPEED)]) is None  # asks no factor
    assert pick_factor(q, {"A": "LLaMA", "B": "TNL"}, [_table(SPEED)]) is None  # no factor options


def test_a_factor_repeated_in_an_appendix_table_cites_the_earlier_table():
    text = ("Table 2: CIFAR-10.\nMethod | Bits/dim | Images/sec\nSoftmax | 3.47 | 0.004 | (1x)\n"
            "LSH-1 | 3.39 | 0.015 | (3.75x)\nLinear (ours) | 3.40 | 17.85 | (4,462x)")
    appendix = _table(text.replace("Table 2", "Table 9") + "\nStateful | 3.47 | 0.32 | (80x)", 13, "Table 9")
    options = {"A": "about 1,190x", "B": "about 4,462x", "C": "about 3,570x", "D": "about 3.75x"}
    q = "By roughly what factor does the linear model's throughput exceed that of the 1-round LSH model?"
    pick = pick_factor(q, options, [appendix, _table(text, 7, "Table 2")])
    assert pick.label == "A" and pick.chunk.object_id == "Table 2"


def _paper(pid: str, title: str):
    from graph.records import Paper, Source

    return Paper(paper_id=pid, title=title, source=Source(file=f"{pid}.pdf", sha256="0" * 64), n_pages=1)


def test_an_option_that_lists_papers_is_read_as_corpus_papers_and_scored_against_the_citing_ones():
    from lit3r.read.citations import asks_citing, pick_listed

    corpus = [_paper("a", "Lightning Attention-2: A Free Lunch for Unlimited Sequence Lengths"),
              _paper("b", "Transformers are Multi-State RNNs"), _paper("c", "Griffin: Mixing Gated Linear Recurrences"),
              _paper("d", "Training-Free Long-Context Scaling of Large Language Models")]
    options = {"A": "Lightning Attention-2 and Griffin only",
               "B": "Lightning Attention-2, Transformers are Multi-State RNNs (TOVA), and Training-Free Long-Context "
                    "Scaling (Dual Chunk Attention)",
               "C": "Griffin, and an unknown survey"}
    label, f1 = pick_listed(options, {"a", "b", "d"}, corpus)
    assert label == "B" and f1["B"] == 1.0 and f1["C"] == 0.0
    assert asks_citing("Which corpus papers cite the paper that drops position embeddings?")
    assert not asks_citing("Which corpus papers does it cite, and for what?")


def test_rows_listed_in_brackets_are_keyed_as_listed():
    from lit3r.read.rows import rows_listed

    assert rows_listed("How many samples? Give one row per granularity (Tiny, Short, Long).") == ["Tiny", "Short",
                                                                                                  "Long"]
    assert rows_listed("Report the models [M0, M1, M2] on both sets.") == ["M0", "M1", "M2"]
    assert rows_listed("What does the method (a tree of summaries) retrieve?") == []


def test_an_option_whose_numbers_a_sentence_binds_to_other_words_is_not_stated_by_it():
    from lit3r.read.claims import Support, choose_option, units_of

    chunk = Chunk(chunk_id="p::c1", paper_id="p", kind="text", page=11, section="6 Results", seq=1,
                  text="During the deployment, each participant opened an average of 39.3 papers (SD=21) and saved "
                       "25.8 papers (SD=12.2) to their library. Each paper contained 41.0 (SD=24.8) citations.")
    options = {"A": "41.0 opened, 24.8 saved", "B": "25.8 opened, 39.3 saved", "C": "39.3 opened, 25.8 saved"}
    units = units_of(chunk, 1.0)
    q = "How many papers did each participant open and save during the deployment, on average?"
    assert choose_option(options, units, Support(q, units))[0] == "C"


def test_a_claim_about_one_paper_is_not_stated_by_another_papers_sentence():
    from lit3r.read.claims import Support, choose_option, terms, units_of

    mine = Chunk(chunk_id="a::c1", paper_id="a", kind="text", page=9, section="5 Human evaluation", seq=1,
                 text="Two expert writers rated the drafts on a 4-point scale (0-3) for 40 cases.")
    other = Chunk(chunk_id="b::c1", paper_id="b", kind="text", page=5, section="3 Study", seq=1,
                  text="We collect 3 annotations per summary and use a 5-point Likert scale.")
    options = {"A": "Multi-LexSum: 5-point Likert, 3 annotations per summary",
               "B": "Multi-LexSum: 4-point (0-3) scale, 2 expert writers"}
    units = units_of(mine, 1.0) + units_of(other, 1.0)
    q = "What rating scale does the Multi-LexSum paper use, and how many raters per item?"
    papers = {"a": terms("Multi-LexSum: Real-World Summaries"), "b": terms("LongEval: Guidelines")}
    assert choose_option(options, units, Support(q, units), papers)[0] == "B"


SECTIONED = ("Table 2: Comparison of datasets.\nDataset | Samples | Words\nTiny\nXSUM | 226,677 | 24.0\n"
             "Multi-LexSum D ->T | 1,603 | 24.7\nShort\nBillSum | 23,455 | 218.4\nMulti-LexSum D ->S | 3,138 | 130.2")


def test_one_cell_lines_that_head_the_rows_are_sections_and_a_section_key_reads_the_papers_own_row():
    from lit3r.read.claims import units_of
    from lit3r.read.rows import extractive_rows

    t = parse_table(SECTIONED)
    assert [(r.group, r.key) for r in t.rows][1:3] == [("Tiny", "Multi-LexSum D ->T"), ("Short", "BillSum")]
    centred = parse_table("Table 6: GSM.\nLLMs | Methods | GSM\nVanilla | 77.79\nChatGPT\nCoT | 78.77")
    assert [r.group for r in centred.rows] == ["", ""]  # a label no row is headed by is not a section
    chunk = _table(SECTIONED)
    schema = [{"name": "Granularity", "type": "string", "is_row_key": True},
              {"name": "Samples", "type": "number", "is_row_key": False}]
    rows = extractive_rows("How many samples? Give one row per granularity (Tiny, Short).", schema, [chunk],
                           {"p": "Multi-LexSum: Real-World Summaries"}, units_of(chunk, 1.0), {"p": ["Multi-LexSum"]})
    assert rows == [{"Granularity": "Tiny", "Samples": 1603}, {"Granularity": "Short", "Samples": 3138}]


def test_a_cell_comes_from_the_column_whose_label_holds_most_of_the_columns_words_and_fills_one_column():
    from lit3r.read.claims import units_of
    from lit3r.read.rows import extractive_rows

    text = ("Table 2: Datasets.\nDataset | Samples | Source Words | Target Words\n"
            "XSUM | 226,677 | 454.5 | 24.0\nMulti-LexSum | 1,603 | 119072.6 | 24.7")
    chunk = _table(text)
    schema = [{"name": "Dataset", "type": "string", "is_row_key": True},
              {"name": "Samples", "type": "number", "is_row_key": False},
              {"name": "Avg. target words", "type": "number", "is_row_key": False}]
    rows = extractive_rows("Samples and average target words of Multi-LexSum and XSUM?", schema, [chunk],
                           {"p": "Multi-LexSum"}, units_of(chunk, 1.0))
    assert {"Dataset": "Multi-LexSum", "Samples": 1603, "Avg. target words": 24.7} in rows


def test_options_with_the_same_numbers_in_another_order_are_told_apart_by_the_roles_of_their_cells():
    from lit3r.read.claims import Support, choose_option, units_of
    from lit3r.read.roles import role_choice

    chunk = _table("Table 3: Ablation of the components on the benchmark.\n"
                   "Version | Base | Ours (w/o filter) | Ours\n"
                   "Accuracy | 0.41 | 0.52 | 0.55\n"
                   "#Steps | - | 1200 | 1130")
    options = {"A": "1130 vs 1200", "B": "1200 vs 1130", "C": "565 vs 1200"}
    units = units_of(chunk, 1.0)
    q = "How many steps does the full method take, compared with the variant without the filter?"
    choice, per = choose_option(options, units, Support(q, units))
    assert choice is None and per["A"].score == per["B"].score > 0  # the same numbers: equal support
    assert role_choice(q, options, ["A", "B"], units) == "A"
    swapped = "How many steps does the variant without the filter take, compared with the full method?"
    assert role_choice(swapped, options, ["A", "B"], units) == "B"
    assert role_choice("How many steps does the full method take?", options, ["A", "B"], units) is None


def test_a_header_line_of_integers_continued_on_the_next_line_labels_the_columns():
    sweep = parse_table("Table 2: Cost for each window length.\n"
                        "Window | 64 | 128 | 1,024\n"
                        "length | (full)\n"
                        "Latency (ms) | 3.2 | 5.9 | 40.1\n"
                        "Max batch | 96 | 48 | 6")
    assert sweep.columns == ["64", "128", "1,024 (full)"]
    assert [(r.key, r.cells) for r in sweep.rows] == [("Latency (ms)", ["3.2", "5.9", "40.1"]),
                                                      ("Max batch", ["96", "48", "6"])]
    plain = parse_table("Table 3: Scores.\nModel | A | B\nX | 64 | 128\nnotes | here\nY | 1 | 2")
    assert [r.key for r in plain.rows] == ["X", "Y"]  # a value row of integers followed by text that is no continuation


CENTRED = ("Table 4: Accuracy per dataset and model.\n"
           "Dataset | Method | Model-S | Model-L\n"
           "Greedy | 11.10 | 20.20\n"
           "Voting | 12.30 | 21.40\n"
           "SetOne\n"
           "Weighted | 13.50 | 22.60\n"
           "Greedy | 30.10 | 40.20\n"
           "Voting | 31.30 | 41.40\n"
           "SetTwo\n"
           "Weighted | 32.50 | 42.60")


def test_one_cell_labels_centred_among_the_rows_group_the_rows_nearest_to_them():
    table = parse_table(CENTRED)
    assert [(r.group, r.key) for r in table.rows] == [("SetOne", "Greedy"), ("SetOne", "Voting"),
                                                      ("SetOne", "Weighted"), ("SetTwo", "Greedy"),
                                                      ("SetTwo", "Voting"), ("SetTwo", "Weighted")]


def test_a_table_answer_reads_the_block_whose_group_the_question_names():
    from lit3r.read.claims import units_of
    from lit3r.read.rows import extractive_rows

    chunk = _table(CENTRED)
    schema = [{"name": "Method", "type": "string", "is_row_key": True}, {"name": "Model-S", "type": "number"}]
    q = "On SetTwo, what accuracy do the methods [Greedy, Voting] reach with Model-S?"
    rows = extractive_rows(q, schema, [chunk], {"p": "A paper"}, units_of(chunk, 1.0))
    assert rows == [{"Method": "Greedy", "Model-S": 30.1}, {"Method": "Voting", "Model-S": 31.3}]


def test_an_option_is_read_from_the_named_cells_of_a_value_grid_in_a_figures_text():
    from lit3r.read.grids import pick_grid

    fig = Chunk(chunk_id="p::f2", paper_id="p", kind="figure", page=5, section="4 Results", object_id="Figure 2",
                text="Figure 2: Recall per task and input length (rows: tasks t1-t3).\n"
                     "1k 2k 4k 8k Input length t3 90 70 50 10 t2 95 80 60 30 t1 99 85 75 40", seq=5)
    options = {"A": "99 and 75", "B": "99 and 40", "C": "95 and 30", "D": "90 and 40"}
    q = "A paper tests recall over lengths up to 8k. For task t1, what recall is shown at 1k and at 8k?"
    pick = pick_grid(q, options, [fig])
    assert pick is not None and pick.label == "B" and pick.chunk is fig
    assert pick_grid("For task t1, what recall is shown at 1k?", options, [fig]) is None  # one cell: no option
    assert pick_grid("For task t9, what recall is shown at 1k and at 8k?", options, [fig]) is None
