"""What anyone may call, with no token, session or login: kept once, here.

The token check (``app.access.auth``) lets these routes through, the API document marks them
alone as open (``app.web.openapi``), and the server's front door serves the dashboard's pages
before any check (``app.orchestrator.app``). This module imports nothing of ours, so each of those
may read it.
"""
from __future__ import annotations

# (methods, path): the health check; the debug SDK, which pages load with a <script> tag; and the
# dashboard's login and logout, which carry the token (or end a login) themselves. Public only on
# an app that serves them: elsewhere the path is no route, and the token check answers as usual.
PUBLIC_ROUTES: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"GET", "HEAD"}), "/health"),
    (frozenset({"GET", "HEAD"}), "/debug/sdk.js"),
    (frozenset({"POST"}), "/api/auth/login"),
    (frozenset({"POST"}), "/api/auth/logout"),
)
PUBLIC_PATHS = frozenset(path for _, path in PUBLIC_ROUTES)

# The dashboard's page, its login page and its files (server mode): they hold no data, so they are
# served without the token, and a link from anywhere may open them.
DASHBOARD_PAGE = "/dashboard"  # and everything under /dashboard/
LOGIN_PAGE = "/login"


def is_public_route(method: str, path: str) -> bool:
    """Whether ``method path`` is one of :data:`PUBLIC_ROUTES`."""
    if path not in PUBLIC_PATHS:  # every call asks: most are not public, and one lookup says so
        return False
    return any(method in methods and path == public for methods, public in PUBLIC_ROUTES)


def is_dashboard_page(path: str) -> bool:
    """Whether ``path`` is the dashboard's page, its login page, or one of its files."""
    return path in (DASHBOARD_PAGE, LOGIN_PAGE) or path.startswith(DASHBOARD_PAGE + "/")
