"""Raw OpenVINO throughput, the baseline of bench/openvino_throughput.sh.

    raw_ov.py MODEL.xml --requests N --streams S --batches 1,8,64 --duration 5

Compiles MODEL.xml for the CPU with NUM_STREAMS=S (the properties the server's
config.pbtxt gives the backend), then for each batch size runs N infer
requests, each called back to back (`InferRequest.infer`, which releases the
GIL) by its own Python thread on a fixed random batch, for DURATION seconds
after a one-second warm-up. Prints one line per batch size:
    RAW batch=B rows_per_s=R calls=C
and VERSION <openvino version>.
"""

import argparse
import threading
import time

import numpy as np
import openvino as ov

p = argparse.ArgumentParser()
p.add_argument("model")
p.add_argument("--requests", type=int, default=1)
p.add_argument("--streams", type=int, default=1)
p.add_argument("--batches", default="1,8,64")
p.add_argument("--duration", type=float, default=5)
a = p.parse_args()

core = ov.Core()
compiled = core.compile_model(a.model, "CPU", {"NUM_STREAMS": str(a.streams)})
shape = [d.get_length() for d in list(compiled.input(0).get_partial_shape())[1:]]
print(f"VERSION openvino={ov.__version__}")


def run(batch, seconds):
    x = np.random.default_rng(0).standard_normal([batch] + shape).astype(np.float32)
    counts = [0] * a.requests
    stop = time.monotonic() + seconds

    def worker(i):
        request = compiled.create_infer_request()
        request.set_input_tensor(ov.Tensor(x))
        while time.monotonic() < stop:
            request.infer()
            counts[i] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(a.requests)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(counts), time.monotonic() - start


for batch in [int(b) for b in a.batches.split(",")]:
    run(batch, 1.0)
    calls, elapsed = run(batch, a.duration)
    print(f"RAW batch={batch} rows_per_s={calls * batch / elapsed:.0f} calls={calls}")
