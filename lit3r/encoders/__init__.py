"""Encoders other than sentence-transformers': the ONNX Runtime / OpenVINO encoder
(``onnx_encoder``) and the clients of embedding and rerank servers (``remote_models``);
chosen by :func:`lit3r.models.load_encoder`."""
