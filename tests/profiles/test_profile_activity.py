"""The activity log: whole lines under concurrency, no secrets, day files, retention, queries."""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from support import ROOT

from profiles.activity import MAX_LINE_BYTES, ActivityLog
from profiles.redact import scrub_url

T0 = datetime(2025, 3, 10, 12, 0, 0, tzinfo=UTC)


class Clock:
    """A settable clock for the log (days change without waiting)."""

    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    return tmp_path / "activity"


@pytest.fixture
def activity(log_dir: Path, clock: Clock) -> Iterator[ActivityLog]:
    a = ActivityLog(log_dir, retention_days=7, clock=clock)
    yield a
    a.close()


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def event(**extra: object) -> dict:
    base = {"agentId": "agent-1", "method": "POST", "path": "/action", "status": 200, "durationMs": 12.345,
            "instanceId": "inst_1", "profileId": "prof_0a1b2c3d", "profileName": "work", "tabId": "TAB1",
            "url": "https://shop.example.com/cart", "action": "click", "ref": "e12"}
    base.update(extra)
    return base


def test_record_writes_one_whitelisted_line_to_the_utc_day_file(activity: ActivityLog, log_dir: Path) -> None:
    activity.record(event())
    [line] = lines(log_dir / "events-2025-03-10.jsonl")
    assert line == {"timestamp": "2025-03-10T12:00:00.000Z", "agentId": "agent-1", "method": "POST",
                    "path": "/action", "status": 200, "durationMs": 12.35, "instanceId": "inst_1",
                    "profileId": "prof_0a1b2c3d", "profileName": "work", "tabId": "TAB1",
                    "url": "https://shop.example.com/cart", "action": "click", "ref": "e12"}
    assert list(line)[:6] == ["timestamp", "agentId", "method", "path", "status", "durationMs"]
    assert (log_dir / "events-2025-03-10.jsonl").stat().st_mode & 0o777 == 0o600


def test_the_day_follows_utc_not_local_time(activity: ActivityLog, log_dir: Path, clock: Clock) -> None:
    clock.now = datetime(2025, 3, 10, 23, 30, tzinfo=timezone(timedelta(hours=-5)))  # 04:30 UTC next day
    activity.record(event())
    assert [p.name for p in log_dir.iterdir()] == ["events-2025-03-11.jsonl"]
    assert lines(log_dir / "events-2025-03-11.jsonl")[0]["timestamp"] == "2025-03-11T04:30:00.000Z"


def test_secrets_never_reach_the_log(activity: ActivityLog, log_dir: Path) -> None:
    activity.record(event(
        text="hunter2-typed", value="hunter2-value", cookies=[{"name": "sid", "value": "c00kie"}],
        token="tok-123", password="pw-456", authorization="Bearer abc.def", headers={"X-Api-Key": "k-789"},
        url="https://ada:s3cretpw@bank.example.com/login?next=%2Fhome&token=t0k&api_key=k3y&Password=p4ss"
            "&client_secret=c5&auth=a6&sig=s7&q=shoes#access_token=f8&state=ok",
        path="/navigate?token=p9&tabId=TAB1",
    ))
    raw = (log_dir / "events-2025-03-10.jsonl").read_text()
    for secret in ("hunter2", "c00kie", "tok-123", "pw-456", "abc.def", "k-789", "s3cretpw", "ada:", "t0k",
                   "k3y", "p4ss", "c5", "a6", "s7", "f8", "p9"):
        assert secret not in raw, secret
    [line] = lines(log_dir / "events-2025-03-10.jsonl")
    assert line["url"] == ("https://bank.example.com/login?next=%2Fhome&token=REDACTED&api_key=REDACTED"
                           "&Password=REDACTED&client_secret=REDACTED&auth=REDACTED&sig=REDACTED&q=shoes"
                           "#access_token=REDACTED&state=ok")
    assert line["path"] == "/navigate?token=REDACTED&tabId=TAB1"
    assert not {"text", "value", "cookies", "token", "password", "authorization", "headers"} & set(line)


@pytest.mark.parametrize(("url", "expected"), [
    ("https://example.com/a/b", "https://example.com/a/b"),
    ("https://u@example.com/", "https://example.com/"),
    ("https://example.com/?keyword=x&monkey=y", "https://example.com/?keyword=REDACTED&monkey=REDACTED"),
    ("https://example.com/?SessionId=1&page=2", "https://example.com/?SessionId=REDACTED&page=2"),
    ("https://example.com/?code=abc&scope=email", "https://example.com/?code=REDACTED&scope=email"),
    ("https://example.com/?a=1&&b&token", "https://example.com/?a=1&&b&token"),
    ("https://example.com/?access%5Ftoken=x", "https://example.com/?access%5Ftoken=REDACTED"),
    ("http://[::1/?token=x", "[unparsable url]"),
])
def test_scrub_url(url: str, expected: str) -> None:
    assert scrub_url(url) == expected


