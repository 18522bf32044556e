# Two entry points a newcomer needs: `make demo` and `make test`. Each creates .venv when
# missing and installs what it needs (the stamp files make repeat runs fast). The test
# environment holds every extra, so that no test is skipped for a missing package.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.installed-train: pyproject.toml | $(BIN)/python
	$(PIP) install -q -e ".[train]"
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP) install -q -e ".[dev,train,fast,distributed,notebooks,pictures]"
	touch $@

demo: $(VENV)/.installed-train
	$(BIN)/castle-envs demo

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider

bench: $(VENV)/.installed-test
	$(BIN)/castle-envs bench castle-siege

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
