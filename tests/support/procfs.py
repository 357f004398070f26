"""A process's memory and its descendants, read from /proc (Linux). Shared by
the tests and the benchmark drivers (bench/reload/drive.py, bench/soak/drive.py)."""

from pathlib import Path


def rss_kb(pid):
    """`pid`'s resident set size in kB (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def descendants(pid):
    """The pids of `pid`'s children, of their children, and so on; a process
    that exits meanwhile is listed without its own descendants."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [d for c in map(int, children) for d in (c, *descendants(c))]
