"""Pure parts of the readers: listed names, extractive table rows, the stage-2 reply model."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from graph.records import Chunk
from lit3r.read.llm import synthesis_model, user_message
from lit3r.read.rows import extractive_rows
from lit3r.read.scoring import question_entities


def test_question_entities():
    assert question_entities("What are the 2-step FID scores on CIFAR-10 for TCM, sCT, ECM-XL (100k iterations), "
                             "and IMM?") == ["TCM", "sCT", "ECM-XL", "IMM"]
    assert question_entities("What percentage is in SUN RGB-D, ARKitScenes, and KITTI?") == \
        ["SUN RGB-D", "ARKitScenes", "KITTI"]
    assert question_entities("Which NAACL 2025 papers mention MCTS in their framework figure?") == []
    assert question_entities("Across all venues, among 2025 methods, what base model does each use?") == []


def test_extractive_rows_read_values_after_the_row_key():
    table = Chunk(chunk_id="p::c0003", paper_id="p", kind="table", page=6, object_id="Table 2", seq=3,
                  text="Table 2: FID on CIFAR-10\nMethod | 1-step | 2-step\nTCM | 2.46 | 2.05\nsCT | 2.85 | 2.06")
    schema = [{"name": "Method", "type": "string", "is_row_key": True}, {"name": "FID", "type": "number"}]
    rows = extractive_rows("What are the FID scores for TCM, sCT, and IMM?", schema, [table], {"p": "A paper"})
    assert rows == [{"Method": "TCM", "FID": 2.46}, {"Method": "sCT", "FID": 2.85}, {"Method": "IMM", "FID": None}]
    rows = extractive_rows("Which papers report FID?", [{"name": "Paper Title", "type": "string", "is_row_key": True}],
                           [table], {"p": "A paper", "q": "Another paper"})
    assert rows == [{"Paper Title": "A paper"}, {"Paper Title": "Another paper"}]


def test_synthesis_model_asks_only_for_the_requested_answers():
    schema = [{"name": "Method", "type": "string", "is_row_key": True}, {"name": "2-step FID", "type": "number"}]
    model = synthesis_model(["multiple_choice", "table"], ["A", "B", "C", "D"], schema)
    js = model.model_json_schema()
    assert list(js["properties"]) == ["papers", "evidence", "calculation", "choice", "rows"]  # work before answer
    assert js["required"] == list(js["properties"])  # grammar backends write required fields first (issue 14, item 5)
    out = model.model_validate_json('{"papers": ["p"], "evidence": ["E1"], "choice": "B", '
                                    '"rows": [{"Method": "TCM", "2-step FID": 2.05}]}')
    assert out.rows[0].model_dump(by_alias=True) == {"Method": "TCM", "2-step FID": 2.05}
    with pytest.raises(ValidationError):
        model.model_validate_json('{"choice": "E", "rows": []}')
    assert "answer" in synthesis_model(["freeform"]).model_json_schema()["properties"]
    assert "calculation" not in synthesis_model(["table"], [], schema).model_json_schema()["properties"]


def test_user_message_attaches_crops_of_figures_and_tables(tmp_path):
    png = b"\x89PNG\r\n\x1a\n" + b"0" * 20
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "f.png").write_bytes(png)
    fig = Chunk(chunk_id="p::c0001", paper_id="p", kind="figure", page=2, object_id="Figure 1", seq=1,
                text="Figure 1: overview", image="images/f.png")
    text = Chunk(chunk_id="p::c0002", paper_id="p", kind="text", page=2, seq=2, text="body")
    msg = user_message("read this", [text, fig], tmp_path, max_images=4)
    assert msg["content"][0] == {"type": "text", "text": "read this"}
    assert msg["content"][1]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    assert user_message("read this", [text, fig], None, 4) == {"role": "user", "content": "read this"}


# ----------------------------------------------------------------------------- options by evidence (issue 13)

import re  # noqa: E402

from lit3r.read import claims  # noqa: E402


def _units(*texts: str, paper: str = "p") -> list:
    out = []
    for k, text in enumerate(texts):
        kind = "table" if "|" in text else "text"
        ref = re.match(r"\[(\d+)\]", text)
        chunk = Chunk(chunk_id=f"{paper}::c{k:04d}", paper_id=paper, kind=kind, page=k + 1, seq=k, text=text,
                      object_id="Table 1" if kind == "table" else f"Citation {ref.group(1)}" if ref else None)
        out += claims.units_of(chunk)
    return out


def test_a_unit_that_negates_an_option_counts_against_it():
    """ALiBi's wording (2108.12409): "not learned" contradicts "learned per head"; the question's
    "non-learned" agrees with it instead of penalising it."""
    question = ("A positional method adds a fixed, non-learned penalty proportional to the query-key distance, "
                "scaled by a head-specific slope m. How are the slopes chosen for a model with 8 heads?")
    units = _units("m is a head-specific scalar that is set and not learned throughout training.",
                   "For our models with 8 heads, the slopes that we used are the geometric sequence: 1/2^1, 1/2^2, "
                   "..., 1/2^8.")
    options = {"A": "A geometric sequence (1/2, 1/4, ..., 1/256 for 8 heads)", "B": "Learned per head during training"}
    label, per_option = claims.choose_option(options, units, claims.Support(question, units))
    assert label == "A"
    assert per_option["B"].against is not None and "not learned" in per_option["B"].against.text
    assert per_option["B"].score < 0 < per_option["A"].score
    assert claims.negated_terms("a fixed, non-learned penalty") == {"learn"}


def test_a_multi_part_option_is_supported_part_by_part_across_papers():
    """A multi-paper option ("X; value; value") has each part found in its own paper."""
    question = "Which paper is [45], what ROUGE-1 does it report on arXiv, and what does the Terraformer get?"
    units = (_units("[45] Manzil Zaheer et al. Big bird: Transformers for longer sequences.", paper="a")
             + _units("Table 4: arXiv summarization\nModel | R-1\nBigBird-Pegasus | 46.63\nBigBird-RoBERTa | 41.22",
                      paper="b")
             + _units("Table 5: arXiv summarization\nModel | R-1\nTerraformer | 45.40", paper="c"))
    options = {"A": "Big Bird; 46.63; Terraformer 45.40 (lower)", "B": "Longformer; 46.63; Terraformer 45.40",
               "C": "Pegasus; 44.21; Terraformer 45.40 (higher)"}
    label, per_option = claims.choose_option(options, units, claims.Support(question, units))
    assert label == "A"
    found = per_option["A"].units
    assert [u.chunk.paper_id if u else None for u in found][:2] == ["a", "b"]
    assert per_option["A"].trace()["evidence"][1] == {"chunk_id": "b::c0000", "text": "BigBird-Pegasus, R-1: 46.63"}


def test_no_letter_when_the_options_tie():
    units = _units("Table 1: Results\nModel | Acc\nOurs | 80.5\nBase | 70.1")
    label, per_option = claims.choose_option({"A": "Ours", "B": "Base"}, units,
                                             claims.Support("Which model is listed?", units))
    assert label is None and per_option["A"].score == per_option["B"].score


def test_own_names_of_a_paper():
    assert claims.own_names("PaSa: An LLM Agent for Comprehensive Academic Paper Search") == ["PaSa"]
    abstract = ("To enhance reasoning of Large Language Models (LLMs), we introduce a simple, yet general and effective "
                "prompting method, RE2, i.e., Re-Reading the question as input. RE2 shifts the focus to the input. "
                "RE2 is compatible with most prompting methods.")
    assert claims.own_names("Re-Reading Improves Reasoning in Large Language Models", abstract) == ["RE2"]
    assert claims.own_names("Attention Is All You Need", "We propose a new simple network architecture.") == []


def test_numbers_in_a_sentence_pair_with_the_columns_in_order():
    """Two papers state the same dataset's split differently (DTC-WSI and FOCUS wording)."""
    from lit3r.read.rows import _cell_near

    cols = [{"name": "Paper", "type": "string", "is_row_key": True},
            {"name": "LUAD slides", "type": "number"}, {"name": "LUSC slides", "type": "number"}]
    dtc = ("TCGA-NSCLC (2018) has 993 WSIs, with 507 slides corresponding to lung adenocarcinoma (LUAD) and 486 to "
           "lung squamous cell carcinoma (LUSC).")
    focus = "two lung cancer subtypes: lung adenocarcinoma (LUAD, 541 slides) and lung squamous cell carcinoma (LUSC, 512 slides)."
    assert [_cell_near(dtc, c, cols[1:]) for c in cols[1:]] == [507, 486]
    assert [_cell_near(focus, c, cols[1:]) for c in cols[1:]] == [541, 512]
    assert _cell_near("no numbers about LUAD here", cols[1], cols[1:]) is None


