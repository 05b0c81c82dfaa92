from ingest.text import clean, join_lines, normalize_key, repair_chars


def test_ligatures_and_math_letters_are_repaired():
    assert repair_chars("con\ufb01dence \ufb02ow e\ufb00ect") == "confidence flow effect"
    assert repair_chars("12\u210e15\U0001d45a") == "12h15m"


def test_superscripts_and_numbers_are_not_normalised():
    assert repair_chars("10\u00b2 and 84.2") == "10\u00b2 and 84.2"


def test_hyphenation_is_repaired_across_lines():
    assert join_lines(["we have high confi-", "dence in it"]) == "we have high confidence in it"


def test_compound_and_uppercase_hyphens_are_kept():
    assert join_lines(["a state-of-the-", "art model"]) == "a state-of-the-art model"
    assert join_lines(["the e-", "MERLIN array"]) == "the e-MERLIN array"
    assert join_lines(["GPT-", "4 results"]) == "GPT-4 results"


def test_plain_lines_join_with_one_space():
    assert join_lines(["one  two", "", "three"]) == "one two three"


def test_clean_keeps_newlines_and_collapses_spaces():
    assert clean(" a   b \n c\ufb01 ") == "a b\ncfi"


def test_normalize_key():
    assert normalize_key("Big Bird: Transformers for Longer Sequences") == "bigbirdtransformersforlongersequences"
    assert normalize_key("Caf\u00e9 \ufb01ne-tuning") == "cafefinetuning"


def test_spacing_accents_are_composed_and_replacement_chars_dropped():
    assert repair_chars("C\u00b4esar Mu\u00a8ller Sch\u00a8olkopf") == "C\u00e9sar M\u00fcller Sch\u00f6lkopf"
    assert repair_chars("O(N\ufffd2)") == "O(N2)"
