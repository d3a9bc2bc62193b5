"""What a ``pinchtab`` verb loads and builds to start: the one table of verbs, the parser of just the
verb asked for (parsing as the whole one does), the two settings a client reads without the config's
schemas (answering as the full loader does), and the standard-library HTTP client under them."""
from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import ROOT

from app.clients import cli
from app.clients.client_config import DEFAULT_PORT, server_settings
from app.clients.completion import subparsers, verb_table
from app.clients.rest import Client, ClientError
from app.config import ConfigError, load_config
from bench.processes import free_port

# What a verb that calls the API must not load: the config's schemas, the old HTTP stack, the
# modules of other verbs.
HEAVY = ("marshmallow", "requests", "app.config.settings", "app.config.sources", "app.web.files", "logging",
         "app.clients.cli_admin", "app.clients.cli_config", "app.clients.cli_features", "app.clients.cli_audit",
         "app.clients.cli_scrape", "app.clients.debug_cli", "app.clients.cli_serve", "app.extension",
         "app.clients.cli_actions", "app.clients.cli_capture")


def _loaded_after(args: list[str], home: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``pinchtab ARGS`` in a fresh interpreter: its exit status, stderr, and which of HEAVY it loaded."""
    code = ("import json, sys\nfrom app.clients.cli import main\ncode = main(sys.argv[1:])\n"
            f"print(json.dumps({{'code': code, 'heavy': [m for m in {HEAVY!r} if m in sys.modules]}}))")
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PINCHTAB_", "BRIDGE_", "XDG_"))}
    full.update(HOME=str(home), PYTHONPATH=str(ROOT), XDG_STATE_HOME=str(home / "state"), **(env or {}))
    done = subprocess.run([sys.executable, "-c", code, *args], env=full, cwd=str(home), capture_output=True,
                          text=True, timeout=60)
    return {**json.loads(done.stdout.splitlines()[-1]), "stderr": done.stderr}


def test_a_verb_that_calls_the_api_loads_neither_the_schemas_nor_the_other_verbs(tmp_path):
    down = f"http://127.0.0.1:{free_port()}"
    for args, env in ((["--server", down, "title"], {}),  # the token from the config file (none there)
                      (["title", "--json"], {"PINCHTAB_SERVER": down, "PINCHTAB_TOKEN": "t"}),
                      (["--agent-id", "a", "text"], {"PINCHTAB_PORT": down.rsplit(":", 1)[1]})):
        res = _loaded_after(args, tmp_path, env)
        assert res["code"] == 1 and "cannot reach pinchtab" in res["stderr"], res
        assert res["heavy"] == [], (args, res["heavy"])
    (tmp_path / ".pinchtab").mkdir()
    (tmp_path / ".pinchtab" / "config.json").write_text(json.dumps({"server": {"port": int(down.rsplit(":", 1)[1]),
                                                                               "token": "t"}}))
    res = _loaded_after(["tabs"], tmp_path)
    assert (res["code"], res["heavy"]) == (1, []) and down in res["stderr"], res


def test_nav_to_a_server_that_listens_loads_no_config(tmp_path, answers):
    base, _, _ = answers  # it answers GET only: the navigation fails, after the check that a server listens
    res = _loaded_after(["nav", "example.com"], tmp_path, {"PINCHTAB_SERVER": base})
    assert res["code"] == 1 and "HTTP 501" in res["stderr"], res
    assert res["heavy"] == [], res["heavy"]


def test_the_table_names_each_verb_once_in_the_order_help_lists_them():
    whole = cli.build_parser()[0]
    listed = [n for v in verb_table(whole) for n in (v.name, *v.aliases)]
    assert listed == [n for _, names in cli.VERBS for n in names]
    for _, names in cli.VERBS:
        for name in names:
            if name in ("help", "completion", "version"):
                continue
            alone = subparsers(cli.build_parser(name)[0]).choices
            assert name in alone and {id(p) for p in alone.values()} == {id(alone[name])}, name


@pytest.mark.parametrize("argv, verb", [
    (["title"], "title"), (["--json", "goto", "x"], "goto"), (["--server", "u", "--tab", "t", "snap"], "snap"),
    (["--ser", "u", "title"], "title"), (["--server=u", "--agent-id", "a", "tabs"], "tabs"),
    (["--js", "title"], "title"), (["ext", "get_tabs"], "ext"),
    ([], None), (["-h", "title"], None), (["--help"], None), (["--version"], None), (["help", "title"], None),
    (["completion", "bash"], None), (["version"], None), (["nosuch"], None), (["--tab"], None), (["-x", "title"], None),
    (["--", "title"], None),
])
def test_the_verb_is_read_past_the_global_options(argv, verb):
    assert cli.verb_of(cli.build_parser("")[0], argv) == verb


@pytest.mark.parametrize("argv", [
    ["nav", "example.com", "--new-tab", "--snap"], ["--json", "snap", "-i", "--max-tokens", "50"],
    ["--tab", "T1", "click", "e5", "--wait-nav"], ["storage", "get", "--type", "local"], ["goto", "x"],
    ["audit", "http://x", "--cookie", "a=b"], ["scrape", "http://x"], ["session", "list"], ["compare", "a", "b"],
    ["ext", "navigate", "http://x", "3"], ["debug", "attach", "-s", "abc"], ["config", "get", "server.port"],
    ["bridge", "--port", "1"], ["doctor"], ["--agent-id", "a", "tab", "new"], ["skills", "list"],
])
def test_the_parser_of_one_verb_parses_as_the_whole_one(argv):
    def parsed(parser: Any) -> dict[str, Any]:
        return {k: getattr(v, "__qualname__", v) for k, v in vars(parser.parse_args(argv)).items()}

    assert parsed(cli.build_parser(cli.verb_of(cli.build_parser("")[0], argv))[0]) == parsed(cli.build_parser()[0])


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / ".pinchtab").mkdir()
    return tmp_path


def _same_as_the_loader(env: dict[str, str]) -> tuple[int, str]:
    """server_settings(env), checked against the full loader: the same answer, or the same error."""
    try:
        loaded = load_config(env=env).server
        expected: Any = (loaded.port, loaded.token)
    except ConfigError as exc:
        expected = str(exc)
    try:
        got: Any = server_settings(env)
    except ConfigError as exc:
        got = str(exc)
    assert got == expected, env
    return got


@pytest.mark.parametrize("content, env, answer", [
    (None, {}, (DEFAULT_PORT, "")),
    ({"server": {"port": 4321, "token": "tok"}}, {}, (4321, "tok")),
    ({"server": {"port": "4321"}, "browser": {"headless": "odd"}}, {}, (4321, "")),
    ({"server": {"port": 4321, "token": "tok"}}, {"PINCHTAB_PORT": "5555", "BRIDGE_TOKEN": "env"}, (5555, "env")),
    ({"server": {"port": 4321}}, {"PINCHTAB_PORT": "", "BRIDGE_PORT": "6666"}, (6666, "")),
    ({"security": {"allowEvaluate": True}}, {}, (DEFAULT_PORT, "")),
    ({"port": 7777, "token": "flat"}, {}, (7777, "flat")),  # the flat form of before 0.8
    ({"server": {"port": 0}}, {}, None), ({"server": {"port": 1.5}}, {}, None), ({"server": {"port": True}}, {}, None),
    ({"server": {"token": 5}}, {}, None), ({"server": []}, {}, None), ([1], {}, None), ("{not json", {}, None),
    (None, {"PINCHTAB_PORT": "http"}, None), (None, {"PINCHTAB_CONFIG": "/nonexistent/config.json"}, None),
])
def test_the_clients_settings_are_the_loaders(home, content, env, answer):
    if content is not None:
        text = content if isinstance(content, str) else json.dumps(content)
        (home / ".pinchtab" / "config.json").write_text(text)
    got = _same_as_the_loader({"HOME": str(home), **env})
    if answer is not None:
        assert got == answer
    else:
        assert isinstance(got, str)  # a ConfigError, the loader's own


@pytest.fixture
def answers() -> Iterator[tuple[str, list[str], threading.Event]]:
    """A server on 127.0.0.1 that answers ``{"n": N, "path": ...}`` over HTTP/1.1, keeping the
    connection open, except after ``/close``: then it closes it without saying so (as a server closes
    an idle kept-alive connection). The client's port of each request is kept; the event is set when
    a connection has been closed."""
    peers: list[str] = []
    closed = threading.Event()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            peers.append(f"{self.client_address[1]}")
            body = json.dumps({"n": len(peers), "path": self.path}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.close_connection = self.path == "/close"

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True

        def shutdown_request(self, request: Any) -> None:
            super().shutdown_request(request)
            closed.set()

    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, name="answers", daemon=True).start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}", peers, closed
    finally:
        server.shutdown()
        server.server_close()


def test_the_client_reconnects_when_the_server_closed_the_kept_connection(answers):
    base, peers, closed = answers
    client = Client(base, timeout_s=10)
    assert client.get("/one", {"q": "a b", "on": True, "none": None}) == {"n": 1, "path": "/one?q=a+b&on=true"}
    assert client.get("/tabs/é x") == {"n": 2, "path": "/tabs/%C3%A9%20x"}
    assert client.request("GET", "/close").json()["n"] == 3
    assert closed.wait(10)
    assert client.get("/after")["n"] == 4
    # One connection kept for three calls; a new one once the server had closed it.
    assert peers[0] == peers[1] == peers[2] != peers[3]


def test_the_client_names_an_unreachable_server_and_one_that_does_not_answer():
    with pytest.raises(ClientError) as err:
        Client(f"127.0.0.1:{free_port()}", timeout_s=5).get("/health")
    assert err.value.code == "unreachable" and "(ConnectionError); is it running?" in err.value.message
    silent = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)  # listens, never serves
    try:
        with pytest.raises(ClientError) as err:
            Client(f"127.0.0.1:{silent.server_address[1]}", timeout_s=0.3).get("/health")
        assert err.value.code == "timeout" and "within 0.3 s" in err.value.message
    finally:
        silent.server_close()
