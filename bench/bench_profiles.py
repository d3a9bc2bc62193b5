"""The profile store's and activity log's figures, printed as one table.

    python -m bench.bench_profiles [--profiles 200] [--big 10] [--cache-files 2000] [--records 10000]

* Listing N profiles (each with Chrome-shaped Preferences and Local State, ``--big`` of them with
  ``--cache-files`` cache files): cold (a fresh store, nothing cached: identities parsed, disk
  usage queued), warm (after the background walks landed), and with ``refresh=True`` (every dir
  walked now) for comparison.
* ``ActivityLog.record``: mean, median and p99 over ``--records`` calls.

Everything runs in a temp dir that is removed afterwards.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from profiles.activity import ActivityLog  # noqa: E402
from profiles.store import ProfileStore  # noqa: E402


def preferences(i: int) -> dict:
    """A Preferences file of realistic size (~30 KB: Chrome's carry many settings)."""
    return {
        "account_info": [{"email": f"user{i}@example.com", "full_name": f"User {i}", "gaia": str(10**20 + i)}],
        "profile": {"name": f"Person {i}", "content_settings": {"exceptions": {
            "cookies": {f"https://site{j}.example.com:443,*": {"setting": 1} for j in range(300)}}}},
        "google": {"services": {"consented_to_sync": True}},
    }


def build(base: Path, n: int, big: int, cache_files: int) -> None:
    store = ProfileStore(base)
    try:
        for i in range(n):
            d = Path(store.create(f"profile-{i:03d}", description="bench")["path"])
            (d / "Default").mkdir()
            (d / "Default" / "Preferences").write_text(json.dumps(preferences(i)))
            (d / "Local State").write_text(json.dumps({"profile": {"info_cache": {"Default": {
                "name": f"Person {i}", "user_name": f"user{i}@example.com", "gaia_name": f"User {i}"}}}}))
            if i < big:
                cache = d / "Default" / "Cache" / "Cache_Data"
                cache.mkdir(parents=True)
                for j in range(cache_files):
                    (cache / f"f_{j:06x}").write_bytes(b"c" * 4096)
    finally:
        store.close()


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def wait_idle(store: ProfileStore, timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not store._usage.idle():
        if time.monotonic() > deadline:
            raise SystemExit("disk-usage walks did not finish")
        time.sleep(0.01)  # polling a bench's wait; nothing is timed here


def bench_list(base: Path, n: int, repeats: int = 10) -> list[tuple[str, str]]:
    store = ProfileStore(base)
    try:
        listed: list = []
        cold = timed(lambda: listed.extend(store.list()))
        assert len(listed) == n
        wait_idle(store)
        warm = [timed(store.list) for _ in range(repeats)]
        refresh = timed(lambda: store.list(refresh=True))
    finally:
        store.close()
    return [
        (f"list {n} profiles, cold (fresh store)", f"{cold:.1f} ms"),
        (f"list {n} profiles, warm (median of {repeats})", f"{statistics.median(warm):.1f} ms"),
        (f"list {n} profiles, warm (worst of {repeats})", f"{max(warm):.1f} ms"),
        (f"list {n} profiles, refresh=True (walks all)", f"{refresh:.1f} ms"),
    ]


def bench_record(log_dir: Path, records: int) -> list[tuple[str, str]]:
    log = ActivityLog(log_dir, retention_days=7)
    event = {"agentId": "agent-1", "method": "POST", "path": "/action", "status": 200, "durationMs": 12.3,
             "instanceId": "inst_1", "profileId": "prof_0a1b2c3d", "profileName": "work", "tabId": "A1B2C3",
             "url": "https://shop.example.com/search?q=shoes&token=abc123", "action": "click", "ref": "e12",
             "text": "never logged"}
    for _ in range(200):  # warm up: open the day file, fill caches
        log.record(event)
    costs = []
    for _ in range(records):
        start = time.perf_counter()
        log.record(event)
        costs.append((time.perf_counter() - start) * 1e6)
    log.close()
    costs.sort()
    return [
        (f"ActivityLog.record x {records}, mean", f"{statistics.fmean(costs):.1f} us"),
        (f"ActivityLog.record x {records}, median", f"{statistics.median(costs):.1f} us"),
        (f"ActivityLog.record x {records}, p99", f"{costs[int(len(costs) * 0.99)]:.1f} us"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", type=int, default=200)
    parser.add_argument("--big", type=int, default=10, help="profiles with a big cache")
    parser.add_argument("--cache-files", type=int, default=2000, help="cache files in each big profile")
    parser.add_argument("--records", type=int, default=10_000)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="pinchtab-bench-"))
    try:
        build(tmp / "profiles", args.profiles, args.big, args.cache_files)
        rows = bench_list(tmp / "profiles", args.profiles) + bench_record(tmp / "activity", args.records)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    width = max(len(name) for name, _ in rows)
    print(f"{'measure':<{width}}  value")
    print(f"{'-' * width}  {'-' * 10}")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
