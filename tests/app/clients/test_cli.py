"""The ``pinchtab`` browser verbs as scripts written for the original run them, against a real bridge
(gunicorn, Chromium) that wants a token, so every call also proves the token is sent. Each command
goes through the CLI's entry point, ``main()``, in this process (:func:`in_process`: a subprocess per
command costs seconds of imports); one test runs the installed command itself. Each test has its own
HOME and state dir, so the CLI's remembered tab starts empty."""
from __future__ import annotations

import http.server
import json
import os
import pty
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from support import ROOT
from support.agent import ref_of
from support.servers import BridgeProcess, ServerProcess
from support.waits import wait_until

from app.clients.cli_server import listening
from bench.processes import free_port

pytestmark = pytest.mark.e2e

TOKEN = "cli-t0ken"
TAB_ID = re.compile(r"[0-9A-F]{32}")


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One bridge for the module: a token, and the gated capabilities the verbs below need."""
    home = tmp_path_factory.mktemp("cli-bridge")
    (home / ".pinchtab").mkdir()
    (home / ".pinchtab" / "config.json").write_text(json.dumps({"security": {
        "allowEvaluate": True, "allowCookies": True, "allowStateExport": True, "allowClipboard": True,
        "allowNetworkIntercept": True, "allowUpload": True, "allowScreencast": True}}))
    bp = BridgeProcess(home, env={"PINCHTAB_TOKEN": TOKEN})
    try:
        bp.wait_healthy()
        yield bp
    finally:
        bp.stop()


def run_cli(*args: str, home: Path, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout_s: float = 60) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PINCHTAB_", "BRIDGE_", "XDG_"))}
    full.update(HOME=str(home), PYTHONPATH=str(ROOT), XDG_STATE_HOME=str(home / "state"))
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "app.clients.cli", *args], cwd=str(cwd or home), env=full,
                          capture_output=True, text=True, timeout=timeout_s)


class Result:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def in_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, base_env: dict[str, str]) -> Any:
    """``pinchtab ARGS`` through its entry point, ``main()``, in this process (a subprocess per
    command costs seconds of imports on a loaded machine), with ``base_env`` as the environment."""
    from app.clients.cli import main

    for name in list(os.environ):
        if name.startswith(("PINCHTAB_", "BRIDGE_", "XDG_")):
            monkeypatch.delenv(name)

    def run(*args: str, env: dict[str, str] | None = None) -> Result:
        with monkeypatch.context() as m:
            for k, v in {**base_env, **(env or {})}.items():
                m.setenv(k, v)
            capsys.readouterr()
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse's usage errors and --help
                code = exc.code if isinstance(exc.code, int) else 1
            out, err = capsys.readouterr()
        return Result(code, out, err)

    return run


@pytest.fixture
def cli(bridge: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> Any:
    """Run ``pinchtab ARGS`` as a user would, with the server and token in the environment."""
    monkeypatch.chdir(tmp_path)
    run = in_process(monkeypatch, capsys, {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
                                           "PINCHTAB_SERVER": bridge.base, "PINCHTAB_TOKEN": TOKEN})

    def ok(*args: str, **kwargs: Any) -> str:
        res = run(*args, **kwargs)
        assert res.returncode == 0, f"pinchtab {' '.join(args)} exited {res.returncode}: {res.stderr}"
        return res.stdout

    run.ok = ok  # type: ignore[attr-defined]
    run.state_file = tmp_path / "state" / "pinchtab" / "current-tab"  # type: ignore[attr-defined]
    return run


def test_nav_prints_the_tab_id_and_the_next_verbs_act_on_that_tab(cli, bridge, site, tmp_path):
    # The installed command itself, once: `tab=$(pinchtab nav URL)` gets just the id.
    res = run_cli("nav", site.url("login.html"), home=tmp_path,
                  env={"PINCHTAB_SERVER": bridge.base, "PINCHTAB_TOKEN": TOKEN})
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert TAB_ID.fullmatch(out.strip()), out  # tab=$(pinchtab nav URL) is just the id
    tab = out.strip()
    assert cli.state_file.read_text().strip() == tab  # remembered for the anonymous calls that follow
    snap = cli.ok("snap", "-i")
    assert snap.startswith("# Sign in |")  # interactive + compact by default
    assert cli.ok("fill", ref_of(snap, "textbox", "Username"), "agent") == "OK\n"
    assert cli.ok("type", ref_of(snap, "textbox", "Password"), "s3cret") == "OK\n"
    out = cli.ok("click", ref_of(snap, "button", "Sign in"), "--wait-nav", "--snap", "--tab", tab)
    assert out.startswith("OK\n") and re.search(r"^# Welcome \|.*\n(.*\n)*e\d+ link Orders$", out, re.M), out
    assert cli.ok("title") == "Welcome\n"
    assert cli.ok("url").strip().endswith("/login")
    assert "Welcome, agent" in cli.ok("text")
    assert cli.ok("nav", site.url("form.html")).strip() == tab  # the same tab, not a new one
    assert cli.ok("back").strip().endswith("/login")
    other = cli.ok("nav", site.url("table.html"), "--new-tab").strip()
    assert other != tab and cli.state_file.read_text().strip() == other


def test_json_everywhere_and_snap_formats(cli, site):
    nav = json.loads(cli.ok("--json", "nav", site.url("form.html")))
    assert nav["title"] == "E2E Test - Form" and TAB_ID.fullmatch(nav["tabId"])
    for flags in (("--json",), ("--full",), ("--compact=false",)):
        doc = json.loads(cli.ok("snap", *flags))
        assert any(n["role"] == "textbox" and n["name"] == "Username:" for n in doc["nodes"]), flags
    full = json.loads(cli.ok("snap", "--full"))
    interactive = json.loads(cli.ok("snap", "--json"))
    assert len(full["nodes"]) > len(interactive["nodes"])  # --full is every node
    assert cli.ok("snap", "--text").startswith("# E2E Test - Form\n")
    assert "Country" in cli.ok("snap", "-i", "#f") and "Form Test" not in cli.ok("snap", "-s", "#f", "-c")
    every = json.loads(cli.ok("snap", "--interactive=false", "--compact=false"))
    assert len(every["nodes"]) > len(json.loads(cli.ok("snap", "--compact=false"))["nodes"])
    act = json.loads(cli.ok("fill", "#email", "a@b.c", "--json", "--snap"))
    assert act["success"] is True and 'val="a@b.c"' in act["snapshot"]
    assert json.loads(cli.ok("title", "--json"))["title"] == "E2E Test - Form"
    assert json.loads(cli.ok("eval", "document.querySelector('#email').value", "--json")) == {"result": "a@b.c"}
    assert cli.ok("eval", "1 + 1") == "2\n" and cli.ok("eval", "({a: [1]})") == '{"a":[1]}\n'


def test_element_reads_and_form_actions(cli, site):
    cli.ok("nav", site.url("form.html"))
    assert cli.ok("count", "input") == "4\n"
    assert cli.ok("attr", "#username", "placeholder") == "Enter username\n"
    assert cli.ok("visible", "#username") == "true\n" and cli.ok("enabled", "#username") == "true\n"
    assert cli.ok("checked", "#agree") == "false\n"
    assert cli.ok("check", "#agree") == "OK\n" and cli.ok("checked", "#agree") == "true\n"
    assert cli.ok("uncheck", "#agree") == "OK\n" and cli.ok("checked", "#agree") == "false\n"
    assert cli.ok("select", "#country", "Japan") == "OK\n" and cli.ok("value", "#country") == "jp\n"
    box = json.loads(cli.ok("box", "#username"))
    assert box["width"] > 0 and box["height"] > 0
    assert cli.ok("html", "h1") == "<h1>Form Test</h1>\n"
    assert cli.ok("styles", "h1", "--prop", "display") == "block\n"
    assert cli.ok("press", "#notes", "Enter") == "OK\n"  # press <selector> <key> focuses the element first
    assert cli.ok("press", "x") == "OK\n" and cli.ok("value", "#notes") == "\nx\n"
    assert cli.ok("scroll", "down") == "OK\n" and cli.ok("scroll", "-200") == "OK\n"
    assert cli.ok("keyboard", "type", "xy") == "OK\n"
    assert cli.ok("mouse", "move", "10", "10") == "OK\n" and cli.ok("mouse", "wheel", "120") == "OK\n"
    res = cli("count")
    assert res.returncode == 2 and "selector" in res.stderr


def test_find_console_errors_and_wait(cli, site):
    cli.ok("nav", site.url("reads_logs.html"))
    lines = cli.ok("find", "Log more button").splitlines()
    assert re.fullmatch(r'e\d+\tbutton\t".*Log more.*"', lines[0]), lines
    best = cli.ok("find", "Log more button", "--ref-only").strip()
    assert best == lines[0].split("\t")[0]
    assert re.search(r"^\d\d:\d\d:\d\d \[WARNING\] careful now", cli.ok("console"), re.M)
    assert "nobody caught me" in cli.ok("errors")
    assert cli.ok("console", "--clear") == "Console logs cleared\n" and cli.ok("console") == "No console logs\n"
    assert cli.ok("errors", "--clear") == "Error logs cleared\n" and cli.ok("errors") == "No errors\n"
    assert cli.ok("wait", "button") == "OK\n"
    res = cli("wait", "#never-there", "--timeout", "300")
    assert res.returncode == 4 and "timeout" in res.stderr


def test_screenshot_and_pdf_write_real_files(cli, site, tmp_path):
    cli.ok("nav", site.url("table.html"))
    assert re.fullmatch(r"Saved page\.png \(\d+ bytes\)\n", cli.ok("screenshot", "-o", "page.png"))
    assert (tmp_path / "page.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    cli.ok("ss", "-o", "small.jpg", "-q", "40", "--scale", "0.5")
    assert (tmp_path / "small.jpg").read_bytes()[:3] == b"\xff\xd8\xff"
    assert re.fullmatch(r"Saved page\.pdf \(\d+ bytes\)\n", cli.ok("pdf", "-o", "page.pdf", "--landscape"))
    assert (tmp_path / "page.pdf").read_bytes()[:5] == b"%PDF-"


def test_tabs_focus_close_and_an_agent_keeps_its_own_tab(cli, site):
    first = cli.ok("nav", site.url("table.html")).strip()
    second = cli.ok("nav", site.url("links.html"), "--new-tab").strip()
    listed = [t["id"] for t in json.loads(cli.ok("tabs"))["tabs"]]
    assert {first, second} <= set(listed)
    assert json.loads(cli.ok("tab", str(listed.index(second) + 1)))["tabId"] == second  # a 1-based position
    assert "Links" in cli.ok("title")
    out = cli.ok("quick", site.url("form.html"))
    assert out.startswith(f"Navigating to {site.url('form.html')}...\n") and "Page structure" in out
    assert re.search(r"^e\d+ button Submit$", out, re.M) and "Title: E2E Test - Form" in out
    assert json.loads(cli.ok("tab", first))["focused"] is True
    assert cli.ok("title") == "Orders\n"  # `tab <id>` made it the CLI's current tab
    assert cli.ok("close", second) == "OK\n"
    assert second not in cli.ok("tabs")
    mine = cli.ok("--agent-id", "agent-7", "nav", site.url("form.html")).strip()
    assert cli.state_file.read_text().strip() == first  # an identified caller's tab is the server's to keep
    assert cli.ok("title", "--agent-id", "agent-7") == "E2E Test - Form\n"
    assert cli.ok("title", env={"PINCHTAB_AGENT_ID": "agent-7"}) == "E2E Test - Form\n"
    assert cli.ok("title") == "Orders\n" and mine != first
    third = cli.ok("nav", site.url("links.html"), "--new-tab").strip()
    assert json.loads(cli.ok("tab", "close", third, "--json"))["closed"] is True
    assert third not in cli.ok("tabs")


def test_a_remembered_tab_that_was_closed_is_forgotten(cli, site):
    tab = cli.ok("nav", site.url("form.html")).strip()
    cli.ok("--json", "nav", site.url("table.html"), "--new-tab")  # so closing `tab` does not close the last
    cli.state_file.write_text(tab + "\n")
    cli.ok("close", tab)
    assert not cli.state_file.exists()  # closing the remembered tab forgets it
    cli.state_file.write_text(tab + "\n")  # a stale file, as if another client closed it
    res = cli("title")
    assert res.returncode == 1 and res.stderr.startswith(f"Error 404: tab {tab} not found")
    assert "forgotten" in res.stderr and not cli.state_file.exists()
    assert cli.ok("title") == "Orders\n"  # the next call uses the server's current tab
    cli.state_file.write_text(tab + "\n")
    os.utime(cli.state_file, (1, 1))  # stale: checked against the server before it is used
    assert cli.ok("title") == "Orders\n" and not cli.state_file.exists()
    fresh = cli.ok("nav", site.url("form.html")).strip()
    os.utime(cli.state_file, (1, 1))
    assert cli.ok("title") == "E2E Test - Form\n" and cli.state_file.read_text().strip() == fresh
    assert cli.state_file.stat().st_mtime > 1  # checked: trusted again for the next half minute


def test_errors_go_to_stderr_with_a_non_zero_status(cli, site):
    cli.ok("nav", site.url("form.html"))
    res = cli("click", "e999")
    assert res.returncode == 1 and res.stdout == ""
    assert re.match(r"Error 404: ref e999 not found.* \(ref_not_found\)", res.stderr), res.stderr
    res = cli("tabs", env={"PINCHTAB_TOKEN": "wrong"})
    assert res.returncode == 1 and "Error 401" in res.stderr and "bad_token" in res.stderr
    res = cli("title", "--server", f"127.0.0.1:{free_port()}")
    assert res.returncode == 1 and "cannot reach pinchtab" in res.stderr
    res = cli("download", "http://127.0.0.1/x")  # a gate that is off: the hint and the remedy are shown
    assert res.returncode == 1 and "Error 403" in res.stderr and "download_disabled" in res.stderr
    assert "💡" in res.stderr and "Remedy:" in res.stderr and "security.allowDownload" in res.stderr
    res = cli("click")
    assert res.returncode == 2 and "pinchtab click <selector>" in res.stderr
    res = cli("nosuchverb")
    assert res.returncode == 2 and "invalid choice" in res.stderr


def test_cookies_state_and_dialog_verbs(cli, site):
    cli.ok("nav", site.url("form.html"))
    cli.ok("eval", "document.cookie = 'flavour=oat; path=/'")
    cookies = json.loads(cli.ok("cookies"))["cookies"]
    assert any(c["name"] == "flavour" and c["value"] == "oat" for c in cookies)
    saved = json.loads(cli.ok("state", "save", "--name", "cli-state"))
    assert saved["name"] == "cli-state"
    assert "cli-state" in json.dumps(json.loads(cli.ok("state", "list")))
    shown = json.loads(cli.ok("state", "show", "--name", "cli-state"))
    assert any(c["name"] == "flavour" for c in shown["cookies"])
    assert json.loads(cli.ok("state", "show", "cli-state")) == shown  # the name as a word: the same
    assert json.loads(cli.ok("state", "load", "--name", "cli-st"))["name"] == "cli-state"  # a prefix
    for bad in (("show",), ("load", "cli-state", "--name", "cli-state"), ("list", "--name", "x")):
        res = cli("state", *bad)
        assert res.returncode == 2 and res.stderr.startswith("Usage: pinchtab state list"), bad
    res = cli("state", "save", "--name", "sealed", "--encrypt")  # no key configured: refused, nothing saved
    assert res.returncode == 1 and "state_key_required" in res.stderr
    assert json.loads(cli.ok("state", "delete", "--name", "cli-state"))["deleted"] == "cli-state"
    assert json.loads(cli.ok("cookies", "clear"))["status"] == "cleared"
    assert json.loads(cli.ok("cookies"))["cookies"] == []
    res = cli("dialog", "accept")
    assert res.returncode == 1 and "no dialog" in res.stderr


def test_thin_verbs_for_storage_clipboard_network_emulation_frames_and_handoff(cli, site, tmp_path):
    tab = cli.ok("nav", site.url("form.html")).strip()
    assert json.loads(cli.ok("storage", "set", "colour", "teal"))
    assert "teal" in cli.ok("storage", "get", "colour")
    assert "teal" in cli.ok("storage", "get", "--type", "local", "--key", "colour")
    cli.ok("storage", "set", "mood", "calm", "--type", "session")
    cli.ok("storage", "delete", "--key", "colour", "--type", "local")
    left = cli.ok("storage", "get")
    assert "teal" not in left and "calm" in left
    assert cli("storage", "get", "--key", "colour", "mood").returncode == 2
    cli.ok("storage", "set", "colour", "teal")
    cli.ok("storage", "clear", "--all")
    left = cli.ok("storage", "get")
    assert "teal" not in left and "calm" not in left
    assert cli.ok("clipboard", "write", "hello", "world") == "Clipboard updated\n"
    assert json.loads(cli.ok("clipboard", "write", "hello", "world", "--json"))["success"] is True
    assert cli.ok("clipboard", "read") == "hello world\n"
    rows = cli.ok("network").splitlines()
    assert rows[0].split() == ["REQUESTID", "METHOD", "STATUS", "RESOURCETYPE", "URL"]
    assert any("form.html" in r for r in rows[1:])
    assert any(e["url"].endswith("form.html") for e in json.loads(cli.ok("network", "--json"))["entries"])
    assert json.loads(cli.ok("route", "**/blocked.js", "--abort"))
    assert "**/blocked.js" in cli.ok("network", "route") and "**/blocked.js" in cli.ok("route")
    assert json.loads(cli.ok("unroute", "**/blocked.js"))
    applied = json.loads(cli.ok("set", "viewport", "640", "480"))
    assert applied["width"] == 640 and cli.ok("eval", "innerWidth") == "640\n"
    assert json.loads(cli.ok("set", "offline", "on"))["offline"] is True
    assert json.loads(cli.ok("set", "offline", "off"))["offline"] is False
    assert cli("set", "viewport", "wide").returncode == 2
    assert json.loads(cli.ok("frame"))["scoped"] is False
    assert cli.ok("annotate").startswith("Annotated ") and cli.ok("annotate", "--clear") == "Annotations cleared\n"
    out = cli.ok("capture", "-o", "cap.jpg")
    assert out.startswith("Saved cap.jpg") and (tmp_path / "cap.jpg").read_bytes()[:3] == b"\xff\xd8\xff"
    assert json.loads(cli.ok("tab", "handoff", tab, "--reason", "captcha"))
    assert "paused" in cli.ok("handoff-status")
    res = cli("click", "#agree")
    assert res.returncode == 1 and "tab_paused_handoff" in res.stderr
    cli.ok("resume", tab)
    assert cli.ok("click", "#agree") == "OK\n"


def test_pointer_dialog_frame_and_history_verbs(cli, site):
    cli.ok("nav", site.url("h4_drag.html"))
    assert cli.ok("drag", "#pointer li:nth-child(1)", "#pointer li:nth-child(3)") == "OK\n"
    assert cli.ok("text", "-s", "#order") == "ABCD QPRS\n"
    cli.ok("nav", site.url("dialog.html"))
    assert cli.ok("click", "#prompt", "--dialog-action", "accept", "--dialog-text", "bob") == "OK\n"
    assert cli.ok("text", "-s", "#out") == "prompt:bob\n"
    cli.ok("nav", site.url("iframe.html"))
    assert json.loads(cli.ok("frame", "#inner"))["scoped"] is True
    cli.ok("fill", "#q", "hi")
    cli.ok("click", "#go")
    assert cli.ok("text", "-s", "#res") == "searched hi\n"
    assert json.loads(cli.ok("frame", "main"))["scoped"] is False
    cli.ok("nav", site.url("form.html"))
    for verb in (("focus", "--css", "#email"), ("keydown", "a"), ("keyup", "a"), ("hover", "#username"),
                 ("dblclick", "#username"), ("scrollintoview", "#notes"), ("mouse", "down"), ("mouse", "up")):
        assert cli.ok(*verb) == "OK\n", verb
    for setting in (("geo", "48.85", "2.35"), ("headers", '{"X-Test": "1"}'), ("media", "prefers-color-scheme", "dark"),
                    ("credentials", "u", "p"), ("credentials", "clear")):
        assert "status" in json.loads(cli.ok("set", *setting)), setting
    cli.ok("nav", site.url("table.html"))
    out = cli.ok("back", "--text")
    assert out.startswith(site.url("form.html") + "\n") and "Form Test" in out
    assert cli.ok("forward").strip() == site.url("table.html")
    assert re.match(r"OK\n# Orders \|", cli.ok("reload", "--snap"))
    entry = json.loads(cli.ok("network", "--json"))["entries"][0]
    assert json.loads(cli.ok("network", entry["requestId"]))["entry"]["url"] == entry["url"]
    assert json.loads(cli.ok("network", "--clear"))["cleared"] is True


def test_upload_audit_and_cache_verbs(cli, site, tmp_path):
    cli.ok("nav", site.url("upload.html"))
    (tmp_path / "notes.txt").write_text("hello from the cli")
    assert json.loads(cli.ok("upload", "notes.txt", "-s", "#single"))["files"] == 1
    assert "single:notes.txt:18:hello from the cli" in cli.ok("text", "-s", "#chosen")
    assert cli("upload", "missing.txt").returncode == 1
    assert cli.ok("cache", "status") == "can-clear\n"
    assert json.loads(cli.ok("cache", "status", "--json"))["canClear"] is True
    assert cli.ok("cache", "clear") == "OK\n" and cli.ok("cache", "clear") == "OK\n"  # again: the same


def test_audit_summary_report_and_rendered_files(cli, site, tmp_path):
    good = site.url("site_a11y_good.html")
    out = cli.ok("audit", good)
    assert re.fullmatch(rf"Audited 1 page\(s\) · summary score \d+ · 0 broken asset\(s\) · 0 failed page\(s\)\n"
                        rf"  {re.escape(good)} · ok\n", out), out
    report = json.loads(cli.ok("audit", good, "--screenshot=false", "--json"))
    page = report["pages"][0]
    assert page["url"] == good and page["browser"]["accessibilityScore"] == 100 and "screenshot" not in page["browser"]
    shop = site.url("site_shop/index.html")
    res = cli("audit", shop, "--output-dir", "out", "--format", "md")
    assert res.returncode == 0 and res.stdout.startswith("Audited 1 page(s)"), res.stderr
    assert res.stderr == f"report written to {Path('out') / 'report.json'}\n"
    written = json.loads((tmp_path / "out" / "report.json").read_text())
    shot = written["pages"][0]["browser"]["screenshotPath"]
    assert shot == "screenshots/page-001.png" and "screenshot" not in written["pages"][0]["browser"]
    assert (tmp_path / "out" / shot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (tmp_path / "out" / "report.md").read_text()
    assert md.startswith("# Site Audit Report\n") and "\n## Summary\n" in md and "\n## Broken Assets\n" in md
    assert "missing-logo.png" in md and f"![{shop}](screenshots/page-001.png)" in md
    cli.ok("audit", shop, "--output-dir", "out", "--format", "html")
    page_html = (tmp_path / "out" / "report.html").read_text()
    assert "<style>" in page_html and 'src="screenshots/page-001.png"' in page_html and "missing-logo.png" in page_html
    assert "<script" not in page_html  # self-contained, and nothing of the page's runs in it
    inline = cli.ok("audit", shop, "--format", "html")  # on stdout: the screenshot inline
    assert inline.startswith("<!DOCTYPE html>") and 'src="data:image/png;base64,' in inline
    listed = json.loads(cli.ok("audit", site.url("site_shop/sitemap.xml"), "--sitemap", "--screenshot=false",
                               "--network-monitor=false", "--json"))
    assert {p["url"].rsplit("/", 1)[-1] for p in listed["pages"]} == {"about.html", "a.html"}
    assert "networkRequests" not in listed["pages"][0]["browser"]
    (tmp_path / "bad.json").write_text("{definitely not JSON")
    res = cli("audit", good, "--cookies-file", "bad.json")
    assert res.returncode == 2 and "the cookies file bad.json is not valid JSON" in res.stderr
    res = cli("audit", good, "--cookie", "novalue")
    assert res.returncode == 2 and "--cookie wants name=value" in res.stderr
    res = cli("audit", good, "--profile", "default")  # a bridge runs one browser: no instances to pick from
    assert res.returncode == 1 and "audit --profile needs `pinchtab server`" in res.stderr
    assert cli("audit", good, "--format", "pdf").returncode == 2


def seaportal_file(path: Path, site: Any, pages: dict[str, bool]) -> Path:
    """A SeaPortal results file naming ``pages`` (page -> whether it recommends the browser)."""
    path.write_text(json.dumps([
        {"url": site.url(f"audit_site/{page}"), "title": f"{page} (SeaPortal)", "description": f"About {page}",
         "confidence": 80, "statusCode": 200, "quality": 0.7,
         "profile": {"decision": "browser-needed" if rec else "static-high-confidence", "browserRecommended": rec}}
        for page, rec in pages.items()]))
    return path


def test_audit_of_a_seaportal_report_routes_pages_by_its_verdicts(cli, site, tmp_path):
    report_file = seaportal_file(tmp_path / "seaportal.json", site,
                                 {"index.html": True, "clean.html": False, "broken_assets.html": True})
    report = json.loads(cli.ok("audit", "--seaportal-report", str(report_file), "--json"))
    assert len(report["pages"]) == 3 and report["input"]["seaportalFormat"] == "seaportal-results/v0"
    assert report["input"]["seaportalFile"] == str(report_file)
    pages = {p["url"].rsplit("/", 1)[1]: p for p in report["pages"]}
    clean = pages["clean.html"]
    assert "screenshot" not in clean and clean["seaportal"]["title"] == "clean.html (SeaPortal)"
    assert clean["seaportal"]["description"] == "About clean.html"
    assert pages["index.html"]["screenshot"] and pages["index.html"]["seaportal"]["description"]
    every = json.loads(cli.ok("audit", "--seaportal-report", str(report_file), "--enrich-all", "--screenshot=false",
                              "--json"))
    clean = next(p for p in every["pages"] if p["url"].endswith("clean.html"))
    assert clean["browser"]["accessibilityScore"] == 100 and clean["title"] == "Clean Page | Audit Test Site"
    # The summary names each page; --output-dir moves the screenshots out of the report.
    out = cli.ok("audit", "--seaportal-report", str(report_file), "--output-dir", "sp")
    assert out.startswith("Audited 3 page(s)")
    written = json.loads((tmp_path / "sp" / "report.json").read_text())
    assert all("screenshot" not in p for p in written["pages"])
    assert (tmp_path / "sp" / "screenshots" / "page-001.png").read_bytes()[:4] == b"\x89PNG"
    (tmp_path / "bad.json").write_text('{"not": "an array"}')
    res = cli("audit", "--seaportal-report", "bad.json")
    assert res.returncode == 2 and "must be a JSON array" in res.stderr
    assert cli("audit", site.url("audit_site/clean.html"), "--seaportal-report", str(report_file)).returncode == 2
    assert cli("audit", site.url("audit_site/clean.html"), "--enrich-all").returncode == 2
    assert cli("audit").returncode == 2


def test_audit_forms_page_reports_its_insecure_password_form(cli, site):
    report = json.loads(cli.ok("audit", site.url("audit_site/forms.html"), "--screenshot=false", "--json"))
    assert [f["ruleId"] for f in report["securityFindings"]] == ["insecure-password-form"]
    md = cli.ok("audit", site.url("audit_site/forms.html"), "--screenshot=false", "--format", "md")
    assert "\n## Security\n" in md and "insecure-password-form" in md and "high-severity security" in md


def test_scrape_flags_preview_expand_and_no_browser(cli, site, tmp_path):
    # The test server is on this machine, which the HTTP fetches refuse: each page the crawl reads
    # goes to the browser as a fetch-error, and --no-browser / --preview have only that error to show.
    start = site.url("scrape_site/index.html")
    report = json.loads(cli.ok("scrape", start, "--timeout", "30", "--json"))
    assert report["schemaVersion"] == "1.0" and len(report["pages"]) == 4 and report["pageGroups"]
    assert all(p["source"] in ("http", "browser") and p["markdown"] for p in report["pages"])
    app = next(p for p in report["pages"] if p["url"].endswith("app.html"))
    assert app["source"] == "browser" and "JavaScript" in app["markdown"] and report["summary"]["browserPages"] >= 1
    out = cli.ok("scrape", start, "--timeout", "30", "--max-pages", "2")
    assert out.startswith("Scraped 2 page(s) · 0 http · 2 browser-rendered · 0 failed\n"), out
    bare = json.loads(cli.ok("scrape", start, "--timeout", "30", "--no-browser", "--json"))
    assert [p["source"] for p in bare["pages"]] == ["http"] and bare["summary"]["browserPages"] == 0
    assert bare["pages"][0]["browserReasons"] == ["fetch-error"]
    outline = cli.ok("scrape", start, "--timeout", "30", "--preview")
    assert outline.startswith("Preview: 1 page(s) discovered") and "needs browser: fetch-error" in outline
    expanded = json.loads(cli.ok("scrape", start, "--only", site.url("scrape_site/app.html"), "--json"))
    assert [p["url"] for p in expanded["pages"]] == [site.url("scrape_site/app.html")]
    assert expanded["pages"][0]["source"] == "browser" and "JavaScript" in expanded["pages"][0]["markdown"]
    cli.ok("scrape", start, "--max-pages", "2", "--format", "md", "--output-dir", "scraped")
    assert json.loads((tmp_path / "scraped" / "report.json").read_text())["pages"]
    assert (tmp_path / "scraped" / "report.md").read_text().startswith("# Site scrape: Scrape Test Site\n")


def run_on_terminal(*args: str, home: Path, env: dict[str, str], timeout_s: float = 180) -> Result:
    """``pinchtab ARGS`` as from a terminal: stderr on a pseudo-terminal (read as it comes), stdout on a pipe."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PINCHTAB_", "BRIDGE_", "XDG_", "COLUMNS"))}
    full.update(HOME=str(home), PYTHONPATH=str(ROOT), XDG_STATE_HOME=str(home / "state"), **env)
    leader, follower = pty.openpty()
    chunks: list[bytes] = []

    def read_terminal() -> None:
        while True:
            try:
                data = os.read(leader, 4096)
            except OSError:  # EIO: the child closed its end
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=read_terminal, daemon=True)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "app.clients.cli", *args], cwd=str(home), env=full,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower)
        os.close(follower)
        follower = -1
        reader.start()
        out, _ = proc.communicate(timeout=timeout_s)
        reader.join(10)
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    return Result(proc.returncode, out.decode(), b"".join(chunks).decode(errors="replace"))


