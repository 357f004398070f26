#!/usr/bin/env bash
# Creates or updates the Python environment of the Python backend (numpy; the
# binary finds .venv/bin/python3 above itself) and of the end-to-end tests: a
# venv at .venv with tests/requirements.txt, then torch for the PyTorch backend
# (tests/requirements-torch.txt, installed without dependency resolution: it
# pins the parts of torch's CUDA set that are needed). Does nothing when .venv
# already matches both files (a stamp file holds their hash), so it is cheap to call.
# Then scripts/embedding-model.sh exports the example embedding model.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv
req=tests/requirements.txt
torch_req=tests/requirements-torch.txt
stamp=$venv/.requirements.sha256
want=$( (python3 --version; cat "$req" "$torch_req") | sha256sum | cut -d' ' -f1)

if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
  fi
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir -r "$req"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps -r "$torch_req"
  echo "$want" > "$stamp"
  echo "python-env: $venv is ready ($req, $torch_req)" >&2
fi
# The example repository's sentence-embedding model (cheap once done).
scripts/embedding-model.sh
