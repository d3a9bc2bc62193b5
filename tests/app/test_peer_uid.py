"""``app.access.peer_uid``: the socket-table parser on fixed text, then the lookup and the gate against the
kernel's own tables, with real connections on loopback (IPv4, IPv6, IPv4 mapped into IPv6).

Another user is not needed here: the gate is given a set of uids that leaves this process's own
out, which the kernel's answer must then fail. The daemon tests play the other user for real.
"""
from __future__ import annotations

import ipaddress
import logging
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.waits import wait_until

from app.access import peer_uid
from app.access.peer_uid import Row, SameUserGate, find_connector, owner_of, parse_endpoint, parse_table

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's socket tables are Linux's")

ip = ipaddress.ip_address
HEADER4 = ("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n")
HEADER6 = ("  sl  local_address                         remote_address                        st tx_queue rx_queue "
           "tr tm->when retrnsmt   uid  timeout inode\n")
# As a little-endian machine prints them: a listener, a client (uid 1000) on 127.0.0.1:49368 connected
# to 127.0.0.1:33131, the server's end of it, and a time-wait remnant (uid 0, inode 0).
TCP = HEADER4 + (
    "   0: 0100007F:816B 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 15031 1 "
    "0000000019b36dab 100 0 0 10 0\n"
    "   1: 0100007F:C0D8 0100007F:816B 01 00000000:00000000 00:00000000 00000000  1000        0 15036 2 "
    "0000000024dae0ea 20 0 0 10 -1\n"
    "   2: 0100007F:816B 0100007F:C0D8 01 00000000:00000000 00:00000000 00000000  1000        0 15037 1 "
    "00000000baf14e20 20 0 0 10 -1\n"
    "   3: 0100007F:AD5E 0100007F:C7B7 05 00000000:00000000 03:000016EB 00000000     0        0 0 3 "
    "00000000de3d4cd8\n")
# ::1:55222 (uid 1001) connected to ::1:33131; an IPv6 socket (uid 1002) at ::ffff:127.0.0.1:49360
# connected to ::ffff:127.0.0.1:33131; a client at 2001:db8::1 (uid 1003).
TCP6 = HEADER6 + (
    "   0: 00000000000000000000000001000000:D7B6 00000000000000000000000001000000:816B 01 00000000:00000000 "
    "00:00000000 00000000  1001        0 15034 2 00000000ee691e26 20 0 0 10 -1\n"
    "   1: 0000000000000000FFFF00000100007F:C0D0 0000000000000000FFFF00000100007F:816B 01 00000000:00000000 "
    "00:00000000 00000000  1002        0 15032 2 00000000c4b8b4b7 20 0 0 10 -1\n"
    "   2: B80D0120000000000000000001000000:C350 00000000000000000000000001000000:816B 01 00000000:00000000 "
    "00:00000000 00000000  1003        0 15040 2 00000000c4b8b4b8 20 0 0 10 -1\n")
SERVER4 = (ip("127.0.0.1"), 0x816B)
SERVER6 = (ip("::1"), 0x816B)


# --- the parser, on fixed text

def test_an_ipv4_address_is_one_word_in_the_machines_byte_order() -> None:
    assert parse_endpoint("0100007F:1F90", "little") == (ip("127.0.0.1"), 8080)
    assert parse_endpoint("7F000001:1F90", "big") == (ip("127.0.0.1"), 8080)
    assert parse_endpoint("0101A8C0:0016", "little") == (ip("192.168.1.1"), 22)


def test_an_ipv6_address_is_four_words_and_a_mapped_one_compares_as_ipv4() -> None:
    assert parse_endpoint("00000000000000000000000001000000:D7B6", "little") == (ip("::1"), 0xD7B6)
    assert parse_endpoint("B80D0120000000000000000001000000:0050", "little") == (ip("2001:db8::1"), 80)
    assert parse_endpoint("20010DB8000000000000000000000001:0050", "big") == (ip("2001:db8::1"), 80)
    assert parse_endpoint("0000000000000000FFFF00000100007F:C0D0", "little") == (ip("127.0.0.1"), 0xC0D0)


@pytest.mark.parametrize("field", ["", "0100007F", "0100007F:", "100007F:1F90", "XX00007F:1F90", "0100007F:zz"])
def test_a_malformed_address_is_refused(field: str) -> None:
    with pytest.raises(ValueError):
        parse_endpoint(field, "little")


def test_the_table_parses_to_rows_past_its_header() -> None:
    rows = list(parse_table(TCP, "little"))
    assert len(rows) == 4
    assert rows[1] == Row(local=(ip("127.0.0.1"), 49368), remote=SERVER4, state=1, uid=1000, inode=15036)
    assert rows[3].state == 5 and (rows[3].uid, rows[3].inode) == (0, 0)


