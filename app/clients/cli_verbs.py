"""What every browser verb of ``pinchtab`` shares: the run of a verb (:class:`Ctx`: its arguments, client,
output and current tab), the connection (:func:`client_for`) and :func:`runner` that turns a failed request
into an exit status, the global options, the post-action flags (``--snap``, ``--snap-diff``, ``--text``),
and :class:`Verbs`, which declares a verb with all of that. The verbs themselves live by what they do:
:mod:`~app.clients.cli_page` (open and read the page), :mod:`~app.clients.cli_actions` (act on it),
:mod:`~app.clients.cli_capture` (screenshots, PDFs, its logs), :mod:`~app.clients.cli_tabs` (tabs and the
server); each loads only this module and its own, so a verb starts with no more than it needs.

The verbs are thin REST clients that take the original's arguments and print what it prints, so scripts
written for it run unchanged: ``tab=$(pinchtab nav URL)``, ``pinchtab snap -i``, ``pinchtab click e5 --tab $tab``.

Who calls: ``--agent-id`` (or ``PINCHTAB_AGENT_ID``) makes the calls as that agent, whose current tab
the server keeps; ``PINCHTAB_SESSION`` sends an agent session token. Without either the calls are
anonymous, and the CLI remembers its current tab itself (:mod:`app.clients.cli_state`).
Exit status: 0 on success, 1 when the server (or the way to it) answers with an error (the message
on stderr), 2 for usage and config errors, 4 when ``wait`` runs out of time (as the original).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .cli_output import Output, render_error
from .cli_state import TabState
from .rest import Client, ClientError, connect

__all__ = ["Ctx", "UsageError", "Verb", "Verbs", "add_global_options", "bool_flags", "client_for", "normalize_url",
           "print_after", "save", "server_only", "target"]

_REF = re.compile(r"(?:ref:)?(e\d+)")
_TAB_PROBE_TIMEOUT_S = 2.0


class Ctx:
    """One run of a verb: the parsed arguments, the client, the output, and the current tab."""

    def __init__(self, args: argparse.Namespace, client: Client, out: Output, tabs: TabState,
                 anonymous: bool) -> None:
        self.args = args
        self.client = client
        self.out = out
        self.tabs = tabs
        self.anonymous = anonymous
        self._tab: str | None = None
        self._resolved = False

    def opt(self, name: str, default: Any = None) -> Any:
        return getattr(self.args, name, default)

    @property
    def explicit_tab(self) -> str | None:
        return self.opt("tab") or None

    def tab(self) -> str | None:
        """``--tab``, else (anonymous callers) the remembered tab, else None: the server's choice."""
        if not self._resolved:
            self._resolved = True
            self._tab = self.explicit_tab or (self.tabs.current(self._exists) if self.anonymous else "") or None
        return self._tab

    @property
    def remembered_tab(self) -> str | None:
        """The tab this run took from the CLI's memory (not from ``--tab``), if any."""
        return self._tab if self._resolved and self.anonymous and not self.explicit_tab else None

    def _exists(self, tab_id: str) -> bool:
        try:
            self.client.request("GET", "/title", tab=tab_id, timeout_s=_TAB_PROBE_TIMEOUT_S)
        except ClientError as exc:
            return exc.status != 404  # only a definite "gone" forgets it
        return True

    def remember(self, tab_id: str | None) -> None:
        if self.anonymous and tab_id:
            self.tabs.write(tab_id)

    # The REST calls, on the verb's tab (the /tabs/{id}/... twin) unless told otherwise.
    def get(self, path: str, params: dict[str, Any] | None = None, *, on_tab: bool = True) -> Any:
        return self.client.get(path, params, tab=self.tab() if on_tab else None)

    def post(self, path: str, body: dict[str, Any] | None = None, *, on_tab: bool = True,
             params: dict[str, Any] | None = None) -> Any:
        return self.client.post(path, body, tab=self.tab() if on_tab else None, params=params)

    def raw(self, method: str, path: str, *, params: dict[str, Any] | None = None,
            body: dict[str, Any] | None = None, on_tab: bool = True) -> Any:
        return self.client.request(method, path, params=params, body=body, tab=self.tab() if on_tab else None)


