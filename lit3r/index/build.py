"""Corpus build: records -> embeddings -> graph store and search index, streamed and incremental.

``build_stores(settings)`` streams the corpus files in ``settings.home`` (written by
:func:`ingest.corpus.ingest_corpus`) paper by paper and writes ``home/index/``:

    lit3r.sqlite           graph records (:mod:`graph.embedded`) and search rows (:mod:`graph.search.embedded`)
    chunk_vectors.f32      chunk vectors, append-only, memory-mapped by readers
    paper_vectors.f32      paper-encoder vectors (SIMILAR_TO), one per paper version
    chunks-<n>/, papers-<n>/, *.dl   BM25 segments (:mod:`graph.search.bm25`)
    manifest.json          what was built from what (the corpus version, :mod:`ingest.stamp`), with
                           which models, and the last report

Memory holds one batch of papers (at most ``MAX_BATCH_CHUNKS`` chunks), the vocabulary and one part
of postings at a time, so the seed's 2.56M chunks build in a few GB.

Incremental: a paper whose records are unchanged costs one hash; a changed paper is restaged
(its vectors are copied when its chunk texts are unchanged, else encoded); a paper no longer
in the corpus files is deleted from every store; the new postings become one new BM25 segment
and SIMILAR_TO is recomputed over the paper vectors. Everything a build writes is staged and
committed batch by batch, then published in one transaction: an interrupted build leaves the
previous stores answering as before, and the next build resumes from its last batch. A build
whose models or format differ from the index's writes a new index beside it (``index.new``)
and swaps it in at the end.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from graph.atomic import write_text_atomic
from graph.embedded import GraphWriter
from graph.errors import IndexDamaged, PermissionDenied, first_unreadable
from graph.progress import RateProgress, Reporter
from graph.records import Paper
from graph.search.embedded import DB_NAME, stored_dim
from graph.search.embedded_schema import index_readable
from graph.search.embedded_writer import IndexWriter
from graph.sqlite import DatabaseError
from ingest.corpus import PaperRecords, corpus_size, iter_corpus
from ingest.stamp import read_version as read_corpus_version
from lit3r.backends import backend_of
from lit3r.config import Settings, encoder_identity
from lit3r.errors import NotBuiltError
from lit3r.index.lock import build_lock
from lit3r.index.neighbours import top_k_neighbours, update_neighbours

BUILD_VERSION = "2"
#: Chunks encoded and committed together (one batch of the stream).
#: A batch holds about this many seconds of encoding (what an interrupted build can lose), sized from
#: the encoder's measured speed, between MIN_ and MAX_BATCH_CHUNKS chunks.
BATCH_SECONDS = 20.0
MIN_BATCH_CHUNKS, MAX_BATCH_CHUNKS = 128, 8192
#: Chunks per encoder call within a batch: the ``encoding`` progress bar advances after each.
PROGRESS_CHUNKS = 256


@dataclass
class BuildReport:
    """What a build did: counts, how many papers were (re-)encoded, timings in seconds."""

    papers: int = 0
    chunks: int = 0
    references: int = 0
    neighbours: int = 0
    encoded_papers: int = 0
    staged_papers: int = 0
    removed_papers: int = 0
    resumed_papers: int = 0
    skipped: bool = False
    seconds: dict = field(default_factory=dict)
    servers: Optional[dict] = None


def _digest(*parts: str) -> str:
    h = hashlib.sha1()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def paper_text_for_encoder(paper: Paper | dict) -> str:
    """SPECTER2's input: ``title [SEP] abstract`` (sentence-transformers adds special tokens)."""
    title, abstract = (paper["title"], paper.get("abstract", "")) if isinstance(paper, dict) else (paper.title, paper.abstract)
    return f"{title or ''} [SEP] {abstract or ''}".strip()


#: Model settings that change no vector (how to reach a server), left out of the index format.
_NOT_FORMAT = {"server_concurrency", "server_timeout_s", "server_budget_s"}
#: Settings added with the encoder backends, left out of the format at these values.
_BEFORE_BACKENDS = {"encoder_backend": "torch", "server_url": None, "reranker_url": None}


def _format(settings: Settings) -> dict:
    """What an index must share with the settings to be updated in place."""
    models = settings.models.model_dump(mode="json", exclude=_NOT_FORMAT)
    for key, unset in _BEFORE_BACKENDS.items():  # as indexes built before backends existed record them
        if models.get(key) == unset:
            models.pop(key)
    return {"build_version": BUILD_VERSION, "models": models}


