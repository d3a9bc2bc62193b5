"""Extension instances in ``pinchtab server``: a person's own Chrome, through our extension, as an instance.

A real ``pinchtab server`` attaches an instance with ``attachType: "extension"``; its manager runs
``pinchtab bridge --extension``; a real Chromium running our extension (``support/extension_browser.py``)
is pointed at the ``extensionUrl`` and ``pairing`` the attach answered with, and the agent's calls go
through the server's proxy to that Chrome. Pinchtab never uses a debugging port on it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from support import ROOT
from support.agent import ref_of
from support.extension_browser import ExtensionBrowser
from support.servers import ServerProcess
from support.waits import wait_until

from app.config import AttachConfig
from app.orchestrator.errors import AttachDisabled
from app.orchestrator.instances import Instance, check_attach_enabled

pytestmark = pytest.mark.e2e

TOKEN = "ext-srv-t0ken"
# No default instance: these tests need none, and a Chromium less starts faster.
EXPLICIT = {"multiInstance": {"strategy": "explicit"}}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    sp = ServerProcess(tmp_path_factory.mktemp("ext-server"), {**EXPLICIT, "security": {"attach": {"enabled": True}}},
                       token=TOKEN)
    try:
        sp.wait_ready(default_instance=False)
        yield sp
    finally:
        sp.stop()
    output = sp.output()
    assert TOKEN not in output
    paired = sp.state_dir / "extension-pairing"
    assert not paired.exists() or paired.read_text().strip() not in output  # nor the pairing


@pytest.fixture(scope="module")
def chrome() -> Iterator[ExtensionBrowser]:
    c = ExtensionBrowser().start()
    yield c
    c.stop()


def record(server: ServerProcess, instance_id: str) -> dict[str, Any]:
    r = server.get(f"/instances/{instance_id}", timeout=5)
    assert r.status_code == 200, r.text
    return r.json()


def pair_command(server: ServerProcess) -> str:
    """What `pinchtab extension pair` prints, run as the server's user with the server's config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PINCHTAB_", "BRIDGE_"))}
    env.update(HOME=str(server.home), PINCHTAB_CONFIG=str(server.config_path))
    done = subprocess.run([sys.executable, "-m", "app.clients.cli", "extension", "pair", "--json"], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=30, check=True)
    return json.loads(done.stdout)["pairingToken"]


def reachable(url: str) -> bool:
    try:
        requests.get(url, timeout=1)
    except requests.ConnectionError:
        return False
    return True


def test_an_extension_instance_drives_the_persons_chrome_through_the_proxy(server, chrome, site):
    r = server.post("/instances/attach", json={"attachType": "extension", "name": "my-chrome"})
    assert r.status_code == 201, r.text
    attached = r.json()
    iid, ext_url, pairing = attached["id"], attached["extensionUrl"], attached["pairing"]
    assert attached["attachType"] == "extension" and attached["attached"] is True
    assert ext_url == f"http://127.0.0.1:{attached['extensionPort']}" and pairing
    # Running while it waits for the person: not an error, and the pairing is in no listing.
    waiting = server.wait_status(iid, "running", timeout_s=30)
    assert waiting["extensionConnected"] is False and "pairing" not in waiting
    listed = {i["id"]: i for i in server.get("/instances").json()}
    assert listed[iid]["attachType"] == "extension" and "pairing" not in listed[iid]
    # The same name again: the same instance, and the same pairing: the server's, which
    # `pinchtab extension pair` prints too.
    again = server.post("/instances/attach", json={"attachType": "extension", "name": "my-chrome"})
    assert again.status_code == 200 and again.json()["id"] == iid and again.json()["pairing"] == pairing
    assert pair_command(server) == pairing

    chrome.configure(ext_url, pairing)  # what the person does in the extension's options
    wait_until(lambda: record(server, iid)["extensionConnected"], 20, 0.1)

    opened = server.post(f"/instances/{iid}/tabs/open", json={"url": site.url("login.html")})
    assert opened.status_code == 200, opened.text
    tab = opened.json()["tabId"]
    snap = server.get(f"/tabs/{tab}/snapshot?filter=interactive&format=compact").text
    for kind, ref, typed in (("fill", ref_of(snap, "textbox", "Username"), "agent"),
                             ("type", ref_of(snap, "textbox", "Password"), "s3cret")):
        r = server.post("/action", json={"tabId": tab, "kind": kind, "ref": ref, "text": typed})
        assert r.status_code == 200, r.text
    r = server.post("/action", json={"tabId": tab, "kind": "click", "ref": ref_of(snap, "button", "Sign in"),
                                     "waitNav": True})
    assert r.status_code == 200 and r.headers["X-PinchTab-Instance-Id"] == iid, r.text
    assert server.get(f"/tabs/{tab}/text").json()["title"] == "Welcome"
    r = server.post("/navigate", json={"tabId": tab, "url": site.url("table.html")})
    assert r.status_code == 200 and r.json()["title"] == "Orders", r.text
    # It is the person's Chrome that has the tab.
    urls = chrome.evaluate("chrome.tabs.query({}).then(ts => ts.map(t => t.url))")
    assert site.url("table.html") in urls

    # A restarted bridge keeps its port and pairing: the extension comes back by itself.
    assert server.post(f"/instances/{iid}/restart").status_code == 200
    back = wait_until(lambda: (rec := record(server, iid))["status"] == "running" and rec["extensionConnected"]
                      and rec, 30, 0.1)
    assert back["extensionUrl"] == ext_url
    r = server.post("/navigate", json={"tabId": tab, "url": site.url("login.html")})
    assert r.status_code == 200 and r.json()["title"] == "Sign in", r.text

    # The extension goes away (Chrome pointed elsewhere): the instance says so and keeps running.
    chrome.configure("http://127.0.0.1:9", pairing)
    gone = wait_until(lambda: (rec := record(server, iid)) and not rec["extensionConnected"] and rec, 20, 0.1)
    assert gone["status"] == "running"

    stopped = server.post(f"/instances/{iid}/stop")
    assert stopped.status_code == 200, stopped.text
    assert iid not in {i["id"] for i in server.get("/instances").json()}
    assert not reachable(f"{ext_url}/extension/info")  # the bridge is gone...
    assert chrome.proc is not None and chrome.proc.poll() is None  # ...the person's Chrome is not
    assert chrome.evaluate("chrome.tabs.query({}).then(ts => ts.length)") >= 1


