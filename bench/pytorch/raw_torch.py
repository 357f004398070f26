"""Raw Python torch baseline of bench/pytorch_throughput.sh: THREADS Python threads share the
TorchScript module (as the server's instances do), each with INTRA intra-op threads, calling
forward() under no_grad back to back on a fixed batch for DURATION seconds per batch size.
Prints one line per batch size: RAW batch=B rows_per_s=R calls=N.
"""

import argparse
import threading
import time
import warnings

import torch

warnings.filterwarnings("ignore", category=DeprecationWarning)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--intra", type=int, default=1)
    p.add_argument("--batches", default="1,8,32,64")
    p.add_argument("--duration", type=float, default=5.0)
    a = p.parse_args()
    torch.set_num_threads(a.intra)
    module = torch.jit.load(a.model).eval()
    for batch in [int(b) for b in a.batches.split(",")]:
        x = torch.randn(batch, 512)
        with torch.no_grad():
            for _ in range(3):  # warm-up: TorchScript optimizes on the first calls
                module(x)
        calls = [0] * a.threads
        stop = time.monotonic() + a.duration

        def loop(k):
            torch.set_num_threads(a.intra)
            with torch.no_grad():
                while time.monotonic() < stop:
                    module(x)
                    calls[k] += 1

        threads = [threading.Thread(target=loop, args=(k,)) for k in range(a.threads)]
        begin = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - begin
        print(f"RAW batch={batch} rows_per_s={sum(calls) * batch / elapsed:.1f} calls={sum(calls)}",
              flush=True)


if __name__ == "__main__":
    main()
