"""The one tokenizer of every BM25 lane, on both backends (so their scores agree).

Lower-case; tokens are runs of letters/digits, a decimal number stays one token ("84.2");
English stop words are removed (bm25s' list). OpenSearch indexes the same tokens joined by
spaces with a whitespace analyzer, so both backends see identical terms.

A query is capped to :data:`MAX_QUERY_TERMS` terms by :func:`cap_terms`, on both backends (OpenSearch
refuses a query of more than 1,024 clauses, ``indices.query.bool.max_clause_count``): a longer one
keeps its rarest distinct terms (highest IDF: document frequency in the index searched), each once.
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from bm25s.stopwords import STOPWORDS_EN

#: Tokens: decimal numbers as one token, else runs of letters/digits.
TOKEN_PATTERN = r"[0-9]+(?:\.[0-9]+)+|[^\W_]+"
_TOKEN = re.compile(TOKEN_PATTERN, re.UNICODE)
_STOP = frozenset(STOPWORDS_EN)


def tokenize(text: str) -> list[str]:
    """``"The GSM8K accuracy is 80.59%"`` -> ``["gsm8k", "accuracy", "80.59"]``."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOP]


#: The most query terms (token occurrences) a BM25 query keeps: under OpenSearch's default clause
#: limit of 1,024, and above the ~600-800 terms of a 4,000-character paper head (the Relate step's
#: seed query, never capped); the embedded index applies the same cap so that both rank alike.
MAX_QUERY_TERMS = 1000


def cap_terms(tokens: Sequence[str], doc_freq: Callable[[list[str]], dict[str, int]],
              limit: int = MAX_QUERY_TERMS) -> list[str]:
    """``tokens`` unchanged when there are at most ``limit``; else, each once and in question
    order, the ``limit`` distinct terms of highest IDF: lowest document frequency from
    ``doc_freq(distinct terms) -> {term: df}``, ties by first position. Terms in no document
    (df 0 or missing) are dropped first: they score nothing on either backend."""
    if len(tokens) <= limit:
        return list(tokens)
    distinct = list(dict.fromkeys(tokens))
    df = doc_freq(distinct)
    first = {t: i for i, t in enumerate(distinct)}
    found = [t for t in distinct if df.get(t, 0) > 0]
    keep = set(sorted(found, key=lambda t: (df[t], first[t]))[:limit])
    return [t for t in distinct if t in keep]
