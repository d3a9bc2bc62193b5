"""The manager's child processes: one ``pinchtab bridge`` each, their pidfiles and their orphans.

Each child leads a process group of its own (``start_new_session``), so one ``killpg`` reaches
its gunicorn master and worker. The browser is not in that group: it sits behind
``cdp.reaper``, which kills it as soon as the bridge worker that started it dies.

A pidfile per child (``<run>/pids/<instance>.json``: pid, process group, the kernel's start time
of the pid) lets the next manager clean up after one that was killed outright: a pid whose start
time still matches, or a group that still has members, is ours and is killed.
"""
from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from profiles.atomic import write_bytes_atomic

from . import procfs
from .instances import LogRing

log = logging.getLogger(__name__)

MAX_LOG_LINE = 16 * 1024
ORPHAN_TERM_WAIT_S = 5.0
ORPHAN_KILL_WAIT_S = 2.0


def proc_start_ticks(pid: int) -> int | None:
    """When ``pid`` started, in clock ticks since boot (``/proc/<pid>/stat`` field 22); None if gone.

    A pid can be reused once its process is gone; the start time cannot, so (pid, ticks) names
    one process for good.
    """
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    # comm (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = data[data.rfind(b")") + 2:].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes in process group ``pgid``."""
    return [p.pid for p in procfs.processes() if p.pgid == pgid and not p.zombie]


PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Adopt our children's orphans (Linux ``PR_SET_CHILD_SUBREAPER``); False where unsupported.

    A bridge master killed outright leaves its worker, the browser's reaper and the browser to be
    re-parented. Under us they are reaped at once; under init they can linger as zombies, and a
    zombie still counts as the holder of a profile lock, so the restart would find it "in use".
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def reap_adopted(skip: set[int]) -> int:
    """Reap our exited children except ``skip`` (the ones a Popen object waits for); how many."""
    me = os.getpid()
    reaped = 0
    for p in procfs.processes():
        if p.zombie and p.ppid == me and p.pid not in skip:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(p.pid, os.WNOHANG)
                reaped += 1
    return reaped


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to a process group; False when the group is gone."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # not ours (a reused id): never touch it
        return False
    return True


class Child:
    """One running ``pinchtab bridge``: its process, its log lines and its pidfile."""

    def __init__(self, instance_id: str, argv: list[str], env: dict[str, str], cwd: str, logs: LogRing,
                 pid_dir: Path) -> None:
        self.instance_id = instance_id
        self.logs = logs
        self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.pid = self.proc.pid
        self.pgid = self.proc.pid  # a new session: the child leads its own group
        self.pidfile = pid_dir / f"{instance_id}.json"
        record = {"pid": self.pid, "pgid": self.pgid, "startTicks": proc_start_ticks(self.pid),
                  "instanceId": instance_id, "started": time.time()}
        try:
            write_bytes_atomic(self.pidfile, json.dumps(record).encode())
        except OSError as exc:  # the child still runs; only the crash clean-up loses track of it
            log.warning("instance %s: could not write its pidfile: %s", instance_id, exc)
        self._reader = threading.Thread(target=self._read_loop, name=f"logs:{instance_id}", daemon=True)
        self._reader.start()
        self.finished = False

    def _read_loop(self) -> None:
        # Ends at EOF, when the bridge and its worker have exited (they hold the pipe's write end).
        out = self.proc.stdout
        if out is None:
            return
        with contextlib.suppress(OSError, ValueError):
            while True:
                line = out.readline(MAX_LOG_LINE)
                if not line:
                    break
                self.logs.add(line.decode("utf-8", errors="replace").rstrip("\r\n"))
        with contextlib.suppress(OSError):
            out.close()

    def exit_code(self) -> int | None:
        """The exit status once the process has exited, else None (never blocks)."""
        return self.proc.poll()

    def wait(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the process to exit; True if it has."""
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True

    def signal(self, sig: int) -> bool:
        """Signal the whole group (the bridge's master and worker)."""
        return signal_group(self.pgid, sig)

    def finish(self) -> None:
        """After the exit: kill what is left of the group and drop the pidfile (idempotent)."""
        if self.finished:
            return
        self.finished = True
        # A bridge master killed outright leaves its worker behind; the worker's browser follows it.
        self.signal(signal.SIGKILL)
        with contextlib.suppress(FileNotFoundError):
            self.pidfile.unlink()

    def describe_exit(self) -> str:
        """How the process ended, for people (``killed by SIGKILL``, ``exited with code 2``)."""
        code = self.proc.returncode
        if code is None:
            return "still running"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exited with code {code}"


def read_pidfile(path: Path) -> dict[str, Any] | None:
    """A pidfile's record, or None when it is missing or malformed."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("pid"), int) or not isinstance(data.get("pgid"), int):
        return None
    return data


def orphan_group(record: dict[str, Any]) -> int | None:
    """The process group of a crashed run's child if any of it is still alive and provably ours."""
    pid, pgid, ticks = record["pid"], record["pgid"], record.get("startTicks")
    now = proc_start_ticks(pid)
    if now is not None:
        # The leader lives: it is ours only if it is the very process we started.
        return pgid if ticks is not None and now == ticks else None
    # The leader is gone. The kernel does not hand out a pid while a group still uses it as its id,
    # so members of that group can only be what our child left behind.
    return pgid if group_members(pgid) else None


def clean_orphans(pid_dir: Path) -> list[int]:
    """Kill every child a crashed earlier manager left running; returns the groups it killed.

    TERM first (a bridge then closes its browser and releases its profile), KILL after a deadline.
    """
    groups: list[int] = []
    for path in sorted(pid_dir.glob("*.json")):
        record = read_pidfile(path)
        group = orphan_group(record) if record is not None else None
        if group is not None:
            log.warning("killing orphaned instance %s (process group %d) of an earlier run",
                        (record or {}).get("instanceId", "?"), group)
            signal_group(group, signal.SIGTERM)
            groups.append(group)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    for sig, wait_s in ((None, ORPHAN_TERM_WAIT_S), (signal.SIGKILL, ORPHAN_KILL_WAIT_S)):
        if sig is not None:
            for group in groups:
                if group_members(group):
                    signal_group(group, sig)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and any(group_members(g) for g in groups):
            time.sleep(0.05)  # polling /proc: orphans are not our children, there is nothing to wait on
    left = [g for g in groups if group_members(g)]
    if left:
        log.error("orphaned process groups still alive after SIGKILL: %s", left)
    return groups
