"""Does decomposition cost recall? (issue 14, item 8.) Ranking A and candidate recall@5/@10 of the
gold papers of questions_dev.jsonl without an LLM, and with a scripted decomposer that writes the
subqueries a real 1.5B model wrote (more than asked for, the question's names alone, vague
queries, queries on other topics, repeats; :class:`tests.integration.test_decomposition_recall.
BadDecomposer`), once with the anchored pool (Lit3R) and once with the pool ranking every
subquery's chunks equally, as before (simulated by patching :class:`lit3r.pipeline.pool.Pool`).

    .venv/bin/python bench/decomposition_recall.py --home DIR   # DIR: an ingested corpus (read only)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lit3r.config import load_settings  # noqa: E402
from lit3r.llm.client import StructuredLLM  # noqa: E402
from lit3r.pipeline import pool as poolmod  # noqa: E402
from lit3r.pipeline.engine import Engine  # noqa: E402
from tests.integration.test_decomposition_recall import BadDecomposer, recall_at  # noqa: E402

GOLD = ROOT.parent / "shared" / "data" / "corpus" / "questions_dev.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", required=True, type=Path)
    ap.add_argument("--gold", type=Path, default=GOLD)
    args = ap.parse_args()
    base = Engine(load_settings(home=args.home))
    rows = [json.loads(line) for line in args.gold.open()]
    add, own = poolmod.Pool.add, poolmod.Pool.own_papers
    for mode in ("no LLM", "bad decomposition, anchored pool", "bad decomposition, equal-weight pool (before)"):
        if mode.endswith("(before)"):
            poolmod.Pool.add = lambda self, scored, anchor=False: add(self, scored, False)  # type: ignore[method-assign]
            poolmod.Pool.own_papers = lambda self: {self.paper_of[c] for c in self.scores}  # type: ignore[method-assign]
        engine = base if mode == "no LLM" else Engine(base.settings, encoder=base.encoder.encoder,
                                                      llm=StructuredLLM(BadDecomposer(), backoff=0))  # type: ignore[arg-type]
        got: dict[str, list[float]] = {"A@5": [], "A@10": [], "candidates@5": [], "candidates@10": []}
        t = time.perf_counter()
        for r in rows:
            gold = {g["paper_id"] for g in r["gold_papers"]}
            res = engine.ask(r["question"], answer=False)
            a = [p for p, _ in res.ranking_a]
            for k in (5, 10):
                got[f"A@{k}"].append(recall_at(a, gold, k))
                got[f"candidates@{k}"].append(recall_at(res.candidates, gold, k))
        poolmod.Pool.add, poolmod.Pool.own_papers = add, own  # type: ignore[method-assign]
        print(f"{mode}: " + ", ".join(f"{k} {sum(v) / len(v):.3f}" for k, v in got.items())
              + f" ({len(rows)} questions, {time.perf_counter() - t:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
