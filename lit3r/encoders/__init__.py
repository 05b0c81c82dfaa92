"""Encoders other than sentence-transformers': the OpenVINO encoder (``openvino_encoder``, the
default) and the ONNX Runtime one it builds on (``onnx_encoder``), the clients of embedding and
rerank servers (``remote_models``), chosen by :func:`lit3r.models.load_encoder`; ``runtime`` says
which installed packages a configuration needs (PyTorch is the optional extra ``lit3r[torch]``)."""
