"""The on-disk stores under updates: streamed BM25 equals bm25s, an index updated in place
(papers added, changed, pruned) answers exactly like one built from scratch, and an interrupted
build leaves the previous stores answering and resumes. Real chunks of real PDFs; the
model-free hashing encoder (the stores are under test, not the model)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys

import bm25s
import numpy as np
import pytest

from graph.embedded import EmbeddedGraphStore
from graph.errors import NotBuiltError
from graph.search.embedded import DB_NAME, EmbeddedSearchIndex
from graph.search.tokenize import tokenize
from ingest.corpus import ingest_corpus
from lit3r.config import Settings
from lit3r.index.build import build_stores
from lit3r.models import HashingEncoder
from tests.conftest import CORPUS, ROOT

PAPERS = ["1706.03762", "2007.14062", "2006.04768", "2006.16236", "2108.12409", "2309.06275"]
QUERIES = ["linear attention complexity kernel", "sparse attention random global tokens",
           "low-rank projection of keys and values", "BLEU score on WMT 2014 English-German",
           "positive orthogonal random features softmax", "the and of"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The six papers parsed once (no build): their three corpus files as lists of lines."""
    pdfs = tmp_path_factory.mktemp("pdfs")
    for pid in PAPERS:
        (pdfs / f"{pid}.pdf").symlink_to(CORPUS / "pdfs" / f"{pid}.pdf")
    out = tmp_path_factory.mktemp("parsed")
    ingest_corpus(pdfs, out, metadata_file=CORPUS / "manifest.jsonl", images=False, progress=False, workers=1)
    return {name: (out / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
            for name in ("papers", "chunks", "references")}


def _write(home, corpus, keep, edit=None):
    """Corpus files of the papers in ``keep``; ``edit(name, record) -> record`` may change lines."""
    home.mkdir(parents=True, exist_ok=True)
    for name, lines in corpus.items():
        out = []
        for line in lines:
            rec = json.loads(line)
            if rec["paper_id"] in keep:
                out.append(json.dumps(edit(name, rec) if edit else rec, ensure_ascii=False))
        (home / f"{name}.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")


def _settings(home) -> Settings:
    return Settings(home=home, models={"chunk_encoder": "hashing:64", "paper_encoder": "hashing:64"})


def _answers(home) -> dict:
    """Everything the stores answer for the queries and papers (ids exact, scores rounded)."""
    idx = EmbeddedSearchIndex.open(home / "index")
    g = EmbeddedGraphStore.open(home / "index" / DB_NAME)
    enc = HashingEncoder(64)
    r = lambda hits: [(i, round(s, 4)) for i, s in hits]  # noqa: E731
    out = {"papers": g.paper_ids()}
    for q in QUERIES:
        out[q] = (r(idx.chunk_bm25(q, 20)), r(idx.paper_bm25(q, 5)), r(idx.chunk_dense(enc.encode_queries([q])[0], 20)))
    for pid in out["papers"]:
        cids = [c.chunk_id for c in g.chunks_of(pid)]
        out[pid] = (cids, r(g.similar_papers(pid, 10)), g.coupled_papers(pid), g.cites(pid)[:5], g.cited_by(pid),
                    idx.paper_head(pid, 200), np.round(idx.vectors_of(cids[:5]), 5).tolist())
    return out


def test_streamed_bm25_scores_equal_bm25s(corpus, tmp_path):
    home = tmp_path / "home"
    _write(home, corpus, set(PAPERS))
    build_stores(_settings(home), batch_chunks=300)  # several batches -> several parts
    chunks = [json.loads(line) for line in corpus["chunks"]]
    ref = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    ref.index([tokenize(c["text"]) or [""] for c in chunks], show_progress=False)
    idx = EmbeddedSearchIndex.open(home / "index")
    for q in QUERIES:
        toks = [t for t in tokenize(q) if t in ref.vocab_dict]
        if not toks:
            assert idx.chunk_bm25(q, 10) == []
            continue
        scores = ref.get_scores(toks)
        want = sorted(((chunks[i]["chunk_id"], float(scores[i])) for i in np.flatnonzero(scores > 0)),
                      key=lambda h: (-h[1], h[0]))[:10]
        got = idx.chunk_bm25(q, 10)
        assert [c for c, _ in got] == [c for c, _ in want], q
        assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-5)