def _index_state(folder: Path) -> Optional[dict]:
    path = folder / "manifest.json"
    if not (folder / DB_NAME).is_file() or not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


class _Encoders:
    """The chunk and paper encoders, loaded on first use (an unchanged corpus loads no model)."""

    def __init__(self, settings: Settings, loader: Callable) -> None:
        self.m = settings.models
        self.loader = loader
        self._chunk = self._paper = None

    @property
    def chunk(self):
        if self._chunk is None:
            m = self.m
            self._chunk = self.loader(m.chunk_encoder, device=m.device, batch_size=m.batch_size,
                                      query_prompt=m.query_prompt, dtype=m.dtype, backend=m.encoder_backend,
                                      endpoint=m.endpoint(m.server_url))
        return self._chunk

    @property
    def paper(self):
        if self._paper is None:
            m = self.m
            self._paper = self.chunk if (m.paper_encoder, m.paper_adapter) == (m.chunk_encoder, None) else self.loader(
                m.paper_encoder, device=m.device, batch_size=m.batch_size, adapter=m.paper_adapter, dtype=m.dtype,
                backend=m.encoder_backend, endpoint=m.endpoint(m.server_url))
        return self._paper


def build_stores(settings: Settings, *, progress: bool = False, force: bool = False,
                 encoder_loader: Optional[Callable] = None, batch_chunks: Optional[int] = None) -> BuildReport:
    """Build (or update) the embedded stores of the corpus in ``settings.home`` (module docstring).

    ``force``: rebuild from scratch (re-encode everything); ``encoder_loader``: builds an
    encoder from a model spec (default :func:`lit3r.models.load_encoder`); ``batch_chunks``:
    chunks per committed batch (default: about :data:`BATCH_SECONDS` of encoding, measured).
    Raises NotBuiltError when no corpus has been ingested there,
    :class:`ingest.corpus.CorpusOrderError` for out-of-order corpus files,
    :class:`lit3r.errors.Locked` while another build of the same folder runs (:func:`lit3r.index.lock.build_lock`), and
    ``lit3r.models.ModelError`` when an encoder cannot be loaded.
    """
    from lit3r.models import load_encoder

    home = Path(settings.home)
    t0 = time.perf_counter()
    n_papers = corpus_size(home)
    if not (home / "papers.jsonl").is_file():
        raise NotBuiltError(f"no corpus in {home}: run `lit3r ingest PDF_DIR` first")
    with build_lock(home):
        return _build(settings, home, n_papers, t0, force, encoder_loader or load_encoder, batch_chunks, progress)


def _build(settings: Settings, home: Path, n_papers: int, t0: float, force: bool, loader: Callable,
           batch_chunks: Optional[int], progress: bool) -> BuildReport:
    """One build under the lock: choose the folder, stream and stage, publish, link, swap in."""
    return _Build(settings, home, force, loader, batch_chunks, progress).run(n_papers, t0)


