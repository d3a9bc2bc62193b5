"""Which local user is at the other end of a loopback TCP connection, found as identd finds it.

A port on 127.0.0.1 is open to every user of the machine, and the servers that take commands for a
person's own browser (the extension daemon, the bridge's extension port) must serve that person
only. TCP carries no credentials, but on Linux the kernel lists every TCP socket of this network
namespace, with its owner's uid, in ``/proc/net/tcp`` (IPv4) and ``/proc/net/tcp6`` (IPv6): the
connecting socket is the row whose local address:port is our peer's and whose remote address:port
is ours.

The tables' text, one row a line after a header::

    sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ...
     0: 0100007F:C0D8 0100007F:816B 01 00000000:00000000 00:00000000 00000000  1000        0 15036 ...

An address is the kernel's raw bytes printed as 32-bit words in the machine's byte order (IPv4 one
word, so ``0100007F`` is 127.0.0.1 on a little-endian machine; IPv6 four words); a port is plain
hex. An IPv6 socket talking IPv4 shows its addresses mapped (``::ffff:127.0.0.1``) in tcp6, and its
peer may be a plain IPv4 socket in tcp: addresses are compared with the mapping taken off.

A row with inode 0 is no live socket of any process: a socket its owner closed, or a time-wait
remnant, which the kernel shows as uid 0. Such a row proves nobody's ownership (a client could
send its request, close at once and pass for root), so it is refused like a missing row.

Reading a table makes the kernel walk every bucket of its connection hash (~5 ms here, each time),
so the kernel is first asked for the one socket by its four addresses, over netlink's sock_diag
(what ``ss`` uses: a hash lookup, ~20 µs); the tables are the fallback where netlink is not offered.

The parsing is pure (text in, rows out) so it is tested with fixed text; :func:`find_row` asks the
kernel and :class:`SameUserGate` is the policy a server applies to each accepted connection.
"""
from __future__ import annotations

import errno
import ipaddress
import logging
import os
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

log = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Endpoint = tuple[IPAddress, int]
ByteOrder = Literal["little", "big"]

TABLES: tuple[str, ...] = ("/proc/net/tcp", "/proc/net/tcp6")   # the kernel's, the same on every Linux
REPEAT_LOG_S = 60.0   # a refused user's further refusals are summed up at most this often (no log flood)


class NoSocketTable(Exception):
    """None of the kernel's socket tables can be read."""


@dataclass(frozen=True)
class Row:
    """One socket of a table: its two ends (mapped IPv4 addresses as IPv4), state, owner, inode."""

    local: Endpoint
    remote: Endpoint
    state: int
    uid: int
    inode: int


def canonical(address: IPAddress) -> IPAddress:
    """``address`` with an IPv4 mapping taken off, so both socket families compare alike."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def parse_endpoint(field: str, byteorder: ByteOrder = sys.byteorder) -> Endpoint:
    """``0100007F:1F90`` as (127.0.0.1, 8080) on a little-endian machine; raises ValueError."""
    hex_address, sep, hex_port = field.partition(":")
    if not sep or len(hex_address) not in (8, 32) or not hex_port:
        raise ValueError(f"not an address:port of a socket table: {field[:60]!r}")
    raw = b"".join(int(hex_address[i:i + 8], 16).to_bytes(4, byteorder) for i in range(0, len(hex_address), 8))
    return canonical(ipaddress.ip_address(raw)), int(hex_port, 16)


def parse_table(text: str, byteorder: ByteOrder = sys.byteorder) -> Iterator[Row]:
    """The rows of a socket table's text; the header and any row that cannot be read are skipped."""
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 10 or not fields[0].endswith(":"):
            continue   # the header, or a blank line
        try:
            yield Row(local=parse_endpoint(fields[1], byteorder), remote=parse_endpoint(fields[2], byteorder),
                      state=int(fields[3], 16), uid=int(fields[7]), inode=int(fields[9]))
        except ValueError:
            continue   # a row we cannot read is no row of ours


def find_connector(text: str, connector: Endpoint, acceptor: Endpoint,
                   byteorder: ByteOrder = sys.byteorder) -> Row | None:
    """The row of the socket at ``connector`` connected to ``acceptor`` in a table's ``text``, if any."""
    port_suffix = f":{connector[1]:04X}"
    for line in text.splitlines():
        fields = line.split(maxsplit=2)
        # Most rows are other connections: a string test on the port spares parsing them.
        if len(fields) < 2 or not fields[1].upper().endswith(port_suffix):
            continue
        for row in parse_table(line, byteorder):
            if row.local == (canonical(connector[0]), connector[1]) and \
                    row.remote == (canonical(acceptor[0]), acceptor[1]):
                return row
    return None


