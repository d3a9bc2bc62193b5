"""Server mode's own routes keep to their contracts: each answer is its declared schema's dump, so a
field the schema lacks never reaches a caller; the server's package stands apart from the bridge's
(it reads the bridge's routes from the app ``app.serving.apps`` builds); and the
public routes, kept once, are the only ones the token check and the document leave open."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.config import make_config

SERVER_BLUEPRINTS = ("instances", "profiles", "server", "tasks", "login", "sessions")


class _OneRecord:
    """A manager that knows one instance, whose record carries a field no schema declares."""

    RECORD = {"id": "inst_1", "profileId": None, "profileName": None, "port": 9999, "url": "http://127.0.0.1:9999",
              "mode": "headless", "headless": True, "status": "running", "startTime": "2026-01-01T00:00:00Z",
              "attached": False, "token": "never-shown"}

    def get(self, instance_id: str) -> dict[str, Any]:
        return dict(self.RECORD)


@pytest.fixture
def app(tmp_path: Path) -> Any:
    from app.serving.apps import server_app as create_server_app

    return create_server_app(make_config(tmp_path, **{"scheduler.enabled": True, "server.token": "t0ken"}),
                             client=_OneRecord(), start_watch=False)  # type: ignore[arg-type]


def test_an_answer_is_its_schemas_dump_so_an_undeclared_field_stays_out(app: Any) -> None:
    r = app.test_client().get("/instances/inst_1", headers={"Authorization": "Bearer t0ken"})
    assert r.status_code == 200, r.text
    body = r.get_json()
    assert "token" not in body
    assert body == {k: v for k, v in _OneRecord.RECORD.items() if k != "token"}


def test_every_route_of_the_server_declares_its_answer(app: Any) -> None:
    seen = 0
    for rule in app.url_map.iter_rules():
        if rule.endpoint.split(".")[0] not in SERVER_BLUEPRINTS:
            continue
        seen += 1
        declared = getattr(app.view_functions[rule.endpoint], "_apidoc", {}).get("response", {})
        assert declared.get("responses"), f"{rule.rule} ({rule.endpoint}) declares no answer"
    assert seen > 40


def test_public_routes_need_no_token_and_the_document_says_so(app: Any) -> None:
    client = app.test_client()
    assert client.get("/health").status_code != 401
    assert client.post("/api/auth/logout").status_code == 200
    assert client.get("/instances").status_code == 401
    doc = client.get("/openapi.json", headers={"Authorization": "Bearer t0ken"}).get_json()
    open_ops = sorted(f"{method.upper()} {path}" for path, item in doc["paths"].items()
                      for method, op in item.items() if isinstance(op, dict) and "security" not in op)
    assert open_ops == ["GET /debug/sdk.js", "GET /health", "POST /api/auth/login", "POST /api/auth/logout"]


def test_the_servers_package_never_imports_the_bridges() -> None:
    probe = ("import importlib, pkgutil, sys\n"
             "import app.orchestrator as o\n"
             "for m in pkgutil.walk_packages(o.__path__, 'app.orchestrator.'):\n"
             "    importlib.import_module(m.name)\n"
             "print(sorted(n for n in sys.modules if n == 'app.api' or n.startswith('app.api.')))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[3])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
