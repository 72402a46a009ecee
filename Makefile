# The two set-up commands of the README: `make demo` and `make test` (`make install`: the
# environment alone).
# Both create the virtual environment and install what they need on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
UV := $(VENV)/bin/uv
STAMP := $(VENV)/.installed
NODE_STAMP := node_modules/.installed
# The browser of the dashboard's browser test: the system's Chromium (Debian package
# `chromium`), never a browser Playwright downloads. Installed here when missing.
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
ORDERS ?= 1000

.PHONY: install demo test bench lint clean

# uv (from PyPI, into the venv) installs the app and the test extra in a fraction of pip's time;
# --compile-bytecode as pip does, or every process compiles its imports again where
# PYTHONDONTWRITEBYTECODE is set.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet uv
	$(UV) pip install --quiet --compile-bytecode --python $(PY) -e '.[test]'
	touch $(STAMP)

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $(NODE_STAMP)

$(CHROMIUM):
	$(SUDO) apt-get update -qq
	$(SUDO) apt-get install -y -qq chromium

# The virtual environment alone, with the app, the local host and the test tooling.
install: $(STAMP)

demo: $(STAMP)
	$(PY) -m demo --orders $(ORDERS)

# The three installs download at once; mypy checks types while pytest runs (its tests
# wait on sockets and subprocesses often enough to leave it a core). Both outputs are
# printed, and the target fails if either does.
test:
	$(MAKE) --no-print-directory -j3 --output-sync=target $(STAMP) $(NODE_STAMP) $(CHROMIUM)
	$(PY) -m ruff check .
	@# The suite starts hundreds of processes; with the bytecode written once, none
	@# compiles the project's modules again where PYTHONDONTWRITEBYTECODE is set.
	$(PY) -m compileall -q -j 0 -x '/\.|node_modules' .
	@log=$$(mktemp); $(PY) -m mypy >$$log 2>&1 & types=$$!; \
	trap 'kill $$types 2>/dev/null; rm -f $$log; exit 130' INT TERM; \
	$(PY) -m pytest; tests=$$?; \
	wait $$types; typed=$$?; echo "$(PY) -m mypy"; cat $$log; rm -f $$log; \
	[ $$tests -eq 0 ] && [ $$typed -eq 0 ]

bench: $(STAMP)
	$(UV) pip install --quiet --compile-bytecode --python $(PY) -e '.[test,bench]'
	$(PY) -m bench

clean:
	rm -rf $(VENV) node_modules .data
