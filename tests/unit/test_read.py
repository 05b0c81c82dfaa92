"""Pure parts of the readers: listed names, extractive table rows, the stage-2 reply model."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from graph.records import Chunk
from lit3r.read.extractive import extractive_rows
from lit3r.read.llm import synthesis_model, user_message
from lit3r.read.scoring import question_entities


def test_question_entities():
    assert question_entities("What are the 2-step FID scores on CIFAR-10 for TCM, sCT, ECM-XL (100k iterations), "
                             "and IMM?") == ["TCM", "sCT", "ECM-XL", "IMM"]
    assert question_entities("What percentage is in SUN RGB-D, ARKitScenes, and KITTI?") == \
        ["SUN RGB-D", "ARKitScenes", "KITTI"]
    assert question_entities("Which NAACL 2025 papers mention MCTS in their framework figure?") == []
    assert question_entities("Across all venues, among 2025 methods, what base model does each use?") == []


def test_extractive_rows_read_values_after_the_row_key():
    table = Chunk(chunk_id="p::c0003", paper_id="p", kind="table", page=6, object_id="Table 2", seq=3,
                  text="Table 2: FID on CIFAR-10\nMethod | 1-step | 2-step\nTCM | 2.46 | 2.05\nsCT | 2.85 | 2.06")
    schema = [{"name": "Method", "type": "string", "is_row_key": True}, {"name": "FID", "type": "number"}]
    rows = extractive_rows("What are the FID scores for TCM, sCT, and IMM?", schema, [table], {"p": "A paper"})
    assert rows == [{"Method": "TCM", "FID": 2.46}, {"Method": "sCT", "FID": 2.85}, {"Method": "IMM", "FID": None}]
    rows = extractive_rows("Which papers report FID?", [{"name": "Paper Title", "type": "string", "is_row_key": True}],
                           [table], {"p": "A paper", "q": "Another paper"})
    assert rows == [{"Paper Title": "A paper"}, {"Paper Title": "Another paper"}]


def test_synthesis_model_asks_only_for_the_requested_answers():
    schema = [{"name": "Method", "type": "string", "is_row_key": True}, {"name": "2-step FID", "type": "number"}]
    model = synthesis_model(["multiple_choice", "table"], ["A", "B", "C", "D"], schema)
    js = model.model_json_schema()
    assert list(js["properties"]) == ["papers", "evidence", "calculation", "choice", "rows"]  # work before answer
    out = model.model_validate_json('{"papers": ["p"], "evidence": ["E1"], "choice": "B", '
                                    '"rows": [{"Method": "TCM", "2-step FID": 2.05}]}')
    assert out.rows[0].model_dump(by_alias=True) == {"Method": "TCM", "2-step FID": 2.05}
    with pytest.raises(ValidationError):
        model.model_validate_json('{"choice": "E", "rows": []}')
    assert "answer" in synthesis_model(["freeform"]).model_json_schema()["properties"]
    assert "calculation" not in synthesis_model(["table"], [], schema).model_json_schema()["properties"]


def test_user_message_attaches_crops_of_figures_and_tables(tmp_path):
    png = b"\x89PNG\r\n\x1a\n" + b"0" * 20
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "f.png").write_bytes(png)
    fig = Chunk(chunk_id="p::c0001", paper_id="p", kind="figure", page=2, object_id="Figure 1", seq=1,
                text="Figure 1: overview", image="images/f.png")
    text = Chunk(chunk_id="p::c0002", paper_id="p", kind="text", page=2, seq=2, text="body")
    msg = user_message("read this", [text, fig], tmp_path, max_images=4)
    assert msg["content"][0] == {"type": "text", "text": "read this"}
    assert msg["content"][1]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")
    assert user_message("read this", [text, fig], None, 4) == {"role": "user", "content": "read this"}
