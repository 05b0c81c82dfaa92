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


# Spacing accents that LaTeX PDFs set before the letter ("C\u00b4esar") -> combining marks.
_ACCENTS = {"\u00b4": "\u0301", "\u00a8": "\u0308", "\u02c6": "\u0302", "\u02dc": "\u0303",
            "\u00b8": "\u0327", "\u02c7": "\u030c", "\u02d8": "\u0306", "\u02da": "\u030a"}
_ACCENT_RE = re.compile("([A-Za-z]?)([" + "".join(_ACCENTS) + "])\\s?([A-Za-z\u0131]?)")
_VOWELS = set("aeiouyAEIOUY\u0131")


def _compose(m: "re.Match") -> str:
    """Put a spacing accent on the vowel (or c/n/s/z/r for cedilla, tilde, caron) next to it."""
    before, accent, after = m.group(1), m.group(2), m.group(3)
    mark = _ACCENTS[accent]
    if after and (after in _VOWELS or (accent in "\u00b8\u02dc\u02c7" and after in "cCnNsSzZrR")):
        return before + unicodedata.normalize("NFC", after.replace("\u0131", "i") + mark)
    if before and before in _VOWELS:
        return unicodedata.normalize("NFC", before + mark) + after
    return m.group(0)


def repair_chars(text: str) -> str:
    """Expand ligature glyphs (U+FB00-FB06), fold math-italic letters to ASCII letters, compose
    spacing accents with their letter ("C\u00b4esar" -> "C\u00e9sar") and drop U+FFFD (glyphs
    the PDF maps to no character).

    Only those characters are changed: a global NFKC would also turn superscripts into digits
    ("10\u00b2" -> "102") and change numbers, which evidence must keep intact.
    """
    text = _LIG_RE.sub(lambda m: _LIGATURES[m.group(0)], text)
    text = _ACCENT_RE.sub(_compose, text)
    text = text.replace("\ufffd", "")
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