def test_llm_table_rows_lose_prompt_labels_and_ids():
    """Issue 14, item 9, replayed: {"Paper": "2401.06104", "Feature map phi": "P2"}."""
    from lit3r.read.llm import clean_rows

    notes: list[str] = []
    rows = clean_rows([{"Paper": "2401.06104", "Feature map phi": "P2"}, {"Paper": "[2006.16236]", "Feature map phi": "elu(x)+1"}],
                      {"2401.06104": "Transformers are Multi-State RNNs", "2006.16236": "Transformers are RNNs"}, notes)
    assert rows == [{"Paper": "Transformers are Multi-State RNNs", "Feature map phi": None},
                    {"Paper": "Transformers are RNNs", "Feature map phi": "elu(x)+1"}]
    assert notes == ["stage 2 table: paper ids replaced by titles", "stage 2 table: passage labels emptied"]


# ----------------------------------------------------------------------------- evidence and table cells (issue 13)

def test_digits_inside_a_name_are_not_numbers():
    assert claims.numbers("FLAN-T5-XXL (11B) reaches 80.59 on GSM8K") == {"11", "80.59"}
    assert claims.numbers("a 1.5B-parameter amateur and LLaMA-65B") == {"1.5", "65"}


def test_stub_columns_left_of_the_leaf_headers():
    """ "Method | Size" names the stub column left of the "N-CoT | P-CoT" pairs, and the top
    header spans the pairs only (ReFT's Table 2 layout)."""
    from lit3r.read.tables import parse_table

    t = parse_table("Table 2: Value accuracy.\nGSM8K | SVAMP\nMethod | Size\nN-CoT | P-CoT | N-CoT | P-CoT\n"
                    "A + SFT | 7B | 43.59 | 63.68 | 58.09 | 75.40\nA + Ours | 7B | 53.30 | 75.28 | 64.50 | 79.19")
    assert t.columns == ["Size", "GSM8K N-CoT", "GSM8K P-CoT", "SVAMP N-CoT", "SVAMP P-CoT"]
    assert t.rows[1].cells[2] == "75.28"


