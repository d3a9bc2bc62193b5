"""The dashboard's files: the scripts the page loads are the ones the server serves, in one order.

The page's script is split into classic scripts sharing one scope, so the order of the page's
``<script>`` tags matters and every file it names must be served (as JavaScript, under the CSP
that allows only the server's own scripts). The served app is the public one, as the front door
mounts it; no browser is needed for this.
"""
from __future__ import annotations

import re
from importlib import resources

from app.orchestrator.routes import dashboard


def page_scripts() -> list[str]:
    html = resources.files("app.orchestrator").joinpath("static", "dashboard", "index.html").read_text("utf-8")
    return re.findall(r'<script src="/dashboard/([^"]+)"></script>', html)


def test_the_page_loads_every_script_once_in_the_served_order():
    assert page_scripts() == list(dashboard.SCRIPTS)
    assert page_scripts()[-1] == "dashboard_start.js"  # starts everything: the others must be defined first


def test_every_script_is_served_as_javascript_under_the_csp():
    client = dashboard.public_app().test_client()
    for name in dashboard.SCRIPTS:
        r = client.get("/dashboard/" + name)
        assert r.status_code == 200 and r.data == dashboard.asset(name)
        assert r.headers["Content-Type"].startswith("text/javascript")
        assert "script-src 'self'" in r.headers["Content-Security-Policy"]
    assert client.get("/dashboard/dashboard_missing.js").status_code == 404
