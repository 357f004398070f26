#!/usr/bin/env bash
# Creates or updates the Python environment of the Python backend (numpy; the
# binary finds .venv/bin/python3 above itself) and of the end-to-end tests: a
# venv at .venv with tests/requirements.txt. Does nothing when .venv already matches
# the requirements (a stamp file holds their hash), so it is cheap to call.
# Then scripts/embedding-model.sh exports the example embedding model.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv
req=tests/requirements.txt
stamp=$venv/.requirements.sha256
want=$( (python3 --version; cat "$req") | sha256sum | cut -d' ' -f1)

if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
  echo "$want" > "$stamp"
  echo "python-env: $venv is ready ($req)" >&2
fi
# The example repository's sentence-embedding model (cheap once done).
scripts/embedding-model.sh
