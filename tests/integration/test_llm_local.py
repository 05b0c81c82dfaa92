"""`lit3r ask --llm local`: llama.cpp in process with the packaged SmolLM2-135M (extra
``local-llm``) answers with the small LLM profile, and reports its rounds and readings on stderr."""

from __future__ import annotations

import json

from click.testing import CliRunner

from lit3r.cli import main
from lit3r.config import PROFILES
from tests.integration.test_progress import progress_lines


def test_ask_with_the_local_llm_uses_the_small_profile(subset_home):
    env = {"LIT3R_LLM__CACHE": "false", "LIT3R_READ__LLM_PAPERS": "2",  # set explicitly: wins over the profile
           "OMP_WAIT_POLICY": None}  # unset during the call (Lit3R sets PASSIVE), as before it after
    res = CliRunner().invoke(main, ["--home", str(subset_home), "ask", "--llm", "local", "--json",
                                    "Which paper proposes sparse attention with random, window and global tokens "
                                    "for longer sequences?"], env=env)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)  # stdout holds the JSON alone: progress goes to stderr
    trace = out["trace"]
    assert trace["profile"]["name"] == "small"
    settings = trace["profile"]["settings"]
    assert settings["read.llm_papers"] == 2  # the variable
    small = PROFILES["small"]  # lit3r/profiles/small.toml
    rounds = small["retrieve"]["max_rounds"]
    assert (settings["read.chunks_per_paper"], settings["retrieve.max_rounds"]) == (small["read"]["chunks_per_paper"],
                                                                                    rounds)
    assert 1 <= len(trace["rounds"]) <= rounds and trace["llm"]["calls"] >= 5  # decompose, verify, 2 readings, synthesis
    assert trace["reader"]["name"] in ("llm", "llm stage 1 + extractive")
    assert len(out["submission"]["gold_papers"]) >= 1
    err = res.stderr
    assert f"retrieve round 1/{rounds}: " in err and "chunks pooled, verifier: " in err
    assert progress_lines(err, "reading papers")[-1] == (2, 2, "papers")
    assert "synthesis from " in err