def test_unreadable_rows_are_skipped() -> None:
    text = TCP.replace("0100007F:C0D8", "nonsense", 1) + "\n   9: garbage\n"
    assert [r.local[1] for r in parse_table(text, "little")] == [0x816B, 0x816B, 0xAD5E]


def test_the_connecting_socket_is_the_row_with_the_ends_swapped() -> None:
    row = find_connector(TCP, (ip("127.0.0.1"), 49368), SERVER4, "little")
    assert row is not None and row.inode == 15036 and owner_of(row) == 1000
    # The server's own end (same ports, other way round) is never taken for the client's.
    assert find_connector(TCP, SERVER4, (ip("127.0.0.1"), 49368), "little").inode == 15037  # type: ignore[union-attr]


def test_ipv6_rows_and_mapped_rows_are_found() -> None:
    assert owner_of(find_connector(TCP6, (ip("::1"), 55222), SERVER6, "little")) == 1001
    # An IPv6 client of an IPv4 server, as the server sees it (plain IPv4) or mapped.
    assert owner_of(find_connector(TCP6, (ip("127.0.0.1"), 0xC0D0), SERVER4, "little")) == 1002
    assert owner_of(find_connector(TCP6, (ip("::ffff:127.0.0.1"), 0xC0D0), (ip("::ffff:127.0.0.1"), 0x816B),
                                   "little")) == 1002
    assert owner_of(find_connector(TCP6, (ip("2001:db8::1"), 50000), SERVER6, "little")) == 1003


def test_no_match_is_none() -> None:
    assert find_connector(TCP, (ip("127.0.0.1"), 49369), SERVER4, "little") is None     # another port
    assert find_connector(TCP, (ip("127.0.0.2"), 49368), SERVER4, "little") is None     # another address
    assert find_connector(TCP, (ip("127.0.0.1"), 49368), (ip("127.0.0.1"), 1), "little") is None  # another server
    assert find_connector(TCP6, (ip("::2"), 55222), SERVER6, "little") is None
    assert find_connector(HEADER4, (ip("127.0.0.1"), 49368), SERVER4, "little") is None
    assert find_connector("", (ip("127.0.0.1"), 49368), SERVER4, "little") is None


def test_a_time_wait_row_shows_uid_0_but_proves_no_owner() -> None:
    row = find_connector(TCP, (ip("127.0.0.1"), 0xAD5E), (ip("127.0.0.1"), 0xC7B7), "little")
    assert row is not None and row.uid == 0
    assert owner_of(row) is None   # else a client that closed at once would pass for root
    assert owner_of(None) is None


def test_lookup_reads_every_table_and_says_when_there_is_none(tmp_path: Path) -> None:
    tcp, tcp6 = tmp_path / "tcp", tmp_path / "tcp6"
    tcp.write_text(TCP if sys.byteorder == "little" else "")
    tcp6.write_text(TCP6 if sys.byteorder == "little" else "")
    if sys.byteorder == "little":
        assert owner_of(peer_uid.lookup((ip("::1"), 55222), SERVER6, (str(tcp), str(tcp6)))) == 1001
        assert owner_of(peer_uid.lookup((ip("127.0.0.1"), 49368), SERVER4, (str(tcp), str(tcp6)))) == 1000
    assert peer_uid.lookup((ip("::1"), 1), SERVER6, (str(tmp_path / "none"), str(tcp6))) is None
    with pytest.raises(peer_uid.NoSocketTable):
        peer_uid.lookup((ip("::1"), 1), SERVER6, (str(tmp_path / "none"), str(tmp_path / "neither")))


# --- the kernel's tables, with real connections

def connected_pair(listen_family: socket.AddressFamily, listen_host: str, client_family: socket.AddressFamily,
                   client_host: str) -> tuple[socket.socket, socket.socket, socket.socket]:
    """(listener, client, the server's end of the connection), all with a deadline."""
    listener = socket.socket(listen_family, socket.SOCK_STREAM)
    listener.settimeout(5)
    if listen_family == socket.AF_INET6 and listen_host == "::":
        listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    listener.bind((listen_host, 0))
    listener.listen()
    client = socket.socket(client_family, socket.SOCK_STREAM)
    client.settimeout(5)
    client.connect((client_host, listener.getsockname()[1]))
    server_end, _ = listener.accept()
    server_end.settimeout(5)
    return listener, client, server_end


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


