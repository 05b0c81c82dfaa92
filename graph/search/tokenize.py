"""The one tokenizer of every BM25 lane, on both backends (so their scores agree).

Lower-case; tokens are runs of letters/digits, a decimal number stays one token ("84.2");
English stop words are removed (bm25s' list). OpenSearch indexes the same tokens joined by
spaces with a whitespace analyzer, so both backends see identical terms.
"""

from __future__ import annotations

import re

from bm25s.stopwords import STOPWORDS_EN

#: Tokens: decimal numbers as one token, else runs of letters/digits.
TOKEN_PATTERN = r"[0-9]+(?:\.[0-9]+)+|[^\W_]+"
_TOKEN = re.compile(TOKEN_PATTERN, re.UNICODE)
_STOP = frozenset(STOPWORDS_EN)


def tokenize(text: str) -> list[str]:
    """``"The GSM8K accuracy is 80.59%"`` -> ``["gsm8k", "accuracy", "80.59"]``."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOP]
