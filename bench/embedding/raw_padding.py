"""What padding costs the encoder alone (bench/embedding.sh, informational).

    raw_padding.py MODEL_ONNX TOKENIZER_JSON BODIES_JSONL INTRA SPINNING SECONDS [BATCH ...]

One onnxruntime session on the benchmark's model.onnx (CPU, INTRA intra-op threads, spinning
SPINNING or the default when empty, all optimizations), run back to back in this process with no
server, on the load's sentences (the bodies file, in rotation order), tokenized as the servers do
(truncation 256). For each BATCH (default 1 2 4 8 16 64): consecutive windows of BATCH sentences
in rotation order, padded to the window's longest, one session.run each, for SECONDS seconds.
Prints one line per batch: "RAW batch=B sentences_per_s=X run_ms=Y tokens_per_row=Z", Z being
the padded width averaged over the runs.
"""

import json
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

model, tok_path, bodies, intra, spinning, seconds = sys.argv[1:7]
batches = [int(b) for b in sys.argv[7:]] or [1, 2, 4, 8, 16, 64]
tok = Tokenizer.from_file(tok_path)
tok.enable_truncation(max_length=256)
tok.no_padding()
texts = [json.loads(l)["inputs"][0]["data"][0][0] for l in open(bodies, encoding="utf-8") if l.strip()]
ids = [tok.encode(t).ids for t in texts]
options = ort.SessionOptions()
options.intra_op_num_threads = int(intra)
options.inter_op_num_threads = 1
if spinning:
    options.add_session_config_entry("session.intra_op.allow_spinning", spinning)
session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def feeds(b):
    """The distinct padded batches of b consecutive sentences (rotation repeats after len(ids))."""
    out = []
    for start in range(len(ids)):
        rows = [ids[(start * b + i) % len(ids)] for i in range(b)]
        w = max(len(r) for r in rows)
        x = np.zeros((b, w), np.int64)
        m = np.zeros_like(x)
        for i, r in enumerate(rows):
            x[i, :len(r)] = r
            m[i, :len(r)] = 1
        out.append({"input_ids": x, "attention_mask": m, "token_type_ids": np.zeros_like(x)})
    return out


for b in batches:
    fs = feeds(b)
    for f in fs:
        session.run(None, f)  # warm-up, every shape once
    n = widths = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < float(seconds):
        f = fs[n % len(fs)]
        session.run(None, f)
        widths += f["input_ids"].shape[1]
        n += 1
    dt = time.perf_counter() - t0
    print(f"RAW batch={b} sentences_per_s={n * b / dt:.1f} run_ms={1000 * dt / n:.2f} tokens_per_row={widths / n:.1f}",
          flush=True)
