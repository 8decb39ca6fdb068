# Mnemograph: every target does its own set-up, so `make serve` and `make test` work on a fresh
# clone. Python 3.11, Java 17 (or 21) and Maven are the prerequisites (see README).
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TORCH_VERSION := 2.13.0+cpu
# CPU-only torch: a local wheel directory if present (our machines: ../shared/wheels next to
# the checkout, or /work/shared/wheels for a clone elsewhere, e.g. /tmp), otherwise PyTorch's CPU
# wheel index. TORCH_WHEELS=/path overrides.
TORCH_WHEELS ?= $(firstword $(wildcard ../shared/wheels /work/shared/wheels))
TORCH_INDEX_URL ?= https://download.pytorch.org/whl/cpu
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: venv neo4j neo4j-stop neo4j-status serve browser-check test test-unit lint typecheck format bench-locomo bench-beam bench-perf bench-consolidation bench-chaos bench-load fuzz clean

venv: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required, found " + sys.version' 
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@if [ -n "$(TORCH_WHEELS)" ]; then \
	  $(BIN)/pip install -q --find-links $(TORCH_WHEELS) torch==$(TORCH_VERSION); \
	else \
	  $(BIN)/pip install -q --index-url $(TORCH_INDEX_URL) torch==$(TORCH_VERSION); \
	fi
	$(BIN)/pip install -q -r requirements.lock
	$(BIN)/pip install -q --no-deps -e .
	touch $(STAMP)

neo4j: venv  ## start the local Neo4j + GDS in the background (idempotent)
	$(BIN)/python -m neo4j_runtime start

neo4j-stop:
	$(BIN)/python -m neo4j_runtime stop

neo4j-status: venv
	$(BIN)/python -m neo4j_runtime status

serve: venv  ## Neo4j + GDS + the API on http://127.0.0.1:8000, Browser on :7474; Ctrl-C stops all
	$(BIN)/python -m app serve --manage-neo4j

# Neo4j Browser in headless Chromium (Debian: apt-get install chromium) against its own server,
# data dir and free ports. BROWSER_CHECK_ARGS=--update-docs refreshes docs/browser/*.png.
BROWSER_CHECK_ARGS ?=
browser-check: venv
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
	  { echo "browser-check needs Chromium: apt-get install chromium"; exit 1; }
	$(BIN)/python -m benchmarks.browser_check $(BROWSER_CHECK_ARGS)

test: venv  ## the whole suite against a real Neo4j (tests start their own instance)
	$(BIN)/python -m pytest -q

test-unit: venv
	$(BIN)/python -m pytest -q tests/unit

lint: venv  ## ruff (lint and format) and mypy --strict
	$(BIN)/ruff check . && $(BIN)/ruff format --check .
	$(MAKE) typecheck

typecheck: venv  ## mypy --strict (pydantic plugin) on the service code
	$(BIN)/mypy pipelines app mnemograph

format: venv
	$(BIN)/ruff format . && $(BIN)/ruff check --fix .

# Two questions in flight: the full run (recall + context, both settings) took 5,265 s on 2 cores.
LOCOMO_ARGS ?= --workers 2

bench-locomo: venv
	$(BIN)/python -m benchmarks locomo $(LOCOMO_ARGS)

# BEAM-100K (../shared/datasets/beam/100K): per conversation, every recall preset and the context
# benchmark; every message ingested untruncated.
BEAM_ARGS ?= --workers 2 --settings per-conversation

bench-beam: venv
	$(BIN)/python -m benchmarks run --dataset beam $(BEAM_ARGS)

bench-perf: venv
	$(BIN)/python -m benchmarks perf

bench-consolidation: venv
	$(BIN)/python -m benchmarks consolidation

# The reliability campaign: each starts its own Neo4j and API on 127.0.0.1 (fresh database).
CHAOS_ARGS ?=
LOAD_ARGS ?=
FUZZ_ARGS ?=

bench-chaos: venv  ## kill -9 of Neo4j (20) and of the API (10) mid-ingest and mid-job
	$(BIN)/python -m benchmarks chaos $(CHAOS_ARGS)

bench-load: venv  ## open-loop mixed load: capacity, then twice the capacity for 5 minutes
	$(BIN)/python -m benchmarks load $(LOAD_ARGS)

fuzz: venv  ## schemathesis over the OpenAPI spec: bounded examples per operation, fixed seed
	$(BIN)/python -m benchmarks fuzz $(FUZZ_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
