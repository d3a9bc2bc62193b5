"""For ``gunicorn -c deploy/gunicorn.conf.py wsgi:app`` (what ``pinchtab bridge`` sets itself).

One worker: every tab and the browser connection live in that process. gthread: its heartbeat
runs apart from requests, so a long navigate is not a hung worker. No preload: the browser
starts in the worker, not in the master.
"""
from __future__ import annotations

from typing import Any

bind = "127.0.0.1:9867"
workers = 1
worker_class = "app.serving.worker.Worker"  # gthread, keeping a thread on a busy connection (app/serving/worker.py)
threads = 32
timeout = 120
graceful_timeout = 10
keepalive = 5
preload_app = False
# The scheme is the connection's own: the app reads X-Forwarded-Proto itself (app/access/forwarded.py),
# and only with server.trustProxyHeaders on.
secure_scheme_headers: dict[str, str] = {}


def post_worker_init(worker: Any) -> None:
    """Hand ``forwarded_allow_ips`` to the app: the proxies whose forwarded headers it believes under
    ``server.trustProxyHeaders`` (what ``pinchtab bridge`` does itself)."""
    from app.access.forwarded import remember_trusted

    remember_trusted(worker.wsgi, worker.cfg.forwarded_allow_ips)
