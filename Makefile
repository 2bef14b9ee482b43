# gpupoc: `make demo` runs the whole POC on the simulated cluster; `make test` runs the whole test suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
FAULTS ?=
BEHAVIOUR ?=
BEHAVIOUR_SEED ?= 0
PYTEST_ARGS ?=
# Tests run side by side (pytest-xdist): most wait on servers and waves. Tests that share a deployment or a
# module fixture stay on one worker (xdist_group; tests/scheduling.py), and units are handed out longest first
# (--no-loadscope-reorder keeps tests/conftest.py's order): docs/testing.md.
TEST_WORKERS ?= 4
XDIST := -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

.PHONY: help venv docs-assets system-deps browser test-deps control-plane test unit integration demo compare down sim stack-up stack-down bench clean

help:
	@echo "make demo    - install what is needed, run the whole POC on the simulated cluster, write the report"
	@echo "make test    - install what is needed, run the whole test suite (unit + integration)"
	@echo "make compare - run plans/compare.yaml (the default plan with a gang) on the four simulated platforms and compare them side by side (CLUSTER=kwok: kube-scheduler and Kueue for real)"
	@echo "make down    - stop every process the demo started"
	@echo "make bench   - run the benchmarks under bench/"
	@echo "make control-plane - build the real control plane's binaries (Kubernetes, etcd, kwok) from the Go module proxy, once"

$(STAMP): requirements.txt pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps -e .
	@touch $(STAMP)

venv: $(STAMP)

# npm packages (exact versions, package-lock.json) that the Data Docs site copies instead of loading from CDNs.
docs-assets:
	@bash scripts/install-docs-assets.sh

# Debian packages: real Prometheus and Alertmanager.
system-deps:
	@bash scripts/install-monitoring.sh

# Debian's Chromium and a Chinese font: report.pdf and the browser tests.
browser:
	@bash scripts/install-browser.sh

# Debian packages the tests need besides: Chromium for the browser test, PostgreSQL for the compose topology,
# Redis as the broker of the CeleryExecutor topology.
test-deps: browser
	@bash scripts/install-postgres.sh
	@bash scripts/install-redis.sh

# The real control plane's binaries: kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd and kwok
# from the Go module proxy, pinned in scripts/control-plane/pins.env, into a cache keyed by the pins (cold about
# 15 minutes on 2 cores, then seconds). `gpupoc controlplane up` starts them (docs/real-cluster.md).
control-plane:
	@bash scripts/control-plane/build.sh --with-kueue

test: venv docs-assets system-deps test-deps control-plane
	$(BIN)/pytest $(XDIST) $(PYTEST_ARGS)

# Bytecode is kept (__pycache__, ignored by git) even where the environment says not to write it
# (PYTHONDONTWRITEBYTECODE): else each worker compiles and rewrites every test module again at each run, and each
# Python a test starts compiles the package again.
unit: venv docs-assets
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -n 2 --dist loadgroup -m "not integration" $(PYTEST_ARGS)

integration: venv docs-assets system-deps test-deps control-plane
	$(BIN)/pytest $(XDIST) -m integration $(PYTEST_ARGS)

sim: venv
	$(BIN)/gpupoc sim serve --port 6443 $(if $(FAULTS),--faults $(FAULTS)) $(if $(BEHAVIOUR),--behaviour $(BEHAVIOUR) --behaviour-seed $(BEHAVIOUR_SEED))

stack-up: venv system-deps
	$(BIN)/gpupoc stack up

# The whole POC: cluster, monitoring, Airflow under var/airflow, the five test classes, the report.
# `make demo FAULTS=cross-tenant-logs` runs it on a cluster with that fault profile; BEHAVIOUR=release-staggered
# (BEHAVIOUR_SEED=n) on a correct cluster with that behaviour profile; PLAN=file another plan;
# CLASSES=tenant_isolation,... only those classes (the report takes the others' latest earlier evidence);
# FROM_MANIFESTS=1 starts the cluster empty and gives it the plan's manifests, kubeconfig and preflight.
# CLUSTER=kwok runs it on a real Kubernetes control plane (built once by `make control-plane`) whose nodes are
# KWOK's, given the plan the same way. Chromium prints report.pdf.
demo: venv docs-assets system-deps browser $(if $(filter kwok,$(CLUSTER)),control-plane)
	$(BIN)/gpupoc demo $(if $(FAULTS),--faults $(FAULTS)) $(if $(BEHAVIOUR),--behaviour $(BEHAVIOUR) --behaviour-seed $(BEHAVIOUR_SEED)) $(if $(PLAN),--plan $(PLAN)) $(if $(CLASSES),--classes $(CLASSES)) $(if $(FROM_MANIFESTS),--cluster-from-manifests) $(if $(CLUSTER),--cluster $(CLUSTER))

# plans/compare.yaml (the default plan with a gang) on the kube, kueue, volcano and kai modes side by side (each its own cluster,
# monitoring and Airflow under var/compare/<platform>), then the comparison (docs/comparison.md) under
# var/evidence/comparisons/<time>/. CLASSES=a,b only those classes; FAULTS=volcano:gang-partial plants a fault
# profile in that candidate's cluster only; PLATFORMS=kueue,kai others; JOBS=2 at most two candidates at once.
# CLUSTER=kwok runs kube-scheduler and Kueue for real on the real control plane (built once by `make control-plane`)
# and Volcano, KAI and HAMi as the simulated cluster's modes; every column says real or simulated mode.
compare: venv docs-assets system-deps browser $(if $(filter kwok,$(CLUSTER)),control-plane)
	$(BIN)/gpupoc compare-demo $(if $(FAULTS),--faults $(FAULTS)) $(if $(CLASSES),--classes $(CLASSES)) $(if $(PLAN),--plan $(PLAN)) $(if $(PLATFORMS),--platforms $(PLATFORMS)) $(if $(JOBS),--jobs $(JOBS)) $(if $(CLUSTER),--cluster $(CLUSTER))

# Stops every process `make demo` and `make compare` started (var/demo/pids.json, var/compare/*/demo/pids.json),
# by process id.
down:
	@if [ -x $(BIN)/gpupoc ]; then $(BIN)/gpupoc down; else echo "nothing to stop (no $(VENV))"; fi

stack-down: venv
	$(BIN)/gpupoc stack down

bench: venv
	@for b in bench/*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf var .pytest_cache