def failures(summaries: str) -> list[str]:
    """The pages of scrape summaries that failed, with why (what a mismatch of two runs comes from)."""
    return [line for line in summaries.splitlines() if "error" in line or "failed:" in line]


def same_report(one: str, other: str) -> bool:
    """Whether two scrape summaries are the same, but for the pages that failed to load in either run.

    Every page here is rendered by the browser (the HTTP fetch refuses this machine), and on a loaded
    machine a render now and then fails: that changes the report, not what this test is about
    (progress never reaching stdout). The pages both runs read, and their order, must still match.
    """
    failed = {line.split(" · ")[0] for line in failures(one) + failures(other)}
    def kept(text: str) -> list[str]:
        return [line for line in text.splitlines()
                if line.split(" · ")[0] not in failed and not line.startswith("Scraped ")]
    return kept(one) == kept(other) and (bool(failed) or one == other)


PROGRESS = re.compile(r"scrape: (\d+)/(\d+) page\(s\)")


def test_scrape_shows_its_progress_on_a_terminal_and_nothing_through_a_pipe(bridge, site, tmp_path):
    from support.site import MANY_PAGES

    env = {"PINCHTAB_SERVER": bridge.base, "PINCHTAB_TOKEN": TOKEN}
    args = ("scrape", site.url("many/"), "--max-pages", str(MANY_PAGES), "--concurrency", "4", "--timeout", "300")
    shown = run_on_terminal(*args, home=tmp_path, env=env)
    assert shown.returncode == 0, shown.stderr
    steps = [(int(done), int(total)) for done, total in PROGRESS.findall(shown.stderr)]
    assert steps and steps[-1] == (MANY_PAGES, MANY_PAGES), shown.stderr
    assert [d for d, _ in steps] == sorted(d for d, _ in steps) and any(0 < d < MANY_PAGES for d, _ in steps)
    assert site.url("many/") in shown.stderr  # the current URL
    assert "\r\x1b[K" in shown.stderr and shown.stderr.endswith("\r\x1b[K")  # one line, wiped at the end
    assert shown.stdout.startswith(f"Scraped {MANY_PAGES} page(s) ·"), shown.stdout

    piped = run_cli(*args, home=tmp_path, env=env, timeout_s=180)
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == "" and same_report(piped.stdout, shown.stdout), failures(piped.stdout + shown.stdout)

    quiet = run_on_terminal(*args, "--quiet", home=tmp_path, env=env)
    assert quiet.returncode == 0, quiet.stderr
    assert not PROGRESS.search(quiet.stderr) and "\x1b" not in quiet.stderr, repr(quiet.stderr)
    assert same_report(quiet.stdout, shown.stdout), failures(quiet.stdout + shown.stdout)
    assert not PROGRESS.search(shown.stdout + piped.stdout + quiet.stdout)