def _row_cells(text: str, paper: str = "p") -> list:
    return [u for u in _units(text, paper=paper) if u.kind == "cell"]


def test_a_best_result_is_the_best_own_row_the_question_allows():
    from lit3r.read.rows import _best_result

    cells = _row_cells("Table 2: Results of 7B models with greedy decoding.\nModel | GSM8K | MATH\n"
                       "Base-7B: SFT | 77.9 | 28.6\n+ PPO | 81.8 | 31.3\n+ Shepherd-PPO (Ours) | 84.1 | 33.0\n"
                       "+ Shepherd-PPO + Voting (Ours) | 89.1 | 40.0")
    col = {"name": "GSM8K (%)", "type": "number"}
    q = "What is the best GSM8K accuracy of its RL-trained 7B model, without majority voting?"
    assert _best_result(q, col, [u for u in cells if "gsm8k" in u.terms], ["Shepherd"]) == 84.1
    assert _best_result("What GSM8K accuracy does it report?", col, cells, ["Shepherd"]) is None  # no superlative
    assert _best_result(q, {"name": "Test error", "type": "number"}, [], ["Shepherd"]) is None


def test_a_name_stated_as_the_column():
    from lit3r.read.rows import _named_as

    lines = ["Notably, using Qwen-2.5-Math-7B as the base model, our model outperforms the instruct model.",
             "The main comparison is with a model built on the same base model (Qwen-2.5-Math-7B).",
             "We use Llama-3 as the base model for distillation."]
    assert _named_as(lines, {"name": "Base model", "type": "string"}) == "Qwen-2.5-Math-7B"
    assert _named_as(lines, {"name": "Dataset", "type": "string"}) is None
    assert _named_as(lines, {"name": "Base model", "type": "number"}) is None


def test_a_value_question_prefers_the_section_that_reports_it():
    """The same statement in the introduction and in the participants section: for a value
    question the latter is more relevant; for another question they are equal."""
    text = "A total of 24 freelancers participated in the usability study."
    intro, body = (claims.units_of(Chunk(chunk_id=f"p::c{k:04d}", paper_id="p", kind="text", page=k, seq=k,
                                         section=section, text=text))[0]
                   for k, section in ((2, "1 INTRODUCTION"), (18, "6.1.1 Participants")))
    value = claims.Support("How many freelancers took part in its usability study?", [intro, body])
    assert value.relevance(body) > value.relevance(intro) > 0
    other = claims.Support("Who took part in its usability study?", [intro, body])
    assert other.relevance(body) == other.relevance(intro) > 0


def test_a_figure_repeated_in_a_later_table_is_cited_from_the_first():
    """An ablation table that repeats a main result does not displace the main results table."""
    main = _units("Table 6: Results on RealSet.\nMethod | Precision | Recall\nAgent-7b | 0.5146 | 0.6111\n"
                  "Agent-7b-ensemble | 0.4938 | 0.6488")
    ablation = _units("Table 8: Ablation on AutoSet and RealSet.\nAutoSet | RealSet\nMethod\n"
                      "Precision | Recall | Precision | Recall\nw/o RL | 0.1476 | 0.4210 | 0.5155 | 0.4115\n"
                      "Agent-7b | 0.1448 | 0.4834 | 0.5146 | 0.6111")
    for u in ablation:  # the ablation table is a later chunk, on a later page
        u.chunk = u.chunk.model_copy(update={"chunk_id": "p::c0009", "page": 10, "object_id": "Table 8"})
    units = main + ablation
    question = "What recall does the single Agent-7b (not the ensemble) reach on RealSet?"
    label, per_option = claims.choose_option({"A": "0.4834", "B": "0.6111", "C": "0.6488"}, units,
                                             claims.Support(question, units))
    assert label == "B" and per_option["B"].units[0].chunk.object_id == "Table 1"  # _units names the first Table 1


