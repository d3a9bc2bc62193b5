"""The housekeeping verbs of ``pinchtab``: ``help``, ``version``, ``completion``, ``doctor``,
``dashboard``, ``daemon [install|uninstall|start|stop|restart|status]`` (a systemd user unit), and the
small menu that plain ``pinchtab`` opens on a terminal.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import os
import shlex
import shutil
import subprocess
import sys
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..config import ConfigError, load_config
from ..web.files import write_atomic
from . import completion
from .cli_config import config_path, copy_to_clipboard
from .cli_server import listening
from .rest import ClientError

__all__ = ["menu", "register", "version"]

UNIT_NAME = "pinchtab.service"
_SYSTEMCTL_TIMEOUT_S = 30.0


def version() -> str:
    try:
        return importlib.metadata.version("pinchtab")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def help_text(parser: argparse.ArgumentParser) -> str:
    """Every verb, one line each, from the parser's own table."""
    table = completion.verb_table(parser)
    width = max(len(v.name) for v in table) + 2
    lines = [f"pinchtab {version()} - a browser API for AI agents", "",
             "Usage: pinchtab [--server URL] [--tab ID] [--json] [--agent-id ID] <command> [args]", "",
             "Commands:"]
    for v in table:
        alias = f" (also: {', '.join(v.aliases)})" if v.aliases else ""
        lines.append(f"  {v.name:<{width}}{v.summary}{alias}")
    lines += ["", "`pinchtab <command> --help` for a command's arguments and options.",
              "Environment: PINCHTAB_SERVER, PINCHTAB_TOKEN, PINCHTAB_AGENT_ID, PINCHTAB_SESSION, PINCHTAB_CONFIG."]
    return "\n".join(lines)


