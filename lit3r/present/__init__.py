"""What Lit3R shows a person: answers on the PDF page (``show``, ``show_cells``), graph pictures
(``draw``), the Neo4j Browser application (``browser_app``) and the servers' one-line errors
(``server_errors``)."""
