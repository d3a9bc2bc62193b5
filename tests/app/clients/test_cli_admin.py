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


def test_config_commands_validate_before_they_write(cli):
    path = Path(cli.ok("config", "path").strip())
    assert path == cli.home / ".pinchtab" / "config.json" and not path.exists()
    assert cli.ok("config", "validate").startswith("OK:")
    assert cli.ok("config", "init").startswith("Wrote ")
    token = cli.ok("config", "token").strip()
    assert len(token) >= 24 and json.loads(path.read_text())["server"]["token"] == token
    assert cli("config", "init").returncode == 1  # never overwrites without --force
    assert cli.ok("config", "set", "server.port", "9911") == "server.port = 9911\n"
    assert cli.ok("config", "get", "server.port") == "9911\n"
    before = path.read_text()
    res = cli("config", "set", "server.port", "not-a-port")
    assert res.returncode == 2 and "server.port" in res.stderr and path.read_text() == before
    res = cli("config", "set", "server.nosuchkey", "1")
    assert res.returncode == 2 and "no such key" in res.stderr
    cli.ok("config", "patch", '{"security": {"allowEvaluate": true}}')
    assert cli.ok("config", "get", "security.allowEvaluate") == "true\n"
    assert cli.ok("config", "get", "server.port") == "9911\n"  # a patch merges
    shown = json.loads(cli.ok("config", "show"))
    assert shown["server"]["port"] == 9911 and shown["server"]["token"] != token  # masked
    schema = json.loads(cli.ok("config", "schema"))
    assert schema["properties"]["server"]["properties"]["port"]["type"] == "integer"
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temp files left


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


def test_daemon_without_a_unit_says_how_to_install_it(cli):
    res = cli("daemon", "start")
    assert res.returncode == 1 and "pinchtab daemon install" in res.stderr


def test_plain_pinchtab_on_a_terminal_opens_a_menu(cli, monkeypatch):
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    answers = iter(["9", "3"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    out = cli.ok()
    assert "1) Start the server" in out and "4) Quit" in out and "Please type a number" in out
    assert json.loads(out[out.index("{"):])["server"]["port"] == 9867  # choice 3: the config
    answers = iter(["4"])
    assert cli().returncode == 0


def test_doctor_checks_config_browser_and_server(cli):
    from bench.processes import free_port

    server = f"127.0.0.1:{free_port()}"
    out = cli.ok("doctor", "--server", server)
    assert re.search(r"^✓ config: ", out, re.M) and re.search(r"^✓ browser: /\S+", out, re.M)
    assert re.search(rf"^- server: http://{server}: cannot reach", out, re.M)
    assert cli.ok("dashboard", "--server", server) == f"http://{server}/dashboard\n"
    (cli.home / ".pinchtab").mkdir(exist_ok=True)
    (cli.home / ".pinchtab" / "config.json").write_text('{"server": {"port": "nope"}}')
    res = cli("doctor", "--server", server)
    assert res.returncode == 1 and "✗ config" in res.stdout
