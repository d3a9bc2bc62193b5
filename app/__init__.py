"""Pinchtab's Flask side, one sub-package per way in.

* :mod:`app.api`: the browser API of one bridge (``pinchtab bridge``): its app, routes, schemas.
* :mod:`app.orchestrator`: server mode (``pinchtab server``): the manager process that owns the
  bridge instances, and the server app that routes to them, keeps profiles and serves the dashboard.
* :mod:`app.clients`: thin clients of the REST API: the command line and the MCP server.

Shared by all: configuration (:mod:`app.config`), the error shape (:mod:`app.web.errors`), the bearer
token check, the activity log middleware, and the gunicorn applications that serve the apps.
"""
