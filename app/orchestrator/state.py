"""What the server app's views share, kept in ``app.extensions``."""
from __future__ import annotations

from dataclasses import dataclass

from flask import current_app

from ..config import Config
from .client import ManagerClient
from .mirror import InstanceMirror
from .upstream import TabLocator, Upstream


@dataclass
class ServerState:
    """What the server's views share: the manager client, the instance mirror, the proxy."""

    config: Config
    client: ManagerClient
    mirror: InstanceMirror
    upstream: Upstream
    locator: TabLocator
    started: float


def server_state() -> ServerState:
    """The server state of the current app."""
    return current_app.extensions["pinchtab.server"]
