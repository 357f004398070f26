"""Where a server's CPU goes per request, by stage of the request path.

Reads `perf script` output of a `perf record -g -p SERVER` taken while a load of REQUESTS
requests ran for the recording's length, puts each sample in one stage (first by the
system call its stack is in, then by its leaf function's crate), and prints a Markdown
table: the stage, its share of the server's samples, and microseconds of CPU per request.

    perf script -i perf.data -F comm,ip,sym | python3 bench/lib/perf_stages.py FREQ REQUESTS

FREQ is `perf record -F`'s sampling frequency (samples per CPU second).
"""

import collections
import re
import sys

# Samples inside these system calls belong to them, wherever they were called from.
SYSCALL_STAGES = [
    ("socket write (kernel TCP, loopback delivery included)", r"writev|write_vectored|tcp_sendmsg"),
    ("socket read", r"__libc_recv|recvfrom|tcp_recvmsg"),
    ("event loop wait (epoll)", r"epoll"),
    ("instance thread idle polling (sched_yield)", r"sched_yield"),
    ("thread sleep and wake-up (futex)", r"futex"),
]
# Otherwise the leaf function decides.
LEAF_STAGES = [
    ("HTTP/2 and gRPC (h2, tonic, prost)", r"\bh2::|tonic|prost"),
    ("HTTP/1 (hyper)", r"hyper|httparse|\bhttp::"),
    ("KServe JSON codec", r"oxiserve_http::codec|serde_json|dtoa|grisu|ryu|itoa"),
    ("routing (axum, tower)", r"axum|tower|matchit"),
    ("scheduler: queue, inline execution (crossbeam, oxiserve's)", r"crossbeam|oxiserve_core::scheduler"),
    ("request, validation, statistics (oxiserve)", r"oxiserve_"),
    ("memory allocator (mimalloc)", r"\bmi_|_mi_|malloc|\bfree"),
    ("async runtime (tokio, mio)", r"tokio|mio"),
    ("memcpy, memcmp", r"memmove|memcpy|memcmp|memset"),
    ("clocks", r"clock_gettime|Instant|Timespec"),
    ("kernel scheduler", r"schedule|finish_task_switch"),
]


def stage(frames):
    for name, pattern in SYSCALL_STAGES:
        if any(re.search(pattern, f) for f in frames):
            return name
    for name, pattern in LEAF_STAGES:
        if re.search(pattern, frames[0]):
            return name
    return "other"


def samples(text):
    """(thread name, frames leaf first) per sample of `perf script -F comm,ip,sym`."""
    for block in text.split("\n\n"):
        lines = [line.strip() for line in block.strip().splitlines() if line.strip()]
        if len(lines) < 2:
            continue
        frames = [line.split(None, 1)[1] if " " in line else "" for line in lines[1:]]
        yield lines[0].split()[0], frames


def main():
    freq, requests = float(sys.argv[1]), float(sys.argv[2])
    stages, threads = collections.Counter(), collections.Counter()
    for thread, frames in samples(sys.stdin.read()):
        stages[stage(frames)] += 1
        threads[thread] += 1
    total = sum(stages.values())
    if not total or not requests:
        sys.exit("no samples or no requests")
    per_request = total / freq / requests * 1e6
    print(f"Server CPU per request: {per_request:.1f} µs ({total} samples); by thread: "
          + ", ".join(f"{t} {100 * n / total:.0f}%" for t, n in threads.most_common()))
    print()
    print("| stage | share of server CPU | µs per request |")
    print("| --- | ---: | ---: |")
    for name, n in stages.most_common():
        print(f"| {name} | {100 * n / total:.1f}% | {per_request * n / total:.2f} |")


if __name__ == "__main__":
    main()
