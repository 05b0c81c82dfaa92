"""The Read step (seed paper section 2.3): :mod:`lit3r.read.base` (the Reader seam),
:mod:`lit3r.read.scoring` (question and chunk text features), :mod:`lit3r.read.extractive` (the
offline reader) and :mod:`lit3r.read.llm` (per-paper reading, then cross-paper synthesis).
"""
