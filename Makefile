# The README's two commands: `make build` and `make test`. Everything installs into .venv here.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Tests and CI read the public data from the shared mirror; a user without one downloads upstream.
TASTEBENCH_DATA_MIRROR ?= $(if $(wildcard ../shared/data),$(abspath ../shared/data),)
export TASTEBENCH_DATA_MIRROR
export DO_NOT_TRACK := 1
export GX_ANALYTICS_ENABLED := false
export DBT_SEND_ANONYMOUS_USAGE_STATS := false
# bytecode is cached (__pycache__, git-ignored) even where the shell says not to: the suite starts
# about a hundred Python processes (CLI, dbt, workers), each would compile the project's modules
unexport PYTHONDONTWRITEBYTECODE
PYTEST_ARGS ?=
# the suite runs on every logical core (pytest-xdist, one test file per worker: --dist loadfile);
# TEST_WORKERS=0 runs it in one process
TEST_WORKERS ?= logical

.PHONY: build test install lint bench clean

build: $(STAMP)  ## build the warehouse on the embedded default (simulated NECTAR) and print where
	$(BIN)/tastebench build

test: $(STAMP)  ## run the whole test suite, print the line coverage of warehouse/
	$(BIN)/pytest -n $(TEST_WORKERS) --cov --cov-report=term $(PYTEST_ARGS)

install: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,orchestrate]'
	@touch $(STAMP)

lint: $(STAMP)  ## ruff (Python) and sqlfluff with the dbt templater (SQL)
	$(BIN)/ruff check warehouse tests benchmarks python_models expectations
	$(BIN)/ruff format --check warehouse tests benchmarks python_models expectations
	tmp=$$(mktemp -d) && TASTEBENCH_DUCKDB_PATH=$$tmp/lint.duckdb $(BIN)/sqlfluff lint models macros data-tests --processes 1 --disable-progress-bar; status=$$?; rm -rf $$tmp; exit $$status

bench: $(STAMP)  ## print the benchmarks' ratios against their named baselines
	@for b in benchmarks/[!_]*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf build
