"""What padding costs the encoder alone (bench/embedding.sh).

    raw_padding.py [--buckets COST] MODEL_ONNX TOKENIZER_JSON BODIES_JSONL INTRA SPINNING SECONDS [BATCH ...]

One onnxruntime session on the benchmark's model.onnx (CPU, INTRA intra-op threads, spinning
SPINNING or the default when empty, all optimizations), run back to back in this process with no
server, on the load's sentences (the bodies file, in rotation order), tokenized as the servers do
(truncation 256). For each BATCH (default 1 2 4 8 16 64): consecutive windows of BATCH sentences
in rotation order, for SECONDS seconds. Each window is padded to its longest and run as one
session.run, or, with --buckets, cut as oxiserve's `batch_padding: "buckets"` cuts a batch
(sorted by length, the runs that keep padded tokens plus COST per run smallest) and run as one
session.run per run, each padded to its own longest.
Prints one line per batch: "RAW batch=B sentences_per_s=X run_ms=Y tokens_per_row=Z", Y being
the time of one window and Z the padded width per row, averaged over the windows.
"""

import json
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

args = sys.argv[1:]
bucket_cost = None
if args[:1] == ["--buckets"]:
    bucket_cost, args = int(args[1]), args[2:]
model, tok_path, bodies, intra, spinning, seconds = args[:6]
batches = [int(b) for b in args[6:]] or [1, 2, 4, 8, 16, 64]
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


def runs(rows):
    """The rows cut into runs: one run, or the server's buckets (crates/core/src/scheduler/
    dynamic/buckets.rs: sorted by length, least padded tokens + bucket_cost per run)."""
    if bucket_cost is None:
        return [rows]
    rows = sorted(rows, key=len)
    best, start = [0], [0]
    for j in range(1, len(rows) + 1):
        cost, i = min((best[i] + (j - i) * len(rows[j - 1]) + bucket_cost, i) for i in range(j))
        best.append(cost)
        start.append(i)
    cut, j = [], len(rows)
    while j > 0:
        cut.append(rows[start[j]:j])
        j = start[j]
    return cut[::-1]


def feed(rows):
    w = max(len(r) for r in rows)
    x = np.zeros((len(rows), w), np.int64)
    m = np.zeros_like(x)
    for i, r in enumerate(rows):
        x[i, :len(r)] = r
        m[i, :len(r)] = 1
    return {"input_ids": x, "attention_mask": m, "token_type_ids": np.zeros_like(x)}


def windows(b):
    """The distinct windows of b consecutive sentences (rotation repeats after len(ids)), each
    as the feeds of its runs."""
    return [[feed(run) for run in runs([ids[(start * b + i) % len(ids)] for i in range(b)])]
            for start in range(len(ids))]


for b in batches:
    ws = windows(b)
    for w in ws:
        for f in w:
            session.run(None, f)  # warm-up, every shape once
    n = tokens = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < float(seconds):
        for f in ws[n % len(ws)]:
            session.run(None, f)
            tokens += f["input_ids"].size
        n += 1
    dt = time.perf_counter() - t0
    print(f"RAW batch={b} sentences_per_s={n * b / dt:.1f} run_ms={1000 * dt / n:.2f} tokens_per_row={tokens / n / b:.1f}",
          flush=True)
