#!/usr/bin/env bash
# Install Arize Phoenix into its own virtual environment (.phoenix-venv by default).
#
# Phoenix pins many packages (sqlalchemy, grpcio, fastapi, protobuf, ...) that must
# not mix with trustgate's own environment, so the end-to-end telemetry test runs it
# as a separate server process from this venv. `make test` calls this when the venv
# is missing; it is idempotent.
set -euo pipefail

PYTHON="${PYTHON:-python3}"
VENV="${PHOENIX_VENV:-.phoenix-venv}"
SPEC="${PHOENIX_SPEC:-arize-phoenix>=20,<21}"

if [ -x "$VENV/bin/phoenix" ] && [ -f "$VENV/.trustgate-phoenix-installed" ]; then
  exit 0
fi
start=$(date +%s)
test -x "$VENV/bin/python" || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet "$SPEC"
touch "$VENV/.trustgate-phoenix-installed"
echo "phoenix-venv: installed $("$VENV/bin/python" -c 'import phoenix; print(phoenix.__version__)') in $(( $(date +%s) - start ))s"
