"""Closing our kept-alive HTTP connections now, not when the garbage collector gets to them.

A gunicorn server that stops waits (up to 2 s) for each connection a client keeps alive to it. We
stop our own servers (the manager its bridges, the server's proxy an instance it stops, the tests
every server they start), and urllib3 2 closes the sockets of a pool it drops only when the pool
is collected (``PoolManager.clear`` leaves them open): so a stop would wait on our own idle sockets.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import requests


def close_pool_to(manager: Any, url: str) -> None:
    """Close ``manager``'s (a urllib3 PoolManager) idle connections to ``url``'s host and port and
    forget its pools there; a request in flight on one finishes, and its connection is closed after it."""
    where = urlsplit(url)
    _drop_pools(manager, lambda pool: (pool.host, pool.port) == (where.hostname, where.port))


def close_session(session: requests.Session) -> None:
    """``session.close()``, closing the sockets of its pools at once."""
    for adapter in session.adapters.values():
        pools = getattr(adapter, "poolmanager", None)
        if pools is not None:
            _drop_pools(pools, lambda pool: True)
    session.close()


def _drop_pools(manager: Any, wanted: Callable[[Any], bool]) -> None:
    for key in manager.pools.keys():
        pool = manager.pools.get(key)
        if pool is not None and wanted(pool):
            manager.pools.pop(key, None)
            pool.close()