def _help(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        if args.topic:
            sub = completion.subparsers(parser)
            if args.topic not in sub.choices:
                print(f"Error: unknown command {args.topic!r}; `pinchtab help` lists them", file=sys.stderr)
                return 2
            sub.choices[args.topic].print_help()
            return 0
        print(help_text(parser))
        return 0

    return run


def _completion(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        print(completion.bash(parser) if args.shell == "bash" else completion.zsh(parser), end="")
        return 0

    return run


def _version(args: argparse.Namespace) -> int:
    print(f"pinchtab {version()}")
    return 0


def doctor(args: argparse.Namespace) -> int:
    """Check what pinchtab needs: the config, a browser, the state dir, the server. Exit 1 on a failure."""
    from cdp.launcher import LaunchError, find_browser

    from .cli_verbs import client_for

    failed = False

    def report(ok: bool, what: str) -> None:
        nonlocal failed
        failed = failed or not ok
        print(f"{'✓' if ok else '✗'} {what}")

    try:
        config = load_config()
        report(True, f"config: {config_path()}" + ("" if config_path().exists() else " (not present: defaults)"))
    except ConfigError as exc:
        report(False, f"config: {exc}")
        return 1
    try:
        report(True, f"browser: {find_browser(config.browser.binary)}")
    except LaunchError as exc:
        report(False, f"browser: {exc}")
    state_dir = config.server.state_dir
    try:
        state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        report(os.access(state_dir, os.W_OK), f"state dir: {state_dir}")
    except OSError as exc:
        report(False, f"state dir: {state_dir}: {exc.strerror}")
    print("- token: " + ("configured" if config.server.token else
                         "none (loopback only; `pinchtab config init` makes one)"))
    client, _ = client_for(args, timeout_s=5.0)
    try:
        health = client.get("/health")
        report(True, f"server: {client.base_url} answers ({health.get('status', '?')})")
    except ClientError as exc:
        print(f"- server: {client.base_url}: {exc.message}")  # not running is not a fault
    return 1 if failed else 0


def _dashboard(args: argparse.Namespace) -> int:
    """Print the dashboard's URL (the server the CLI talks to, ``--port`` replacing its port), put the
    token on the clipboard for the login page (never on the screen, nor in the URL), and open it on
    a desktop unless ``--no-open``."""
    from .cli_verbs import client_for

    client, _ = client_for(args)
    parts = urlsplit(client.base_url)
    host, port = parts.hostname or "127.0.0.1", parts.port or (443 if parts.scheme == "https" else 80)
    port = getattr(args, "port", None) or port
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    url = urlunsplit((parts.scheme, netloc, "/dashboard", "", ""))
    if not listening(host, port):
        print("Warning: the dashboard does not seem to be running; start it with: pinchtab server (or "
              "pinchtab daemon start)", file=sys.stderr)
    print(f"Dashboard: {url}")
    auth = client.authorization or ""
    if auth.startswith("Bearer "):
        copied = copy_to_clipboard(auth.removeprefix("Bearer "))
        print("  Token copied to clipboard: paste it on the login page." if copied else
              "  Token could not be copied to clipboard (it is not shown here; see the config's server.token).")
    if not getattr(args, "no_open", False) and sys.stdout.isatty() and webbrowser.open(url):
        print("  Opened in your browser.")
    else:
        print(f"  Open this URL in your browser: {url}")
    return 0


# --------------------------------------------------------------------------
# daemon: a systemd user unit


def unit_path(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(base) / "systemd" / "user" / UNIT_NAME


def unit_text() -> str:
    """The unit: ``pinchtab server`` under the user's manager, restarted when it fails."""
    exe = shutil.which("pinchtab")
    command = shlex.join([exe, "server"] if exe else [sys.executable, "-m", "app.clients.cli", "server"])
    named = os.environ.get("PINCHTAB_CONFIG", "")
    env_lines = [f"Environment={shlex.quote('PINCHTAB_CONFIG=' + named)}"] if named else []
    return "\n".join([
        "[Unit]",
        "Description=Pinchtab browser API for AI agents",
        "After=network.target",
        "",
        "[Service]",
        "Type=simple",
        f"ExecStart={command}",
        *env_lines,
        "Restart=on-failure",
        "RestartSec=2",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ])


def systemd_missing() -> str:
    """Why there is no systemd service manager to run the unit ("" when there is one): no
    ``systemctl``, or a machine (a container, say) not booted with systemd."""
    if not shutil.which("systemctl"):
        return "systemctl not found"
    if not Path("/run/systemd/system").is_dir():  # what sd_booted() checks
        return "this system was not booted with systemd"
    return ""


def _systemctl(*words: str) -> int:
    missing = systemd_missing()
    systemctl = shutil.which("systemctl")
    if missing or not systemctl:
        print(f"Error: {missing or 'systemctl not found'}: `pinchtab daemon` needs a systemd service manager (run "
              "`pinchtab server` instead)", file=sys.stderr)
        return 1
    try:
        return subprocess.run([systemctl, "--user", *words], timeout=_SYSTEMCTL_TIMEOUT_S).returncode
    except subprocess.TimeoutExpired:
        print(f"Error: systemctl --user {' '.join(words)} did not finish in {_SYSTEMCTL_TIMEOUT_S:g} s",
              file=sys.stderr)
        return 1


def daemon(args: argparse.Namespace) -> int:
    """``daemon`` alone reports; the words act on the unit (``install`` refuses without systemd, unless
    ``--no-reload`` asks for the file only; ``uninstall`` of nothing is not an error)."""
    path = unit_path()
    if args.how is None:
        missing = systemd_missing()
        print(f"unit: {path} ({'installed' if path.exists() else 'not installed: pinchtab daemon install'})")
        print(f"service manager: {'systemd' if not missing else missing}")
        return 0
    if args.how == "install":
        missing = systemd_missing()
        if missing and not args.no_reload:
            print(f"Error: {missing}: `pinchtab daemon install` needs a systemd service manager (run "
                  "`pinchtab server` instead, or write the unit file only with --no-reload)", file=sys.stderr)
            return 1
        write_atomic(path, unit_text().encode(), mode=0o644, what=UNIT_NAME)
        print(f"Wrote {path}")
        if args.no_reload:
            return 0
        if _systemctl("daemon-reload") != 0:
            print("Warning: systemctl --user daemon-reload failed; run it yourself, then `pinchtab daemon start`",
                  file=sys.stderr)
            return 0
        print("Start it with: pinchtab daemon start (and `systemctl --user enable pinchtab` to start at login)")
        return 0
    if args.how == "uninstall":
        return _uninstall(path)
    if not path.exists():
        print(f"Error: {path} is not installed; run: pinchtab daemon install", file=sys.stderr)
        return 1
    if args.how == "status":
        print(f"unit: {path}")
        return _systemctl("status", "--no-pager", UNIT_NAME)
    return _systemctl(args.how, UNIT_NAME)


def _uninstall(path: Path) -> int:
    """Stop and disable the service (where systemd runs), then remove its unit."""
    if not path.exists():
        print(f"{UNIT_NAME} is not installed ({path}): nothing to remove")
        return 0
    if not systemd_missing() and _systemctl("disable", "--now", UNIT_NAME) != 0:
        print(f"Warning: could not stop and disable {UNIT_NAME}; removing its unit anyway", file=sys.stderr)
    path.unlink()
    if not systemd_missing():
        _systemctl("daemon-reload")
    print(f"Removed {path}")
    return 0


# --------------------------------------------------------------------------
# The menu plain `pinchtab` opens on a terminal


def menu(parser: argparse.ArgumentParser, run_server: Callable[[], int]) -> int:
    """A few choices for a person who typed ``pinchtab``: start, dashboard, config, quit."""
    def run(*words: str) -> int:
        args = parser.parse_args(list(words))
        return int(args.run(args))

    choices = (("Start the server", run_server),
               ("Open the dashboard", lambda: run("dashboard")),
               ("Show the config", lambda: run("config", "show")),
               ("Quit", lambda: 0))
    print(f"pinchtab {version()}")
    for i, (label, _) in enumerate(choices, 1):
        print(f"  {i}) {label}")
    while True:
        try:
            answer = input("Choose [1-4]: ").strip()
        except (EOFError, KeyboardInterrupt):
            print()
            return 0
        if answer.isdigit() and 1 <= int(answer) <= len(choices):
            return choices[int(answer) - 1][1]()
        print("Please type a number from 1 to 4.")


def register(sub: Any) -> None:
    """Add the housekeeping verbs; ``help`` and ``completion`` read the table of ``sub.parser``, the whole command."""
    from .cli_verbs import Verbs

    parser, common = sub.parser, Verbs(sub).common
    p = sub.add_parser("help", help="list every command, or show one command's help")
    p.add_argument("topic", nargs="?", metavar="COMMAND")
    p.set_defaults(run=_help(parser), command="help")
    p = sub.add_parser("version", help="print the version")
    p.set_defaults(run=_version, command="version")
    p = sub.add_parser("completion", help="print a shell completion script: completion bash|zsh")
    p.add_argument("shell", choices=("bash", "zsh"))
    p.set_defaults(run=_completion(parser), command="completion")
    p = sub.add_parser("doctor", help="check the config, the browser, the state dir and the server",
                       parents=[common])
    p.add_argument("what", nargs="?", choices=("browser", "browsers"), help=argparse.SUPPRESS)
    p.set_defaults(run=doctor, command="doctor")
    p = sub.add_parser("dashboard", help="print the dashboard's URL (and open it on a desktop)", parents=[common])
    p.add_argument("--no-open", action="store_true", help="only print the URL, do not open a browser")
    p.add_argument("--port", type=int, help="the dashboard's port (default: the server's)")
    p.set_defaults(run=_dashboard, command="dashboard")
    p = sub.add_parser("daemon", help="run the server as a systemd user service: "
                                      "install|uninstall|start|stop|restart|status (alone: a summary)")
    p.add_argument("how", nargs="?", choices=("install", "uninstall", "start", "stop", "restart", "status"))
    p.add_argument("--no-reload", action="store_true", help="install: do not run systemctl daemon-reload")
    p.set_defaults(run=daemon, command="daemon")
