"""Work whose caller left is not run: under a real ``pinchtab bridge``, clients that drop their
connections mid-request do not hold up the next caller on the same tab."""
from __future__ import annotations

import json
import socket
import time

import pytest
import requests
from support.waits import wait_until

pytestmark = pytest.mark.timeout(120)

ABANDONED = 12
WAIT_MS = 3000  # each abandoned request: a wait for an element that never appears


def send_wait(port: int, tab_id: str) -> socket.socket:
    """A raw connection that sent a ``POST /wait`` on ``tab_id`` (its answer never read)."""
    body = json.dumps({"selector": "#never-there", "timeout": WAIT_MS, "tabId": tab_id}).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(b"POST /wait HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    return sock


@pytest.mark.parametrize("kind", ["bridge", "server"])
def test_dropped_clients_work_is_skipped_and_the_next_snapshot_is_prompt(kind, bridge_process, server_process, site):
    # Through the server, the caller's leaving must reach the bridge: the server cuts its request off.
    if kind == "bridge":
        bp = bridge_process()
        bp.wait_healthy()
    else:
        bp = server_process()
        bp.wait_ready()
    r = requests.post(bp.base + "/navigate", json={"url": site.url("form.html")}, timeout=30)
    assert r.status_code == 200
    tab_id = r.json()["tabId"]
    requests.get(bp.base + "/snapshot", params={"tabId": tab_id}, timeout=30).raise_for_status()

    clients = [send_wait(bp.port, tab_id) for _ in range(ABANDONED)]

    def tab_busy() -> bool:  # the waits hold the tab: a quick look at it does not get through
        try:
            requests.get(bp.base + "/snapshot", params={"tabId": tab_id}, timeout=0.3)
        except requests.Timeout:
            return True
        return False

    wait_until(tab_busy, 10, 0.01)
    for sock in clients:
        sock.close()

    started = time.monotonic()
    r = requests.get(bp.base + "/snapshot", params={"tabId": tab_id}, timeout=60)
    elapsed = time.monotonic() - started
    assert r.status_code == 200 and "Username" in r.text
    # The abandoned waits add up to 36 s; none of them runs on (the one running stops too).
    assert elapsed < 1.5, f"the snapshot waited {elapsed:.1f} s behind abandoned work"
