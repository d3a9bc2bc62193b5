"""The verbs that serve rather than call: ``pinchtab bridge``, ``server``, ``mcp`` and ``extension``.

Each loads what it serves with (the config, gunicorn, the apps, the MCP SDK) only when it runs:
declaring them must cost the browser verbs' start nothing.
"""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..config.errors import ConfigError

if TYPE_CHECKING:
    from ..config import Config

__all__ = ["build_config", "check_exposure", "register"]


def register(sub: Any) -> None:
    """Add ``bridge``, ``server``, ``mcp`` and ``extension`` to the ``pinchtab`` subparsers."""
    _bridge_parser(sub)
    _server_parser(sub)
    _mcp_parser(sub)
    _extension_parser(sub)


def _bridge_parser(sub: Any) -> None:
    p = sub.add_parser("bridge", help="serve the browser API for one browser",
                       description="Start one headless Chromium (or attach to a running Chrome) and serve "
                                   "the browser API on 127.0.0.1:9867.")
    p.add_argument("--port", type=int, help="port to listen on (default 9867, or PINCHTAB_PORT)")
    p.add_argument("--bind", help="address to listen on (default 127.0.0.1, or PINCHTAB_BIND)")
    p.add_argument("--cdp-url", help="attach to a running Chrome (http://host:port or ws://...) instead of launching")
    p.add_argument("--headed", action="store_true", help="show the browser window")
    p.add_argument("--chrome", help="browser binary (default: browser.binary, CHROME_BIN, chromium on PATH)")
    p.add_argument("--profile", help="run the browser on this saved profile (created if new; cookies, storage "
                                     "and sign-ins persist between runs)")
    p.add_argument("--extension", action="store_true",
                   help="drive your own Chrome through the Pinchtab extension instead of launching a browser")
    p.add_argument("--extension-port", type=int, default=19222,
                   help="the port the extension connects to, on 127.0.0.1 (default 19222)")
    p.set_defaults(run=run_bridge)


def _extension_parser(sub: Any) -> None:
    p = sub.add_parser("extension", help="the Pinchtab extension: where it is, its pairing token",
                       description="`path` prints the extension's folder (load it unpacked in chrome://extensions); "
                                   "`pair` prints what to set in its options: the pairing token (created on first "
                                   "use) and the address it connects to, the extension port (not the API's).")
    p.add_argument("action", choices=("path", "pair"))
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                   help="pair: print {pairingToken, extensionUrl}")
    p.set_defaults(run=run_extension)


def run_extension(args: argparse.Namespace) -> int:
    import json
    from importlib import resources

    from ..config import load_config
    from ..extension import pairing
    from ..extension.daemon import default_port

    if args.action == "path":
        print(resources.files("app.extension").joinpath("static"))
        return 0
    token = pairing.load_or_create(load_config().server.state_dir)
    # The extension's own port (the daemon's, or `bridge --extension`'s), never the API's: a person
    # pasting the API address into the options page would pair with nothing.
    url = f"http://127.0.0.1:{default_port()}"
    if getattr(args, "json", False):
        print(json.dumps({"pairingToken": token, "extensionUrl": url}))
    else:
        print(f"pairing token:      {token}")
        print(f"extension address:  {url}  (the extension port, 19222 unless --extension-port or "
              "SAK_BROWSER_PORT says otherwise; not the API port)")
        print("Paste both into the extension's options (its \"Extension port address\" and \"Pairing token\").")
    return 0


