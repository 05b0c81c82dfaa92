"""Shared paths and fixtures. Real data is read from ../shared/data (never copied here)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
CORPUS = SHARED / "corpus"
HARD = SHARED / "hard"
MINERU = SHARED / "mineru"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data folder; the integration tests need it and fail loudly without it."""
    if not (CORPUS / "pdfs").is_dir():
        pytest.fail(f"real test data missing: {CORPUS / 'pdfs'} (the repo expects ../shared/data beside it)")
    return SHARED


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
