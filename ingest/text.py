"""Text repair shared by all parsers: ligatures, math-alphanumeric letters, hyphenation, spaces.

Pure functions on strings; no I/O.
"""

from __future__ import annotations

import re
import unicodedata

_LIGATURES = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",
    "\ufb06": "st",
    "\u00ad": "",  # soft hyphen
    "\u00a0": " ",
    "\u2002": " ",
    "\u2003": " ",
    "\u2009": " ",
    "\u200a": " ",
    "\u200b": "",
}
_LIG_RE = re.compile("|".join(map(re.escape, _LIGATURES)))
# Mathematical Alphanumeric Symbols (U+1D400-U+1D7FF) and letterlike italics such as U+210E (h).
_MATH_ALNUM = re.compile("[\U0001d400-\U0001d7ff\u210e]")
_WS = re.compile(r"[ \t\r\f\v]+")


def repair_chars(text: str) -> str:
    """Expand ligature glyphs (U+FB00-FB06) and fold math-italic letters to ASCII letters.

    Only those characters are changed: a global NFKC would also turn superscripts into digits
    ("10²" -> "102") and change numbers, which evidence must keep intact.
    """
    text = _LIG_RE.sub(lambda m: _LIGATURES[m.group(0)], text)
    return _MATH_ALNUM.sub(lambda m: unicodedata.normalize("NFKC", m.group(0)), text)


_HYPHEN_END = re.compile(r"(\w+)[-\u2010\u2011]$")


def join_lines(lines: list[str]) -> str:
    """Join the lines of one paragraph into one string, repairing end-of-line hyphenation.

    "confi-" + "dence" -> "confidence"; a compound already hyphenated ("state-of-the-" + "art")
    and a break before an upper-case or digit continuation ("GPT-" + "4") keep their hyphen.
    """
    out = ""
    for raw in lines:
        line = _WS.sub(" ", raw).strip()
        if not line:
            continue
        if not out:
            out = line
            continue
        m = _HYPHEN_END.search(out)
        if m and line[0].islower() and m.group(1).isalpha():
            head = out[: m.start()]
            word = m.group(1)
            compound = head.endswith(("-", "\u2010", "\u2011")) or re.search(r"[-\u2010]\w*$", head)
            out = out[:-1] + line if not compound and len(word) > 1 else out + line
        elif m:  # "e-" + "MERLIN", "3-" + "10": keep the hyphen, no space
            out = out + line
        else:
            out = out + " " + line
    return out


def clean(text: str) -> str:
    """Repair characters and collapse runs of spaces (newlines are kept)."""
    text = repair_chars(text)
    return "\n".join(_WS.sub(" ", ln).strip() for ln in text.split("\n")).strip()


def normalize_key(text: str) -> str:
    """Lower-case alphanumeric key of a title or string ("Big Bird: Transformers" ->
    "bigbirdtransformers"), accents folded; used for work ids and title matching."""
    text = unicodedata.normalize("NFKD", repair_chars(text))
    return re.sub(r"[^a-z0-9]", "", text.lower())