Verb = Callable[[Ctx], int | None]


def add_global_options(parser: argparse.ArgumentParser) -> None:
    """``--server``, ``--tab``, ``--json``, ``--agent-id``, before or after the verb.

    The defaults are SUPPRESS so a verb's parser does not overwrite what was given before the
    verb (``pinchtab --json tabs`` and ``pinchtab tabs --json`` both work).
    """
    g = parser.add_argument_group("connection and output")
    g.add_argument("--server", metavar="URL", default=argparse.SUPPRESS,
                   help="the pinchtab server (default: $PINCHTAB_SERVER, else 127.0.0.1 and the config's port)")
    g.add_argument("--tab", metavar="ID", default=argparse.SUPPRESS,
                   help="act on this tab (default: the tab your last `nav` opened)")
    g.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                   help="print the server's full JSON answer")
    g.add_argument("--agent-id", metavar="ID", default=argparse.SUPPRESS,
                   help="call as this agent, whose current tab the server keeps (default: $PINCHTAB_AGENT_ID, "
                        "else anonymous)")


def agent_of(args: argparse.Namespace, env: dict[str, str] | None = None) -> str:
    env = dict(os.environ) if env is None else env
    return (getattr(args, "agent_id", None) or env.get("PINCHTAB_AGENT_ID") or "").strip()


def client_for(args: argparse.Namespace, *, timeout_s: float | None = None) -> tuple[Client, bool]:
    """The client the user means, and whether its calls are anonymous."""
    agent = agent_of(args)
    session = os.environ.get("PINCHTAB_SESSION", "").strip()
    kwargs: dict[str, Any] = {"timeout_s": timeout_s} if timeout_s else {}
    client = connect(getattr(args, "server", None), source="client", agent_id=agent, session=session, **kwargs)
    return client, not agent and not session


