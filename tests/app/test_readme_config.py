"""The README's configuration table lists every setting the config declares, with its default as
declared, and nothing the config does not know: a key added to ``app/config/settings.py`` without
its row here fails this test."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from app.config.declare import settings_of
from app.config.settings import Config

README = Path(__file__).resolve().parents[2] / "README.md"
ROW = re.compile(r"^\| `([A-Za-z0-9_.]+)` \| `(.*)` \| (.+) \|$")


def rows() -> dict[str, tuple[str, str]]:
    """Key -> (default cell, meaning) of the table rows in the README's Configuration section."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    found: dict[str, tuple[str, str]] = {}
    for line in section.splitlines():
        m = ROW.match(line)
        if m:
            assert m.group(1) not in found, f"{m.group(1)} has two rows"
            found[m.group(1)] = (m.group(2), m.group(3).strip())
    return found


def shown(default: Any) -> str:
    """A default as the table shows it: JSON, lists for tuples, paths as written."""
    return json.dumps(list(default) if isinstance(default, tuple) else str(default) if isinstance(default, Path)
                      else default)


def test_every_declared_setting_has_a_row_with_its_default_and_a_meaning() -> None:
    table = rows()
    declared = dict(settings_of(Config))
    missing = [key for key in declared if key not in table]
    assert not missing, f"settings missing from the README's configuration table: {missing}"
    wrong = {key: (table[key][0], shown(default)) for key, default in declared.items()
             if table[key][0] != shown(default)}
    assert not wrong, f"defaults that differ (README, declared): {wrong}"
    assert all(meaning for _default, meaning in table.values())


def test_the_table_lists_no_setting_the_config_does_not_know() -> None:
    stale = sorted(set(rows()) - {key for key, _ in settings_of(Config)})
    assert not stale, f"README rows for settings that do not exist: {stale}"