def test_fields_are_capped_so_a_line_fits_one_atomic_append(activity: ActivityLog, log_dir: Path) -> None:
    activity.record(event(url="https://example.com/" + "\u00e9\u0001" * 5000, agentId="a" * 10_000,
                          path="/" + "p" * 9000, tabId=12345, ref=None, status=True, durationMs=float("nan")))
    raw = (log_dir / "events-2025-03-10.jsonl").read_bytes()
    assert len(raw) <= MAX_LINE_BYTES and raw.endswith(b"\n") and raw.count(b"\n") == 1
    [line] = lines(log_dir / "events-2025-03-10.jsonl")
    assert line["tabId"] == "12345" and len(line["agentId"]) == 128
    assert "ref" not in line and "status" not in line and "durationMs" not in line
    assert line["url"].startswith("https://example.com/\u00e9\u0001")


def test_8_threads_x_500_lines_never_interleave(activity: ActivityLog, log_dir: Path) -> None:
    threads_n, per_thread = 8, 500
    barrier = threading.Barrier(threads_n)

    def writer(t: int) -> None:
        barrier.wait()
        for i in range(per_thread):
            activity.record(event(agentId=f"agent-{t}", ref=f"e{i}", url="https://example.com/" + "x" * 900))

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(threads_n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    parsed = lines(log_dir / "events-2025-03-10.jsonl")  # raises if any line is torn
    assert len(parsed) == threads_n * per_thread
    for n in range(threads_n):
        refs = [p["ref"] for p in parsed if p["agentId"] == f"agent-{n}"]
        assert refs == [f"e{i}" for i in range(per_thread)]  # each thread's lines whole and in order
    assert activity.dropped == 0


def test_several_processes_append_whole_lines(log_dir: Path) -> None:
    procs_n, per_proc = 4, 300
    code = ("import sys; from pathlib import Path; from profiles.activity import ActivityLog;"
            "a = ActivityLog(Path(sys.argv[1]), 7); n = sys.argv[2];"
            "[a.record({'agentId': 'proc-' + n, 'ref': str(i), 'url': 'https://e.com/' + 'y' * 3000})"
            " for i in range(int(sys.argv[3]))]; a.close()")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(log_dir), str(n), str(per_proc)], cwd=str(ROOT))
             for n in range(procs_n)]
    for p in procs:
        assert p.wait(timeout=120) == 0
    parsed = [line for f in sorted(log_dir.glob("events-*.jsonl")) for line in lines(f)]
    assert len(parsed) == procs_n * per_proc
    for n in range(procs_n):
        assert sorted(int(p["ref"]) for p in parsed if p["agentId"] == f"proc-{n}") == list(range(per_proc))


def test_a_new_day_opens_a_new_file_and_prunes(activity: ActivityLog, log_dir: Path, clock: Clock) -> None:
    activity.record(event(ref="day0"))
    old = log_dir / "events-2025-03-01.jsonl"
    old.write_text("{}\n")
    clock.now = T0 + timedelta(days=1)
    activity.record(event(ref="day1"))
    assert lines(log_dir / "events-2025-03-10.jsonl")[0]["ref"] == "day0"
    assert lines(log_dir / "events-2025-03-11.jsonl")[0]["ref"] == "day1"
    assert not old.exists()  # 2025-03-01 is more than 7 days before 2025-03-11


def test_retention_keeps_today_and_the_last_n_days(log_dir: Path, clock: Clock) -> None:
    log_dir.mkdir()
    for day in range(1, 11):
        (log_dir / f"events-2025-03-{day:02d}.jsonl").write_text("")
    (log_dir / "events-garbage.jsonl").write_text("")
    (log_dir / "notes.txt").write_text("")
    a = ActivityLog(log_dir, retention_days=3, clock=clock)  # prunes at start
    a.close()
    assert sorted(p.name for p in log_dir.iterdir()) == [
        "events-2025-03-07.jsonl", "events-2025-03-08.jsonl", "events-2025-03-09.jsonl",
        "events-2025-03-10.jsonl", "events-garbage.jsonl", "notes.txt"]
    clock.now = T0 + timedelta(days=2)
    a = ActivityLog(log_dir, retention_days=3, clock=clock)
    assert a.prune() == 0  # already pruned at start
    a.close()
    assert sorted(p.name for p in log_dir.glob("events-2025-*")) == [
        "events-2025-03-09.jsonl", "events-2025-03-10.jsonl"]


