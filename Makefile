# Two entry points a new user needs: `make demo` and `make test`.
# Both create .venv with the system python3 if it is missing, so they work first thing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_OUT ?= demo_out

.PHONY: demo test install clean bench bench-all

$(BIN)/python:
	$(PY) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test,spark]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest

demo: $(STAMP)
	bash scripts/demo.sh $(BIN) $(DEMO_OUT)

# Quick benchmarks (seconds each); bench-all adds the 2 M-event ones (minutes).
bench: $(STAMP)
	$(BIN)/python bench/rules_table.py
	$(BIN)/python bench/reader.py
	$(BIN)/python bench/solver.py

bench-all: bench
	$(BIN)/python bench/audit.py
	$(BIN)/python bench/simulate.py
	$(BIN)/python bench/ingest.py
	$(BIN)/python bench/stats.py

clean:
	rm -rf $(DEMO_OUT) .pytest_cache
