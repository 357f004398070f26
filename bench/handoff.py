"""What one hand-over between two processes costs on this machine: two processes pass a
32-byte message back and forth over a Unix socket pair, each blocking in recv until the
other's send wakes it, as a Python model, the server and a called model do on every BLS
call. Prints the median round trip and so the cost of one hand-over.

    python3 bench/handoff.py                 # wherever the scheduler puts them
    taskset -c 0 python3 bench/handoff.py    # both on CPU 0: a context switch each time

Run on an otherwise idle machine: unpinned, the kernel puts the woken process on the idle
CPU, which must first be woken itself.
"""

import os
import socket
import statistics
import sys
import time

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 20000


def main():
    parent, child = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        parent.close()
        for _ in range(ROUNDS):
            child.send(child.recv(64))
        os._exit(0)
    child.close()
    message = b"x" * 32
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        parent.send(message)
        parent.recv(64)
        times.append(time.perf_counter() - start)
    os.waitpid(pid, 0)
    round_trip = statistics.median(times) * 1e6
    print(f"round trip median {round_trip:.1f} us, one hand-over {round_trip / 2:.1f} us "
          f"({ROUNDS} round trips, CPUs allowed: {sorted(os.sched_getaffinity(0))})")


if __name__ == "__main__":
    main()
