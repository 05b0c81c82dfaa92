"""Reader methods of issue 24's second pass: "what is X" / "how does X work" from the defining or
mechanism sentence of the paper that introduces X; a question's acronyms meeting a unit's plural
acronym; "unless otherwise stated" as a default setting; a table's last rows left in the next text
chunk cited as that table. Inputs are hand-made in the shapes of stored chunks."""

from graph.records import Chunk
from lit3r.read.claims import Query, Support, choose_option, units_of
from lit3r.read.defining import Ask, defining_sentence, definition_ask, introducing_paper, sentence_score
from lit3r.read.tables import continued_table


def _chunk(seq: int, text: str, kind: str = "text", page: int = 1, section: str = "1 Introduction",
           oid: str | None = None, pid: str = "p") -> Chunk:
    return Chunk(chunk_id=f"{pid}::c{seq:04d}", paper_id=pid, kind=kind, page=page, section=section, object_id=oid,
                 text=text, seq=seq)


ABSTRACT = ("[ICML 2021] Forgetting by Expiring\n\nAttention mechanisms have shown promising results. We analyze "
            "the memory of long-context models in this work. We propose Expire-Span, a method that learns to retain "
            "the most important information and expire the irrelevant information. Expire-Span outperforms strong "
            "baselines on character-level language modeling with an accuracy gain.")
BODY = ("We analyze what is retained by an Expire-Span model on Enwik8 to understand how models forget. "
        "Each memory gets an expiration value computed by a linear projection of its hidden state, and a memory "
        "is dropped from the attention span once its age exceeds that value. Expire-Span reaches 1.03 bpb, "
        "which outperforms the baselines in Table 2.")
REFERENCES = "[12] Sukhbaatar et al. Expire-Span: Not all memories are created equal. ICML 2021."


def test_definition_questions_give_their_subject_and_aspect():
    assert definition_ask("What is Expire-Span?") == Ask("Expire-Span", False, frozenset())
    assert definition_ask("What is the Differentiable Search Index?").subject == "Differentiable Search Index"
    how = definition_ask("How does the Feedback Transformer's feedback memory work?")
    assert how.subject == "Feedback Transformer" and how.how and how.aspect == {"feedback", "memori"}
    assert definition_ask("How does Linformer reduce the cost of self-attention?").aspect >= {"reduc", "cost"}
    # not a definition question: options or long descriptions go through the ordinary reader
    assert definition_ask("What GSM8K accuracy does the method reach with ChatGPT and chain-of-thought?") is None
    assert definition_ask("How many parameters does it have?") is None
    assert definition_ask("How do I bake sourdough bread at home?") is None  # a pronoun names no method
    assert definition_ask("A paper proposes X. What is X?") is None
    for nothing in ("What is it?", "What is the?", "What is this?", "What are they?", "What is the it?"):
        assert definition_ask(nothing) is None, nothing  # a pronoun or a stop word names nothing
    assert definition_ask("What is \u200fExpire-Span\u200f?") == Ask("Expire-Span", False, frozenset())  # bidi marks


def test_the_introducing_paper_is_the_one_that_names_it_as_its_own():
    titles = {"a": ("Transformers with feedback", "We compare with Expire-Span and others."),
              "b": ("Not All Memories are Created Equal", "We propose Expire-Span, a method that forgets."),
              "c": ("Attention Is All You Need", "The Transformer.")}
    names = {"a": [], "b": ["Expire-Span"], "c": []}
    assert introducing_paper("Expire-Span", ["a", "b", "c"], names.get, titles.get) == "b"
    assert introducing_paper("expire-span", ["a", "b"], names.get, titles.get) == "b"  # case ignored
    # no own name anywhere: the first read paper whose abstract names it
    assert introducing_paper("Expire-Span", ["a", "c"], names.get, titles.get) == "a"
    assert introducing_paper("capital city of Australia", ["a", "b", "c"], names.get, titles.get) is None


def test_the_defining_sentence_beats_an_analysis_a_result_the_title_and_a_reference_entry():
    chunks = [_chunk(0, ABSTRACT, "title_abstract", section="Abstract"), _chunk(5, BODY, page=4, section="3 Method"),
              _chunk(60, REFERENCES, page=12, section="References", oid="Citation 12"),
              _chunk(61, "Expire-Span is a strong model (Table 2: 1.03 bpb, 0.99 bpb).", "table", oid="Table 2")]
    chunk, sentence = defining_sentence(Ask("Expire-Span", False, frozenset()), chunks)
    assert sentence.startswith("We propose Expire-Span, a method") and chunk.seq == 0
    assert sentence_score("Expire-Span outperforms strong baselines on language modeling with an accuracy gain.",
                          Ask("Expire-Span", False, frozenset())) <= 0  # a result defines nothing


