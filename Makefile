# Two entry points a new user needs: `make demo` and `make test`.
# Both create .venv with the system python3 if it is missing, so they work first thing.
# `make demo` installs the package alone; `make test` adds the test and spark extras
# (pytest, mypy, ruff, the fuzzer, pyspark). One stamp per kind of install, so each target
# works on a fresh clone and neither redoes the other's install. Each install ends with
# `farkle-logs warm`: numba compiles the fast scanner, the replay kernel and the two-player
# judge then, while the user expects to wait, not during their first large ingest or audit
# or the demo's decision-quality step.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_STAMP := $(VENV)/.installed-demo
STAMP := $(VENV)/.installed-test
DEMO_OUT ?= demo_out

.PHONY: demo test lint install clean bench bench-all bench-ratios fuzz

$(BIN)/python:
	$(PY) -m venv $(VENV)

$(DEMO_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	$(BIN)/farkle-logs warm
	touch $(DEMO_STAMP)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,spark]'
	$(BIN)/farkle-logs warm
	touch $(STAMP) $(DEMO_STAMP)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: $(STAMP) lint
	$(BIN)/python -m pytest

demo: $(DEMO_STAMP)
	bash scripts/demo.sh $(BIN) $(DEMO_OUT)

# Quick benchmarks (seconds each); bench-all adds the 2 M-event ones (minutes).
bench: $(STAMP)
	$(BIN)/python bench/first_run.py
	$(BIN)/python bench/rules_table.py
	$(BIN)/python bench/reader.py
	$(BIN)/python bench/solver.py

# Every figure of the performance issue as a ratio against DuckDB's bare conversion, in one
# run (docs/performance.md); simulates the 2.9 M-event benchmark log first if it is missing.
bench-ratios: $(STAMP)
	$(BIN)/python bench/ratios.py

bench-all: bench
	$(BIN)/python bench/audit.py
	$(BIN)/python bench/simulate.py
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/stats.py
	$(BIN)/python bench/dataset_read.py

# Each fuzz target (tests/fuzz/targets.py) for FUZZ_SECONDS; `make test` runs them ~12 s each.
# The corpus grows in .fuzz-corpus/ across runs; logs and any failing input go to FUZZ_ARTIFACTS.
FUZZ_SECONDS ?= 300
FUZZ_TARGETS ?= lines event block ruleset audit scoresheet
FUZZ_ARTIFACTS ?= fuzz-artifacts
fuzz: $(STAMP)
	@mkdir -p $(FUZZ_ARTIFACTS)
	@for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz $$t ($(FUZZ_SECONDS) s, log $(FUZZ_ARTIFACTS)/$$t.log)"; \
	  if $(BIN)/python -m tests.fuzz.run $$t --seconds $(FUZZ_SECONDS) --corpus .fuzz-corpus/$$t \
	      --artifacts $(FUZZ_ARTIFACTS) > $(FUZZ_ARTIFACTS)/$$t.log 2>&1; then \
	    grep -E "^stat::(number_of_executed_units|new_units_added)" $(FUZZ_ARTIFACTS)/$$t.log || true; \
	  else tail -60 $(FUZZ_ARTIFACTS)/$$t.log; exit 1; fi; \
	done

clean:
	rm -rf $(DEMO_OUT) .pytest_cache
