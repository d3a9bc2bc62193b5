"""The agent skills we ship: installed where the agent looks, and true to the commands and tools
they teach (a skill naming a flag or a tool we do not have would teach an agent to fail)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from support import ROOT

from app.clients import cli_skills
from app.clients.mcp_tools import TOOLS


def test_install_writes_every_skill_where_the_agent_looks_and_a_reinstall_updates(tmp_path: Path) -> None:
    shipped = cli_skills.shipped()
    assert {"pinchtab", "pinchtab-mcp", "pinchtab-debug"} <= set(shipped)
    stale = tmp_path / ".claude" / "skills" / "pinchtab" / "SKILL.md"
    stale.parent.mkdir(parents=True)
    stale.write_text("an older version")
    done = subprocess.run([sys.executable, "-m", "app.clients.cli", "skills", "install"], cwd=ROOT, text=True,
                          capture_output=True, timeout=60, env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    for name, text in shipped.items():
        installed = tmp_path / ".claude" / "skills" / name / "SKILL.md"
        assert installed.read_text() == text and f"installed {installed}" in done.stdout
        # The frontmatter an agent reads first: a name (the folder's) and a description of when to use it.
        head = text.split("---")[1]
        assert f"\nname: {name}\n" in head and re.search(r"\ndescription: \".{40,}\"\n", head)
    other = tmp_path / "elsewhere"
    assert subprocess.run([sys.executable, "-m", "app.clients.cli", "skills", "install", "--dir", str(other)],
                          cwd=ROOT, capture_output=True, timeout=60).returncode == 0
    assert sorted(p.name for p in other.iterdir()) == sorted(shipped)


def test_every_command_flag_and_tool_a_skill_names_exists() -> None:
    from app.clients.cli import build_parser

    parser, _ = build_parser()
    verbs = {a.dest: a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"}
    commands = next(iter(verbs.values())).choices
    tools = {t.name for t in TOOLS}
    for name, text in cli_skills.shipped().items():
        for verb, rest in re.findall(r"`pinchtab ([a-z]+)([^`]*)`", text):
            assert verb in commands, (name, verb)
            command = commands[verb]
            for word in rest.split():   # down through sub-verbs (`debug connect`)
                subs = [a for a in command._actions if a.__class__.__name__ == "_SubParsersAction"]
                if not subs or word not in subs[0].choices:
                    break
                command = subs[0].choices[word]
            for flag in re.findall(r"(--[a-z-]+)", rest):
                assert flag in command._option_string_actions, (name, verb, flag)
        for tool in re.findall(r"\b(pinchtab_[a-z_]+)\b", text):
            assert tool in tools, (name, tool)
