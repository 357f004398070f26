# Sourced by the benchmarks.
#
# cpu_busy: the share of all CPUs other processes keep busy over 2 s.
# make_identity_repos DIR writes the benchmark
# model `identity` (INPUT0 -> OUTPUT0, TYPE_FP32 dims [16], max_batch_size 8)
# twice: DIR/repo-oxiserve with `backend: "identity"`, and DIR/repo-triton
# with `backend: "python"` and a model.py returning INPUT0 through pb_utils
# (real Triton here has only the Python backend).
# server_log_tail LOG: a server log's first and last two error lines (Triton's and
# oxiserve's `E` lines), else its last lines, on one line, for a results file.

_identity_repo() { # DIR BACKEND
  mkdir -p "$1/identity/1"
  cat >"$1/identity/config.pbtxt" <<CFG
name: "identity"
backend: "$2"
max_batch_size: 8
input [ { name: "INPUT0", data_type: TYPE_FP32, dims: [ 16 ] } ]
output [ { name: "OUTPUT0", data_type: TYPE_FP32, dims: [ 16 ] } ]
CFG
}

make_identity_repos() { # DIR
  _identity_repo "$1/repo-oxiserve" identity
  _identity_repo "$1/repo-triton" python
  cat >"$1/repo-triton/identity/1/model.py" <<'PY'
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(
                "OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())])
            for r in requests
        ]
PY
}

cpu_busy() {
  { head -n 1 /proc/stat; sleep 2; head -n 1 /proc/stat; } | awk '{ t = 0; for (i = 2; i <= NF; i++) t += $i }
    NR == 1 { t0 = t; i0 = $5 + $6 } NR == 2 { printf "%.0f%%", 100 * (1 - ($5 + $6 - i0) / (t - t0)) }'
}

server_log_tail() { # LOG
  local e; e=$({ grep -E '^E[0-9]{4} ' "$1" | head -n 1; grep -E '^E[0-9]{4} ' "$1" | tail -n 2; } | awk '!seen[$0]++')
  [ -n "$e" ] || e=$(grep -v '^[|+]' "$1" | grep -v '^ *$' | tail -n 4)
  cut -c1-300 <<<"$e" | tr '\n' ' '
}

ratio() { # A B: A/B with two decimals, or – when either is missing
  [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }' || echo "–"
}

pyver() { # PYTHON: "Python X.Y.Z, numpy N" of an interpreter, or ?
  [ -x "$1" ] && "$1" -c 'import sys; v = sys.version.split()[0]
try:
    import numpy; n = numpy.__version__
except Exception: n = "none"
print(f"Python {v}, numpy {n}")' 2>/dev/null || echo "?"
}