def test_a_mechanism_question_takes_the_sentence_that_says_how():
    chunks = [_chunk(0, ABSTRACT, "title_abstract", section="Abstract"), _chunk(5, BODY, page=4, section="3 Method")]
    ask = definition_ask("How does Expire-Span decide when a memory expires?")
    chunk, sentence = defining_sentence(ask, chunks)
    assert sentence.startswith("Each memory gets an expiration value computed by a linear projection")
    assert defining_sentence(Ask("Feedback Transformer", False, frozenset()), chunks) is None  # not in this paper


def test_a_question_acronym_meets_a_units_plural_acronym():
    q = Query.of("refreshing its maximum-inner-product-search index asynchronously, how stale may it get?")
    assert {"mips", "mip"} <= q.terms  # "MIPS" in a unit stems to "mip"
    line = units_of(_chunk(3, "30x stale MIPS 28.7 15.1\nThe model can be run on a single machine."))[0]
    assert "mip" in line.terms


def test_unless_otherwise_stated_is_the_default_setting():
    text = ("Unless otherwise stated, we use an untuned 65B model as the expert and a 1.5B model as the amateur. "
            "For the summarization study we use an 11B model as the expert and an 80M model as the amateur.")
    units = units_of(_chunk(12, text, section="3.1 Experimental setup"))
    assert "default" in units[0].terms and "default" not in units[1].terms
    options = {"A": "Expert: 65B; amateur: 1.5B", "B": "Expert: 11B; amateur: 80M"}
    support = Support("By default, which models play the expert and the amateur?", units)
    assert choose_option(options, units, support)[0] == "A"


def test_rows_left_in_the_next_text_chunk_are_cited_as_their_table():
    table = _chunk(30, "Table 2. Ablation experiments.\nAblation | Exact Match | Recall@5\nFull | 38.2 | 38.5\n"
                       "Baseline | 31.3 | 13.9", "table", page=7, oid="Table 2")
    text = _chunk(31, "Random masks 32.3 24.2\n30x stale MIPS 28.7 15.1\nThe model is trained on 64 TPUs for 200k "
                      "steps 12 8.", page=7)
    assert continued_table("30x stale MIPS 28.7 15.1", text, table) is table
    assert continued_table("Random masks 32.3 24.2", text, table) is table
    # a row line after the chunk's prose, another page, a row of another width, or no table before: not the table
    assert continued_table("The model is trained on 64 TPUs for 200k steps 12 8.", text, table) is None
    assert continued_table("30x stale MIPS 28.7 15.1", text, _chunk(30, table.text, "table", page=6)) is None
    assert continued_table("Only MIPS 28.7 15.1 3.2", _chunk(31, "Only MIPS 28.7 15.1 3.2", page=7), table) is None
    assert continued_table("30x stale MIPS 28.7 15.1", text, _chunk(30, "Some prose.", page=7)) is None


def test_big_o_complexities_are_values_an_option_is_told_apart_by():
    from lit3r.read.scoring import complexities

    assert complexities("Self-Attention | O(n^2 · d) | O(1)") == {"o:n^2d", "o:1"}
    assert complexities("Reformer | O(n log(n))") == complexities("O(n log n)") == {"o:nlogn"}
    table = _chunk(4, "Table 1: Per-layer time complexity for various architectures.\nModel Architecture | Complexity "
                      "per Layer | Sequential Operation\nRecurrent | O(n) | O(n)\nTransformer | O(n^2) | O(1)\n"
                      "Reformer | O(n log(n)) | O(log(n))\nLinformer | O(n) | O(1)", "table", page=2, oid="Table 1")
    units = units_of(table)
    options = {"A": "Linformer: O(n)", "B": "Linformer: O(n*k)", "C": "Linformer: O(n log n)", "D": "Linformer: O(n^2)"}
    support = Support("What per-layer complexity does the Linformer paper's own table claim for Linformer?", units)
    label, per = choose_option(options, units, support)
    assert label == "A" and "Linformer" in per["A"].units[0].text
