# The README's two commands: `make demo` and `make test`. Each sets itself up on a
# fresh machine (a .venv with the package and everything its tests need).

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.trustgate-installed

.PHONY: demo test lint typecheck unit bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "trustgate needs Python >= 3.11"'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,postgres,otlp,agents]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/trustgate demo

test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check trustgate tests bench
	$(BIN)/ruff format --check trustgate tests bench

typecheck: $(STAMP)
	$(BIN)/mypy trustgate

unit: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis .trustgate
