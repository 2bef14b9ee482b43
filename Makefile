# gpupoc: `make demo` runs the whole POC on the simulated cluster; `make test` runs the whole test suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
FAULTS ?=
PYTEST_ARGS ?=

.PHONY: help venv system-deps test unit integration demo down sim stack-up stack-down bench clean

help:
	@echo "make demo    - install what is needed, run the whole POC on the simulated cluster, write the report"
	@echo "make test    - install what is needed, run the whole test suite (unit + integration)"
	@echo "make down    - stop every process the demo started"
	@echo "make bench   - run the benchmarks under bench/"

$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps -e .
	@touch $(STAMP)

venv: $(STAMP)

# Debian packages: real Prometheus and Alertmanager.
system-deps:
	@bash scripts/install-monitoring.sh

test: venv system-deps
	$(BIN)/pytest $(PYTEST_ARGS)

unit: venv
	$(BIN)/pytest -m "not integration" $(PYTEST_ARGS)

integration: venv system-deps
	$(BIN)/pytest -m integration $(PYTEST_ARGS)

sim: venv
	$(BIN)/gpupoc sim serve --port 6443 $(if $(FAULTS),--faults $(FAULTS))

stack-up: venv system-deps
	$(BIN)/gpupoc stack up

stack-down: venv
	$(BIN)/gpupoc stack down

bench: venv
	@for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf var .pytest_cache
