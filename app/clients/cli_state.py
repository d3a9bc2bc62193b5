"""The command line's own current tab, for anonymous callers (no ``--agent-id``, no session).

The server keeps an identified caller's current tab; an anonymous one shares the server's global
current tab with everyone else, so the CLI remembers the tab its own ``nav`` opened in a small
file, as the original does: ``$XDG_STATE_HOME/pinchtab/current-tab``, else
``~/.local/state/pinchtab/current-tab``. A remembered tab older than :data:`PROBE_AFTER_S` is
checked once against the server before it is used, so a closed tab is forgotten rather than
failing every later command.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["PROBE_AFTER_S", "TabState"]

PROBE_AFTER_S = 30.0


class TabState:
    """The remembered current tab: read, write (atomically), forget, and check for staleness."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        state_home = env.get("XDG_STATE_HOME") or ""
        base = Path(state_home) if state_home else Path(env.get("HOME") or Path.home()) / ".local" / "state"
        self.path = base / "pinchtab" / "current-tab"

    def read(self) -> str:
        """The remembered tab id, or "" when there is none."""
        try:
            return self.path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return ""

    def write(self, tab_id: str) -> None:
        """Remember ``tab_id`` (best effort: a read-only home must not fail the command)."""
        if not tab_id:
            return
        try:
            from ..web.files import write_atomic  # it loads the error shape's schemas: only to write

            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_atomic(self.path, (tab_id + "\n").encode(), what="current tab")
        except Exception:  # noqa: BLE001 - remembering is a convenience, never the command's outcome
            pass

    def forget(self, tab_id: str | None = None) -> None:
        """Forget the remembered tab (only if it is ``tab_id``, when one is given)."""
        if tab_id and self.read() != tab_id:
            return
        try:
            self.path.unlink()
        except OSError:
            pass

    def fresh(self) -> bool:
        """True if the file was written or checked within :data:`PROBE_AFTER_S`."""
        try:
            return time.time() - self.path.stat().st_mtime < PROBE_AFTER_S
        except OSError:
            return False

    def current(self, exists: Callable[[str], bool]) -> str:
        """The remembered tab, checked with ``exists`` when stale; "" when none or gone."""
        tab_id = self.read()
        if not tab_id or self.fresh():
            return tab_id
        if not exists(tab_id):
            self.forget(tab_id)
            return ""
        try:
            os.utime(self.path)
        except OSError:
            pass
        return tab_id
