"""What Linux's /proc says about processes: one reader for the manager, the tests and the benches."""
from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

_PAGE = os.sysconf("SC_PAGE_SIZE")


@dataclass(frozen=True)
class Proc:
    pid: int
    state: str  # "R", "S", "Z" (a zombie: exited, not reaped), ...
    ppid: int
    pgid: int

    @property
    def zombie(self) -> bool:
        return self.state == "Z"

    def cmdline(self) -> bytes:
        """The command line, NUL-separated (b"" once the process is gone)."""
        return _read(f"/proc/{self.pid}/cmdline")

    def environ(self) -> list[bytes]:
        """The environment as ``KEY=value`` entries (empty once gone, or when not ours to read)."""
        return _read(f"/proc/{self.pid}/environ").split(b"\0")


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def stat(pid: int) -> Proc | None:
    """One process, or None when it is gone."""
    data = _read(f"/proc/{pid}/stat")
    if not data:
        return None
    # comm (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = data[data.rfind(b")") + 2:].split()
    try:
        return Proc(pid, fields[0].decode(), int(fields[1]), int(fields[2]))
    except (IndexError, ValueError):
        return None


def rss_bytes(pid: int) -> int:
    """The resident memory of a process (0 once it is gone)."""
    fields = _read(f"/proc/{pid}/statm").split()
    try:
        return int(fields[1]) * _PAGE
    except (IndexError, ValueError):
        return 0


def processes() -> Iterator[Proc]:
    """Every process on the machine (those that vanish while we look are skipped)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            p = stat(int(entry))
            if p is not None:
                yield p


def started_under_home(home: object, needle: bytes = b"remote-debugging-port") -> list[int]:
    """Live processes whose command line holds ``needle`` and whose HOME is ``home`` (a server's
    browsers inherit the HOME of the server that started them)."""
    want = f"HOME={home}".encode()
    return [p.pid for p in processes() if not p.zombie and needle in p.cmdline() and want in p.environ()]


def children_of(parent: int, needle: bytes) -> list[int]:
    """Live children of ``parent`` whose command line holds ``needle``."""
    return [p.pid for p in processes() if p.ppid == parent and not p.zombie and needle in p.cmdline()]