def _server_parser(sub: Any) -> None:
    p = sub.add_parser("server", help="serve the browser API over many browser instances, with a dashboard "
                                      "(the default command)",
                       description="Start the server on 127.0.0.1:9867: it launches `pinchtab bridge` instances "
                                   "(ports multiInstance.instancePortStart..End), forwards the browser API to them, "
                                   "and serves /instances, /profiles, /api/events and /dashboard.")
    p.add_argument("--port", type=int, help="port to listen on (default 9867, or PINCHTAB_PORT)")
    p.add_argument("--bind", help="address to listen on (default 127.0.0.1, or PINCHTAB_BIND)")
    p.add_argument("--headed", action="store_true", help="instances show their browser windows")
    p.add_argument("--chrome", help="browser binary (default: browser.binary, CHROME_BIN, chromium on PATH)")
    p.add_argument("--strategy", choices=("always-on", "simple", "simple-autorestart", "explicit", "no-instance"),
                   help="always-on (default) launches a default instance at start; explicit and no-instance do not")
    p.set_defaults(run=run_server)


def run_server(args: argparse.Namespace) -> int:
    from ..config import load_config
    from ..serving.gunicorn_apps import ServerApplication

    overrides = {
        "server.port": args.port,
        "server.bind": args.bind,
        "browser.binary": args.chrome,
        "instanceDefaults.mode": "headed" if args.headed else None,
        "multiInstance.strategy": args.strategy,
    }
    config = load_config(overrides={k: v for k, v in overrides.items() if v is not None})
    check_exposure(config)
    ServerApplication(config).run()
    return 0


def _mcp_parser(sub: Any) -> None:
    p = sub.add_parser("mcp", help="serve the browser API as MCP tools over stdio",
                       description="Speak MCP on stdin/stdout (for agent hosts), calling a running pinchtab "
                                   "server's REST API. Logs go to stderr. Exits when stdin closes.")
    p.add_argument("--server", metavar="URL", default=argparse.SUPPRESS,
                   help="the pinchtab server (default: $PINCHTAB_SERVER, else 127.0.0.1 and the config's port); "
                        "the token comes from PINCHTAB_TOKEN or the config")
    p.add_argument("--tools", choices=("core", "all"), default=argparse.SUPPRESS,
                   help="the tools the tool list shows: core (the most used, fewer tokens each turn) or all; "
                        "any tool answers when called by name (default: $PINCHTAB_MCP_TOOLS, else core)")
    p.set_defaults(run=run_mcp)


def run_mcp(args: argparse.Namespace) -> int:
    from . import mcp_server  # the MCP SDK loads only for this command

    return mcp_server.run(getattr(args, "server", None), getattr(args, "tools", None))


def build_config(args: argparse.Namespace) -> Config:
    from ..config import load_config

    overrides = {
        "server.port": args.port,
        "server.bind": args.bind,
        "browser.cdpUrl": args.cdp_url,
        "browser.binary": args.chrome,
        "instanceDefaults.mode": "headed" if args.headed else None,
        "instanceDefaults.profile": args.profile,
    }
    return load_config(overrides={k: v for k, v in overrides.items() if v is not None})


def check_exposure(config: Config) -> None:
    """Refuse to serve beyond loopback without a token: anyone could drive the browser."""
    from ..config import is_loopback

    if not config.server.token and not is_loopback(config.server.bind):
        raise ConfigError("server.bind", f"binding {config.server.bind} needs a token: set server.token or "
                                         "PINCHTAB_TOKEN (anyone who reaches the port could drive the browser)")


def run_bridge(args: argparse.Namespace) -> int:
    from ..serving.gunicorn_apps import BridgeApplication

    config = build_config(args)
    check_exposure(config)
    check_profile(config)
    BridgeApplication(config, extension_port=args.extension_port if args.extension else None).run()
    return 0


def check_profile(config: Config) -> None:
    """Fail fast, with the holder's name, when the profile is in use (the worker locks it for real)."""
    from profiles import ProfileError

    from ..api.browser_state import BrowserState

    probe = BrowserState(config)
    try:
        probe.lock_profile(owner="pinchtab-cli-check")
    except ProfileError as exc:
        raise ConfigError("instanceDefaults.profile", str(exc)) from None
    finally:
        if probe.profile_lock is not None:
            probe.profile_lock.release()