def runner(fn: Verb) -> Callable[[argparse.Namespace], int]:
    """Connect as the caller asked, run the verb, and turn a failed request into exit status 1."""

    def run(args: argparse.Namespace) -> int:
        client, anonymous = client_for(args)
        ctx = Ctx(args, client, Output(bool(getattr(args, "json", False))), TabState(), anonymous)
        try:
            return fn(ctx) or 0
        except ClientError as exc:
            print(render_error(exc), file=sys.stderr)
            remembered = ctx.remembered_tab
            if exc.status == 404 and remembered and remembered in exc.message:
                # The remembered tab is gone: forget it, so the next command targets the server's tab.
                ctx.tabs.forget(remembered)
                print("   The remembered current tab was closed; it is forgotten now. Retry, or open one "
                      "with: pinchtab nav <url>", file=sys.stderr)
            return 1
        except UsageError as exc:
            print(f"Usage: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:  # writing -o FILE, reading a file to upload
            what = getattr(exc, "what", None) or exc.filename or ""
            print(f"Error: {f'{what}: ' if what else ''}{exc.strerror or exc}", file=sys.stderr)
            return 1

    run.calls_api = True  # type: ignore[attr-defined]  # read by app.clients.cli.main
    return run


class UsageError(Exception):
    """Arguments argparse accepted that do not make a command (exit 2, like argparse's own)."""


def target(sel: str) -> dict[str, str]:
    """A ref (``e5``, ``ref:e5``) or any unified selector (CSS, ``text:``, ``xpath:``, ``role:``...)."""
    m = _REF.fullmatch(sel)
    return {"ref": m.group(1)} if m else {"selector": sel}


def normalize_url(url: str) -> str:
    """``example.com`` -> ``https://example.com``, as the original; schemes and ``about:`` kept."""
    if "://" in url or url.startswith(("about:", "data:", "file:", "chrome:")):
        return url
    host = url.split("/", 1)[0].split(":", 1)[0]
    local = host in ("localhost", "127.0.0.1", "[::1]") or host.endswith(".localhost")
    return ("http://" if local else "https://") + url


def save(ctx: Ctx, path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` (atomically; ``-`` is stdout) and say so: ``Saved page.pdf (N bytes)``."""
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    from ..web.files import write_atomic  # it loads the error shape's schemas: only for a file

    write_atomic(Path(path), data, mode=0o644, what=path)
    if ctx.out.as_json:
        ctx.out.json({"path": path, "size": len(data)})
    else:
        ctx.out.line(f"Saved {path} ({len(data)} bytes)")


# --------------------------------------------------------------------------
# After an action: --snap, --snap-diff, --text


def print_after(ctx: Ctx, tab_id: str | None, reply: dict[str, Any] | None = None) -> None:
    """The snapshot (or its diff) and the page text the post-action flags ask for."""
    mode = ctx.opt("snap") or ""
    if mode:
        snapshot = (reply or {}).get("snapshot")
        if not isinstance(snapshot, str):
            snapshot = ctx.client.request("GET", "/snapshot", tab=tab_id, params={
                "filter": "interactive", "format": "compact", "diff": mode == "diff" or None}).text
        if not (ctx.out.as_json and reply is not None and "snapshot" in reply):
            ctx.out.line(snapshot)
    if ctx.opt("text_after"):
        ctx.out.line(ctx.client.get("/text", tab=tab_id).get("text", ""))


def snap_options(p: argparse.ArgumentParser, *, text: bool) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--snap", dest="snap", action="store_const", const="compact", default="",
                   help="print the page's interactive snapshot afterwards")
    g.add_argument("--snap-diff", dest="snap", action="store_const", const="diff",
                   help="print what changed on the page afterwards")
    if text:
        p.add_argument("--text", dest="text_after", action="store_true", help="print the page's text afterwards")


# --------------------------------------------------------------------------
# The original's Go booleans


_BOOL_FLAG = re.compile(r"(--[a-z][a-z-]*)=(true|false|1|0|yes|no)", re.I)


def bool_flags(argv: list[str]) -> list[str]:
    """``--compact=false`` -> ``--no-compact`` (and ``=true`` -> ``--compact``): the original's flags
    are Go booleans that take ``=false``; argparse spells that ``--no-``."""
    out = []
    for word in argv:
        m = _BOOL_FLAG.fullmatch(word)
        if m and m.group(1) in _BOOL_FLAG_NAMES:
            on = m.group(2).lower() in ("true", "1", "yes")
            out.append(m.group(1) if on else "--no-" + m.group(1)[2:])
        else:
            out.append(word)
    return out


_BOOL_FLAG_NAMES = ("--interactive", "--compact", "--with-bounds", "--screenshot", "--network-monitor")


# --------------------------------------------------------------------------
# A call only the server answers


def server_only(ctx: Ctx, method: str, path: str, body: dict[str, Any] | None = None, *, what: str = "") -> Any:
    """A call only ``pinchtab server`` answers (instances, profiles): a bridge's 404 said plainly."""
    try:
        return ctx.client.request(method, path, body=body).json()
    except ClientError as exc:
        if exc.status in (404, 405):
            need = f"; {what} needs `pinchtab server`" if what else ""
            raise ClientError(f"{ctx.client.base_url} has no {path}: it is a bridge (one browser); instances "
                              f"and profiles are served by `pinchtab server`{need}", status=exc.status,
                              code=exc.code) from None
        raise


# --------------------------------------------------------------------------
# Declaring a verb


class Verbs:
    """Adds verbs to the ``pinchtab`` subparsers, each with the global options and a runner."""

    def __init__(self, sub: Any) -> None:
        self.sub = sub
        self.common = argparse.ArgumentParser(add_help=False)
        add_global_options(self.common)

    def add(self, name: str, summary: str, fn: Verb, *, aliases: tuple[str, ...] = (), post: bool = False,
            post_text: bool = False, description: str | None = None) -> argparse.ArgumentParser:
        p = self.sub.add_parser(name, help=summary, aliases=list(aliases), parents=[self.common],
                                description=description or summary[0].upper() + summary[1:] + ".")
        if post or post_text:
            snap_options(p, text=post_text)
        p.set_defaults(run=runner(fn), command=name)
        return p