def test_record_scrape_compare_and_the_rest_of_storage_state_and_clipboard(cli, site):
    tab = cli.ok("nav", site.url("capture_ticker.html")).strip()
    started = json.loads(cli.ok("record", "start", "cli-ticker", "--scale", "0.25"))
    assert started["format"] == "webm" and started["scale"] == 0.25 and started["tabId"] == tab, started
    wait_until(lambda: json.loads(cli.ok("record", "status"))["frames"] >= 3, 10)
    stopped = json.loads(cli.ok("record", "stop"))   # the file is made in the background, as by the original
    assert stopped["status"] == "encoding" and Path(stopped["path"]).name == "cli-ticker.webm", stopped
    saved = wait_until(lambda: (s := json.loads(cli.ok("record", "status")))["state"] == "finished" and s, 30)
    assert Path(saved["path"]).stat().st_size == saved["size"] > 0

    cli.ok("nav", site.url("form.html"))
    cli.ok("storage", "set", "colour", "teal")
    cli.ok("storage", "set", "size", "XL")
    cli.ok("storage", "delete", "colour")
    left = cli.ok("storage", "get")
    assert "XL" in left and "teal" not in left
    assert cli.ok("clipboard", "copy", "copied", "text") == "Clipboard updated\n"
    assert cli.ok("clipboard", "paste") == "copied text\n"
    cli.ok("eval", "document.cookie = 'kept=yes; path=/'")
    cli.ok("state", "save", "cli-load")
    cli.ok("cookies", "clear")
    loaded = json.loads(cli.ok("state", "load", "cli-load"))
    assert loaded["name"] == "cli-load", loaded
    assert any(c["name"] == "kept" for c in json.loads(cli.ok("cookies"))["cookies"])
    cleaned = json.loads(cli.ok("state", "clean", "--older-than", "0"))
    assert "cli-load" not in json.dumps(json.loads(cli.ok("state", "list"))), cleaned

    pages = json.loads(cli.ok("scrape", site.url("site_shop/index.html"), "--max-pages", "3", "--json"))["pages"]
    assert pages and pages[0]["url"].endswith("/site_shop/index.html") and len(pages) <= 3
    both = json.loads(cli.ok("compare", site.url("site_a11y_good.html"), site.url("site_a11y_bad.html")))
    assert both["live"]["accessibilityScore"] == 100 > both["staging"]["accessibilityScore"]


