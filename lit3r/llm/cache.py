"""The LLM disk cache's damaged entries (``<home>/llm-cache/<xx>/<key>.json``): an entry that is not
UTF-8 JSON (cut short by a full disk, overwritten, edited) is ignored, removed so that the next
reply rewrites it, and one ``warning:`` line on stderr names it; a reply is asked for instead.
Nothing else in the cache is touched.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

from graph.errors import shown_text


def damaged(path: Path) -> Optional[str]:
    """Why the cache entry at ``path`` cannot be used (not UTF-8, not JSON, not a JSON object, not
    a regular file), or None when it can."""
    try:
        if not path.is_file():
            return "not a regular file"
        value = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        return "not UTF-8"
    except (ValueError, RecursionError):
        return "not valid JSON"
    except OSError as exc:
        return exc.strerror or str(exc)
    return None if isinstance(value, dict) else "not a JSON object"


def read_entry(path: Path) -> Optional[str]:
    """The cached reply at ``path``, or None when there is none or it is damaged (then removed so
    that the reply asked for now is written in its place, with one warning line on stderr)."""
    if not path.exists() and not path.is_symlink():
        return None
    why = damaged(path)
    if why is None:
        return path.read_text(encoding="utf-8")
    try:
        path.unlink()
    except OSError:
        pass
    sys.stderr.write(f"warning: LLM cache entry {shown_text(path, 200)} is damaged ({why}): ignored, asked "
                     f"again and rewritten\n")
    return None