class _Build:
    """The steps of one build (module docstring). ``in_place``: the live index is updated in
    its folder; otherwise a new index is built in ``index.new`` and swapped in at the end."""

    def __init__(self, settings: Settings, home: Path, force: bool, loader: Callable, batch_chunks: Optional[int],
                 progress: bool) -> None:
        self.settings, self.home, self.progress = settings, home, progress
        self.final = settings.index_dir
        self.fmt = _format(settings)
        self.state = _index_state(self.final)
        self.in_place = not force and self.state is not None and self.state.get("format") == self.fmt
        self.target = self.final if self.in_place else self.final.with_name(self.final.name + ".new")
        self.force = force
        self.enc = _Encoders(settings, loader)
        self.report = BuildReport()
        self.secs = self.report.seconds
        for k in ("stream", "encode", "stage", "publish", "neighbours"):
            self.secs[k] = 0.0
        self.fixed = batch_chunks
        self.size = MIN_BATCH_CHUNKS
        #: The corpus version the build reads (ingest/stamp.py), taken before the files are
        #: streamed: an ingest that rewrites them meanwhile leaves the index marked older.
        self.corpus_version = read_corpus_version(home)
        self.batch: list[tuple[PaperRecords, str, str, bool, bool]] = []
        self.pending = 0
        self.bar: RateProgress = Reporter(enabled=False).rate_bar("encoding", 0, "chunk")
        self.counted: dict[str, int] = {}

    def run(self, n_papers: int, t0: float) -> BuildReport:
        self._prepare_target()
        self.writer = self._open_writer()
        try:
            self.graph = GraphWriter(self.writer.con, direct=not self.in_place)
            seen = self._stream(n_papers)
            removed = sorted(set(self.live_g) - seen)
            self.report.removed_papers = len(removed)
            self._drop_stale(seen)
            publish = bool(self.graph.staged_hashes()) or bool(self.writer.staged()) or bool(removed) \
                or not self.in_place
            relink = publish or (self.state or {}).get("similar_k") != self.settings.relate.similar_k
            if not relink:
                self.report.skipped = True
                self._write_manifest(self.final)  # the same records: now marked as of this corpus version
                _sync(self.settings, self.report, self.progress)
                self.secs["total"] = time.perf_counter() - t0
                return self.report
            self._publish_and_link(removed, publish)
        finally:
            self.writer.close()
        # The manifest names the corpus version only once the index holds it: written after the
        # publish commit (in place), or into the new folder before it is swapped in.
        self._write_manifest(self.target)
        if not self.in_place:
            self._swap_in()
        _sync(self.settings, self.report, self.progress)
        self.secs["total"] = time.perf_counter() - t0
        self._write_manifest(self.final)
        return self.report

    def _prepare_target(self) -> None:
        """Clear a leftover ``index.new`` that cannot be resumed; write the format stub."""
        if not self.in_place:
            new_state = _index_state(self.target)
            if self.force or new_state is None or new_state.get("format") != self.fmt or not index_readable(self.target):
                _remove(self.target)
        self.target.mkdir(parents=True, exist_ok=True)
        if not (self.target / "manifest.json").is_file():
            (self.target / "manifest.json").write_text(json.dumps({"format": self.fmt}, indent=2), encoding="utf-8")

    def _open_writer(self) -> IndexWriter:
        """The index writer of the target folder (IndexDamaged when it cannot be read)."""
        target = self.target
        blocked = first_unreadable(target, target / DB_NAME)
        if blocked:  # the fix is its permissions, not a rebuild
            raise PermissionDenied(blocked)
        if self.in_place and not index_readable(target):
            raise IndexDamaged(f"the index in {target} is unreadable: run `lit3r ingest PDF_DIR --rebuild` to rebuild it")
        dim = stored_dim(target)
        try:
            return IndexWriter(target, dim=dim or self.enc.chunk.dim, k1=self.settings.retrieve.bm25_k1,
                               b=self.settings.retrieve.bm25_b)
        except DatabaseError as exc:
            raise IndexDamaged(f"the index in {target} is unreadable ({exc}): run `lit3r ingest PDF_DIR --rebuild` "
                               f"to rebuild it") from None

    def _stream(self, n_papers: int) -> set[str]:
        """Stream the corpus files paper by paper and stage the new or changed papers in batches
        of about ``BATCH_SECONDS`` of encoding; returns the ids seen."""
        writer, graph = self.writer, self.graph
        self.live_s, self.staged_s = writer.live(), writer.staged()
        self.live_g, self.staged_g = graph.live_hashes(), graph.staged_hashes()
        seen: set[str] = set()
        todo = self._chunks_to_encode() if self.progress else 0
        with Reporter(enabled=self.progress and todo > 0).rate_bar("encoding", todo, "chunk") as bar:
            self.bar = bar
            self._stream_papers(seen)
        return seen

    def _chunks_to_encode(self) -> int:
        """Chunks the build will encode (the total of the ``encoding`` bar): those of the papers
        new or changed since the live index whose chunk texts have no vectors yet, live, staged
        or cached (a first pass over the corpus files). ``self.counted``: their counts by paper id."""
        for rec in iter_corpus(self.home):
            pid = rec.paper_id
            if self.live_g.get(pid) == rec.digest and pid in self.live_s:
                continue
            ch, ph = self._hashes(rec)
            if (ch, ph) not in (self.live_s.get(pid), self.staged_s.get(pid)) \
                    and not self.writer.has_vectors(ch, rec.n_chunks):
                self.counted[pid] = rec.n_chunks
        return sum(self.counted.values())

    def _hashes(self, rec: PaperRecords) -> tuple[str, str]:
        """``(chunk hash, paper hash)`` of a paper: its chunk texts and its paper-encoder text, each
        with the identity of the encoder that embeds them."""
        m = self.settings.models
        paper_backend = "torch" if m.paper_adapter else m.encoder_backend
        paper_name = f"{encoder_identity(m.paper_encoder, paper_backend)}|{m.paper_adapter}"
        return (_digest(m.chunk_identity, *(f"{c['chunk_id']}\0{c['text']}" for c in rec.chunks)),
                _digest(paper_name, paper_text_for_encoder(rec.paper)))

    def _stream_papers(self, seen: set[str]) -> None:
        """The loop of :meth:`_stream`: each paper added to ``seen``; the chunks it needs not
        encode taken off the ``encoding`` bar's total."""
        report = self.report
        ts = time.perf_counter()
        for rec in iter_corpus(self.home):
            pid = rec.paper_id
            seen.add(pid)
            report.papers += 1
            report.chunks += rec.n_chunks
            report.references += len(rec.lines["references"])
            if self.live_g.get(pid) == rec.digest and pid in self.live_s:
                continue  # unchanged: the same lines give the same chunks, texts and vectors
            ch, ph = self._hashes(rec)
            g_done = self.live_g.get(pid) == rec.digest or self.staged_g.get(pid) == rec.digest
            s_done = self.live_s.get(pid) == (ch, ph) or self.staged_s.get(pid) == (ch, ph)
            if g_done and s_done:
                report.resumed_papers += 1  # done by an interrupted build
                self.bar.shrink(self.counted.pop(pid, 0))
                continue
            if s_done:
                self.bar.shrink(self.counted.pop(pid, 0))  # only its graph records change
            self.batch.append((rec, ch, ph, not g_done, not s_done))
            self.pending += len(rec.chunks)
            if self.pending >= (self.fixed or self.size):
                self.secs["stream"] += time.perf_counter() - ts
                self._flush()
                ts = time.perf_counter()
        self.secs["stream"] += time.perf_counter() - ts
        self._flush()

    def _encode(self, todo: list[tuple[PaperRecords, str, str]]) -> tuple[dict, dict, dict]:
        """``(cached chunk vectors by chunk hash, fresh chunk vectors by hash, fresh paper vectors
        by paper hash)`` of a batch; resizes the next batch to ``BATCH_SECONDS`` of encoding."""
        writer = self.writer
        ts = time.perf_counter()
        cached = {ch: writer.cached_vectors(ch, len(rec.chunks)) for rec, ch, _ in todo}
        need = [(rec, ch) for rec, ch, _ in todo if cached[ch] is None]
        # vectors of the same chunk texts encoded earlier in this build
        self.bar.shrink(sum(self.counted.pop(rec.paper_id, 0) for rec, ch, _ in todo if cached[ch] is not None))
        texts = [c["text"] for rec, _ in need for c in rec.chunks]
        fresh = self._encode_chunks(texts) if texts else np.zeros((0, writer.dim), np.float32)
        pneed = [(rec, ph) for rec, _, ph in todo if writer.cached_paper_vector(ph) is None]
        pfresh = self.enc.paper.encode([paper_text_for_encoder(rec.paper) for rec, _ in pneed]) if pneed else None
        took = time.perf_counter() - ts
        self.secs["encode"] += took
        if texts and self.fixed is None and took > 0:
            self.size = min(MAX_BATCH_CHUNKS, max(MIN_BATCH_CHUNKS, int(len(texts) / took * BATCH_SECONDS)))
        by_hash: dict[str, np.ndarray] = {}
        i = 0
        for rec, ch in need:
            by_hash[ch] = np.asarray(fresh[i:i + len(rec.chunks)], np.float32)
            i += len(rec.chunks)
        pby = {ph: np.asarray(pfresh[j], np.float32) for j, (_, ph) in enumerate(pneed)} if pfresh is not None else {}
        return cached, by_hash, pby

    def _encode_chunks(self, texts: list[str]) -> np.ndarray:
        """Chunk vectors ``(len(texts), dim)`` float32, encoded in slices of :data:`PROGRESS_CHUNKS`
        so that the ``encoding`` bar advances within a batch (the clock starts once the model is loaded)."""
        encoder = self.enc.chunk
        self.bar.restart()
        parts = []
        for i in range(0, len(texts), PROGRESS_CHUNKS):
            parts.append(np.asarray(encoder.encode(texts[i:i + PROGRESS_CHUNKS]), np.float32))
            self.bar.update(len(parts[-1]))
        return np.concatenate(parts)

    def _flush(self) -> None:
        """Encode and stage the pending batch in one transaction."""
        if not self.batch:
            return
        writer, graph, report = self.writer, self.graph, self.report
        cached, by_hash, pby = self._encode([(rec, ch, ph) for rec, ch, ph, _, s in self.batch if s])
        ts = time.perf_counter()
        writer.begin()
        for rec, ch, ph, graph_todo, search in self.batch:
            pid = rec.paper_id
            if graph_todo:
                if pid in self.staged_g:
                    graph.unstage([pid])
                graph.stage(rec.paper, rec.chunks, rec.references, rec.digest, rec.text_lines())
            if not search:
                continue
            if pid in self.staged_s:
                writer.unstage([pid])
            vecs = by_hash.get(ch)
            report.encoded_papers += vecs is not None
            if vecs is None:
                vecs = cached[ch] if cached[ch] is not None else np.zeros((0, writer.dim), np.float32)
            pv = pby.get(ph)
            pv = pv if pv is not None else writer.cached_paper_vector(ph)
            texts_p = [c["text"] for c in rec.chunks]
            writer.add_paper(pid, [c["chunk_id"] for c in rec.chunks], texts_p, vecs, chunk_hash=ch,
                             paper_hash=ph, head="\n".join(texts_p), paper_vector=pv)
        writer.flush_batch()
        writer.commit()
        self.secs["stage"] += time.perf_counter() - ts
        report.staged_papers += len(self.batch)
        self.batch, self.pending = [], 0

    def _drop_stale(self, seen: set[str]) -> None:
        """Unstage papers staged by an interrupted build and gone from the corpus since."""
        stale = sorted((set(self.graph.staged_hashes()) | set(self.writer.staged())) - seen)
        if stale:
            self.writer.begin()
            self.graph.unstage(stale)
            self.writer.unstage(stale)
            self.writer.commit()

    def _publish_and_link(self, removed: list[str], publish: bool) -> None:
        """Publish the staged papers and drop the removed ones (one transaction with the
        SIMILAR_TO update: incremental where the neighbour count is unchanged)."""
        writer, graph = self.writer, self.graph
        k = self.settings.relate.similar_k
        ts = time.perf_counter()
        changed = set(writer.staged())
        writer.begin()
        if publish:
            graph.publish(removed)
            writer.publish(removed)
        self.secs["publish"] = time.perf_counter() - ts
        ts = time.perf_counter()
        ids, pvecs = writer.live_paper_vectors()
        if self.in_place and (self.state or {}).get("similar_k") == k:
            affected, neighbours = update_neighbours(graph.neighbour_lists(), ids, pvecs, k, changed)
            graph.replace_neighbours(affected, neighbours)
        else:
            neighbours = top_k_neighbours(ids, pvecs, k)
            graph.set_neighbours(neighbours)
        self.report.neighbours = len(neighbours)
        writer.commit()
        writer.cleanup()
        self.secs["neighbours"] = time.perf_counter() - ts

    def _swap_in(self) -> None:
        """Replace the live index folder by the new one (the old one is kept until the swap)."""
        old = self.final.with_name(self.final.name + ".old")
        _remove(old)
        if self.final.exists():
            self.final.replace(old)
        self.target.replace(self.final)
        _remove(old)

    def _write_manifest(self, folder: Path) -> None:
        """``folder/manifest.json``: format, dim, models, similar_k, ``corpus_version`` (the
        corpus the index holds, :mod:`ingest.stamp`; None for a corpus without one) and the report."""
        write_text_atomic(folder / "manifest.json", json.dumps({
            "format": self.fmt, "dim": self.writer.dim, "models": self.settings.models.model_dump(mode="json"),
            "similar_k": self.settings.relate.similar_k, "corpus_version": self.corpus_version,
            "report": asdict(self.report)}, indent=2))


def _sync(settings: Settings, report: BuildReport, progress: bool) -> None:
    """With a backend that loads the local build into servers (its ``load_targets``), load what
    changed into Neo4j and OpenSearch (:mod:`lit3r.index.load`; run on every ingest: it also
    finishes a load that was killed)."""
    if backend_of(settings).load_targets is None:  # the stores are the local build
        return
    from lit3r.index.load import sync_servers
    from lit3r.index.lock import servers_lease

    ts = time.perf_counter()
    with servers_lease(settings, Path(settings.home)):  # one load at a time into the same Neo4j database
        report.servers = sync_servers(settings, progress=progress)
    report.seconds["servers"] = time.perf_counter() - ts


def _remove(path: Path) -> None:
    """Remove a scratch index folder (or a file in its place)."""
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists():
        path.unlink()