def test_session_verbs_as_the_originals_scripts_run_them(cli):
    made = json.loads(cli.ok("session", "create", "--agent-id", "e2e-agent", "--label", "e2e-test", "--json"))
    assert made["status"] == "active" and made["agentId"] == "e2e-agent" and made["sessionToken"].startswith("pts_")
    # Without --json just the token: export PINCHTAB_SESSION=$(pinchtab session create --agent-id A)
    other = cli.ok("session", "create", "--agent-id", "e2e-other").strip()
    assert other.startswith("pts_") and "\n" not in other
    assert made["id"] in cli.ok("session", "list")
    as_it = {"PINCHTAB_SESSION": made["sessionToken"]}
    info = json.loads(cli.ok("session", "info", env=as_it))
    assert info["agentId"] == "e2e-agent" and info["status"] == "active" and info["id"] == made["id"]
    # A session revokes only itself; the token revokes any.
    refused = cli("session", "revoke", made["id"], env={"PINCHTAB_SESSION": other})
    assert refused.returncode == 1 and "session_forbidden" in refused.stderr
    assert json.loads(cli.ok("session", "revoke", made["id"]))["status"] == "ok"
    gone = cli("session", "info", env=as_it)
    assert gone.returncode == 1 and "bad_session" in gone.stderr
    # No session set: the original's message and a failure.
    none = cli("session", "info")
    assert none.returncode == 1 and "no session set" in none.stderr
    assert cli("session", "create").returncode == 2


