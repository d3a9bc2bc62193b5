"""``python -m cdp.reaper OWNER_PID ARGV...``: run the browser and take it down with its owner.

Chrome outlives a process that is killed outright (SIGKILL, an OOM kill, a gunicorn worker that
timed out): it is in a process group of its own, and nothing tells it its owner is gone. This
small process stands between the two. It leads the browser's process group, starts the browser
as its child, and waits for either to end: when the browser exits it exits with its code; when
the owner dies it kills the whole group. ``prctl(PR_SET_PDEATHSIG)`` cannot do this: it fires
when the *thread* that started the child ends, and we start browsers from short-lived threads.
"""
from __future__ import annotations

import os
import select
import signal
import subprocess
import sys


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd (old kernel): fall back to polling
        return None


def main(argv: list[str]) -> int:
    owner = int(argv[0])
    child = subprocess.Popen(argv[1:], stdin=subprocess.DEVNULL)

    def forward(signum: int, _frame: object) -> None:
        # A polite stop of the reaper is a polite stop of the browser.
        try:
            child.send_signal(signum)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the owner's terminal is the owner's to handle
    owner_fd = _pidfd(owner)
    child_fd = _pidfd(child.pid)
    while True:
        if owner_fd is not None and child_fd is not None:
            ready, _, _ = select.select([owner_fd, child_fd], [], [], 5.0)
        else:
            ready = []
            try:
                child.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
        if child.poll() is not None:
            return child.returncode if child.returncode >= 0 else 128 - child.returncode
        owner_gone = (owner_fd in ready) if owner_fd is not None else os.getppid() != owner
        if owner_gone:
            os.killpg(os.getpgrp(), signal.SIGKILL)  # the browser and all its helpers (and us)
            return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
