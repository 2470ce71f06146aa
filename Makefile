# The README's two commands: `make demo` and `make test`. Each sets itself up on a
# fresh machine (a .venv with the package and everything its tests need).

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.trustgate-installed
PHOENIX_VENV  ?= .phoenix-venv
PHOENIX_STAMP := $(PHOENIX_VENV)/.trustgate-phoenix-installed

.PHONY: demo test lint typecheck unit bench clean phoenix-venv oracle

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "trustgate needs Python >= 3.11"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,postgres,otlp,agents,oracle]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/trustgate demo

test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check trustgate tests bench graphs examples
	$(BIN)/ruff format --check trustgate tests bench graphs examples

typecheck: $(STAMP)
	$(BIN)/mypy trustgate graphs

unit: $(STAMP) $(PHOENIX_STAMP)
	$(BIN)/python -m pytest -q

# Arize Phoenix (the real tracing backend of the end-to-end telemetry test) in its
# own venv: its pins must not mix with trustgate's.
$(PHOENIX_STAMP): scripts/phoenix-venv.sh
	PYTHON=$(PYTHON) PHOENIX_VENV=$(PHOENIX_VENV) bash scripts/phoenix-venv.sh

phoenix-venv: $(PHOENIX_STAMP)

# LangGraph's own tests with always-pass gates on every node: the categorised report of
# every divergence (tests/langgraph_oracle; ORACLE_ARGS="tests/test_pregel.py" to narrow).
oracle: $(STAMP)
	cd tests && ../$(BIN)/python -m langgraph_oracle $(ORACLE_ARGS)

bench: $(STAMP)
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis .trustgate .langgraph-oracle