def test_port_and_token_come_from_the_config_file(cli, bridge, tmp_path):
    config = tmp_path / ".pinchtab" / "config.json"
    config.parent.mkdir(exist_ok=True)
    unset = {"PINCHTAB_SERVER": "", "PINCHTAB_TOKEN": ""}  # empty counts as unset, as for the server
    config.write_text(json.dumps({"server": {"port": bridge.port, "token": TOKEN}}))
    assert "tabs" in json.loads(cli.ok("tabs", "--json", env=unset))
    config.write_text(json.dumps({"server": {"port": bridge.port, "token": "not-it"}}))
    res = cli("tabs", env=unset)
    assert res.returncode == 1 and "bad_token" in res.stderr


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
    # An agent session (the MCP server's client too) stands in for the token.
    agent = connect(None, agent_id="mcp", source="mcp", env={**home, "PINCHTAB_SESSION": "ses-1"})
    assert agent.authorization == "Session ses-1"


def test_nav_starts_the_local_server_when_none_answers(tmp_path, site, monkeypatch, capsys):
    port = free_port()
    home = tmp_path
    (home / ".pinchtab").mkdir()
    start = 20000 + (port % 400) * 100
    (home / ".pinchtab" / "config.json").write_text(json.dumps({
        "multiInstance": {"instancePortStart": start, "instancePortEnd": start + 99}}))
    env = {"PINCHTAB_SERVER": f"http://127.0.0.1:{port}"}
    res = run_cli("nav", site.url("form.html"), home=home, env=env, timeout_s=120)
    pid = re.search(r"\(pid (\d+)\)", res.stderr)
    try:
        assert res.returncode == 0, res.stderr
        assert TAB_ID.fullmatch(res.stdout.strip()) and "Started pinchtab server" in res.stderr
        title = requests.get(f"http://127.0.0.1:{port}/title", params={"tabId": res.stdout.strip()}, timeout=30)
        assert title.json()["title"] == "E2E Test - Form"
        # Server mode's own verbs, against the server nav started.
        cli = in_process(monkeypatch, capsys, {"HOME": str(home), "XDG_STATE_HOME": str(home / "state"), **env})
        instances = cli("instances", "--json")
        assert instances.returncode == 0, instances.stderr
        inst = json.loads(instances.stdout)[0]
        assert inst["status"] == "running"
        assert re.search(r"^ID +PROFILENAME +PORT", cli("instances").stdout)
        assert cli("instance", "logs", inst["id"]).returncode == 0
        second = json.loads(cli("instance", "start", "--mode", "headless").stdout)
        assert second["id"] != inst["id"] and second["status"] in ("starting", "running"), second
        nav2 = cli("instance", "navigate", second["id"], site.url("table.html"))
        assert nav2.returncode == 0, nav2.stderr
        opened = json.loads(nav2.stdout)
        assert TAB_ID.fullmatch(opened["tabId"]), opened
        assert json.loads(cli("instance", "stop", second["id"]).stdout)["status"] in ("stopped", "stopping")
        gone = {i["id"]: i["status"] for i in json.loads(cli("instances", "--json").stdout)}
        assert gone.get(second["id"], "stopped") == "stopped" and gone[inst["id"]] == "running"
        assert cli("title").stdout == "E2E Test - Form\n"  # the tab nav remembered
        token = cli("session", "create", "--agent-id", "bot-1", "--print-token").stdout.strip()
        assert token.startswith("pts_")
        assert cli("nav", site.url("table.html"), env={"PINCHTAB_SESSION": token}).returncode == 0
        assert cli("title", env={"PINCHTAB_SESSION": token}).stdout == "Orders\n"
        sessions = json.loads(cli("session", "list").stdout)
        assert [s["agentId"] for s in sessions] == ["bot-1"]
        assert json.loads(cli("session", "revoke", sessions[0]["id"]).stdout)["status"] == "ok"
        events = json.loads(cli("activity").stdout)["events"]
        assert any(e.get("path") == "/navigate" for e in events)
    finally:
        if pid:
            os.killpg(int(pid.group(1)), signal.SIGTERM)
            wait_until(lambda: not listening("127.0.0.1", port), timeout_s=45, interval_s=0.1)


