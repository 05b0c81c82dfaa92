"""The kept recipe of a data folder (lit3r/index/recipe.py): what a run takes from it and when it says so."""

from __future__ import annotations

from ingest.parsers.pymupdf.front import _unmarked
from lit3r.index.recipe import Recipe, keep, kept, settle


def test_a_folder_without_a_recipe_uses_the_run_and_says_nothing(tmp_path):
    assert kept(tmp_path) is None
    assert settle(tmp_path, None, None, None) == (Recipe("pymupdf", True, None, None), "")


def test_kept_settings_fill_what_the_run_leaves_out_and_only_then_a_line(tmp_path):
    meta = tmp_path / "given.jsonl"
    meta.write_text('{"paper_id": "a", "title": "A"}\n')
    keep(tmp_path, Recipe("pymupdf", False, meta, meta.name))
    meta.unlink()  # the kept copy is read, not the file given then
    copy = tmp_path / "recipe" / "metadata.jsonl"
    assert copy.read_text() == '{"paper_id": "a", "title": "A"}\n'
    run, line = settle(tmp_path, None, None, None)
    assert run == Recipe("pymupdf", False, copy, "given.jsonl")
    assert line.startswith("reusing what this folder was built with: the metadata of given.jsonl") and \
        line.count("\n") == 0 and "--no-images" in line
    # the run gives what was kept: nothing to say
    assert settle(tmp_path, copy, "pymupdf", False)[1] == ""
    assert settle(tmp_path, None, None, False)[1].count("--no-images") == 0
    # what the run gives wins; --no-reuse ignores the recipe
    other = tmp_path / "other.jsonl"
    other.write_text("")
    assert settle(tmp_path, other, None, True) == (Recipe("pymupdf", True, other, "other.jsonl"), "")
    assert settle(tmp_path, None, None, None, reuse=False) == (Recipe(), "")


def test_a_damaged_recipe_is_no_recipe_and_one_warning_line(tmp_path):
    (tmp_path / "recipe").mkdir()
    for text in ("{", "[]", '{"parser": 3, "images": true}', '{"parser": "pymupdf"}'):
        (tmp_path / "recipe" / "recipe.json").write_text(text)
        assert kept(tmp_path) is None
        run, line = settle(tmp_path, None, None, None)
        assert run == Recipe() and line.startswith("warning: the settings this folder was built with") \
            and "recipe.json" in line and "\n" not in line, line
        assert settle(tmp_path, None, None, None, reuse=False)[1] == ""


def test_affiliation_marks_end_a_name_and_go():
    assert _unmarked("Kyle Loα") == ["Kyle Lo"]
    assert _unmarked("Yossi AdiH") == ["Yossi Adi"]
    assert _unmarked("Lauren Yuβ Nathan Dahlbergγ") == ["Lauren Yu", "Nathan Dahlberg"]
    for name in ("Jürgen Schmidhuber", "Baptiste Rozière", "Yann LeCun", "Marti A. Hearst", "Piotr Miłós"):
        assert _unmarked(name) == [name]