def endpoint(address: Sequence[Any]) -> Endpoint:
    """A socket address (``getpeername()``'s tuple, IPv6 with a scope or not) as an Endpoint."""
    host = str(address[0]).partition("%")[0]   # a link-local scope is no part of the table's address
    return canonical(ipaddress.ip_address(host)), int(address[1])


def read_table(path: str) -> str | None:
    """A table's text; None when it cannot be read (no IPv6, not Linux, or /proc locked down)."""
    try:
        # A kernel file made on reading: no disk, no network, nothing to wait for.
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def lookup(connector: Endpoint, acceptor: Endpoint, tables: Iterable[str] = TABLES,
           read: Callable[[str], str | None] = read_table) -> Row | None:
    """The connecting socket's row; None when no table lists it. Raises :class:`NoSocketTable`
    when no table can be read at all."""
    found_a_table = False
    for path in tables:
        text = read(path)
        if text is None:
            continue
        found_a_table = True
        row = find_connector(text, connector, acceptor)
        if row is not None:
            return row
    if not found_a_table:
        raise NoSocketTable("no socket table of the kernel can be read")
    return None


# netlink sock_diag (linux/sock_diag.h, linux/inet_diag.h): one request for one socket by its addresses.
NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLMSG_ERROR = 2
NLM_F_REQUEST = 1
DIAG_TIMEOUT_S = 1.0
_NO_COOKIE = 0xFFFFFFFF
_HEADER = struct.Struct("=IHHII")          # nlmsghdr: length, type, flags, seq, pid
_REQUEST = struct.Struct("=BBBBI")         # inet_diag_req_v2 before its sockid: family, protocol, ext, pad, states
_OWNER = struct.Struct("=II")              # inet_diag_msg's uid and inode, after its sockid and three counters
_OWNER_AT = _HEADER.size + 4 + 48 + 12


def _packed(address: IPAddress, family: int) -> bytes:
    if family == socket.AF_INET6 and isinstance(address, ipaddress.IPv4Address):
        address = ipaddress.IPv6Address(b"\0" * 10 + b"\xff\xff" + address.packed)
    return address.packed.ljust(16, b"\0")


def diag_lookup(connector: Endpoint, acceptor: Endpoint) -> Row | None:
    """The connecting socket's row, asked of the kernel by its addresses; None when it has no such
    socket. Raises :class:`NoSocketTable` when netlink's sock_diag is not offered here."""
    families = [socket.AF_INET6] if connector[0].version == 6 else [socket.AF_INET, socket.AF_INET6]
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_SOCK_DIAG) as nl:
            nl.settimeout(DIAG_TIMEOUT_S)
            for seq, family in enumerate(families, 1):
                # The connecting socket's own view: its end (source) is our peer, ours its destination.
                sockid = (struct.pack("!HH", connector[1], acceptor[1]) + _packed(connector[0], family)
                          + _packed(acceptor[0], family) + struct.pack("=III", 0, _NO_COOKIE, _NO_COOKIE))
                body = _REQUEST.pack(family, socket.IPPROTO_TCP, 0, 0, 0xFFFFFFFF) + sockid
                nl.send(_HEADER.pack(_HEADER.size + len(body), SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST, seq, 0) + body)
                answer = nl.recv(8192)
                _, kind, _, _, _ = _HEADER.unpack_from(answer)
                if kind == NLMSG_ERROR:
                    (error,) = struct.unpack_from("=i", answer, _HEADER.size)
                    if error == 0 or -error == errno.ENOENT:
                        continue   # not a socket of this family (an IPv4 peer may be an IPv6 socket)
                    raise NoSocketTable(f"sock_diag: {os.strerror(-error)}")
                if kind != SOCK_DIAG_BY_FAMILY or len(answer) < _OWNER_AT + _OWNER.size:
                    raise NoSocketTable("sock_diag: an answer of an unknown shape")
                uid, inode = _OWNER.unpack_from(answer, _OWNER_AT)
                return Row(local=connector, remote=acceptor, state=answer[_HEADER.size + 1], uid=uid, inode=inode)
    except OSError as exc:   # no netlink here (not Linux, a sandbox forbids it), or no answer in time
        raise NoSocketTable(f"sock_diag: {exc}") from None
    return None


