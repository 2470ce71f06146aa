#!/usr/bin/env bash
# Install an MLflow tracking server into its own virtual environment (.mlflow-venv by
# default): the second real OTLP/HTTP backend of the end-to-end telemetry tests.
#
# MLflow pins many packages (Flask, SQLAlchemy, pandas, ...) that must not mix with
# trustgate's own environment, so the test runs it as a separate server process from
# this venv. `make test` calls this when the venv is missing; it is idempotent.
set -euo pipefail

PYTHON="${PYTHON:-python3}"
VENV="${MLFLOW_VENV:-.mlflow-venv}"
SPEC="${MLFLOW_SPEC:-mlflow>=3.6,<4}"

if [ -x "$VENV/bin/mlflow" ] && [ -f "$VENV/.trustgate-mlflow-installed" ]; then
  exit 0
fi
start=$(date +%s)
test -x "$VENV/bin/python" || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet "$SPEC"
touch "$VENV/.trustgate-mlflow-installed"
echo "mlflow-venv: installed $("$VENV/bin/python" -c 'import mlflow; print(mlflow.__version__)') in $(( $(date +%s) - start ))s"