def fill(activity: ActivityLog, clock: Clock) -> None:
    """Events over three days: two profiles, two agents, two tabs."""
    for day in range(3):
        for minute in range(4):
            clock.now = T0 + timedelta(days=day, minutes=minute)
            activity.record(event(profileId="prof_aaaaaaaa", profileName="work", agentId=f"agent-{minute % 2}",
                                  tabId=f"TAB{minute % 2}", ref=f"d{day}m{minute}",
                                  url=f"https://site{minute % 3}.example.com/x?q=1", path=f"/p{minute % 2}?x=1"))
        clock.now = T0 + timedelta(days=day, minutes=30)
        activity.record(event(profileId="prof_bbbbbbbb", profileName="home", ref=f"home{day}"))


def test_query_filters_and_orders_newest_first(activity: ActivityLog, clock: Clock) -> None:
    fill(activity, clock)
    work = activity.query(profile="work", limit=100)
    assert [e["ref"] for e in work] == [f"d{d}m{m}" for d in (2, 1, 0) for m in (3, 2, 1, 0)]
    assert activity.query(profile="prof_bbbbbbbb") == activity.query(profile="home")
    assert [e["ref"] for e in activity.query(profile="home")] == ["home2", "home1", "home0"]
    assert {e["agentId"] for e in activity.query(agent="agent-1")} == {"agent-1"}
    assert len(activity.query(agent="agent-1", tab="TAB1", profile="work")) == 6
    assert [e["ref"] for e in activity.query(profile="work", limit=3)] == ["d2m3", "d2m2", "d2m1"]
    assert activity.query(limit=0) == []
    assert activity.query(profile="nobody") == []


def test_query_by_time_reads_only_the_day_files_in_the_window(activity: ActivityLog, clock: Clock,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    fill(activity, clock)
    opened: list[str] = []
    real = ActivityLog._read

    def spy(self: ActivityLog, path: Path):  # type: ignore[no-untyped-def]
        opened.append(path.name)
        return real(self, path)

    monkeypatch.setattr(ActivityLog, "_read", spy)
    since = T0 + timedelta(days=1, minutes=1)
    until = "2025-03-11T12:02:00Z"
    got = activity.query(since=since, until=until)
    assert [e["ref"] for e in got] == ["d1m2", "d1m1"]
    assert opened == ["events-2025-03-11.jsonl"]
    opened.clear()
    assert [e["ref"] for e in activity.query(since="2025-03-12T00:00:00")] [-1] == "d2m0"  # naive = UTC
    assert opened == ["events-2025-03-12.jsonl"]


def test_corrupt_lines_are_skipped_and_counted(activity: ActivityLog, log_dir: Path, clock: Clock) -> None:
    activity.record(event(ref="ok1"))
    with open(log_dir / "events-2025-03-10.jsonl", "ab") as fh:
        fh.write(b'{"timestamp": "2025-03-10T12:00:00.000Z", "ref": "tor\n')  # a torn line
        fh.write(b"\xff\xfe\n[1,2]\n{\"no\": \"timestamp\"}\n\n")
    clock.now = T0 + timedelta(seconds=1)
    activity.record(event(ref="ok2"))
    assert [e["ref"] for e in activity.query()] == ["ok2", "ok1"]
    assert activity.skipped_lines == 4  # torn, not UTF-8/JSON, not an object, no timestamp
    assert activity.analytics("work")["totalActions"] == 2 and activity.skipped_lines == 4


def test_analytics(activity: ActivityLog, clock: Clock) -> None:
    fill(activity, clock)
    clock.now = T0 + timedelta(days=2, hours=1)
    stats = activity.analytics("work")
    assert stats["totalActions"] == 12
    assert stats["last24h"] == 4
    assert stats["topHosts"] == {"site0.example.com": 6, "site1.example.com": 3, "site2.example.com": 3}
    assert list(stats["topHosts"]) == ["site0.example.com", "site1.example.com", "site2.example.com"]
    assert stats["topEndpoints"] == {"/p0": 6, "/p1": 6}
    assert activity.analytics("prof_bbbbbbbb")["topEndpoints"] == {"/action": 3}
    assert activity.analytics(None)["totalActions"] == 15
    assert sum(stats["byDay"].values()) == 12 and list(stats["byDay"]) == sorted(stats["byDay"])
    assert activity.analytics("nobody") == {"totalActions": 0, "last24h": 0, "topHosts": {}, "topEndpoints": {},
                                            "byDay": {}}


def test_a_failing_write_is_counted_not_raised(activity: ActivityLog, log_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    activity.record(event(ref="before"))
    real_write = os.write

    def full(fd: int, data: bytes) -> int:
        if fd == activity._fd:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    activity.record(event(ref="lost"))
    monkeypatch.undo()
    activity.record(event(ref="after"))
    assert activity.dropped == 1
    assert [e["ref"] for e in lines(log_dir / "events-2025-03-10.jsonl")] == ["before", "after"]


def test_negative_retention_is_refused(log_dir: Path) -> None:
    with pytest.raises(ValueError):
        ActivityLog(log_dir, retention_days=-1)
