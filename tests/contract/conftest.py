"""The store contracts' records: the hand-made corpus of :mod:`tests.contract.corpus`."""

import pytest


@pytest.fixture(scope="session")
def records():
    """``(papers, chunks, references, neighbours, vectors)`` of :func:`tests.contract.corpus.make_corpus`."""
    from tests.contract.corpus import make_corpus

    return make_corpus()
