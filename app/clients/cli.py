"""The ``pinchtab`` command.

Agents and scripts run it as a process per call, so its start is what they wait for: a verb loads
only the module that declares it, and the parser holds only that verb. :data:`VERBS` is the one
table of verbs: each declaring function (``module:function``) and the verbs (aliases too) it adds,
in the order ``pinchtab help`` lists them. Every verb is built when the whole table is wanted:
plain ``pinchtab``, ``--help`` or ``--version``, ``help``, ``completion``, and a word that is no verb
(so argparse names every choice, as ever).
"""
from __future__ import annotations

import argparse
import functools
import gettext
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from ..config.errors import ConfigError
from . import cli_verbs
from .completion import top_options

VERBS: tuple[tuple[str, tuple[str, ...]], ...] = tuple((declarer, tuple(names.split())) for declarer, names in (
    ("app.clients.cli_serve:register", "bridge server mcp extension"),
    ("app.clients.debug_cli:add_parser", "debug"),
    ("app.extension.cli:add_parser", "ext"),
    ("app.clients.cli_page:register_navigation", "nav goto navigate open quick back forward reload snap snapshot"),
    ("app.clients.cli_actions:register",
     "click dblclick hover focus type fill press select check uncheck scroll scrollintoview drag mouse keyboard "
     "keydown keyup dialog"),
    ("app.clients.cli_page:register_reading",
     "text title url html styles value box visible enabled checked count attr find eval evaluate wait"),
    ("app.clients.cli_capture:register", "screenshot ss pdf console errors"),
    ("app.clients.cli_tabs:register", "tabs tab close handoff resume handoff-status health instances profiles"),
    ("app.clients.cli_features:register",
     "network route unroute cookies storage state clipboard cache record set frame annotate capture cap download "
     "upload instance activity"),
    ("app.clients.cli_audit:register", "audit"),
    ("app.clients.cli_features:register_compare", "compare"),
    ("app.clients.cli_scrape:register", "scrape"),
    ("app.clients.cli_features:register_session", "session"),
    ("app.clients.cli_config:register", "config security"),
    ("app.clients.cli_admin:register", "help version completion doctor dashboard daemon"),
    ("app.clients.cli_skills:register", "skills"),
))
# Verbs built with the whole table: help and completion print it, and version hands whoever inspects
# the command through it the whole parser (no script waits on it).
_WHOLE = frozenset({"help", "completion", "version"})


class Subcommands:
    """The ``pinchtab`` subparsers as a declaring function sees them: ``add_parser`` makes the
    parser of the verb being built (of each verb when all are) and, for the others, a stand-in that
    takes their arguments and keeps nothing. ``parser`` is the command's own parser."""

    def __init__(self, parser: argparse.ArgumentParser, only: str | None) -> None:
        self.parser = parser
        self.only = only
        self._action = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if self.only is None or self.only == name or self.only in kwargs.get("aliases", ()):
            return self._action.add_parser(name, **kwargs)
        return _SKIPPED


class _Skipped:
    """A verb not being built: every call on it (add_argument, set_defaults, a group, nested
    subparsers) does nothing and returns it."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self


_SKIPPED = _Skipped()


class _Version(argparse._VersionAction):
    """``--version``, looked up only when asked for (it reads the installed package's metadata)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        from .cli_admin import version

        self.version = f"pinchtab {version()}"
        super().__call__(parser, namespace, values, option_string)


def _cache_argparse_messages() -> None:
    """argparse looks each of its messages up through gettext, which searches the disk for a
    catalogue every time: with ~90 verbs that was most of a command's start (0.3 s). The answer
    cannot change within a process, so it is looked up once."""
    if not hasattr(argparse._, "cache_info"):  # type: ignore[attr-defined]
        argparse._ = functools.lru_cache(maxsize=None)(gettext.gettext)  # type: ignore[attr-defined]


def build_parser(only: str | None = None) -> tuple[argparse.ArgumentParser, Subcommands]:
    """The command's parser, with verb ``only`` (a name or alias from :data:`VERBS`) or every verb,
    and its subcommands."""
    parser = _command()
    return parser, _declare(parser, only)


def _command() -> argparse.ArgumentParser:
    """The parser of the command itself: its description and global options, no verb yet."""
    _cache_argparse_messages()
    parser = argparse.ArgumentParser(prog="pinchtab", description="A browser API for AI agents over HTTP.")
    parser.add_argument("--version", action=_Version)
    cli_verbs.add_global_options(parser)
    return parser


def _declare(parser: argparse.ArgumentParser, only: str | None) -> Subcommands:
    """Add verb ``only`` (every verb when None) to ``parser``, importing the modules that declare them."""
    sub = Subcommands(parser, only)
    for declarer, names in VERBS:
        if only is None or only in names:
            module, _, function = declarer.partition(":")
            getattr(importlib.import_module(module), function)(sub)
    return sub


def verb_of(parser: argparse.ArgumentParser, argv: Sequence[str]) -> str | None:
    """The verb ``argv`` runs, when that is plain without the table: its first word past the
    global options (and the values of those that take one). None when the whole table is wanted,
    or argparse would have to judge (``-h``, ``--version``, an option it would guess or refuse)."""
    flags, valued = top_options(parser)
    words = iter(argv)
    for word in words:
        if not word.startswith("-") or word == "-":
            known = any(word in names for _, names in VERBS)
            return word if known and word not in _WHOLE else None
        name, eq, _ = word.partition("=")
        # argparse takes an unambiguous prefix of a long option for the option.
        matches = [name] if name in flags else [f for f in flags if f.startswith(name) and name.startswith("--")]
        if len(matches) != 1 or matches[0] in ("--help", "--version"):
            return None
        if matches[0] in valued and not eq:
            next(words, None)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    argv = cli_verbs.bool_flags(list(sys.argv[1:] if argv is None else argv))
    parser = _command()
    _declare(parser, verb_of(parser, argv))
    args = parser.parse_args(argv)
    if not getattr(getattr(args, "run", None), "calls_api", False):
        # Logs on stderr, for the verbs that serve (or may): the API's thin clients have nothing to
        # log, and logging costs their start more than a few per cent.
        import logging

        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not getattr(args, "run", None):  # no verb given: the whole table was built
        def serve() -> int:
            # Plain `pinchtab` runs the server: the default for a person starting it by hand.
            return _run(parser.parse_args([*argv, "server"]))

        if not argv and sys.stdin.isatty() and sys.stdout.isatty():
            from .cli_admin import menu

            return menu(parser, serve)
        return serve()
    return _run(args)


def _run(args: argparse.Namespace) -> int:
    try:
        return args.run(args)  # type: ignore[no-any-return]
    except ConfigError as exc:
        print(f"pinchtab: config error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