def find_row(connector: Endpoint, acceptor: Endpoint, tables: Sequence[str] = TABLES) -> Row | None:
    """The connecting socket's row: by sock_diag where the kernel offers it and the real tables are
    meant, else from the tables. Raises :class:`NoSocketTable` when neither can be read."""
    if tuple(tables) == TABLES:
        try:
            return diag_lookup(connector, acceptor)
        except NoSocketTable:
            pass   # the tables say the same, only slower
    return lookup(connector, acceptor, tables)


def peer_row(conn: socket.socket, tables: Sequence[str] = TABLES) -> Row | None:
    """The row of the socket at the other end of the accepted TCP connection ``conn``."""
    return find_row(endpoint(conn.getpeername()), endpoint(conn.getsockname()), tables)


def owner_of(row: Row | None) -> int | None:
    """The uid that owns a row's live socket; None for no row, or one with no live socket (inode 0)."""
    if row is None or row.inode == 0:
        return None
    return row.uid


class SameUserGate:
    """Admit TCP connections from this process's own user (effective uid) and root only.

    :meth:`admits` runs once per accepted connection, before any byte of it is read; a refused
    connection is logged at warning level (its address and the reason, nothing it sent), the first
    time for each user and then at most every minute with the count of those in between, so another
    user cannot flood the log.

    Only on Linux: elsewhere there is no kernel table to ask, and every connection is admitted (the
    servers that use this bind loopback only, and their Origin and pairing checks still apply). On
    Linux, a connection whose socket the tables do not list, or do not list as a live socket, is
    refused, and so is every connection when the tables cannot be read.
    """

    def __init__(self, name: str, *, tables: Sequence[str] = TABLES, platform: str = sys.platform,
                 uids: Iterable[int] | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.tables = tuple(tables)
        # Elsewhere no table names a socket's owner: admit all, as before (these servers bind loopback
        # only, and the Origin and pairing checks still apply). On Linux the tables always exist, so a
        # missing one (a locked-down /proc) refuses rather than admits.
        self.enforced = platform.startswith("linux")
        self.uids = frozenset(uids) if uids is not None else (
            frozenset({os.geteuid(), 0}) if self.enforced else frozenset())
        self._clock = clock
        self._lock = threading.Lock()
        self._logged: dict[int | None, tuple[float, int]] = {}   # uid (None: unknown) -> (last warning, since)
        if not self.enforced:
            log.info("%s: this system lists no socket owners: connections are not checked for their user", name)

    def admits(self, conn: socket.socket, client_address: Any = None) -> bool:
        """Whether the accepted connection ``conn`` is this user's (or root's); logs a refusal."""
        if not self.enforced or conn.family not in (socket.AF_INET, socket.AF_INET6):
            return True
        try:
            connector, acceptor = endpoint(conn.getpeername()), endpoint(conn.getsockname())
        except (OSError, ValueError):   # the peer is already gone: getpeername fails
            return self._refuse(client_address, None, "its address cannot be read (it has gone)")
        try:
            row = find_row(connector, acceptor, self.tables)
        except NoSocketTable:
            return self._refuse(client_address, None, "the kernel's socket tables cannot be read")
        if row is None:
            return self._refuse(client_address, None, "no socket of this machine is its other end")
        uid = owner_of(row)
        if uid is None:
            return self._refuse(client_address, None, "its other end is no live socket (closed or timing out)")
        if uid not in self.uids:
            return self._refuse(client_address, uid, f"its socket belongs to uid {uid}, another user")
        return True

    def _refuse(self, client_address: Any, uid: int | None, reason: str) -> bool:
        where = _address_text(client_address)
        now = self._clock()
        with self._lock:
            last, since = self._logged.get(uid, (None, 0))
            if last is not None and now - last < REPEAT_LOG_S:
                self._logged[uid] = (last, since + 1)
                log.debug("%s: refused a connection from %s: %s", self.name, where, reason)
                return False
            self._logged[uid] = (now, 0)
        more = f" ({since} more refused since the last warning)" if since else ""
        log.warning("%s: refused a connection from %s: %s; only this user's programs may connect%s",
                    self.name, where, reason, more)
        return False


def _address_text(address: Any) -> str:
    if isinstance(address, tuple) and len(address) >= 2:
        host = str(address[0])
        return f"[{host}]:{address[1]}" if ":" in host else f"{host}:{address[1]}"
    return "an unknown address"
