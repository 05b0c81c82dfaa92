# Lit3R developer and user entry points. `make demo` and `make test` are the README's contract.
PY    ?= python3
VENV  ?= .venv
PDFS  ?= ../shared/data/corpus/pdfs
OUT   ?= lit3r_data/$(notdir $(abspath $(PDFS)))
META  ?= $(wildcard $(PDFS)/../manifest.jsonl)

$(VENV)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -q --upgrade pip
	$(VENV)/bin/python -m pip install -q -e '.[dev]'
	touch $@

.PHONY: install demo test bench
install: $(VENV)/.installed

demo: $(VENV)/.installed
	$(VENV)/bin/lit3r ingest "$(PDFS)" --out "$(OUT)" $(if $(META),--metadata "$(META)")

test: $(VENV)/.installed
	$(VENV)/bin/python -m pytest

bench: $(VENV)/.installed
	$(VENV)/bin/python bench/ingest_bench.py