def test_updated_in_place_equals_built_from_scratch(corpus, tmp_path):
    first, final = {"1706.03762", "2007.14062", "2006.04768", "2006.16236"}, set(PAPERS) - {"2006.04768"}

    def edit(name, rec):  # a changed paper: new text in one chunk
        if name == "chunks" and rec["paper_id"] == "2007.14062" and rec["seq"] == 3:
            rec["text"] = rec["text"] + " orthogonal features"
        return rec

    home, fresh = tmp_path / "home", tmp_path / "fresh"
    _write(home, corpus, first)
    r1 = build_stores(_settings(home), batch_chunks=500)
    assert r1.encoded_papers == 4 and not r1.skipped
    _write(home, corpus, final, edit)  # +2 papers, 1 changed, 1 pruned
    r2 = build_stores(_settings(home), batch_chunks=500)
    assert (r2.encoded_papers, r2.removed_papers) == (3, 1)
    assert build_stores(_settings(home)).skipped
    _write(fresh, corpus, final, edit)
    build_stores(_settings(fresh), batch_chunks=10_000)
    assert _answers(home) == _answers(fresh)
    assert "2006.04768" not in EmbeddedGraphStore.open(home / "index" / DB_NAME).paper_ids()


#: A build killed with SIGKILL in its third encoder call (the second batch), after one batch committed.
KILLED_BUILD = r"""
import os, signal, sys
from lit3r.index.build import build_stores
from lit3r.config import Settings
from lit3r.models import HashingEncoder

class Dying(HashingEncoder):
    calls = 0
    def encode(self, texts, progress=False):
        Dying.calls += 1
        if Dying.calls == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return super().encode(texts)

s = Settings(home=sys.argv[1], models={"chunk_encoder": "hashing:64", "paper_encoder": "hashing:64"})
build_stores(s, batch_chunks=200, encoder_loader=lambda spec, **kw: Dying(64))
"""


