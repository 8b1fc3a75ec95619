# The two commands of a fresh machine: `make demo` and `make test`. Both create the environment first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-all test-fast lint install bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first, as the CPU build: a bare requirement would pull several GB of CUDA packages.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[ingest,serve,langchain,llamaindex,dev]'
	# unstructured's PDF path imports it; its declared requirements would pull CUDA torch (see pyproject.toml)
	$(BIN)/pip install --quiet --no-deps unstructured-inference==1.6.14
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/cairn ingest
	$(BIN)/cairn query "how do I fail over the ledger-db primary" --tenant acme --group sre --k 3
	$(BIN)/cairn query "TLS certificate expired on the edge proxy" --tenant acme --group sre --k 3

# Lint, then the unit layer and one integration test per real component and contract (marked `core`): what CI runs.
# In two processes, each test file whole in one of them: 5 min 43 s on 2026-11-29 (7 min 36 s in one process;
# 6 min 16 s with tests, not files, spread over the two), over its 5: README, "Numbers".
test: lint
	$(BIN)/python -m pytest -q --durations=15 -n 2 --dist loadfile -m "not slow or core"

# ruff (lint and format, 120 columns) and mypy (strict on the root, schemas, index and query): part of `make test`.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python scripts/typecheck.py

# Every test, the integration layer whole, in two processes, each test file whole in one of them (25 min 30 s on
# an idle 2-core machine on 2026-11-29, over its 12: README, "Numbers").
test-all: $(STAMP)
	$(BIN)/python -m pytest -q --durations=15 -n 2 --dist loadfile

# The unit layer alone (pure logic: no subprocess, Prefect or Lite server, no model), in two processes, each test
# file whole in one of them: under 30 s on an idle 2-core machine, for the edit-test loop.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile tests/unit

# The production-path benchmarks (about an hour on 2 cores; each skips when ../shared is absent), then
# their headline numbers against the goals. Results: bench/results/*.json.
# Against a Milvus server instead of a scratch Lite file: make bench STORE="--store server --uri http://host:19530"
STORE ?=
bench: $(STAMP)
	$(BIN)/python -m bench.runbooks --runs 3 $(STORE)
	$(BIN)/python -m bench.incremental --runs 3 $(STORE)
	$(BIN)/python -m bench.rss $(STORE)
	$(BIN)/python -m bench.embedding
	$(BIN)/python -m bench.query_speed --rows 10000,100000 $(STORE)
	$(BIN)/python -m bench.summary

clean:
	rm -rf data/index
