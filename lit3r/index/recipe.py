"""What a corpus folder was built with (its recipe), kept so that a later `lit3r ingest` keeps it.

An ingest that put at least one paper in the folder writes ``OUT/recipe/recipe.json``
(``{"parser", "images", "metadata"}``: the parser name, whether table and figure crops are saved,
and the name of the metadata file given, or null) and a byte copy of that metadata file,
``OUT/recipe/metadata.jsonl`` (its records: titles, authors, venues, years). A later ingest of the
folder that does not give ``--metadata``, ``--parser`` or ``--images/--no-images`` takes the kept
value, so its papers get the same records and the same parse key (nothing re-parsed or re-encoded),
and :func:`settle` says in one line what it reuses, only when a kept value is used in place of what
the run alone would have used. A setting given on the command line wins and is kept from then on;
``--no-reuse`` ignores the kept recipe. Errors: OSError from the file system (the caller reports it).
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Optional

FOLDER = "recipe"
RECIPE, METADATA = "recipe.json", "metadata.jsonl"
#: The settings of a folder that has no recipe (the command's defaults).
DEFAULT_PARSER, DEFAULT_IMAGES = "pymupdf", True


@dataclass(frozen=True)
class Recipe:
    """The parse settings of a corpus folder; ``metadata`` is the metadata file to read (the one
    given, or the folder's kept copy) and ``metadata_name`` its original name (for messages)."""

    parser: str = DEFAULT_PARSER
    images: bool = DEFAULT_IMAGES
    metadata: Optional[Path] = None
    metadata_name: Optional[str] = None


def kept(out_dir: Path) -> Optional[Recipe]:
    """The recipe kept in ``out_dir``, or None (no recipe, or an unreadable or damaged one: the
    command's defaults apply then)."""
    folder = Path(out_dir) / FOLDER
    try:
        raw = json.loads((folder / RECIPE).read_text(encoding="utf-8"))
        parser, images, name = raw["parser"], raw["images"], raw.get("metadata")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(parser, str) or not isinstance(images, bool):
        return None
    copy = folder / METADATA
    has_copy = isinstance(name, str) and copy.is_file()
    return Recipe(parser, images, copy if has_copy else None, name if has_copy else None)


def settle(out_dir: Path, metadata: Optional[Path], parser: Optional[str], images: Optional[bool],
           reuse: bool = True) -> tuple[Recipe, str]:
    """``(the recipe of this run, one line saying what it reuses or "")``: each setting the run
    gives (not None) wins; each one it leaves out comes from the kept recipe (``reuse``) or the
    default. The line is "" unless a kept value replaces what the run alone would have used, or
    the kept recipe is there but cannot be read (a warning: the run's settings apply)."""
    old = kept(out_dir) if reuse else None
    base = old or Recipe()
    run = Recipe(parser if parser is not None else base.parser,
                 images if images is not None else base.images,
                 Path(metadata) if metadata is not None else base.metadata,
                 Path(metadata).name if metadata is not None else base.metadata_name)
    if old is None:
        path = Path(out_dir) / FOLDER / RECIPE
        if reuse and (path.exists() or path.is_symlink()):  # there, but unreadable or damaged
            return run, (f"warning: the settings this folder was built with ({path}) cannot be read: ignored; "
                         f"this run's settings are kept in their place (give --metadata again if it had one)")
        return run, ""
    reused = []
    if metadata is None and old.metadata is not None:
        reused.append(f"the metadata of {old.metadata_name} (kept as {old.metadata}; --metadata FILE replaces it)")
    if parser is None and old.parser != DEFAULT_PARSER:
        reused.append(f"--parser {old.parser}")
    if images is None and old.images != DEFAULT_IMAGES:
        reused.append("--images" if old.images else "--no-images")
    if not reused:
        return run, ""
    return run, f"reusing what this folder was built with: {', '.join(reused)} (--no-reuse ignores it)"


def keep(out_dir: Path, recipe: Recipe) -> None:
    """Write ``recipe`` as the folder's kept recipe, with a copy of its metadata file (atomic:
    a reader sees the old recipe or the new one)."""
    folder = Path(out_dir) / FOLDER
    folder.mkdir(exist_ok=True)
    copy = folder / METADATA
    if recipe.metadata is not None and Path(recipe.metadata).resolve() != copy.resolve():
        _atomic(copy, Path(recipe.metadata).read_bytes())
    record = {**asdict(recipe), "metadata": recipe.metadata_name if recipe.metadata is not None else None}
    record.pop("metadata_name")
    _atomic(folder / RECIPE, (json.dumps(record, sort_keys=True) + "\n").encode())


def ingest_kept(pdf_dir: Path, out_dir: Path, given: tuple, workers: Optional[int], progress: bool, prune: bool,
                say: Callable[[str], None], replace: bool = False):
    """:func:`ingest.corpus.ingest_corpus` with the folder's kept recipe filling the settings not
    ``given`` (``(metadata file, parser, images, reuse)``, None for not given); ``say`` gets the
    line of :func:`settle`; ``replace`` lets a file take a paper id another stored paper holds.
    Keeps this run's recipe when a paper is in the folder after it.
    Returns the IngestReport; raises what ingest_corpus raises."""
    from ingest.corpus import ingest_corpus

    recipe, said = settle(out_dir, *given)
    if said:
        say(said)
    report = ingest_corpus(pdf_dir, out_dir, metadata_file=recipe.metadata, parser=recipe.parser, workers=workers,
                           images=recipe.images, progress=progress, prune=prune, replace=replace)
    if given[0] is None and recipe.metadata is not None:  # kept records name PDFs of earlier folders too
        report.problems = [p for p in report.problems if not (p.startswith(str(recipe.metadata)) and "is not under" in p)]
    if report.parsed + report.unchanged:
        keep(out_dir, recipe)
    return report


def _atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

