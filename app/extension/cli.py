"""``pinchtab ext daemon`` and ``pinchtab ext <command> [args...]``.

The commands and their argument order are the original CLI's (``browser.js``): ``navigate <url>
[tabId]``, ``query <selector> [mode] [optionsJSON]``, ``click <selector> [index] [tabId]``, ``type
<selector> <text> [tabId]``, ``screenshot [tabId]``, ``get_tabs``, ``open_tab <url> [active]``,
``close_tab <tabId>``, and ``get_session``. The answer ``{requestId, success, data | error}`` goes to
stdout as JSON; the status is 1 when it says ``success: false`` (the original exits 0), and 1 with a
message on stderr when the daemon is not there or the extension has not been heard from.
"""
from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import load_config
from .client import DaemonClient, NoAnswer
from .commands import TIMEOUT_ERROR, Answer
from .errors import ExtensionError, NoDaemon

HEALTH_WAIT_S = 3.0
ANSWER_GRACE_S = 5.0          # beyond the daemon's command timeout, which it answers by
DEFAULT_TIMEOUT_S = 30.0      # when the daemon does not say its own (the original daemon)

DataBuilder = Callable[[argparse.Namespace], dict[str, Any]]


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return value


def _port(text: str) -> int:
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError("must be 0..65535")
    return port


