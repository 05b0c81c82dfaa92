"""Determinism of the answers (issue 24, item 1): the same home, questions and settings give the
same submission lines and traces (timings aside) in any process (any ``PYTHONHASHSEED``) and
with any number of ``--workers``.

Two checks over the questions of both dev sets (questions_dev and questions_dev2), on the
two-paper hashing-encoder home of the integration fixtures (seconds to build):

- the reader's scores, as exact floats, in processes with different hash seeds: a sum over a
  set of terms follows the set's hash-seeded order, and float addition is not associative, so
  before the sums were made exact (``math.fsum``) the last bits of every relevance differed
  from one process to the next and decided ties between chunks and options;
- ``lit3r run`` end to end under hash seeds 1, 2 and 3, with ``--workers 1`` and ``--workers 3``:
  the submission lines (sorted by query id: with several workers they are appended as the
  questions finish) are byte-identical, and so are the trace lines without their timings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import CORPUS, ROOT

QUESTIONS = [CORPUS / "questions_dev_inputs.jsonl", CORPUS / "questions_dev2_inputs.jsonl"]
GOLDS = [CORPUS / "questions_dev.jsonl", CORPUS / "questions_dev2.jsonl"]

#: Printed by a child process: every unit's relevance and every option's support, as exact floats.
_SCORES = r"""
import json, sys
from ingest.corpus import load_corpus
from lit3r.read.claims import Support, choose_option, units_of
_, chunks, _ = load_corpus(sys.argv[1])
units = [u for c in chunks for u in units_of(c, 0.5)]
for path in sys.argv[2:]:
    for line in open(path):
        q = json.loads(line)
        support = Support(q["question"], units)
        print(q["query_id"], [support.relevance(u).hex() for u in units])
        options = (q["answer"].get("multiple_choice") or {}).get("options")
        if options:
            choice, per = choose_option(options, units, support)
            print(q["query_id"], choice, [(lab, s.score.hex()) for lab, s in per.items()])
"""


def _env(seed: int) -> dict:
    return {**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": str(ROOT)}


def test_the_readers_scores_are_the_same_floats_under_any_hash_seed(hashing_home):
    outputs = []
    for seed in (1, 2, 3):
        res = subprocess.run([sys.executable, "-c", _SCORES, str(hashing_home), *map(str, GOLDS)], cwd=ROOT,
                             env=_env(seed), capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr[-2000:]
        outputs.append(res.stdout.splitlines())
    assert len(outputs[0]) >= 37
    for seed, other in zip((2, 3), outputs[1:]):
        differ = [(a[:120], b[:120]) for a, b in zip(outputs[0], other) if a != b]
        assert not differ, f"PYTHONHASHSEED=1 and ={seed} score {len(differ)} lines differently: {differ[:3]}"


def _untimed(x):
    """A trace without its timings (``seconds``, ``timings``, ``lost_seconds``)."""
    if isinstance(x, dict):
        return {k: _untimed(v) for k, v in x.items() if k not in ("seconds", "timings", "lost_seconds")}
    if isinstance(x, list):
        return [_untimed(v) for v in x]
    return x


def test_lit3r_run_answers_byte_identically_across_hash_seeds_and_workers(hashing_home, tmp_path):
    queries = tmp_path / "questions.jsonl"
    queries.write_text("".join(p.read_text() for p in QUESTIONS))
    n = sum(1 for _ in queries.open())
    runs = {}
    for seed, workers in [(1, 1), (2, 1), (3, 1), (1, 3), (2, 3)]:
        out = tmp_path / f"sub-{seed}-{workers}.jsonl"
        res = subprocess.run([sys.executable, "-m", "lit3r.cli", "--home", str(hashing_home), "run", "--queries",
                              str(queries), "--out", str(out), "--workers", str(workers), "--llm", "none",
                              "--no-trace-graph"], cwd=ROOT, env=_env(seed), capture_output=True, text=True,
                             timeout=900)
        assert res.returncode == 0, res.stderr[-2000:]
        lines = sorted(out.read_text().splitlines())
        traces = sorted(json.dumps(_untimed(json.loads(ln)), sort_keys=True)
                        for ln in out.with_name(out.name + ".traces.jsonl").read_text().splitlines())
        assert len(lines) == n and len(traces) == n
        runs[(seed, workers)] = (lines, traces)
    (lines, traces) = runs[(1, 1)]
    assert any('"multiple_choice"' in ln for ln in lines)  # options were chosen, not only abstentions
    for key, (other_lines, other_traces) in runs.items():
        differ = [(a[:150], b[:150]) for a, b in zip(lines, other_lines) if a != b]
        assert not differ, f"seed 1, 1 worker vs seed {key[0]}, {key[1]} workers: {differ[:2]}"
        assert traces == other_traces, f"traces differ: seed 1, 1 worker vs seed {key[0]}, {key[1]} workers"