CASES = [
    pytest.param(socket.AF_INET, "127.0.0.1", socket.AF_INET, "127.0.0.1", id="ipv4"),
    pytest.param(socket.AF_INET6, "::1", socket.AF_INET6, "::1", id="ipv6",
                 marks=pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback")),
    pytest.param(socket.AF_INET6, "::", socket.AF_INET6, "::ffff:127.0.0.1", id="mapped-client",
                 marks=pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback")),
    pytest.param(socket.AF_INET6, "::", socket.AF_INET, "127.0.0.1", id="ipv4-client-of-a-dual-stack-server",
                 marks=pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback")),
]


@pytest.fixture
def sockets() -> Iterator[list[socket.socket]]:
    made: list[socket.socket] = []
    yield made
    for s in made:
        s.close()


@linux_only
@pytest.mark.parametrize(("listen_family", "listen_host", "client_family", "client_host"), CASES)
def test_the_kernel_names_this_process_as_the_owner_of_its_connection(
        sockets: list[socket.socket], listen_family: socket.AddressFamily, listen_host: str,
        client_family: socket.AddressFamily, client_host: str) -> None:
    sockets.extend(connected_pair(listen_family, listen_host, client_family, client_host))
    server_end = sockets[2]
    row = peer_uid.peer_row(server_end)
    assert row is not None and row.local[1] == sockets[1].getsockname()[1]
    assert owner_of(row) == os.geteuid()
    assert SameUserGate("test").admits(server_end, server_end.getpeername())


@linux_only
@pytest.mark.parametrize(("listen_family", "listen_host", "client_family", "client_host"), CASES)
def test_netlink_and_the_tables_name_the_same_socket(
        sockets: list[socket.socket], listen_family: socket.AddressFamily, listen_host: str,
        client_family: socket.AddressFamily, client_host: str) -> None:
    sockets.extend(connected_pair(listen_family, listen_host, client_family, client_host))
    server_end = sockets[2]
    connector = peer_uid.endpoint(server_end.getpeername())
    acceptor = peer_uid.endpoint(server_end.getsockname())
    by_diag = peer_uid.diag_lookup(connector, acceptor)
    by_tables = peer_uid.lookup(connector, acceptor)
    assert by_diag is not None and by_tables is not None
    assert (by_diag.uid, by_diag.inode, by_diag.local, by_diag.remote) == \
        (by_tables.uid, by_tables.inode, by_tables.local, by_tables.remote)
    # A port nobody uses: no such socket, by either way of asking.
    gone = (connector[0], 1 if connector[1] != 1 else 2)
    assert peer_uid.diag_lookup(gone, acceptor) is None and peer_uid.lookup(gone, acceptor) is None


@linux_only
def test_a_client_that_closed_has_no_owner_and_is_refused(sockets: list[socket.socket],
                                                          caplog: pytest.LogCaptureFixture) -> None:
    listener, client, server_end = connected_pair(socket.AF_INET, "127.0.0.1", socket.AF_INET, "127.0.0.1")
    sockets.extend((listener, server_end))
    client.sendall(b"POST /response HTTP/1.1\r\n\r\n")
    client.close()   # its socket lives on in the kernel (FIN-WAIT), but no process owns it any more
    wait_until(lambda: owner_of(peer_uid.peer_row(server_end)) is None, 5)
    with caplog.at_level(logging.WARNING, "app.access.peer_uid"):
        assert not SameUserGate("test").admits(server_end, server_end.getpeername())
    assert "no live socket" in caplog.text


@linux_only
def test_another_users_connection_is_refused_and_logged_once_a_minute(
        sockets: list[socket.socket], caplog: pytest.LogCaptureFixture) -> None:
    now = [100.0]
    gate = SameUserGate("test", uids={os.geteuid() + 1}, clock=lambda: now[0])   # this process is "another user"
    with caplog.at_level(logging.DEBUG, "app.access.peer_uid"):
        for _ in range(3):
            pair = connected_pair(socket.AF_INET, "127.0.0.1", socket.AF_INET, "127.0.0.1")
            sockets.extend(pair)
            assert not gate.admits(pair[2], pair[2].getpeername())
        now[0] += peer_uid.REPEAT_LOG_S
        pair = connected_pair(socket.AF_INET, "127.0.0.1", socket.AF_INET, "127.0.0.1")
        sockets.extend(pair)
        assert not gate.admits(pair[2], pair[2].getpeername())
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2
    assert f"belongs to uid {os.geteuid()}, another user" in warnings[0] and "127.0.0.1:" in warnings[0]
    assert "(2 more refused since the last warning)" in warnings[1]


@linux_only
def test_on_linux_unreadable_tables_refuse_and_elsewhere_everything_is_admitted(
        sockets: list[socket.socket], tmp_path: Path) -> None:
    sockets.extend(connected_pair(socket.AF_INET, "127.0.0.1", socket.AF_INET, "127.0.0.1"))
    server_end = sockets[2]
    missing = (str(tmp_path / "tcp"), str(tmp_path / "tcp6"))
    assert not SameUserGate("test", tables=missing).admits(server_end, server_end.getpeername())
    assert SameUserGate("test", tables=missing, platform="darwin").admits(server_end, server_end.getpeername())
