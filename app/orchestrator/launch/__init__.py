"""Launching instances: where a bridge for an instance comes from, and how it is watched.

The manager (:mod:`..manager`) keeps the table of instances; a :class:`Launcher` gives an instance
it has registered a bridge to run in, polls that bridge's health until it runs or fails, and stops
it. :class:`~.local.LocalLauncher` (``launch/local.py``) is the one launcher today: a ``pinchtab
bridge`` child on this machine, on a profile or on a browser someone else started (a CDP URL). A
provider that runs browsers elsewhere (a remote CDP service, a WebDriver grid) plugs in here as
another Launcher.

Attaching (``launch/attach.py``) is launching on a browser the server did not start: a CDP URL, a
person's own Chrome through our extension, or a whole ``pinchtab bridge`` someone else runs.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    import requests

    from ...config import Config
    from ..children import Child
    from ..instances import EventRing, Instance

log = logging.getLogger(__name__)


class Host(Protocol):
    """What launching sees of the manager it works for: its table under its lock, its events, and
    how a change is told (so launching never imports the manager that imports it)."""

    config: Config
    http: requests.Session
    instances: dict[str, Instance]
    instances_dir: Path
    pid_dir: Path
    events: EventRing
    launcher: Launcher
    _lock: threading.RLock
    _cond: threading.Condition
    _halting: threading.Event

    def _changed(self) -> None: ...

    def _publish(self, event_type: str, inst: Instance, status: str | None = None) -> None: ...

    def _fail(self, inst: Instance, reason: str) -> None: ...


class Launcher(Protocol):
    """What the manager asks of a launcher."""

    def spawn(self, inst: Instance) -> None:
        """Start the bridge of ``inst`` (status ``starting``) and poll its health on a thread of its
        own: ``running`` once it answers, ``error`` (and the restart policy) if it does not."""

    def kill(self, inst: Instance, child: Child | None) -> None:
        """The stop sequence of the bridge ``child`` of ``inst``, each step under a deadline."""

    def ask_shutdown(self, inst: Instance) -> None:
        """Ask the bridge of ``inst`` to shut down (one it does not own: an attached bridge)."""

    def healthy(self, inst: Instance) -> bool:
        """Whether the bridge of ``inst`` answers its health check."""

    def state_dir(self, inst: Instance) -> Path:
        """The folder of the instance's state (its config, screenshots, activity)."""

    def pairing_token(self) -> str:
        """The server's extension pairing token."""


def start_thread(target: Callable[..., None], args: tuple[Any, ...], name: str) -> threading.Thread:
    """A daemon thread whose failure is logged: a watcher that dies silently leaves an instance
    ``starting`` for ever."""

    def logged() -> None:
        try:
            target(*args)
        except Exception:
            log.exception("%s: failed", name)

    thread = threading.Thread(target=logged, name=name, daemon=True)
    thread.start()
    return thread
