"""Talking to the app the way an agent does, through Flask's test client (shared by the API tests)."""
from __future__ import annotations

import re
from typing import Any


def nav(client: Any, url: str, **extra: Any) -> dict[str, Any]:
    """POST /navigate and insist it worked."""
    r = client.post("/navigate", json={"url": url, **extra})
    assert r.status_code == 200, r.json
    return r.json


def compact(client: Any, **params: Any) -> str:
    """The interactive compact snapshot of the caller's tab."""
    q = "&".join(f"{k}={v}" for k, v in {"filter": "interactive", "format": "compact", **params}.items())
    r = client.get(f"/snapshot?{q}")
    assert r.status_code == 200, r.data
    return r.data.decode()


def ref_of(snapshot_text: str, role: str, name: str) -> str:
    """The ref of the first ``<ref> <role> <name>`` line of a compact snapshot."""
    m = re.search(rf"^(e\d+) {role} {re.escape(name)}(?: val=| \[| [*-]|$)", snapshot_text, re.M)
    assert m, f"no {role} {name!r} in:\n{snapshot_text}"
    return m.group(1)


def text(client: Any, **params: Any) -> str:
    """GET /text's text."""
    q = "&".join(f"{k}={v}" for k, v in params.items())
    return client.get(f"/text?{q}").json["text"]
