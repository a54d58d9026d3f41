# Two commands do all the set-up on a fresh clone: `make run` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
STATE := .toolgate
HOST ?= 127.0.0.1
PORT ?= 8080
MOCK_PORT ?= 8090
MODEL_PORT ?= 8091
# The suite starts a hundred Python processes, and each would compile every module it imports again where the
# environment turns bytecode caches off (PYTHONDONTWRITEBYTECODE): here they are written, into .venv and the
# checkout's __pycache__ directories (ignored by git).
export PYTHONDONTWRITEBYTECODE :=

.PHONY: install run test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade "pip>=24"
	# No byte-compiling of every installed module up front (a third of the install): Python compiles what is
	# imported, once, on first use, and keeps it (above).
	$(BIN)/pip install --quiet --no-compile -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

## Start the service on SQLite with a demo organization, plus the mock backend.
run: $(STAMP)
	$(BIN)/toolgate demo --host $(HOST) --port $(PORT) --mock-port $(MOCK_PORT) --model-port $(MODEL_PORT) --state $(STATE)

## Every test. PostgreSQL runs too when TOOLGATE_TEST_POSTGRES_URL is set (CI sets it).
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	sh tests/dashboard/ensure_browser.sh
	sh tests/identity/ensure_provider.sh
	# Two pytest processes side by side, one per core (tests/shards.py); `pytest` alone runs the same tests in one.
	$(BIN)/python -m tests.shards -q -p no:cacheprovider

bench: $(STAMP)
	$(BIN)/pip install --quiet -e ".[test,bench]"
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(STATE) *.egg-info
