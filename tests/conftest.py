"""Shared paths, fixtures and the test tiers. Real data is read from ../shared/data (never copied
here; ``TESTS_SHARED_DATA`` names another folder, and ``make test-fast`` an empty one).

Every collected test is marked with what it needs (``data``, ``models``, ``servers``, ``llm``:
:mod:`tests.tiers` finds it from the fixtures and code the test uses); a test that needs none of
them is marked ``fast``: ``make test-fast`` runs ``pytest -m fast``, ``make test`` runs all."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.tiers import NEEDS, needs_of

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TESTS_SHARED_DATA") or ROOT.parent / "shared" / "data")
CORPUS = SHARED / "corpus"
HARD = SHARED / "hard"
MINERU = SHARED / "mineru"
#: ``python -c`` code that runs the CLI in that process with its arguments, then prints on stderr
#: ``IMPORTED [...]``: which of torch, sentence_transformers and transformers it imported.
CLI_AND_LIST_MODULES = """
import runpy, sys
sys.argv = ["lit3r"] + sys.argv[1:]
try:
    runpy.run_module("lit3r.cli", run_name="__main__")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print("IMPORTED", sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules),
      file=sys.stderr)
sys.exit(code)
"""


def pytest_configure(config) -> None:
    for name, what in NEEDS.items():
        config.addinivalue_line("markers", f"{name}: needs {what} (set from the test's fixtures and code)")


def pytest_collection_modifyitems(config, items) -> None:
    """Mark each test with the tiers of :data:`tests.tiers.NEEDS` it needs, or ``fast``."""
    for item in items:
        needs = needs_of(item, SHARED)
        for name in sorted(needs - {m.name for m in item.iter_markers()}):
            item.add_marker(name)
        if not needs:
            item.add_marker("fast")


@pytest.fixture(autouse=True)
def _tier_check(request) -> None:
    """A test marked ``data`` fails with one clear line when the shared data folder is missing."""
    if request.node.get_closest_marker("data"):
        request.getfixturevalue("shared_data")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data folder; the integration tests need it and fail loudly without it."""
    if not (CORPUS / "pdfs").is_dir():
        pytest.fail(f"real test data missing: {CORPUS / 'pdfs'} (the repo expects ../shared/data beside it)")
    return SHARED


@pytest.fixture(scope="session")
def servers(tmp_path_factory):
    """A real Neo4j and a real single-node OpenSearch, started once for the session from Maven
    artifacts (tests/servers/). Never skipped: a server that cannot start fails the tests."""
    from tests.servers import neo4j_server, opensearch_server

    work = tmp_path_factory.mktemp("servers")
    try:
        neo4j_server.build()
        opensearch_server.build()
        neo = neo4j_server.start(work / "neo4j")
    except Exception as exc:
        pytest.fail(f"Neo4j could not start: {exc}")
    try:
        osr = opensearch_server.start(work / "opensearch")
    except Exception as exc:
        neo.stop()
        pytest.fail(f"OpenSearch could not start: {exc}")
    yield neo, osr
    osr.stop()
    neo.stop()


#: The tiny cross-encoder's vocabulary (tests write queries and texts in these words).
WORDS = ["the", "model", "paper", "attention", "graph", "retrieval", "question", "answer", "banana", "of", "is"]


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory) -> str:
    """A randomly initialised 2-layer BERT sequence classifier with one label and a word-level
    vocabulary, saved as a local folder; no download."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    # positional: transformers 4 calls it vocab_file, 5 calls it vocab (and ignores vocab_file=)
    tokenizer = BertTokenizerFast(str(folder / "vocab.txt"), do_lower_case=True)
    assert tokenizer("The banana")["input_ids"] == [2, vocab.index("the"), vocab.index("banana"), 3]
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=37, num_labels=1, max_position_embeddings=128,
                        initializer_range=0.2)   # wide weights: scores that differ visibly
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)
