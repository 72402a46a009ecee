# The two set-up commands of the README: `make demo` and `make test`.
# Both create the virtual environment and install what they need on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
ORDERS ?= 1000

.PHONY: demo test bench lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

demo: $(STAMP)
	$(PY) -m demo --orders $(ORDERS)

test: $(STAMP) $(NODE_STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m pytest

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,bench]'
	$(PY) -m bench

clean:
	rm -rf $(VENV) node_modules .data
