"""The ``pinchtab`` browser verbs as people and scripts run them: a subprocess per command against a
real bridge (gunicorn, Chromium) that wants a token, so every call also proves the token is sent."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import ROOT
from support.agent import ref_of
from support.servers import BridgeProcess

from bench.processes import free_port

pytestmark = pytest.mark.e2e

TOKEN = "cli-t0ken"


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One bridge for the module: a token, and evaluate on (for `eval`)."""
    home = tmp_path_factory.mktemp("cli-bridge")
    (home / ".pinchtab").mkdir()
    (home / ".pinchtab" / "config.json").write_text(json.dumps({"security": {"allowEvaluate": True}}))
    bp = BridgeProcess(home, env={"PINCHTAB_TOKEN": TOKEN})
    try:
        bp.wait_healthy()
        yield bp
    finally:
        bp.stop()


@pytest.fixture
def cli(bridge: Any, tmp_path: Path) -> Any:
    """Run ``pinchtab ARGS`` as the user would, with the server and token in the environment."""

    def run(*args: str, env: dict[str, str] | None = None, cwd: Path = tmp_path) -> subprocess.CompletedProcess:
        full = {k: v for k, v in os.environ.items() if not k.startswith(("PINCHTAB_", "BRIDGE_"))}
        full.update(HOME=str(tmp_path), PYTHONPATH=str(ROOT), PINCHTAB_SERVER=bridge.base, PINCHTAB_TOKEN=TOKEN)
        full.update(env or {})
        return subprocess.run([sys.executable, "-m", "app.clients.cli", *args], cwd=str(cwd), env=full,
                              capture_output=True, text=True, timeout=60)

    def ok(*args: str, **kwargs: Any) -> str:
        res = run(*args, **kwargs)
        assert res.returncode == 0, f"pinchtab {' '.join(args)} exited {res.returncode}: {res.stderr}"
        return res.stdout

    run.ok = ok  # type: ignore[attr-defined]
    return run


def test_nav_snap_then_fill_type_and_click_by_ref(cli, site):
    out = cli.ok("nav", site.url("login.html"))
    assert "title: Sign in" in out and re.search(r"^tabId: [0-9A-F]{32}$", out, re.M)
    snap = cli.ok("snap")
    assert snap.startswith("# Sign in |")
    assert cli.ok("fill", ref_of(snap, "textbox", "Username"), "agent") == "filled: true\nlen: 5\n"
    assert "typed: true" in cli.ok("type", ref_of(snap, "textbox", "Password"), "s3cret")
    out = cli.ok("click", ref_of(snap, "button", "Sign in"), "--wait-nav", "--snap")
    assert "clicked: true" in out and "navigated: true" in out
    assert re.search(r"^# Welcome \|.*\n(.*\n)*e\d+ link Orders$", out, re.M), out
    assert "Welcome, agent" in cli.ok("text")


def test_click_with_snap_diff_prints_what_changed(cli, site):
    first = cli.ok("nav", site.url("counter.html"), "--snap")
    inc = ref_of(first, "button", "Increment")
    cli.ok("click", inc, "--snap-diff")  # the first diff view of this document: the whole page
    out = cli.ok("click", inc, "--snap-diff")
    assert out.startswith("clicked: true\n\n# Counter |")
    assert re.search(r"^\+ e\d+ StaticText 2$", out, re.M) and re.search(r"^- e\d+ StaticText 1$", out, re.M), out


def test_json_output_parses(cli, site):
    nav = json.loads(cli.ok("--json", "nav", site.url("form.html")))
    assert nav["title"] == "E2E Test - Form"
    tabs = json.loads(cli.ok("tabs", "--json"))["tabs"]
    assert nav["tabId"] in [t["id"] for t in tabs]
    snap = json.loads(cli.ok("snap", "--json"))
    assert any(n["role"] == "textbox" and n["name"] == "Username:" for n in snap["nodes"])
    act = json.loads(cli.ok("fill", "#email", "a@b.c", "--json", "--snap"))
    assert act["success"] is True and 'val="a@b.c"' in act["snapshot"]
    assert json.loads(cli.ok("eval", "document.querySelector('#email').value", "--json")) == {"result": "a@b.c"}


def test_tabs_table_tab_focus_and_close(cli, site):
    keep = json.loads(cli.ok("--json", "nav", site.url("table.html")))["tabId"]
    extra = json.loads(cli.ok("--json", "nav", site.url("links.html"), "--new-tab"))["tabId"]
    table = cli.ok("tabs")
    assert table.splitlines()[0].split() == ["ID", "TITLE", "URL"] and extra in table and keep in table
    assert "focused: true" in cli.ok("tab", keep)
    assert "Orders" in cli.ok("text")  # the focused tab is the CLI's current tab now
    assert "Go to form" in cli.ok("text", "--tab", extra)
    assert "Go to form" in cli.ok("text")  # a tab named explicitly becomes the caller's current tab (§0.2)
    assert "closed: true" in cli.ok("close", extra)
    assert extra not in cli.ok("tabs")


