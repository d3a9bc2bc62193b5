"""What every bench script needs: timing, percentiles, CPU time, bounded waits."""
from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any


def group_cpu_s(pgid: int) -> float | None:
    """CPU seconds used so far by the processes of a process group (children they reaped
    included), from /proc; None where there is no /proc."""
    if not os.path.isdir("/proc"):
        return None
    ticks = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[2]) == pgid:  # pgrp; then utime, stime, cutime, cstime
            ticks += sum(int(x) for x in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int | None) -> float:
    """Resident memory of a process in MiB (NaN where it cannot be read)."""
    if pid is None:
        return float("nan")
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(seconds, result) of one call."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def med_ms(xs: list[float]) -> float:
    return statistics.median(xs) * 1000


def pct_ms(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] * 1000


def wait_for(predicate: Callable[[], Any], timeout_s: float, interval_s: float = 0.01) -> Any:
    """Poll until ``predicate()`` is truthy; TimeoutError at the deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"not reached within {timeout_s} s")
        time.sleep(interval_s)  # the poll interval of a bounded wait