@pytest.fixture
def cookie_page() -> Iterator[tuple[str, list[str]]]:
    """A page on its own origin that keeps the Cookie header of each request for it: what the
    browser sent, seen from the site's side."""
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.startswith("/page.html"):
                seen.append(self.headers.get("Cookie", ""))
            data = b"<!doctype html><html lang=en><title>Cookie page</title><h1>Hello</h1></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="cookie-page", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/page.html", seen
    finally:
        server.shutdown()
        server.server_close()


def test_activity_and_audit_routing_in_server_mode(site, cookie_page, tmp_path, monkeypatch, capsys):
    home = tmp_path / "server-home"
    home.mkdir()
    server = ServerProcess(home, config={"security": {"allowCookies": True}}, token=TOKEN)
    try:
        server.wait_ready()
        cli = in_process(monkeypatch, capsys, {"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
                                               "PINCHTAB_SERVER": server.base, "PINCHTAB_TOKEN": TOKEN})

        def ok(*args: str) -> str:
            res = cli(*args)
            assert res.returncode == 0, f"pinchtab {' '.join(args)} exited {res.returncode}: {res.stderr}"
            return res.stdout

        # activity prints the server's JSON; `activity tab <id>` only that tab's events.
        tab = ok("nav", site.url("form.html")).strip()
        assert json.loads(ok("snap", "--tab", tab, "--full"))["nodes"]
        assert ok("click", "--tab", tab, "#agree") == "OK\n"
        # (each call's line is written once its answer is sent, so the click's may trail the answer)
        wait_until(lambda: any(e.get("tabId") == tab and e.get("path") == f"/tabs/{tab}/action"
                               for e in json.loads(ok("activity", "--limit", "100"))["events"]), 10)
        mine = json.loads(ok("activity", "--limit", "100", "tab", tab))["events"]
        assert mine and all(e.get("tabId") == tab for e in mine)
        assert any(e.get("path") == "/snapshot" for e in mine), mine  # snap --tab calls /snapshot?tabId=
        assert json.loads(ok("activity", "--limit", "1"))["events"]

        # --cookie: a temporary instance of its own, the cookie set there first, gone afterwards.
        url, seen = cookie_page
        default = json.loads(ok("instances", "--json"))[0]
        report = json.loads(ok("audit", url, "--cookie", "test=e2evalue", "--screenshot=false", "--json"))
        assert [p["url"] for p in report["pages"]] == [url] and not report["pages"][0].get("error")
        assert seen and "test=e2evalue" in seen[-1], seen
        after = json.loads(ok("instances", "--json"))
        assert [i["id"] for i in after if i["status"] in ("starting", "running")] == [default["id"]], after
        json.loads(ok("audit", url, "--screenshot=false", "--json"))
        assert "e2evalue" not in seen[-1]  # nothing leaked into the default instance
        # --profile: the run goes to the instance of that profile.
        report = json.loads(ok("audit", url, "--profile", default["profileName"], "--screenshot=false", "--json"))
        assert len(report["pages"]) == 1 and not report["pages"][0].get("error")
        res = cli("audit", url, "--profile", "nosuch-profile")
        assert res.returncode == 1 and "no running instance for profile 'nosuch-profile'" in res.stderr
        res = cli("audit", url, "--profile", default["profileName"], "--cookie", "a=b")
        assert res.returncode == 2 and "cannot be combined" in res.stderr
        # A SeaPortal report with cookies: no URL on the command line, the cookies set for its pages.
        report_file = tmp_path / "seaportal.json"
        report_file.write_text(json.dumps([
            {"url": url, "title": "Cookie page", "profile": {"browserRecommended": True}},
            {"url": url + "?static", "profile": {"browserRecommended": False}}]))
        report = json.loads(ok("audit", "--seaportal-report", str(report_file), "--cookie", "session=e2evalue",
                               "--screenshot=false", "--json"))
        assert len(report["pages"]) == 2 and not report["pages"][0].get("error")
        assert "session=e2evalue" in seen[-1], seen
    finally:
        server.stop()


