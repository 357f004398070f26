"""Raw Python TensorFlow throughput on the benchmark's SavedModel: its serving_default signature
called back to back on a fixed random batch by THREADS Python threads (TensorFlow releases the
GIL while it runs; the server's instances are as many callers), per batch size, for DURATION
seconds each (after a short warm-up). TensorFlow's own thread pools (default sizes), as the
server's sessions use.

Usage: raw_tf.py MODEL_DIR --batches 1,8,32,64 --duration 5 [--threads 2]
Prints one line per batch size: "RAW batch=B rows_per_s=R call_p50_us=P".
"""

import argparse
import os
import threading
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--batches", default="1,8,32,64")
    parser.add_argument("--duration", type=float, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    serve = tf.saved_model.load(args.model).signatures["serving_default"]
    row = serve.structured_input_signature[1]["x"].shape[1:]
    rng = np.random.default_rng(1)
    for batch in map(int, args.batches.split(",")):
        x = tf.constant(rng.standard_normal([batch] + list(row)).astype(np.float32))
        for _ in range(20):
            serve(x=x)["y"].numpy()
        calls = []  # list.append is atomic under the GIL
        start = time.perf_counter()

        def caller():
            while time.perf_counter() - start < args.duration:
                t0 = time.perf_counter()
                serve(x=x)["y"].numpy()
                calls.append(time.perf_counter() - t0)

        threads = [threading.Thread(target=caller) for _ in range(args.threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - start
        print(f"RAW batch={batch} rows_per_s={len(calls) * batch / elapsed:.1f} "
              f"call_p50_us={int(np.median(calls) * 1e6)}", flush=True)


if __name__ == "__main__":
    main()
