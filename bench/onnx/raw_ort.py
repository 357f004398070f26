"""Raw ONNX Runtime baseline of bench/onnx_throughput.sh: back-to-back session.run.

    raw_ort.py MODEL.onnx --intra 2 [--sessions 1] [--batches 1,8,16,32,64]
               [--duration 5] [--runs 3] [--warmup 1]

SESSIONS sessions (each with intra_op_num_threads = INTRA, inter_op_num_threads = 1,
its own thread pool, sequential execution, all graph optimizations, CPU provider: what
the server's onnxruntime backend builds per instance), each driven by its own Python
thread calling session.run on a fixed random batch over and over for DURATION seconds
(session.run releases the GIL). For each run and batch size, one line:

    RAW batch=B run=R rows_per_s=.. calls=.. call_p50_us=.. call_p99_us=..

Batch sizes are interleaved across runs (run 1: every batch size, then run 2, ...), so
that slow drifts of the machine hit all alike. Then one line with the per-call cost of
session.run itself, measured on a one-element Identity model:

    OVERHEAD call_p50_us=.. call_mean_us=..
"""

import argparse
import threading
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper


def options(intra):
    o = ort.SessionOptions()
    o.intra_op_num_threads = intra
    o.inter_op_num_threads = 1
    o.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return o


def drive(sessions, feeds, seconds):
    """Runs every session on its own thread for `seconds`: (rows/s, call latencies in s)."""
    stop = threading.Event()
    lat = [[] for _ in sessions]

    def loop(i):
        s, feed, out = sessions[i], feeds[i], lat[i]
        while not stop.is_set():
            t = time.perf_counter()
            s.run(None, feed)
            out.append(time.perf_counter() - t)

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(len(sessions))]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    rows = sum(len(l) for l in lat) * next(iter(feeds[0].values())).shape[0]
    return rows / elapsed, np.array([x for l in lat for x in l])


def overhead(intra):
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "id",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    s = ort.InferenceSession(m.SerializeToString(), options(intra), providers=["CPUExecutionProvider"])
    feed = {"x": np.zeros(1, np.float32)}
    for _ in range(1000):
        s.run(None, feed)
    lat = []
    for _ in range(20000):
        t = time.perf_counter()
        s.run(None, feed)
        lat.append(time.perf_counter() - t)
    lat = np.array(lat)
    print(f"OVERHEAD call_p50_us={np.median(lat) * 1e6:.1f} call_mean_us={lat.mean() * 1e6:.1f}", flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--intra", type=int, default=2)
    p.add_argument("--sessions", type=int, default=1)
    p.add_argument("--batches", default="1,8,16,32,64")
    p.add_argument("--duration", type=float, default=5.0)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--warmup", type=float, default=1.0)
    a = p.parse_args()
    print(f"VERSION onnxruntime={ort.__version__} file={ort.__file__}", flush=True)
    sessions = [ort.InferenceSession(a.model, options(a.intra), providers=["CPUExecutionProvider"])
                for _ in range(a.sessions)]
    inp = sessions[0].get_inputs()[0]
    row = [d for d in inp.shape[1:]]
    rng = np.random.default_rng(1)
    batches = [int(b) for b in a.batches.split(",")]
    feeds = {b: [{inp.name: rng.standard_normal([b] + row).astype(np.float32)}
                 for _ in sessions] for b in batches}
    for b in batches:  # warm-up: every shape once (memory patterns, arenas)
        drive(sessions, feeds[b], a.warmup / len(batches))
    for r in range(1, a.runs + 1):
        for b in batches:
            rps, lat = drive(sessions, feeds[b], a.duration)
            print(f"RAW batch={b} run={r} rows_per_s={rps:.1f} calls={len(lat)} "
                  f"call_p50_us={np.median(lat) * 1e6:.0f} call_p99_us={np.percentile(lat, 99) * 1e6:.0f}",
                  flush=True)
    overhead(a.intra)


if __name__ == "__main__":
    main()