def test_screenshot_and_pdf_write_real_files(cli, site, tmp_path):
    cli.ok("nav", site.url("table.html"))
    out = cli.ok("screenshot", "-o", "page.png")
    assert re.fullmatch(r"saved page\.png \([\d,]+ bytes\)\n", out)
    assert (tmp_path / "page.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    cli.ok("screenshot", "-o", str(tmp_path / "page.jpg"), "--quality", "40")
    assert (tmp_path / "page.jpg").read_bytes()[:3] == b"\xff\xd8\xff"
    saved = json.loads(cli.ok("pdf", "-o", "page.pdf", "--json"))
    assert saved["path"] == "page.pdf" and (tmp_path / "page.pdf").read_bytes()[:5] == b"%PDF-"


def test_find_eval_and_console(cli, site):
    cli.ok("nav", site.url("reads_logs.html"))
    out = cli.ok("find", "Log more button")
    assert re.match(r"best: e\d+ \(high", out) and "button" in out
    assert cli.ok("eval", "window.clicks + 2") == "2\n"
    assert "[warning] careful now" in cli.ok("console")
    assert "nobody caught me" in cli.ok("errors")


def test_errors_exit_1_with_message_and_code(cli, site):
    cli.ok("nav", site.url("form.html"))
    res = cli("click", "e999")
    assert res.returncode == 1 and res.stdout == ""
    assert "ref e999 not found" in res.stderr and "ref_not_found" in res.stderr and "404" in res.stderr
    res = cli("tabs", env={"PINCHTAB_TOKEN": "wrong"})
    assert res.returncode == 1 and "bad_token" in res.stderr
    res = cli("health", "--server", f"127.0.0.1:{free_port()}")
    assert res.returncode == 1 and "cannot reach pinchtab" in res.stderr and "unreachable" in res.stderr
    res = cli("instances")
    assert res.returncode == 1 and "pinchtab server" in res.stderr
    res = cli("click")  # usage error
    assert res.returncode == 2 and "ref" in res.stderr
    assert "Traceback" not in res.stderr


def test_port_and_token_come_from_the_config_file(cli, bridge, tmp_path):
    config = tmp_path / ".pinchtab" / "config.json"
    config.parent.mkdir()
    unset = {"PINCHTAB_SERVER": "", "PINCHTAB_TOKEN": ""}  # empty counts as unset, as for the server
    config.write_text(json.dumps({"server": {"port": bridge.port, "token": TOKEN}}))
    assert "tabs" in json.loads(cli.ok("tabs", "--json", env=unset))
    config.write_text(json.dumps({"server": {"port": bridge.port, "token": "not-it"}}))
    res = cli("tabs", env=unset)
    assert res.returncode == 1 and "bad_token" in res.stderr


def test_help_explains_every_verb(cli):
    out = cli.ok("--help")
    for verb in ("nav", "snap", "click", "type", "fill", "press", "hover", "select", "scroll", "text",
                 "screenshot", "pdf", "tabs", "tab", "close", "find", "eval", "console", "errors", "health",
                 "instances", "profiles", "mcp", "bridge"):
        assert re.search(rf"^    {verb} +\S.*$", out, re.M), verb  # one line each in the verb list
    snap = cli.ok("snap", "--help")
    assert "--max-tokens" in snap and "--full" in snap and "--selector" in snap
    assert "--snap-diff" in cli.ok("click", "--help")


def test_the_client_caps_an_answer_and_names_each_failure(bridge):
    from app.clients.rest import Client, ClientError

    capped = Client(bridge.base, token=TOKEN, max_bytes=1000)
    with pytest.raises(ClientError) as err:
        capped.get("/openapi.json")
    assert err.value.code == "response_too_large" and "cap" in err.value.message
    with pytest.raises(ClientError) as err:
        Client(bridge.base).get("/tabs")
    assert (err.value.status, err.value.code) == (401, "missing_token")
    assert Client(bridge.base, token=TOKEN).get("/health")["status"] == "ok"


def test_server_url_precedence_flag_then_env_then_config(tmp_path):
    from app.clients.rest import connect

    config = tmp_path / ".pinchtab" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"server": {"port": 4321, "token": "from-config"}}))
    home = {"HOME": str(tmp_path)}
    flag = connect("10.0.0.1:1/", agent_id="a", source="cli", env={**home, "PINCHTAB_SERVER": "http://env:2"})
    assert flag.base_url == "http://10.0.0.1:1"
    env = connect(None, agent_id="a", source="cli", env={**home, "PINCHTAB_SERVER": "http://env:2"})
    assert env.base_url == "http://env:2"
    cfg = connect(None, agent_id="a", source="cli", env=home)
    assert cfg.base_url == "http://127.0.0.1:4321"
    assert cfg._session().headers["Authorization"] == "Bearer from-config"
    assert cfg._session().headers["X-Agent-Id"] == "a" and "from-config" not in repr(cfg)
    over = connect(None, agent_id="a", source="cli", env={**home, "PINCHTAB_TOKEN": "from-env"})
    assert over._session().headers["Authorization"] == "Bearer from-env"
