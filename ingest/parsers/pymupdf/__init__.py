"""The default PDF parser, on PyMuPDF: one PDF -> :class:`ingest.document.ParsedDocument`.

Fully offline and fast (no table-grid detection by default). What it does, per page (module
of each step in brackets):

1. reads text lines with fonts and boxes (``page.get_text("dict")``, ligatures expanded)
   [:mod:`.pages`];
2. drops running headers, footers and page numbers: lines outside the document's body box, lines
   in the page margins that repeat on several pages, bare page numbers, vertical margin stamps
   [:mod:`.pages`];
3. orders blocks for reading: full-width blocks split the page into bands, and inside a band the
   left column is read before the right one (two-column layouts) [:mod:`.layout`];
4. finds captions ("Table N:", "Figure N.", "Algorithm N") and grows the object region from the
   caption over the non-prose blocks next to it; table rows are rebuilt from the words inside the
   region (numbers stay whole tokens: "84.2" never splits); the region is saved as a PNG crop
   [:mod:`.objects`, :mod:`.crops`];
5. numbered display equations: a right-aligned "(N)" plus the non-prose fragments on its band
   [:mod:`.objects`];
6. headings (bold or larger than the body font, short, no final period) -> sections
   [:mod:`.layout`, :mod:`.flow`];
7. the reference list: entries split by printed numbers, else by hanging indent, else by block;
   the list ends at an appendix heading or where entries stop looking like references
   [:mod:`.reference_list`].

Title, authors and abstract come from page 1 (largest font near the top; the "Abstract" block)
[:mod:`.front`]. :mod:`.parser` holds :class:`PyMuPDFParser`, which runs the steps.
"""

from ingest.parsers.pymupdf.crops import Crops, save_crop
from ingest.parsers.pymupdf.parser import PyMuPDFParser, open_pdf

__all__ = ["Crops", "PyMuPDFParser", "open_pdf", "save_crop"]
