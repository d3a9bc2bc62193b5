"""The pairing token and ``pinchtab extension path|pair``: no browser needed."""
from __future__ import annotations

import json
import stat
from pathlib import Path

from app.clients import cli
from app.extension import pairing


def test_the_token_is_created_once_private_and_then_kept(tmp_path):
    state = tmp_path / "state"
    token = pairing.load_or_create(state)
    path = pairing.token_path(state)
    assert len(token) >= 40 and pairing.load_or_create(state) == token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(state.stat().st_mode) == 0o700


def test_matching_is_exact_and_an_empty_token_matches_nothing():
    assert pairing.matches("abc", "abc")
    assert not pairing.matches("abd", "abc") and not pairing.matches("", "") and not pairing.matches(None, "abc")


def test_cli_prints_the_extension_folder_and_the_pairing_token(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("PINCHTAB_CONFIG", "PINCHTAB_STATE_DIR", "SAK_BROWSER_PORT"):
        monkeypatch.delenv(name, raising=False)
    assert cli.main(["extension", "path"]) == 0
    folder = Path(capsys.readouterr().out.strip())
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["manifest_version"] == 3 and manifest["background"]["service_worker"] == "service_worker.js"
    assert {"debugger", "storage", "alarms", "tabGroups"} <= set(manifest["permissions"])
    assert cli.main(["extension", "pair"]) == 0
    shown = capsys.readouterr().out
    token = pairing.token_path(tmp_path / ".pinchtab").read_text().strip()
    # Both things the options page asks for, the address being the extension port, not the API's.
    assert f"pairing token:      {token}" in shown and "extension address:  http://127.0.0.1:19222" in shown
    assert "9867" not in shown.split("not the API port")[0]
    assert cli.main(["extension", "pair", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"pairingToken": token, "extensionUrl": "http://127.0.0.1:19222"}