def test_the_clients_event_reader_splits_events_and_takes_a_plain_answer_as_the_result():
    from app.clients.rest import Client, ClientError

    answers = {
        "/stream": ("text/event-stream", b": open\n\nevent: progress\ndata: {\"done\":1}\n\n"
                                         b"event: result\ndata: {\"pages\":[\"\xc3\xa9\"]}\n\n"),
        "/plain": ("application/json", b'{"pages":[]}'),
        "/bad": ("application/json", b'{"error":"url required","code":"bad_request"}'),
    }

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            ctype, body = answers[self.path]
            self.send_response(400 if self.path == "/bad" else 200)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            # In two writes, split inside an event: the reader must join them.
            self.wfile.write(body[:20])
            self.wfile.flush()
            self.wfile.write(body[20:])

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="events", daemon=True).start()
    try:
        client = Client(f"127.0.0.1:{server.server_address[1]}", timeout_s=10)
        assert list(client.events("POST", "/stream", body={})) == [("progress", {"done": 1}),
                                                                  ("result", {"pages": ["é"]})]
        assert list(client.events("POST", "/plain", body={})) == [("result", {"pages": []})]
        with pytest.raises(ClientError) as refused:
            list(client.events("POST", "/bad", body={}))
        assert refused.value.status == 400 and refused.value.code == "bad_request"
    finally:
        server.shutdown()
        server.server_close()
