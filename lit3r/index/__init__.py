"""The build-and-load wing: the embedded index build (``build``) with its SIMILAR_TO lists
(``neighbours``), the servers load (``load``), the locks of ingest, build and load (``lock``:
one mechanism, one error), whether the index holds the last ingest (``state``), a data folder's
kept recipe (``recipe``) and the full-disk messages (``disk``)."""