def test_own_rows_of_a_paper():
    from lit3r.read.rows import _own_row

    assert _own_row("Satori-Qwen-7B (Round 2)", ["Satori"]) and _own_row("CodeLLAMA + ReFT", ["ReFT"])
    assert not _own_row("PreFT baseline", ["ReFT"]) and not _own_row("ReFTs", ["ReFT"])


def test_a_column_the_evidence_does_not_name_stays_empty():
    """A bad-input trial asked for a "Goldfish span" column next to GSM8K: no value is invented."""
    rows = extractive_rows("What are the GSM8K accuracies of CoT and CoT+RE2?",
                           [{"name": "Method", "type": "string", "is_row_key": True},
                            {"name": "GSM8K", "type": "number"}, {"name": "Goldfish span", "type": "number"}],
                           [], {}, _row_cells("Table 1: Results\nMethod | GSM8K | SVAMP\nCoT | 78.77 | 80.1\n"
                                              "CoT+RE2 | 80.59 | 81.2"))
    assert rows == [{"Method": "CoT", "GSM8K": 78.77, "Goldfish span": None},
                    {"Method": "CoT+RE2", "GSM8K": 80.59, "Goldfish span": None}]


def test_control_characters_and_undecodable_bytes_leave_the_question():
    from lit3r.errors import BadQuestion
    from lit3r.pipeline.engine import Question

    assert Question.make("What is \udcff\udcfe attention?\x00").text == "What is  attention?"
    with pytest.raises(BadQuestion, match="the question is empty"):
        Question.make("\x01\x02\x03\x1f")


def test_a_how_question_prefers_the_sentence_that_states_the_mechanism():
    from lit3r.read.extractive import _HOW_Q, _how_share

    def line(text: str, section: str):
        return claims.units_of(Chunk(chunk_id="p::c0001", paper_id="p", kind="text", page=3, seq=1,
                                     section=section, text=text))[0]

    method = line("RAPTOR builds the tree by clustering chunk embeddings and summarising each cluster.", "3 METHODS")
    experiment = line("We conducted experiments on the cost of RAPTOR's tree-building process.", "A SCALABILITY")
    cell = _row_cells("Table 1: Results\nMethod | Acc\nRAPTOR | 80.5")[0]
    assert _how_share(method) > 1.0 > _how_share(experiment) and _how_share(cell) < 1.0
    assert _HOW_Q.search("How does RAPTOR build its tree?") and not _HOW_Q.search("Which tree does RAPTOR build?")


def test_the_draft_skips_claims_without_a_unit_and_cites_only_shown_passages():
    """An option claim with no unit traces as ``None`` (claims.OptionSupport.trace): the draft
    and the passages behind the options skip it instead of failing the question (it once lost
    a figure question of the LLM bench with a TypeError)."""
    from lit3r.read.base import ReadResult
    from lit3r.read.llm import draft_lines, option_match

    ev = Chunk(chunk_id="p::c1", paper_id="p", kind="table", page=3, seq=1, text="Model A 81.2")
    support = {"A": {"support": 0.2, "evidence": [None, {"chunk_id": "p::c1", "text": "Model A 81.2"}]},
               "B": {"support": 0.1, "evidence": [None]}, "C": {"support": 0.0}, "D": {"evidence": None}}
    assert option_match(support, "A")["chunk_id"] == "p::c1"
    assert [option_match(support, x) for x in "BCDE"] == [None] * 4
    result = ReadResult(["p"], [ev], freeform="81.2", choice="A", option_support=support,
                        rows=[{"Model": "A", "Acc": 81.2}])
    opts = {"A": "81.2", "B": "79.0", "C": "1", "D": "2"}
    text = draft_lines(result, ["freeform", "multiple_choice", "table"], opts, {"p::c1": "E3"})
    assert text.splitlines() == ["- papers: p", "- evidence: E3", "- answer: 81.2",
                                 '- option A matches: "Model A 81.2" (E3)', "- choice: A",
                                 '- row: {"Model": "A", "Acc": 81.2}']
    unshown = draft_lines(result, ["freeform"], None, {})
    assert "- evidence: none of the passages above" in unshown
    assert draft_lines(ReadResult([], []), ["freeform"], None, {}) == "- none"
