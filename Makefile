# Two commands: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test install install-test clean

demo: $(VENV)/.installed
	$(BIN)/rankhouse demo

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(VENV)/.installed $@

clean:
	rm -rf $(VENV) rankhouse.duckdb rankhouse.labels.duckdb .pytest_cache