def test_killed_build_keeps_previous_stores_and_resumes(corpus, tmp_path):
    home = tmp_path / "home"
    _write(home, corpus, {"1706.03762", "2007.14062"})
    build_stores(_settings(home))
    before = _answers(home)
    _write(home, corpus, set(PAPERS))
    res = subprocess.run([sys.executable, "-c", KILLED_BUILD, str(home)], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == -signal.SIGKILL, res.stderr[-2000:]
    assert _answers(home) == before  # the stores answer as before the killed build
    again = build_stores(_settings(home), batch_chunks=200)
    assert again.resumed_papers >= 1 and again.encoded_papers < 4
    fresh = tmp_path / "fresh"
    _write(fresh, corpus, set(PAPERS))
    build_stores(_settings(fresh))
    assert _answers(home) == _answers(fresh)


def test_model_change_rebuilds_beside_and_swaps(corpus, tmp_path):
    home = tmp_path / "home"
    _write(home, corpus, {"1706.03762"})
    build_stores(_settings(home))
    s = Settings(home=home, models={"chunk_encoder": "hashing:32", "paper_encoder": "hashing:32"})
    report = build_stores(s)
    assert report.encoded_papers == 1
    assert EmbeddedSearchIndex.open(home / "index").dim == 32
    assert not (home / "index.new").exists() and not (home / "index.old").exists()
    shutil.rmtree(home / "index")
    with pytest.raises(NotBuiltError, match="lit3r ingest"):
        EmbeddedSearchIndex.open(home / "index")


def _pdf_home(tmp_path, n: int):
    """(a folder of the first ``n`` PAPERS' PDFs, an empty home configured for the hashing encoder)."""
    pdfs, home = tmp_path / "pdfs", tmp_path / "home"
    pdfs.mkdir()
    home.mkdir()
    for pid in PAPERS[:n]:
        (pdfs / f"{pid}.pdf").symlink_to(CORPUS / "pdfs" / f"{pid}.pdf")
    (home / "config.toml").write_text('[models]\nchunk_encoder = "hashing:64"\npaper_encoder = "hashing:64"\n')
    return pdfs, home


def test_ingest_prune_removes_a_paper_from_every_store(tmp_path):
    pdfs, home = _pdf_home(tmp_path, 3)
    cli = [sys.executable, "-m", "lit3r.cli", "--home", str(home), "ingest", str(pdfs), "--no-images",
           "--metadata", str(CORPUS / "manifest.jsonl")]
    res = subprocess.run(cli, cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0 and "3 paper(s) encoded" in res.stdout, res.stderr[-2000:]
    gone = PAPERS[2]
    g = EmbeddedGraphStore.open(home / "index" / DB_NAME)
    chunk_ids = [c.chunk_id for c in g.chunks_of(gone)]
    title = g.paper(gone).title
    assert {c for c, _ in EmbeddedSearchIndex.open(home / "index").chunk_bm25(title, 20)} & set(chunk_ids)
    (pdfs / f"{gone}.pdf").unlink()
    res = subprocess.run(cli + ["--prune"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0 and "1 pruned" in res.stdout and "1 removed" in res.stdout, res.stdout + res.stderr
    g, idx = EmbeddedGraphStore.open(home / "index" / DB_NAME), EmbeddedSearchIndex.open(home / "index")
    assert gone not in g.paper_ids() and g.papers_of(chunk_ids) == {}
    with pytest.raises(KeyError):
        g.chunks_of(gone)
    with pytest.raises(KeyError):
        idx.paper_head(gone, 100)
    with pytest.raises(KeyError):
        idx.vectors_of(chunk_ids[:1])
    assert not {c for c, _ in idx.chunk_bm25(title, 50)} & set(chunk_ids)
    assert gone not in {p for p, _ in idx.paper_bm25(title, 50)}
    vec = HashingEncoder(64).encode_queries([title])[0]
    assert not {c for c, _ in idx.chunk_dense(vec, 50)} & set(chunk_ids)
    for pid in g.paper_ids():
        assert gone not in {p for p, _ in g.similar_papers(pid, 10)} | {p for p, _, _ in g.coupled_papers(pid)}
        assert gone not in g.cited_by(pid)


def test_papers_staged_by_a_killed_build_and_gone_since_are_not_published(corpus, tmp_path):
    home = tmp_path / "home"
    _write(home, corpus, {"1706.03762", "2007.14062"})
    build_stores(_settings(home))
    _write(home, corpus, set(PAPERS))
    res = subprocess.run([sys.executable, "-c", KILLED_BUILD, str(home)], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == -signal.SIGKILL, res.stderr[-2000:]
    final = set(PAPERS) - {"2006.04768"}  # the first paper of the killed build's first batch
    _write(home, corpus, final)
    build_stores(_settings(home))
    fresh = tmp_path / "fresh"
    _write(fresh, corpus, final)
    build_stores(_settings(fresh))
    assert _answers(home) == _answers(fresh)


def test_a_second_build_of_the_same_home_fails_at_once(corpus, tmp_path):
    import fcntl

    from lit3r.errors import Locked

    home = tmp_path / "home"
    _write(home, corpus, {"1706.03762"})
    with open(home / ".build.lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(Locked, match="another build .* is running"):
            build_stores(_settings(home))
    assert not build_stores(_settings(home)).skipped  # the lock is free again


def test_an_open_engine_keeps_answering_while_builds_publish(corpus, tmp_path):
    import threading

    from lit3r.pipeline.engine import Engine

    home = tmp_path / "home"
    small, big = {"1706.03762", "2007.14062", "2006.04768"}, set(PAPERS)
    _write(home, corpus, small)
    build_stores(_settings(home))
    engine = Engine(_settings(home))
    errors, answered, stop = [], [], threading.Event()

    def ask_forever():
        while not stop.is_set():
            try:
                answered.append(engine.ask(QUERIES[len(answered) % 5]).candidates)
            except Exception as exc:  # noqa: BLE001 - the test reports any failure
                errors.append(repr(exc))

    worker = threading.Thread(target=ask_forever)
    worker.start()
    try:
        for i in range(6):  # add and remove papers back and forth, each build publishing
            _write(home, corpus, big if i % 2 == 0 else small)
            build_stores(_settings(home))
    finally:
        stop.set()
        worker.join()
    assert not errors, errors[:3]
    assert len(answered) >= 6
    assert set(engine.ask(QUERIES[0]).candidates) <= small  # the last build (small) is what it sees now


@pytest.mark.parametrize("damage", ["truncate vectors", "delete segment", "garbage database"])
def test_a_damaged_index_says_so_and_rebuild_repairs_it(tmp_path, damage):
    pdfs, home = _pdf_home(tmp_path, 2)
    lit3r = [sys.executable, "-m", "lit3r.cli", "--home", str(home)]
    ingest = lit3r + ["ingest", str(pdfs), "--no-images"]
    assert subprocess.run(ingest, cwd=ROOT, capture_output=True).returncode == 0
    index = home / "index"
    if damage == "truncate vectors":
        os.truncate(index / "chunk_vectors.f32", 1000)
    elif damage == "delete segment":
        shutil.rmtree(next(index.glob("chunks-*")))
    else:
        (index / DB_NAME).write_bytes(b"not a database" * 100)
    ask = subprocess.run(lit3r + ["ask", "attention"], cwd=ROOT, capture_output=True, text=True)
    assert ask.returncode == 1 and "Traceback" not in ask.stderr
    assert "--rebuild" in ask.stderr and len(ask.stderr.strip().splitlines()) == 1, ask.stderr
    again = subprocess.run(ingest, cwd=ROOT, capture_output=True, text=True)
    if damage != "delete segment":  # a missing segment folder is not seen by an update, only by readers
        assert again.returncode == 1 and "--rebuild" in again.stderr and "Traceback" not in again.stderr, again.stderr
    fixed = subprocess.run(ingest + ["--rebuild"], cwd=ROOT, capture_output=True, text=True)
    assert fixed.returncode == 0 and "2 paper(s) encoded" in fixed.stdout, fixed.stderr[-1500:]
    ask = subprocess.run(lit3r + ["ask", "attention"], cwd=ROOT, capture_output=True, text=True)
    assert ask.returncode == 0 and "Supporting papers" in ask.stdout, ask.stderr[-1500:]


#: Damage done to a copy of a built index, the damaged file `lit3r doctor` must name, and whether
#: `lit3r ask` still answers (issue 25: a missing, torn or cut index file makes it refuse in one line).
DAMAGES = {
    "vectors cut in half": ("chunk_vectors.f32 holds", False),
    "vectors zeroed": ("chunk_vectors.f32: only zeros", False),
    "paper vectors cut": ("paper_vectors.f32 holds", False),
    "database overwritten": ("lit3r.sqlite is not a SQLite database", False),
    "database pages zeroed": ("lit3r.sqlite fails quick_check", False),
    "manifest missing": ("manifest.json is missing", False),
    "manifest torn": ("manifest.json: not valid JSON", False),
    "postings cut": ("/docs.npy is cut short", False),
    "postings header garbage": ("/tf.npy has no valid .npy header", False),
    "segment folder deleted": ("the BM25 segment folder chunks-", False),
    "postings past the documents": ("/docs.npy names document 100,000,000, the index has", False),
    "document lengths cut": ("chunks.dl holds", False),
}


def _damage(index, damage: str) -> None:
    seg = sorted(index.glob("chunks-*"))[-1]
    if damage == "vectors cut in half":
        os.truncate(index / "chunk_vectors.f32", (index / "chunk_vectors.f32").stat().st_size // 2)
    elif damage == "vectors zeroed":
        (index / "chunk_vectors.f32").write_bytes(bytes((index / "chunk_vectors.f32").stat().st_size))
    elif damage == "paper vectors cut":
        os.truncate(index / "paper_vectors.f32", 100)
    elif damage == "database overwritten":
        (index / DB_NAME).write_bytes(os.urandom((index / DB_NAME).stat().st_size))
    elif damage == "database pages zeroed":  # the header survives, pages after the first are zeros
        size = (index / DB_NAME).stat().st_size
        with open(index / DB_NAME, "r+b") as fh:
            fh.seek(4096)
            fh.write(bytes(size - 4096))
    elif damage == "manifest missing":
        (index / "manifest.json").unlink()
    elif damage == "manifest torn":
        (index / "manifest.json").write_text('{"format": {"build_version"')
    elif damage == "postings cut":
        os.truncate(seg / "docs.npy", (seg / "docs.npy").stat().st_size // 2)
    elif damage == "postings header garbage":
        with open(seg / "tf.npy", "r+b") as fh:
            fh.write(b"garbage" * 8)
    elif damage == "segment folder deleted":
        shutil.rmtree(seg)
    elif damage == "postings past the documents":  # valid .npy, right shape, doc ids out of range
        docs = np.load(seg / "docs.npy")
        docs[::5] = 10**8
        np.save(seg / "docs.npy", docs)
    else:
        os.truncate(index / "chunks.dl", 8)


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_doctor_names_the_damaged_index_file_and_ask_ends_in_one_line(hashing_home, tmp_path, damage):
    """Issue 16: `lit3r doctor` fails its index check with one line naming the damaged file and
    `lit3r ingest PDF_DIR --rebuild` (header, size and shape checks and the database's
    quick_check: well under a second); `lit3r ask` on the same index ends with one line."""
    import time

    from click.testing import CliRunner

    from lit3r.cli import main

    home = tmp_path / "home"
    shutil.copytree(hashing_home, home)
    runner = CliRunner()
    ok = runner.invoke(main, ["--home", str(home), "doctor", "--json"])
    assert ok.exit_code == 0, ok.output
    _damage(home / "index", damage)
    named, answers = DAMAGES[damage]
    t0 = time.perf_counter()
    res = runner.invoke(main, ["--home", str(home), "doctor", "--json"])
    seconds = time.perf_counter() - t0
    assert res.exit_code == 1 and seconds < 10, (res.output, seconds)
    check = next(c for c in json.loads(res.stdout)["checks"] if c["name"] == "index")
    detail = check["detail"]
    assert not check["ok"] and named in detail and "`lit3r ingest PDF_DIR --rebuild`" in detail, detail
    assert detail.startswith(f"the index in {home / 'index'} is damaged (") and "\n" not in detail, detail
    ask = runner.invoke(main, ["--home", str(home), "ask", "attention"])
    if answers:
        assert ask.exit_code == 0 and "Supporting papers" in ask.stdout, ask.output
    else:
        lines = ask.stderr.strip().splitlines()
        assert ask.exit_code == 1 and len(lines) == 1 and "--rebuild" in lines[0], ask.output
        assert not isinstance(ask.exception, Exception) or isinstance(ask.exception, SystemExit), ask.exception


#: An index file or folder made unreadable (chmod 000) -> the path the error must name.
UNREADABLE = {"database": "lit3r.sqlite", "postings": "chunks-*/tf.npy", "manifest": "manifest.json", "folder": "."}


@pytest.mark.parametrize("what", list(UNREADABLE))
def test_an_unreadable_index_file_says_fix_its_permissions_not_rebuild(hashing_home, tmp_path, what):
    """A file this user may not read is named with `fix its permissions (chmod/chown)`, by doctor
    and by ask: a rebuild would not help. Root's overrides are dropped (setpriv) to see it."""
    import shutil as sh

    home = tmp_path / "home"
    shutil.copytree(hashing_home, home)
    index = home / "index"
    target = next(index.glob(UNREADABLE[what])) if what != "folder" else index
    prefix: list[str] = []
    if os.geteuid() == 0:
        if not sh.which("setpriv"):
            pytest.skip("root without setpriv: permissions are not enforced")
        prefix = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search,-fowner"]
    target.chmod(0)
    try:
        lit3r = prefix + [sys.executable, "-m", "lit3r.cli", "--home", str(home)]
        line = f"{target} cannot be read (permission denied): fix its permissions (chmod/chown)"
        doctor = subprocess.run(lit3r + ["doctor", "--json"], cwd=ROOT, capture_output=True, text=True)
        check = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "index")
        assert doctor.returncode == 1 and check["detail"] == line, check
        ask = subprocess.run(lit3r + ["ask", "attention"], cwd=ROOT, capture_output=True, text=True)
        # ask checks the manifest before answering (issue 25): an unreadable one is named like the rest
        assert ask.returncode == 1 and ask.stderr.splitlines() == [f"Error: {line}"], ask.stderr[-1500:]
    finally:
        target.chmod(0o755 if target.is_dir() else 0o644)