def test_a_taken_extension_port_and_mixed_attach_fields_are_refused(server):
    r = server.post("/instances/attach", json={"attachType": "extension", "name": "x", "extensionPort": server.port})
    assert r.status_code == 409 and r.json()["code"] == "port_in_use", r.text
    assert r.json()["details"]["field"] == "extensionPort"
    r = server.post("/instances/attach", json={"attachType": "extension", "name": "x", "cdpUrl": "ws://127.0.0.1:1"})
    assert r.status_code == 400 and r.json()["details"]["field"] == "cdpUrl", r.text
    r = server.post("/instances/attach", json={"attachType": "carrier-pigeon", "name": "x"})
    assert r.status_code == 400 and r.json()["details"]["field"] == "attachType", r.text
    r = server.post("/instances/attach", json={"name": "x"})
    assert r.status_code == 400 and r.json()["details"]["field"] == "cdpUrl", r.text
    assert server.get("/instances").json() == []


def test_extension_attach_is_refused_while_attach_is_disabled(server_process):
    sp = server_process(config=EXPLICIT)
    sp.wait_ready(default_instance=False)
    r = sp.post("/instances/attach", json={"attachType": "extension", "name": "my-chrome"})
    assert r.status_code == 403 and r.json()["code"] == "attach_disabled", r.text
    assert r.json()["details"]["setting"] == "security.attach.enabled"
    assert "pairing" not in r.text and sp.get("/instances").json() == []


# --- the pieces on their own ---------------------------------------------------------------------
def test_an_extension_record_says_where_to_connect_and_never_holds_a_secret():
    inst = Instance(id="inst_1", profile_id="", profile_name="mine", port=20001, mode="headed", attached=True,
                    attach_type="extension", extension_port=19222)
    rec = inst.record()
    assert rec["attachType"] == "extension" and rec["extensionUrl"] == "http://127.0.0.1:19222"
    assert rec["extensionConnected"] is False and "cdpUrl" not in rec
    assert inst.token not in str(rec) and "pairing" not in rec


def test_the_attach_switch_alone_guards_extension_attach():
    with pytest.raises(AttachDisabled) as refused:
        check_attach_enabled(AttachConfig(enabled=False, allow_hosts=("127.0.0.1",), allow_schemes=("ws",)))
    assert refused.value.details["setting"] == "security.attach.enabled"
    # No URL is dialled, so the host and scheme lists do not apply.
    check_attach_enabled(AttachConfig(enabled=True, allow_hosts=(), allow_schemes=()))
