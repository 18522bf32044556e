# Two entry points a newcomer needs: `make demo` and `make test`. Each creates .venv when
# missing and installs what it needs (the stamp files make repeat runs fast). The test
# environment holds every extra, so that no test is skipped for a missing package.
# `make docs` builds the documentation site into site/ (open site/index.html).
# `make lint` runs ruff (lint and `ruff format --check`) and mypy; `make test` runs them, then
# the tests; `make test-fast` is the edit-test loop (ruff, then the tests not marked slow).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
# the editable install: setuptools prints an "Editable installation" notice block on each one
# (a note on the checkout's layout, nothing to act on); the filter hides that warning alone,
# pip's errors and every other warning still print
EDITABLE := PYTHONWARNINGS="ignore:Editable installation" $(PIP) install -q -e
# mkdocs-material prints a banner about a future MkDocs 2 on every build; it is no warning
# about this site (strict mode still fails on any real one)
DOCS_ENV := NO_MKDOCS_2_WARNING=1 DISABLE_MKDOCS_2_WARNING=true

.PHONY: demo test test-fast lint bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.installed-train: pyproject.toml | $(BIN)/python
	$(EDITABLE) ".[train]"
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(EDITABLE) ".[dev,train,fast,distributed,torchrl,notebooks,pictures,docs]"
	touch $@

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(EDITABLE) ".[docs]"
	touch $@

demo: $(VENV)/.installed-train
	$(BIN)/castle-envs demo

# mypy ([tool.mypy] in pyproject.toml) reads the package as installed, agents/ and
# experiments/ inside castle_envs: build/docs-api/castle_envs, symbolic links into the
# checkout that docs/hooks.py lays out (as for the API reference)
lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python docs/hooks.py
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider

# the edit-test loop: ruff and the tests not marked slow (tests/conftest.py's SLOW_PATHS and
# @pytest.mark.slow), stopping at the first failure; make test runs everything
test-fast: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -n 2 -p no:cacheprovider -x -m "not slow"

docs: $(VENV)/.installed-docs
	$(DOCS_ENV) $(BIN)/mkdocs build --strict --site-dir site
	@echo "open site/index.html (or run: $(BIN)/mkdocs serve)"

bench: $(VENV)/.installed-test
	$(BIN)/castle-envs bench castle-siege

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .mypy_cache site build
