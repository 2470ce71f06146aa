# The README's two commands: `make demo` and `make test`. Each sets itself up on a
# fresh machine: `make demo` a .demo-venv with the package alone, `make test` a .venv with
# the package and everything its tests need.
#
#   make demo   the four reference pipelines with scripted models that invent, on bundled
#               data (DEMO_ARGS="--honest" for the honest models, "code-review" for one)
#   make test   lint (ruff, formatting, dead code), mypy --strict, the docs build, then every
#               test tier:
#               unit, integration (PostgreSQL, Phoenix, MLflow, Chromium, notebooks,
#               subprocess CLIs, LangGraph's agent server), bypass (the bypass matrix) and
#               oracle (LangGraph's own suite against guarded graphs, ~4 min). What CI runs.
#   make unit   the unit tier only: in-process tests, no server to install or start.
#               A test's tier is its folder: tests/unit, tests/integration, tests/bypass,
#               tests/oracle (tests/conftest.py marks each test by its folder, so
#               `pytest -m unit` and `pytest tests/unit` select the same tests).

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.trustgate-installed
PHOENIX_VENV  ?= .phoenix-venv
PHOENIX_STAMP := $(PHOENIX_VENV)/.trustgate-phoenix-installed
MLFLOW_VENV   ?= .mlflow-venv
MLFLOW_STAMP  := $(MLFLOW_VENV)/.trustgate-mlflow-installed
CHROMIUM      ?= /usr/bin/chromium

.PHONY: demo demo-venv test lint typecheck docs tests unit bench clean phoenix-venv mlflow-venv chromium backends oracle

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "trustgate needs Python >= 3.11"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip uninstall --quiet --yes trustgate  # the distribution's old name
	$(BIN)/python -m pip install --quiet -e '.[dev,postgres,otlp,agents,oracle,docs,agent-server]'
	touch $(STAMP)

# `make demo` has its own venv with the package alone (no test, lint, type-check or docs
# tools): its first result prints within seconds of the install. The demo's database is a
# file that `trustgate history` (another process) reads, so it needs a ledger key, and the
# investigation's review seals what a person decides on: both keys are made once for this
# checkout, readable by you only.
DEMO_VENV  ?= .demo-venv
DEMO_STAMP := $(DEMO_VENV)/.trustgate-demo-installed
DEMO_DIR   ?= .trustgate
DEMO_KEY   := $(DEMO_DIR)/demo.key
DEMO_REVIEW_KEY := $(DEMO_DIR)/demo-review.key
DEMO_ARGS  ?=

$(DEMO_STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "trustgate needs Python >= 3.11"'
	test -x $(DEMO_VENV)/bin/python || $(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/python -m pip install --quiet --disable-pip-version-check -e .
	touch $(DEMO_STAMP)

demo-venv: $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	@mkdir -p $(DEMO_DIR)
	@for k in $(DEMO_KEY) $(DEMO_REVIEW_KEY); do test -f $$k || (umask 077 && \
		$(DEMO_VENV)/bin/python -c 'import secrets; print(secrets.token_hex(32))' > $$k); done
	@TRUSTGATE_LEDGER_KEY_FILE=$(DEMO_KEY) TRUSTGATE_REVIEW_KEY_FILE=$(DEMO_REVIEW_KEY) \
		$(DEMO_VENV)/bin/trustgate demo $(DEMO_ARGS)

# The package's venv and the tests' backends (Phoenix, MLflow, Chromium) install side by
# side, then the checks run in order.
test:
	$(MAKE) --no-print-directory -j4 $(STAMP) $(PHOENIX_STAMP) $(MLFLOW_STAMP) chromium
	$(MAKE) --no-print-directory lint typecheck docs tests

lint: $(STAMP)
	$(BIN)/ruff check trustgate tests bench graphs examples
	$(BIN)/ruff format --check trustgate tests bench graphs examples
	$(BIN)/vulture  # dead code ([tool.vulture] in pyproject.toml)

typecheck: $(STAMP)
	$(BIN)/mypy trustgate graphs tests/typecheck

# The documentation site (docs/, mkdocs.yml), warnings as errors; its code blocks are run
# by tests/integration/test_docs_run.py.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

# every tier
tests: $(STAMP) backends
	$(BIN)/python -m pytest -q

unit: $(STAMP)
	$(BIN)/python -m pytest -q -m unit

# The real components of the end-to-end telemetry tests, installed side by side.
backends:
	$(MAKE) --no-print-directory -j3 $(PHOENIX_STAMP) $(MLFLOW_STAMP) chromium

# Arize Phoenix (the real tracing backend of the end-to-end telemetry test) in its
# own venv: its pins must not mix with trustgate's.
$(PHOENIX_STAMP): scripts/phoenix-venv.sh
	PYTHON=$(PYTHON) PHOENIX_VENV=$(PHOENIX_VENV) bash scripts/phoenix-venv.sh

phoenix-venv: $(PHOENIX_STAMP)

# LangGraph's own tests with always-pass gates on every node: the categorised report of
# every divergence (tests/langgraph_oracle; ORACLE_ARGS="tests/test_pregel.py" to narrow).
oracle: $(STAMP)
	cd tests && ../$(BIN)/python -m langgraph_oracle $(ORACLE_ARGS)

# An MLflow tracking server, the second OTLP backend of the telemetry tests (own venv).
$(MLFLOW_STAMP): scripts/mlflow-venv.sh
	PYTHON=$(PYTHON) MLFLOW_VENV=$(MLFLOW_VENV) bash scripts/mlflow-venv.sh

mlflow-venv: $(MLFLOW_STAMP)

# Debian's Chromium for the trace-view screenshot test (driven by Playwright). Installed
# when running as root (CI); otherwise the test says how, and fails under CI=true.
chromium:
	@if [ -x $(CHROMIUM) ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  start=$$(date +%s); \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null && \
	    echo "chromium: installed in $$(( $$(date +%s) - start ))s"; } || \
	  echo "chromium: apt-get install failed; the screenshot test fails under CI=true"; \
	else echo "chromium: $(CHROMIUM) missing and not root: apt-get install -y chromium"; fi

bench: $(STAMP)
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) $(DEMO_VENV) site .pytest_cache .mypy_cache .ruff_cache .hypothesis .trustgate .langgraph-oracle test-artifacts
