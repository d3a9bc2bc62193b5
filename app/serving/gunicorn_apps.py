"""``pinchtab bridge`` as a gunicorn application: one gthread worker serving the Flask app.

One worker because every tab and CDP connection lives in that process; gthread because its
heartbeat runs apart from requests, so a long navigate does not look like a hung worker (the
class is app/serving/worker.py's: gthread, with a thread that stays on a busy connection).
"""
from __future__ import annotations

import ipaddress
import os
import signal
from typing import Any

from gunicorn.app.base import BaseApplication

from ..config import Config, ConfigError

THREADS = 32  # concurrent requests; many are long waits on the browser, not CPU


def bind_address(host: str, port: int) -> str:
    try:
        if ipaddress.ip_address(host).version == 6:
            return f"[{host}]:{port}"
    except ValueError:
        pass
    return f"{host}:{port}"


def apply_settings(app: Any, hooks: dict[str, Any]) -> None:
    """The gunicorn settings both of our servers run with, then their hooks and the caller's options.

    One gthread worker: all browser (or instance) state lives in that process, and gthread's
    heartbeat runs apart from requests, so a long navigate does not look like a hung worker.
    """
    settings = {
        "bind": bind_address(app.pt_config.server.bind, app.pt_config.server.port),
        "workers": 1,
        "worker_class": "app.serving.worker.Worker",  # gthread, keeping a thread on a busy connection
        "threads": THREADS,
        "timeout": 120,
        "graceful_timeout": 10,
        "keepalive": 5,
        # gunicorn 25+ opens ~/.gunicorn/gunicorn.ctl from a thread in the master: one path for
        # every server of a user (our instances share it) and a thread in a process that forks.
        "control_socket_disable": True,
        # The scheme is the connection's own: app.access.forwarded alone reads X-Forwarded-Proto, under
        # server.trustProxyHeaders (gunicorn would believe it from any peer in forwarded_allow_ips).
        "secure_scheme_headers": {},
        **hooks,
        **app.options,
    }
    for key, value in settings.items():
        app.cfg.set(key, value)


def remember_proxies(app: Any, cfg: Any) -> None:
    """Hand gunicorn's ``forwarded_allow_ips`` (``FORWARDED_ALLOW_IPS``; default this machine) to the
    Flask app: the proxies whose forwarded headers it believes under ``server.trustProxyHeaders``."""
    from ..access.forwarded import remember_trusted

    remember_trusted(app, cfg.forwarded_allow_ips)


class BridgeApplication(BaseApplication):
    """Serves ``create_app(config)``; the browser starts in the worker, with the server."""

    def __init__(self, config: Config, options: dict[str, Any] | None = None,
                 extension_port: int | None = None) -> None:
        self.pt_config = config
        self.options = options or {}
        self.extension_port = extension_port  # extension mode: the extension's own port
        self.flask_app = None
        super().__init__()

    def load_config(self) -> None:
        apply_settings(self, {"worker_exit": self._worker_exit})

    def load(self):  # type: ignore[no-untyped-def]
        from ..api import create_app

        self.flask_app = create_app(self.pt_config, extension_port=self.extension_port)
        remember_proxies(self.flask_app, self.cfg)
        # POST /shutdown stops the whole server the way a TERM signal would, gracefully.
        self.flask_app.extensions["pinchtab.shutdown"] = lambda: os.kill(os.getppid(), signal.SIGTERM)
        return self.flask_app

    def _worker_exit(self, server: Any, worker: Any) -> None:
        if self.flask_app is not None:
            self.flask_app.extensions["pinchtab"].stop()


class ServerApplication(BaseApplication):
    """``pinchtab server``: one gthread worker serving ``server_app(config)``.

    The master stays a plain arbiter. Its ``on_starting`` hook starts the instance manager (a
    fresh interpreter, ``app.orchestrator.manager``) and ``on_exit`` stops it; the worker reaches
    it over its Unix socket. One worker only: the worker's instance table and tab locator are
    in-process state, and two workers would each proxy with their own stale copy.
    """

    def __init__(self, config: Config, options: dict[str, Any] | None = None) -> None:
        self.pt_config = config
        self.options = options or {}
        if int(self.options.get("workers", 1)) != 1:
            raise ConfigError("workers", "server mode runs exactly one worker (it holds the instance table and "
                                         "tab routes); run more servers behind a balancer to scale out")
        self.manager: Any = None
        super().__init__()

    def load_config(self) -> None:
        apply_settings(self, {"on_starting": self._on_starting, "on_exit": self._on_exit})

    def load(self):  # type: ignore[no-untyped-def]
        from .apps import server_app

        app = server_app(self.pt_config)
        remember_proxies(app, self.cfg)
        # POST /shutdown stops the server (and so its manager and instances) as a TERM signal would.
        app.extensions["pinchtab.shutdown"] = lambda: os.kill(os.getppid(), signal.SIGTERM)
        return app

    def _on_starting(self, arbiter: Any) -> None:
        from ..orchestrator.spawn import ManagerProcess

        # RuntimeError: gunicorn prints the message and exits 1.
        self.manager = ManagerProcess(self.pt_config).spawn()

    def _on_exit(self, arbiter: Any) -> None:
        if self.manager is not None:
            self.manager.stop()
