"""``pinchtab`` housekeeping through its entry point: help, version, completion, config, security, daemon,
and the menu plain ``pinchtab`` opens on a terminal. No browser needed; each test has its own HOME."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.clients import cli as cli_module
from app.clients.completion import verb_table


class Result:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> Any:
    for name in list(os.environ):
        if name.startswith(("PINCHTAB_", "BRIDGE_", "XDG_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> Result:
        capsys.readouterr()
        try:
            code = cli_module.main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        out, err = capsys.readouterr()
        return Result(code, out, err)

    def ok(*args: str) -> str:
        res = run(*args)
        assert res.returncode == 0, f"pinchtab {' '.join(args)} exited {res.returncode}: {res.stderr}"
        return res.stdout

    run.ok = ok  # type: ignore[attr-defined]
    run.home = tmp_path  # type: ignore[attr-defined]
    return run


def _parser() -> Any:
    captured: dict[str, Any] = {}
    real = cli_module.argparse.ArgumentParser.parse_args

    def grab(self: Any, *a: Any, **k: Any) -> Any:
        captured.setdefault("parser", self)
        raise SystemExit(0)

    cli_module.argparse.ArgumentParser.parse_args = grab  # type: ignore[method-assign]
    try:
        with pytest.raises(SystemExit):
            cli_module.main(["version"])
    finally:
        cli_module.argparse.ArgumentParser.parse_args = real  # type: ignore[method-assign]
    return captured["parser"]


ISSUE_VERBS = ("nav goto navigate quick snap click dblclick type fill press hover focus select check uncheck "
               "scroll drag mouse keyboard dialog text title url html styles value attr box visible enabled "
               "checked count find wait eval screenshot annotate capture pdf download upload network route "
               "unroute console errors cookies storage state clipboard cache record set frame tab tabs close "
               "instances instance profiles health activity audit compare scrape config security session "
               "dashboard daemon doctor completion version help server bridge mcp").split()


def test_help_lists_every_verb_with_one_line_each(cli):
    out = cli.ok("help")
    listed = {m.group(1): m.group(2) for m in re.finditer(r"^  (\S+) +(\S.*)$", out, re.M)}
    aliases = {a for v in listed.values() for a in re.findall(r"\b(\w+)\b", v.split("(also:")[-1])} \
        if listed else set()
    missing = [v for v in ISSUE_VERBS if v not in listed and v not in aliases]
    assert not missing, missing
    assert "nav [-h]" in cli.ok("help", "nav") or "usage: pinchtab nav" in cli.ok("help", "nav")
    assert cli("help", "nosuch").returncode == 2
    snap = cli.ok("snap", "--help")
    assert "--max-tokens" in snap and "--full" in snap and "--compact" in snap and "--depth" in snap
    assert "--snap-diff" in cli.ok("click", "--help") and "--text" in cli.ok("press", "--help")


def test_version_and_dash_dash_version(cli):
    out = cli.ok("version")
    assert re.fullmatch(r"pinchtab \d+\.\d+\.\d+\n", out)
    assert cli.ok("--version") == out


def test_completion_scripts_come_from_the_parser_table(cli):
    table = {v.name: v for v in verb_table(_parser())}
    bash = cli.ok("completion", "bash")
    zsh = cli.ok("completion", "zsh")
    for name in ("nav", "snap", "storage", "config", "daemon"):
        assert name in table
        assert re.search(rf"^\s+{name}(\|[\w-]+)*\) opts=", bash, re.M), name
        assert f"'{name}:" in zsh
    assert "--snap-diff" in re.search(r"^\s+nav\|.*$", bash, re.M).group(0)
    assert "get set delete clear" in re.search(r"^\s+storage\) opts='(.*)'", bash, re.M).group(1)
    for verb, flags in (("storage", ("--key", "--all")), ("state", ("--name", "--older-than")),
                        ("dashboard", ("--no-open", "--port")), ("config", ("--print", "--json")),
                        ("audit", ("--output-dir", "--cookie", "--no-screenshot"))):
        opts = re.search(rf"^\s+{verb}\) opts='(.*)'", bash, re.M).group(1).split()
        assert set(flags) <= set(opts), (verb, opts)
    assert "new close handoff resume handoff-status" in re.search(r"^\s+tab\) opts='(.*)'", bash, re.M).group(1)
    script = cli.home / "pt.bash"
    script.write_text(bash)
    # What bash offers after the words typed (the last one being completed).
    for typed, offered in ((["stor"], ["storage"]), (["snap", "--ma"], ["--max-tokens"]),
                           (["--tab", "X", "sn"], ["snap", "snapshot"]), (["--ag"], ["--agent-id"])):
        probe = subprocess.run(["bash", "-c", f"source {script}; COMP_WORDS=(pinchtab {' '.join(typed)}); "
                                              f"COMP_CWORD={len(typed)}; _pinchtab; echo ${{COMPREPLY[@]}}"],
                               capture_output=True, text=True, timeout=10)
        assert probe.stdout.split() == offered, (typed, probe.stderr)


def zsh_offers(function: Path, *typed: str) -> list[str]:
    """What the zsh completion function hands zsh after ``pinchtab <typed>``: the candidates it
    passes to _describe and compadd (which zsh then filters by the prefix typed)."""
    stubs = ('_describe() { print -rl -- "${(@P)2%%:*}" }; compadd() { shift; print -rl -- "$@" }; '
             f"words=(pinchtab {' '.join(typed)}); CURRENT={len(typed) + 1}; PREFIX=$words[CURRENT]; source {function}")
    probe = subprocess.run(["zsh", "-f", "-c", stubs], capture_output=True, text=True, timeout=10)
    assert probe.returncode == 0 and not probe.stderr, probe.stderr
    return probe.stdout.split()


def test_zsh_completion_runs_in_zsh_and_finds_the_verb_past_global_options(cli):
    function = cli.home / "_pinchtab"
    function.write_text(cli.ok("completion", "zsh"))
    assert subprocess.run(["zsh", "-n", str(function)], timeout=10).returncode == 0
    verbs = zsh_offers(function, "")
    assert {"nav", "snap", "storage", "daemon"} <= set(verbs) and "--tab" not in verbs
    for typed in (("snap", ""), ("--tab", "X", "snap", "--ma"), ("--json", "snap", "")):
        offered = zsh_offers(function, *typed)
        assert "--max-tokens" in offered and "--interactive" in offered and "storage" not in offered, typed
    assert zsh_offers(function, "storage", "")[:4] == ["get", "set", "delete", "clear"]
    assert "--agent-id" in zsh_offers(function, "--a")


def fake_clipboard(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``wl-copy`` first on PATH that keeps what it is given in a file: the desktop clipboard, seen."""
    tools = home / "clip-bin"
    tools.mkdir(exist_ok=True)
    tool = tools / "wl-copy"
    tool.write_text(f"#!/bin/sh\ncat > {home / 'clipboard.txt'}\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    return home / "clipboard.txt"


def test_config_commands_validate_before_they_write(cli, monkeypatch):
    path = Path(cli.ok("config", "path").strip())
    assert path == cli.home / ".pinchtab" / "config.json" and not path.exists()
    assert cli.ok("config", "validate").startswith("Config file is valid: ")
    assert cli.ok("config", "init").startswith("Wrote ")
    token = json.loads(path.read_text())["server"]["token"]
    assert len(token) >= 24
    assert cli("config", "init").returncode == 1  # never overwrites without --force
    assert cli.ok("config", "set", "server.port", "9911") == "Set server.port = 9911\n"
    assert cli.ok("config", "get", "server.port") == "9911\n"
    before = path.read_text()
    res = cli("config", "set", "server.port", "not-a-port")
    assert res.returncode == 2 and "server.port" in res.stderr and path.read_text() == before
    res = cli("config", "set", "server.nosuchkey", "1")
    assert res.returncode == 2 and "no such key" in res.stderr
    cli.ok("config", "patch", '{"security": {"allowEvaluate": true}}')
    assert cli.ok("config", "get", "security.allowEvaluate") == "true\n"
    assert cli.ok("config", "get", "server.port") == "9911\n"  # a patch merges
    # A list setting takes (and reads back as) comma-separated values, or JSON.
    assert cli.ok("config", "set", "security.attach.allowHosts", "127.0.0.1, localhost") == \
        "Set security.attach.allowHosts = 127.0.0.1,localhost\n"
    assert json.loads(path.read_text())["security"]["attach"]["allowHosts"] == ["127.0.0.1", "localhost"]
    assert cli.ok("config", "get", "security.attach.allowHosts") == "127.0.0.1,localhost\n"
    cli.ok("config", "set", "security.attach.allowHosts", '["::1"]')
    assert cli.ok("config", "get", "security.attach.allowHosts") == "::1\n"
    # A string setting keeps digits as text; a secret is never printed back.
    assert cli.ok("config", "set", "server.token", "12345678") == "Set server.token = ***\n"
    assert json.loads(path.read_text())["server"]["token"] == "12345678"
    assert cli.ok("config", "get", "server.token") == "***\n"
    assert json.loads(cli.ok("--json", "config", "show")) == json.loads(cli.ok("config", "show", "--json"))
    shown = json.loads(cli.ok("config", "show", "--json"))
    assert shown["server"]["port"] == 9911 and shown["server"]["token"] != "12345678"  # masked
    overview = cli.ok("config", "show")
    assert re.search(r"^Server\n  port: +9911$", overview, re.M) and re.search(r"^Browser$", overview, re.M)
    assert re.search(r"^Instance Defaults$", overview, re.M) and "12345678" not in overview
    assert cli.ok("config") == overview  # `config` alone shows it
    assert re.fullmatch(r"https://raw\.githubusercontent\.com/pinchtab/pinchtab/main/schema/config\.json\n",
                        cli.ok("config", "schema"))
    schema = json.loads(cli.ok("config", "schema", "--print"))
    assert schema["$id"] == cli.ok("config", "schema").strip()
    assert schema["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert schema["properties"]["server"]["properties"]["port"]["type"] == "integer"
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temp files left
    path.write_text(json.dumps({"server": {"port": 99999}, "multiInstance": {"strategy": "magical"}}))
    res = cli("config", "validate")
    assert res.returncode == 2 and res.stdout.startswith(f"Config file has an error: {path}\n  - server.port")


def test_config_token_goes_to_the_clipboard_never_to_the_screen(cli, monkeypatch):
    cli.ok("config", "init")
    cli.ok("config", "set", "server.token", "tok-secret-123")
    clipboard = fake_clipboard(cli.home, monkeypatch)
    out = cli.ok("config", "token")
    assert out == "Token copied to clipboard.\n" and clipboard.read_text() == "tok-secret-123"
    monkeypatch.setenv("PATH", str(cli.home / "no-tools"))  # no clipboard tool at all
    out = cli.ok("config", "token")
    assert out.startswith("Clipboard unavailable; token not shown") and "tok-secret-123" not in out
    cli.ok("config", "set", "server.token", "")
    res = cli("config", "token")
    assert res.returncode == 1 and "token is empty" in res.stderr and res.stdout == ""


def test_config_commands_on_a_named_file_that_is_missing(cli, monkeypatch):
    named = cli.home / "elsewhere" / "config.json"
    named.parent.mkdir()
    monkeypatch.setenv("PINCHTAB_CONFIG", str(named))
    out = cli.ok("config", "show")  # the defaults, said to be so
    assert out.startswith(f"Current configuration (env > file > defaults): {named} (not present: the defaults)")
    assert re.search(r"^  port: +9867$", out, re.M)
    assert cli.ok("config", "get", "server.port") == "9867\n"
    res = cli("config", "validate")  # the server would refuse it: so does validate
    assert res.returncode == 2 and "config file not found" in res.stdout
    assert cli.ok("config", "set", "server.port", "8080") == "Set server.port = 8080\n"
    assert json.loads(named.read_text()) == {"server": {"port": 8080}}
    assert cli.ok("config", "validate") == f"Config file is valid: {named}\n"


def test_a_flat_pre_0_8_config_is_read_shown_and_edited_as_the_nested_one(cli, monkeypatch):
    flat = cli.home / "flat.json"
    flat.write_text(json.dumps({"port": "8765", "headless": False, "maxTabs": 30, "allowEvaluate": True,
                                "profileDir": str(cli.home / "profiles" / "work"), "timeoutSec": 12}))
    monkeypatch.setenv("PINCHTAB_CONFIG", str(flat))
    out = cli.ok("config", "show")
    assert re.search(r"^  port: +8765$", out, re.M) and re.search(r"^  maxTabs: +30$", out, re.M), out
    assert cli.ok("config", "get", "instanceDefaults.mode") == "headed\n"
    assert cli.ok("config", "get", "profiles.defaultProfile") == "work\n"
    assert cli.ok("config", "get", "security.allowEvaluate") == "true\n"
    # An edit writes the nested form the flat file stood for, so nothing of it is lost.
    cli.ok("config", "set", "timeouts.navigateSec", "45")
    nested = json.loads(flat.read_text())
    assert nested["server"]["port"] == "8765" and nested["timeouts"] == {"actionSec": 12, "navigateSec": 45}
    assert "port" not in nested and cli.ok("config", "get", "server.port") == "8765\n"


def test_security_down_opens_the_main_gates_and_up_closes_them(cli):
    out = cli.ok("security", "down")
    assert re.search(r"^allowEvaluate +on$", out, re.M) and re.search(r"^allowFileScheme +off$", out, re.M)
    out = cli.ok("security", "up")
    assert re.search(r"^allowEvaluate +off$", out, re.M)
    assert "off" in cli.ok("security")


def test_daemon_install_writes_a_systemd_user_unit(cli):
    out = cli.ok("daemon", "install", "--no-reload")
    unit = cli.home / "xdg-config" / "systemd" / "user" / "pinchtab.service"
    assert out.startswith(f"Wrote {unit}")
    text = unit.read_text()
    assert re.search(r"^ExecStart=.*\bserver$", text, re.M) and "WantedBy=default.target" in text
    res = cli("daemon", "status", "--bogus")
    assert res.returncode == 2
    assert cli("daemon", "bogus-command").returncode == 2
    assert cli.ok("daemon").startswith(f"unit: {unit} (installed)\n")


def test_daemon_without_systemd_reports_and_refuses_to_install(cli, monkeypatch):
    unit = cli.home / "xdg-config" / "systemd" / "user" / "pinchtab.service"
    monkeypatch.setenv("PATH", str(cli.home / "no-tools"))  # no systemctl here
    out = cli.ok("daemon")  # alone: a summary, exit 0
    assert out == f"unit: {unit} (not installed: pinchtab daemon install)\nservice manager: systemctl not found\n"
    res = cli("daemon", "start")
    assert res.returncode == 1 and "pinchtab daemon install" in res.stderr
    res = cli("daemon", "install")
    assert res.returncode == 1 and "systemctl not found" in res.stderr and "--no-reload" in res.stderr
    assert not unit.exists()
    assert cli.ok("daemon", "uninstall").endswith("nothing to remove\n")
    cli.ok("daemon", "install", "--no-reload")
    assert cli("daemon", "restart").returncode == 1
    assert cli.ok("daemon", "uninstall") == f"Removed {unit}\n" and not unit.exists()


def test_plain_pinchtab_on_a_terminal_opens_a_menu(cli, monkeypatch):
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    answers = iter(["9", "3"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    out = cli.ok()
    assert "1) Start the server" in out and "4) Quit" in out and "Please type a number" in out
    assert re.search(r"^Server\n  port: +9867$", out, re.M)  # choice 3: the config
    answers = iter(["4"])
    assert cli().returncode == 0


def test_doctor_checks_config_browser_and_server(cli):
    from bench.processes import free_port

    server = f"127.0.0.1:{free_port()}"
    out = cli.ok("doctor", "--server", server)
    assert re.search(r"^✓ config: ", out, re.M) and re.search(r"^✓ browser: /\S+", out, re.M)
    assert re.search(rf"^- server: http://{server}: cannot reach", out, re.M)
    (cli.home / ".pinchtab").mkdir(exist_ok=True)
    (cli.home / ".pinchtab" / "config.json").write_text('{"server": {"port": "nope"}}')
    res = cli("doctor", "--server", server)
    assert res.returncode == 1 and "✗ config" in res.stdout


def test_dashboard_prints_its_url_and_puts_the_token_on_the_clipboard(cli, monkeypatch):
    from bench.processes import free_port

    server = f"127.0.0.1:{free_port()}"
    clipboard = fake_clipboard(cli.home, monkeypatch)
    monkeypatch.setenv("PINCHTAB_TOKEN", "dash-secret")
    res = cli("dashboard", "--server", server, "--no-open")
    assert res.returncode == 0 and "does not seem to be running" in res.stderr
    assert res.stdout == (f"Dashboard: http://{server}/dashboard\n  Token copied to clipboard: paste it on the login "
                          f"page.\n  Open this URL in your browser: http://{server}/dashboard\n")
    assert clipboard.read_text() == "dash-secret"
    out = cli.ok("dashboard", "--server", server, "--no-open", "--port", "4444")
    assert out.startswith("Dashboard: http://127.0.0.1:4444/dashboard\n") and server not in out
    monkeypatch.setenv("PATH", str(cli.home / "no-tools"))
    out = cli.ok("dashboard", "--server", server, "--no-open")
    assert "Token could not be copied to clipboard" in out and "dash-secret" not in out