# The data of each command, as the original CLI builds it.
COMMANDS: dict[str, tuple[str, DataBuilder]] = {
    "navigate": ("load a URL in a tab (default: the active one) and wait for it",
                 lambda a: {"url": a.url, "tabId": a.tabId}),
    "query": ("read the page: list, text, value, exists, page_text or html",
              lambda a: {"selector": a.selector, "mode": a.mode or "list", "options": a.options or {}}),
    "click": ("click the index-th element matching a selector",
              lambda a: {"selector": a.selector, "index": a.index or 0, "tabId": a.tabId}),
    "type": ("set a field's value (input and change events)",
             lambda a: {"selector": a.selector, "text": a.text, "tabId": a.tabId}),
    "screenshot": ("capture the visible part of a tab (PNG data URL)", lambda a: {"tabId": a.tabId}),
    "get_tabs": ("list every tab", lambda a: {}),
    "open_tab": ("open a tab", lambda a: {"url": a.url, "active": a.active != "false"}),
    "close_tab": ("close a tab", lambda a: {"tabId": a.tabId}),
    "get_session": ("the tabs the extension opened and the active one", lambda a: {}),
}


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``pinchtab ext ...``."""
    socket_opt = argparse.ArgumentParser(add_help=False)
    socket_opt.add_argument("--socket", metavar="PATH", default=argparse.SUPPRESS,
                            help="the daemon's Unix socket (default: $SAK_BROWSER_SKILL_DIR/browser.sock, else "
                                 "$SAK_HOME/browser/browser.sock, SAK_HOME defaulting to ~/.sovereign-ai)")
    p = sub.add_parser("ext", parents=[socket_opt], help="drive the Chrome a person uses, through an extension",
                       description="Extension mode: a daemon the browser extension polls for commands, and the "
                                   "commands (the original browser.js CLI's), sent to it over a Unix socket.")
    esub = p.add_subparsers(dest="ext_command", metavar="COMMAND", required=True)

    d = esub.add_parser("daemon", parents=[socket_opt], help="run the daemon the extension polls",
                        description="Serve the extension's HTTP protocol on 127.0.0.1 (GET /poll, POST /response, "
                                    "GET /health) and the clients' Unix socket, until SIGINT or SIGTERM.")
    d.add_argument("--port", type=_port, help="HTTP port (default 19222, or $SAK_BROWSER_PORT)")
    d.add_argument("--bind", default="127.0.0.1", help="HTTP address: loopback only (default 127.0.0.1)")
    d.set_defaults(run=run_daemon)

    def command(name: str, *positionals: tuple[str, dict[str, Any]]) -> None:
        summary, build = COMMANDS[name]
        c = esub.add_parser(name, parents=[socket_opt], help=summary,
                            description=summary[0].upper() + summary[1:] + ".")
        for arg, options in positionals:
            c.add_argument(arg, **options)
        c.set_defaults(run=run_command, build=build)

    tab = ("tabId", {"nargs": "?", "type": int, "help": "a tab id from get_tabs (default: the active tab)"})
    command("navigate", ("url", {}), tab)
    command("query", ("selector", {}),
            ("mode", {"nargs": "?", "help": "list (default), text, value, exists, page_text or html"}),
            ("options", {"nargs": "?", "type": _json_object, "metavar": "optionsJSON"}))
    command("click", ("selector", {}), ("index", {"nargs": "?", "type": int, "help": "default 0"}), tab)
    command("type", ("selector", {}), ("text", {}), tab)
    command("screenshot", tab)
    command("get_tabs")
    command("open_tab", ("url", {}), ("active", {"nargs": "?", "help": "false opens it in the background"}))
    command("close_tab", ("tabId", {"type": int}))
    command("get_session")


def socket_path(args: argparse.Namespace) -> Path:
    from .socket_server import default_socket_path

    given = getattr(args, "socket", None)
    return Path(given).expanduser() if given else default_socket_path()


def run_daemon(args: argparse.Namespace) -> int:
    from .daemon import Daemon, default_port

    config = load_config()
    port = args.port if args.port is not None else default_port()
    daemon = Daemon(config, socket_path=socket_path(args), port=port, bind=args.bind)
    try:
        return daemon.run()
    except ExtensionError as exc:
        print(f"pinchtab ext daemon: {exc}", file=sys.stderr)
        return 1


def run_command(args: argparse.Namespace) -> int:
    command = {"type": args.ext_command, "data": args.build(args), "requestId": f"cli-{uuid.uuid4().hex[:12]}"}
    try:
        with DaemonClient(socket_path(args)) as client:
            health = _health(client)
            timeout_s = float(health.get("commandTimeoutSec") or DEFAULT_TIMEOUT_S) if health else DEFAULT_TIMEOUT_S
            answer = client.call(command, timeout_s + ANSWER_GRACE_S)
            if _timed_out(answer):
                absent = extension_absence(_health(client), timeout_s)
                if absent:
                    print(f"pinchtab ext: {absent}", file=sys.stderr)
    except NoDaemon as exc:
        print(f"pinchtab ext: {exc}", file=sys.stderr)
        return 1
    except (NoAnswer, OSError) as exc:
        print(f"pinchtab ext: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(answer, indent=2, ensure_ascii=False))
    return 0 if answer.get("success") is True else 1


def _health(client: DaemonClient) -> dict[str, Any] | None:
    """The daemon's health, or None from a daemon that does not answer it (the original's)."""
    from .daemon import HEALTH_TYPE

    try:
        answer = client.call({"type": HEALTH_TYPE, "data": {}, "requestId": f"cli-health-{uuid.uuid4().hex[:8]}"},
                             HEALTH_WAIT_S)
    except NoAnswer:
        return None
    data = answer.get("data")
    return data if answer.get("success") is True and isinstance(data, dict) else None


def _timed_out(answer: Answer) -> bool:
    error = answer.get("error")
    return answer.get("success") is False and isinstance(error, str) and error.startswith(TIMEOUT_ERROR)


def extension_absence(health: dict[str, Any] | None, timeout_s: float) -> str | None:
    """Why the extension is not there, from the daemon's health (None: it polled lately, or unknown)."""
    if not health:
        return None
    ago_ms = health.get("extensionSeenAgoMs")
    if ago_ms is None:
        return ("the extension is not connected: it has not polled the daemon since it started "
                "(is Chrome running with the extension, on the daemon's port?)")
    if ago_ms > timeout_s * 1000:
        return f"the extension is not connected: last heard from {ago_ms / 1000:.0f} s ago (is Chrome running?)"
    return None
